"""RMIR's construction stages as Inspect tasks (``ecom_tasks/rmir_build_<stage>``; the RMIR README,
"Building a data set"). Each reads the seed table and an input file the build command derived from the
previous stage's log, both checked against the sha256 in its task arguments, so each also runs alone
with ``inspect eval`` given those files. A scorer puts what the next stage needs in the score's metadata.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

import anyio
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, Content, ContentImage, ContentText, GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value, metric, scorer
from inspect_ai.solver import TaskState, generate

from ecom_tasks.construction import CUT_OFF, check_sha256, image_access_args, panel_task, read_jsonl, stage_metadata
from ecom_tasks.data import ConfigurationError, parse_flag
from ecom_tasks.images import ImageAccess, image_for_inspect
from ecom_tasks.rmir.construction import prompts
from ecom_tasks.rmir.construction.assembly import DEFAULT_CONFIDENCE, DEFAULT_K_IMAGE, DEFAULT_K_TEXT, decide
from ecom_tasks.rmir.construction.parsing import parse_filter, parse_generation, parse_judgement
from ecom_tasks.rmir.construction.seeds import Seeds, check_seed_images, load_seeds
from ecom_tasks.rmir.embedders import DEFAULT_RETRIEVER, EmbedInput
from ecom_tasks.rmir.index import PoolIndex, check_cache_outside, is_sparse
from ecom_tasks.rmir.schema import RmirData
from ecom_tasks.rmir.scoring import (
    POOL_CAPTION,
    make_embedder,
    parse_retriever_args,
    pool_input_kind,
    pool_inputs,
    retriever_factory,
)
from ecom_tasks.rmir.variants import MAX_K, parse_cache
from ecom_tasks.scorers.judge import LIMIT_STOP_REASONS, PROMPT_TOO_LONG
from ecom_tasks.scorers.settings import check_settings, whole_number
from ecom_tasks.solvers.panel_votes import MAX_JUDGES, panel_replies

VERSION = "1.0.0"
BENCHMARK = "rmir_build"
#: The paper's sampling temperatures: generation 0.25, filtration 0, the judge panel 0.85.
GENERATION_TEMPERATURE = 0.25
FILTER_TEMPERATURE = 0.0
JUDGE_TEMPERATURE = 0.85
DEFAULT_JUDGES = 5
#: Output budgets: room for the format plus some reasoning (raise them for reasoning models).
GENERATION_MAX_TOKENS = 4096
FILTER_MAX_TOKENS = 2048
JUDGE_MAX_TOKENS = 2048

SCORER_GENERATE = "rmir_generation_scorer"
SCORER_FILTER = "rmir_filter_scorer"
SCORER_RETRIEVE = "rmir_retrieval_scorer"
SCORER_JUDGE = "rmir_panel_scorer"


@metric
def rmir_build_means() -> Metric:
    """The mean of every key of the samples' outcome dicts, and ``n``."""

    def compute(scores: list[SampleScore]) -> Value:
        values = [s.score.value for s in scores if isinstance(s.score.value, dict)]
        keys = list(dict.fromkeys(k for v in values for k in v))
        out = {k: sum(float(v.get(k, 0.0)) for v in values) / len(values) for k in keys}  # no keys without values
        out["n"] = float(len(values))
        return out

    return compute


# --- shared inputs -----------------------------------------------------------------------------


def _seeds(seeds: str, seeds_sha256: str | None, allow_outside: Any, allow_urls: Any) -> tuple[Seeds, ImageAccess]:
    """The seed table (checked against its sha256) and the image access the stage was given."""
    access = ImageAccess.from_options(allow_outside, allow_urls)
    loaded = load_seeds(seeds, image_access=access)
    check_sha256(loaded.file, seeds_sha256, "the seed table")
    return loaded, access


def _input_rows(path: str | None, sha256: str | None, what: str) -> list[dict[str, Any]]:
    if not path:
        raise ConfigurationError(f"give the {what} file (-T input=...), as the build command writes it")
    check_sha256(path, sha256, what)
    return read_jsonl(path)


