"""RMIR in Inspect: the task, the scorer and the metric (thin; the benchmark is in ``ecom_tasks.rmir``).
Parameters, metrics, reference numbers and deviations: ``ecom_tasks/rmir/README.md``."""

from __future__ import annotations

from typing import Any

import anyio
from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import HeadlineMetric
from inspect_ai.model import ChatMessageUser, Content, ContentImage, ContentText, GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value, metric, scorer
from inspect_ai.solver import TaskState

from ecom_tasks.data import parse_flag
from ecom_tasks.images import ImageAccess, image_for_inspect
from ecom_tasks.inspect_evals._task_parameters import parameters_of
from ecom_tasks.provenance import fixtures_location, task_metadata
from ecom_tasks.rmir.embedders import DEFAULT_RETRIEVER
from ecom_tasks.rmir.metrics import QueryOutcome, summarize
from ecom_tasks.rmir.parsing import parse_reply
from ecom_tasks.rmir.prompts import PROMPT_VERSION
from ecom_tasks.rmir.protocol import RmirItem, load_items
from ecom_tasks.rmir.scoring import Retrieval, parse_retriever_args, pool_input_kind, ranking_specs, retriever_factory
from ecom_tasks.rmir.variants import MAX_TOKENS, parse_cache, parse_k, parse_mode, parse_search
from ecom_tasks.scorers import context_limit
from ecom_tasks.scorers.context_limit import CONTEXT_EXCEEDED
from ecom_tasks.scorers.inspect_scorers import context_exceeded_of, outcome_mean, within_context
from ecom_tasks.solvers.reason_then_embed import (
    DESCRIPTION_KEY,
    IMAGES_DROPPED_KEY,
    STATUS_KEY,
    read_reply,
    reason_then_embed,
)

#: 2.0.0: pool images are embedded without their captions by default (image-capable embedders score
#: differently), one split is scored (``test``), and ``k`` with ``metrics`` gives their union. 2.1.0: the
#: query's category is read from the sample's metadata, no longer a number in ``Score.value``. 2.2.0: a
#: description's runs of more than 8 blanks are squeezed (``scorers.replies.squeezed``) before it is embedded.
#: 2.3.0: a copy of the prompt with curled quotes or dashes is an echo, left out of the description embedded.
VERSION = "2.3.0"


def _parse(completion: str | None, **context: Any) -> tuple[str | None, str]:
    parsed = parse_reply(completion, **context)  # context: the prompt sent and whether a limit cut the reply
    return parsed.text, parsed.status


@metric
def rmir_summary(k: Any = None, metrics: Any = None) -> Metric:
    """The selected ranking metrics (recall@K for each K, mrr, ndcg@10, plugins') overall, per
    category and as the mean of the categories, with failure rate, query count and the pool's size."""
    names = tuple(spec.name for spec in ranking_specs(k, metrics))

    def compute(scores: list[SampleScore]) -> Value:
        outcomes = [
            QueryOutcome(value, (s.sample_metadata or {}).get("category", ""))
            for s in scores
            if isinstance(value := s.score.value, dict)
        ]
        values = [o.values for o in outcomes]
        summary = context_limit.with_rate(summarize(outcomes, names), values, failure_key="failure_rate")
        # The pool searched (from the scores' metadata): recall@K with K at or above it says nothing.
        pools = [pool for s in scores if isinstance(pool := (s.score.metadata or {}).get("pool"), int)]
        if pools:
            summary["pool_size"] = float(max(pools))
        return summary

    return compute


@scorer(metrics=[rmir_summary()])
def rmir_scorer(
    data: str | None = None,
    retriever: str = DEFAULT_RETRIEVER,
    retriever_args: Any = None,
    mode: str = "embed",
    k: Any = None,
    metrics: Any = None,
    search: str = "numpy",
    check_images: bool = True,
    split: str | None = None,
    pool_captions: Any = False,
    cache: Any = True,
    allow_outside_images: Any = False,
    allow_url_images: Any = False,
) -> Scorer:
    """Embed the query (``embed``) or the model's description (``reason_then_embed``), rank the pool,
    score the ranking. The pool is embedded once, on the first sample, through the on-disk cache."""
    mode = parse_mode(mode)
    specs = ranking_specs(k, metrics)
    keep = max(parse_k(k))
    retrieval = Retrieval(
        data,
        retriever,
        retriever_args,
        split=split,
        pool_captions=parse_flag(pool_captions, "pool_captions"),
        search=search,
        check_images=check_images,
        cache=cache,
        image_access=ImageAccess.from_options(allow_outside_images, allow_url_images),
    )

    async def score(state: TaskState, target: Target) -> Score:
        description, status = None, "embed"
        refused = context_exceeded_of(state.output) if mode == "reason_then_embed" else None
        if refused is not None:  # the server refused the prompt: no description, counted apart
            status = CONTEXT_EXCEEDED
        elif mode == "reason_then_embed":
            if state.store.get(STATUS_KEY) is None:  # scored without the solver (e.g. another task's log)
                description, status = read_reply(state, _parse)
            else:
                description, status = state.store.get(DESCRIPTION_KEY), state.store.get(STATUS_KEY)
        result = await anyio.to_thread.run_sync(
            lambda: retrieval.score(
                state.metadata,
                specs,
                mode=mode,
                description=description,
                images_dropped=state.store.get(IMAGES_DROPPED_KEY),
            )
        )
        explanation = f"{result.status}; description {status}" if mode == "reason_then_embed" else result.status
        return Score(
            value={**result.outcome, CONTEXT_EXCEEDED: int(refused is not None)},
            answer=description if mode == "reason_then_embed" else state.metadata["query_text"],
            explanation=f"{explanation}: {refused}" if refused else explanation,
            metadata={
                "ranked": result.ranked[:keep],
                "scores": result.scores[:keep],
                "status": result.status,
                "description_status": status,
                **retrieval.index().stats,
            },
        )

    return score


def _sample(item: RmirItem, mode: str) -> Sample:
    model_input: Any = item.record.query_text  # no model is called in embed mode
    if mode == "reason_then_embed":
        image: list[Content] = (
            [ContentImage(image=image_for_inspect(item.record.query_image))] if item.record.query_image else []
        )
        model_input = [ChatMessageUser(content=[*image, ContentText(text=item.prompt)])]
    return Sample(id=item.id, input=model_input, target=list(item.record.positives), metadata=item.fields)


def rmir_task(
    *,
    mode: str = "embed",
    data: str | None = None,
    category: str | None = None,
    split: str | None = None,
    retriever: str = DEFAULT_RETRIEVER,
    retriever_args: Any = None,
    pool_captions: Any = False,
    k: Any = None,
    metrics: Any = None,
    search: str = "numpy",
    cache: Any = True,
    max_tokens: int | None = MAX_TOKENS,
    allow_outside_images: Any = False,
    allow_url_images: Any = False,
) -> Task:
    """RMIR's one task builder; every parameter is a ``-T`` setting of the tasks below. ``mode``: ``embed``
    (the query itself is embedded) or ``reason_then_embed`` (the model's description of the answer image)."""
    mode = parse_mode(mode)
    # Both are first used at the first score: after the model's calls in reason_then_embed mode.
    retriever_factory(retriever)
    parse_search(search)
    ks = parse_k(k)
    args = parse_retriever_args(retriever_args)
    # The union of k and metrics; a bad selection fails here, before any work.
    names = [spec.name for spec in ranking_specs(ks, metrics)]
    captions = parse_flag(pool_captions, "pool_captions")
    cache = parse_cache(cache)
    # Images are opened at load time when something will look at them.
    check_images = retriever != "lexical" or mode == "reason_then_embed"
    access = ImageAccess.from_options(allow_outside_images, allow_url_images)
    loaded, items = load_items(
        data, category=category, split=split, mode=mode, check_images=check_images, image_access=access
    )
    return Task(
        dataset=MemoryDataset(
            [_sample(i, mode) for i in items], name="rmir", location=str(data or fixtures_location("rmir"))
        ),
        solver=[within_context(reason_then_embed(parse=_parse))] if mode == "reason_then_embed" else [],
        scorer=rmir_scorer(
            data=data,
            retriever=retriever,
            retriever_args=args,
            mode=mode,
            k=list(ks),
            metrics=names,
            search=search,
            check_images=check_images,
            split=loaded.split,
            pool_captions=captions,
            cache=cache,
            allow_outside_images=access.outside,
            allow_url_images=access.urls,
        ),
        metrics=[rmir_summary(k=list(ks), metrics=names)],
        config=GenerateConfig(temperature=0.0, max_tokens=max_tokens),
        version=VERSION,
        epochs=Epochs(1, outcome_mean()),
        headline_metric=HeadlineMetric(metric=f"recall@{ks[0]}"),
        metadata=task_metadata(
            "rmir",
            task_version=VERSION,
            prompt_version=PROMPT_VERSION,
            data=data,
            mode=mode,
            retriever=retriever,
            retriever_args=args,
            category=category or "all",
            split=loaded.split,
            pool_input=pool_input_kind(retriever, captions),
            pool_captions=captions,
            pool_size=len(loaded.pool),
            metrics=names,
            search=search,
            cache=cache,
        ),
    )


@task
@parameters_of(rmir_task)
def rmir(**params: Any) -> Task:
    """RMIR: each query's image and text embedded and searched directly."""
    return rmir_task(**params)


@task
@parameters_of(rmir_task, "mode")
def rmir_reason(**params: Any) -> Task:
    """RMIR reason-then-embed: the model describes the answer image, the description is searched."""
    return rmir_task(mode="reason_then_embed", **params)