def _sample(sample_id: str, parts: list[prompts.Part], **metadata: Any) -> Sample:
    """One user message of the prompt's parts (texts and images in order)."""
    content: list[Content] = [
        ContentImage(image=image_for_inspect(p.image)) if isinstance(p, prompts.Image) else ContentText(text=p)
        for p in parts
    ]
    return Sample(id=sample_id, input=[ChatMessageUser(content=content)], metadata=metadata)


#: A stage log's metadata: ``_metadata(stage, data=<the seed table>, **facts)``.
_metadata = functools.partial(
    stage_metadata, BENCHMARK, version=VERSION, prompt_version=prompts.PROMPT_VERSION, fixtures="rmir"
)


def _status(parsed: Any, state: TaskState) -> str:
    """The parse's status, or ``CUT_OFF`` for an unreadable reply the token limit stopped."""
    return CUT_OFF if parsed.failed and str(state.output.stop_reason) in LIMIT_STOP_REASONS else parsed.status


# --- stage 1: query generation (Sec. 3.1.1) ------------------------------------------------------


@scorer(metrics=[rmir_build_means()])
def rmir_generation_scorer() -> Scorer:
    """The generated pairs of the reply, the categories abstained from and those missing."""

    async def score(state: TaskState, target: Target) -> Score:
        parsed = parse_generation(state.output.completion)
        pairs = {c: {"query": p.query, "target": p.target, "reasoning": p.reasoning} for c, p in parsed.pairs.items()}
        return Score(
            value={
                "pairs": len(pairs),
                "abstained": len(parsed.abstained),
                "missing": len(parsed.missing),
                "failed": int(parsed.failed),
            },
            answer=f"{len(pairs)} pair(s)",
            explanation=parsed.status,
            metadata={
                "status": _status(parsed, state),
                "pairs": pairs,
                "abstained": list(parsed.abstained),
                "missing": list(parsed.missing),
                "image_description": parsed.image_description,
            },
        )

    return score


@task
def rmir_build_generate(
    seeds: str,
    seeds_sha256: str | None = None,
    input: str | None = None,
    input_sha256: str | None = None,
    captions: Any = False,
    temperature: float = GENERATION_TEMPERATURE,
    max_tokens: int = GENERATION_MAX_TOKENS,
    allow_outside_images: Any = False,
    allow_url_images: Any = False,
) -> Task:
    """RMIR construction, stage 1: one functional, temporal and causal query (or an abstention) per
    input seed image. ``input``: JSON Lines of ``{"seed": id}`` (default: the seeds flagged
    ``input``, else every seed)."""
    check_settings(locals())  # every -T value of the wrong kind refused by name, before any is read
    table, access = _seeds(seeds, seeds_sha256, allow_outside_images, allow_url_images)
    show = parse_flag(captions, "captions")
    ids = (
        [str(r["seed"]) for r in _input_rows(input, input_sha256, "input seeds")]
        if input
        else list(table.inputs or table.by_id)
    )
    unknown = [i for i in ids if i not in table.by_id]
    if unknown:
        raise ConfigurationError(f"input seeds not in the seed table: {', '.join(unknown[:5])}")
    check_seed_images(table, ids, image_access=access)
    samples = [
        _sample(seed, prompts.generation_prompt(table[seed].image, table[seed].description, captions=show), seed=seed)
        for seed in ids
    ]
    return Task(
        dataset=MemoryDataset(samples, name="rmir_build_generate", location=str(input or table.file)),
        solver=[generate()],
        scorer=rmir_generation_scorer(),
        config=GenerateConfig(temperature=float(temperature), max_tokens=int(max_tokens)),  # both checked above
        version=VERSION,
        metadata=_metadata("generate", data=table.file, captions=show),
    )


# --- stage 2: query filtration (Sec. 3.1.2) ------------------------------------------------------


@scorer(metrics=[rmir_build_means()])
def rmir_filter_scorer() -> Scorer:
    """The filter's yes / no (``valid``); a reply without a verdict is ``failed``, neither."""

    async def score(state: TaskState, target: Target) -> Score:
        parsed = parse_filter(state.output.completion)
        return Score(
            value={
                "valid": int(parsed.valid is True),
                "rejected": int(parsed.valid is False),
                "failed": int(parsed.failed),
            },
            answer={True: "yes", False: "no", None: "-"}[parsed.valid],
            explanation=parsed.status,
            metadata={"valid": parsed.valid, "status": _status(parsed, state)},
        )

    return score


@task
def rmir_build_filter(
    seeds: str,
    input: str | None = None,
    seeds_sha256: str | None = None,
    input_sha256: str | None = None,
    captions: Any = False,
    max_tokens: int = FILTER_MAX_TOKENS,
    allow_outside_images: Any = False,
    allow_url_images: Any = False,
) -> Task:
    """RMIR construction, stage 2: does each generated query meet the constraints (yes / no)?
    ``input``: the generated queries (JSON Lines: ``id``, ``seed``, ``category``, ``query_text``, ``target_desc``)."""
    check_settings(locals())  # every -T value of the wrong kind refused by name, before any is read
    table, access = _seeds(seeds, seeds_sha256, allow_outside_images, allow_url_images)
    show = parse_flag(captions, "captions")
    rows = _input_rows(input, input_sha256, "generated queries")
    check_seed_images(table, {r["seed"] for r in rows}, image_access=access)
    samples = [
        _sample(
            row["id"],
            prompts.filter_prompt(
                table[row["seed"]].image,
                row["query_text"],
                row["target_desc"],
                table[row["seed"]].description,
                captions=show,
            ),
            query_id=row["id"],
            seed=row["seed"],
            category=row["category"],
        )
        for row in rows
    ]
    return Task(
        dataset=MemoryDataset(samples, name="rmir_build_filter", location=str(input)),
        solver=[generate()],
        scorer=rmir_filter_scorer(),
        config=GenerateConfig(temperature=FILTER_TEMPERATURE, max_tokens=int(max_tokens)),
        version=VERSION,
        metadata=_metadata("filter", data=table.file, captions=show),
    )


# --- stage 3: candidate retrieval (Sec. 3.1.3) ---------------------------------------------------


@scorer(metrics=[rmir_build_means()])
def rmir_retrieval_scorer(
    seeds: str,
    seeds_sha256: str | None = None,
    cache: Any = True,
    allow_outside_images: Any = False,
    allow_url_images: Any = False,
    **retrieval: Any,
) -> Scorer:
    """The query's candidates: top ``k`` of the image index, then ``text_k`` of the text index, each
    with its rank in each index that found it (metadata ``candidates``). ``retrieval``: the retrieve
    task's checked retrieval arguments (``retriever``, ``retriever_args``, ``k`` and their ``text_`` ones)."""
    table, _ = _seeds(seeds, seeds_sha256, allow_outside_images, allow_url_images)
    # The seed set indexed twice, as in the paper: by ``retriever`` over what it reads (images; a text-only
    # embedder reads captions) and, optionally, by ``text_retriever`` over the captions. Side -> (retriever,
    # args, depth); each index is built on first use (the pool cache of ``rmir.index`` applies).
    sides = {"image": (retrieval["retriever"], retrieval["retriever_args"], retrieval["k"])}
    if retrieval["text_retriever"] and retrieval["text_k"] > 0:
        sides["text"] = (retrieval["text_retriever"], retrieval["text_retriever_args"], retrieval["text_k"])
    indexes: dict[str, PoolIndex] = {}
    lock = threading.Lock()

    def index(side: str) -> PoolIndex:
        with lock:
            if side not in indexes:
                name, args, _ = sides[side]
                embedder = make_embedder(name, args)
                records = tuple(r for r in table.records if side == "image" or r.description)
                if not records:
                    raise ConfigurationError(
                        f"the {side} index is empty: no seed has {'a description' if side == 'text' else 'an image'}"
                    )
                # An image embedder gets each image alone (the paper's SigLIP index); a text-only one the captions.
                kind = POOL_CAPTION if side == "text" else pool_input_kind(name, False)
                inputs = pool_inputs(RmirData((), records, table.file), kind)
                indexes[side] = PoolIndex.build(embedder, [r.id for r in records], inputs, cache=cache)
            return indexes[side]

    def search(text: str, exclude: str) -> list[dict[str, Any]]:
        """Each index's top seed ids for ``text`` with their ranks, without ``exclude`` (the query's own
        image) and, in a sparse (lexical) index, without items sharing no term with it."""
        found: dict[str, dict[str, Any]] = {}
        for side, (_, _, depth) in sides.items():
            searched = index(side)
            vectors, zero = searched.embed_queries([EmbedInput(text=text)])
            if zero[0]:
                continue
            rows, scores = searched.search(vectors, min(depth + 1, len(searched.ids)))
            sparse = is_sparse(searched.vectors.matrix)
            ids = [searched.ids[i] for i, s in zip(rows[0], scores[0]) if not (sparse and s <= 0)]
            for rank, cid in enumerate([i for i in ids if i != exclude][:depth], start=1):
                found.setdefault(cid, {"id": cid, "image_rank": None, "text_rank": None})[f"{side}_rank"] = rank
        return list(found.values())

    async def score(state: TaskState, target: Target) -> Score:
        candidates = await anyio.to_thread.run_sync(search, state.metadata["target_desc"], state.metadata["seed"])
        image = sum(c["image_rank"] is not None for c in candidates)
        return Score(
            value={
                "candidates": len(candidates),
                "image_candidates": image,
                "text_only_candidates": len(candidates) - image,
            },
            answer=f"{len(candidates)} candidates",
            metadata={"candidates": candidates},
        )

    return score


def checked_searches(retriever: str, text_retriever: Any, k: Any, text_k: Any) -> tuple[str | None, int, int]:
    """The retrieve stage's searches, checked before any index is built (an unknown name failed at the first
    search): the caption retriever (None: no caption index), ``k`` and ``text_k``."""
    retriever_factory(retriever)
    text_name = text_retriever or None
    if text_name is not None:
        retriever_factory(text_name, "text_retriever")
    depth = whole_number("k", k, 1, MAX_K)
    text_depth = whole_number("text_k", text_k, 0, MAX_K)
    if text_name is not None and text_depth == 0:  # the caption index asked for would be silently skipped
        raise ConfigurationError(
            f"text_k must be at least 1 with a text_retriever ({text_name!r}); leave text_retriever unset for no "
            "caption index"
        )
    return text_name, depth, text_depth


@task
def rmir_build_retrieve(
    seeds: str,
    input: str | None = None,
    seeds_sha256: str | None = None,
    input_sha256: str | None = None,
    retriever: str = DEFAULT_RETRIEVER,
    retriever_args: Any = None,
    k: int = DEFAULT_K_IMAGE,
    text_retriever: str | None = None,
    text_retriever_args: Any = None,
    text_k: int = DEFAULT_K_TEXT,
    cache: Any = True,
    allow_outside_images: Any = False,
    allow_url_images: Any = False,
) -> Task:
    """RMIR construction, stage 3 (no chat model: ``--model none``): each filtered query's target
    description searched in the seed set, top ``k`` by ``retriever`` and top ``text_k`` by
    ``text_retriever`` over the captions (none by default), the query's own image left out."""
    check_settings(locals())  # every -T value of the wrong kind refused by name, before any is read
    text_name, depth, text_depth = checked_searches(retriever, text_retriever, k, text_k)
    retrieval: dict[str, Any] = {
        "retriever": retriever,
        "retriever_args": parse_retriever_args(retriever_args),
        "k": depth,
        "text_retriever": text_name,
        "text_retriever_args": parse_retriever_args(text_retriever_args, "text_retriever_args"),
        "text_k": text_depth,
    }
    cache_mode = parse_cache(cache)
    if cache_mode == "true":  # the seed index's shards are never written into a seed folder
        check_cache_outside(seeds)
    table, access = _seeds(seeds, seeds_sha256, allow_outside_images, allow_url_images)
    rows = _input_rows(input, input_sha256, "filtered queries")
    samples = [
        Sample(
            id=row["id"],
            input=row["target_desc"],
            metadata={"query_id": row["id"], "seed": row["seed"], "target_desc": row["target_desc"]},
        )
        for row in rows
    ]
    return Task(
        dataset=MemoryDataset(samples, name="rmir_build_retrieve", location=str(input)),
        solver=[],
        scorer=rmir_retrieval_scorer(
            seeds=seeds, seeds_sha256=seeds_sha256, cache=cache_mode, **retrieval, **image_access_args(access)
        ),
        version=VERSION,
        metadata=_metadata("retrieve", data=table.file, **retrieval, pool_input=pool_input_kind(retriever, False)),
    )


# --- stage 4: triplet judging (Sec. 3.1.4) -------------------------------------------------------


@scorer(metrics=[rmir_build_means()])
def rmir_panel_scorer(confidence: float = DEFAULT_CONFIDENCE) -> Scorer:
    """The panel's votes (metadata ``votes``: role -> True / False / ABSTAIN / None for a failed judge),
    its majority and confidence, and the decision at ``confidence`` (the build applies its own)."""

    async def score(state: TaskState, target: Target) -> Score:
        by_role: dict[str, str | None] = {}
        statuses: dict[str, str] = {}
        models: dict[str, Any] = {}
        for role, record in panel_replies(state).items():
            parsed = parse_judgement(record.get("reply"))
            last_stop = (record.get("stop_reasons") or [None])[-1]
            by_role[role] = None if record.get("failed") or parsed.failed else parsed.verdict
            # a reply stopped by the token limit (after its retry) abstains, whatever its cut-off text says;
            # one that read well but whose last ask the server refused as too long says so
            statuses[role] = (
                CUT_OFF
                if last_stop in LIMIT_STOP_REASONS
                else PROMPT_TOO_LONG
                if parsed.status == "ok" and last_stop == PROMPT_TOO_LONG
                else parsed.status
            )
            models[role] = record.get("model")
        votes = list(by_role.values())
        decision = decide(votes, float(confidence))
        return Score(
            value={
                "true": votes.count("True"),
                "false": votes.count("False"),
                "abstain": votes.count(prompts.ABSTAIN),
                "failed": votes.count(None),
                "confidence": decision.vote.confidence,
                **{outcome: int(decision.outcome == outcome) for outcome in ("positive", "negative", "uncertain")},
            },
            answer=str(decision.vote.label),
            explanation=f"{decision.outcome}: {dict(decision.vote.counts)} of {decision.vote.judges} judges",
            metadata={"votes": by_role, "statuses": statuses, "models": models},
        )

    return score


@task
def rmir_build_judge(
    seeds: str,
    input: str | None = None,
    seeds_sha256: str | None = None,
    input_sha256: str | None = None,
    judges: int = DEFAULT_JUDGES,
    temperature: float = JUDGE_TEMPERATURE,
    max_tokens: int = JUDGE_MAX_TOKENS,
    seed: int | None = None,
    captions: Any = False,
    allow_outside_images: Any = False,
    allow_url_images: Any = False,
) -> Task:
    """RMIR construction, stage 4: a panel of ``judges`` (roles ``judge_1``..``judge_<judges>``, each
    the evaluated model unless bound with ``--model-role``) votes True / False / ABSTAIN on every
    (query, candidate) triplet at ``temperature``. ``input``: JSON Lines of triplets (``id``,
    ``query_id``, ``seed``, ``query_text``, ``candidate``)."""
    check_settings(locals())  # every -T value of the wrong kind refused by name, before any is read
    seats = whole_number("judges", judges, 1, MAX_JUDGES)
    table, access = _seeds(seeds, seeds_sha256, allow_outside_images, allow_url_images)
    show = parse_flag(captions, "captions")
    rows = _input_rows(input, input_sha256, "triplets")
    check_seed_images(table, {r["seed"] for r in rows} | {r["candidate"] for r in rows}, image_access=access)
    samples = []
    for row in rows:
        source, candidate = table[row["seed"]], table[row["candidate"]]
        parts = prompts.judge_prompt(
            source.image,
            row["query_text"],
            candidate.image,
            input_caption=source.description,
            candidate_caption=candidate.description,
            captions=show,
        )
        samples.append(
            _sample(row["id"], parts, query_id=row["query_id"], candidate=row["candidate"], seed=row["seed"])
        )
    return panel_task(
        "rmir_build_judge",
        samples,
        str(input),
        role="judge",
        seats=seats,
        temperature=float(temperature),
        max_tokens=int(max_tokens),
        parse=parse_judgement,
        reminders=(prompts.JUDGE_REMINDER, prompts.JUDGE_LIMIT_REMINDER),
        scorer=rmir_panel_scorer(),
        version=VERSION,
        metadata=_metadata("judge", data=table.file, judges=seats, temperature=float(temperature), captions=show),
        seed=seed,
    )
