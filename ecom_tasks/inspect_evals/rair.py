"""RAIR in Inspect: the tasks, the scorer and the metrics (thin; the benchmark is in ``ecom_tasks.rair``).

Tasks, parameters, metrics, reference numbers and deviations are in ``ecom_tasks/rair/README.md``.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import HeadlineMetric
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ContentImage, ContentText, GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value, metric, scorer
from inspect_ai.solver import TaskState, generate

from ecom_tasks.data import parse_flag
from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.images import DEFAULT_ACCESS, ImageAccess, image_for_inspect
from ecom_tasks.inspect_evals._task_parameters import parameters_of
from ecom_tasks.plugins import select_metrics
from ecom_tasks.provenance import fixtures_location, task_metadata
from ecom_tasks.rair.metrics import COUNTS, Outcome, groups_of
from ecom_tasks.rair.prompts import PROMPT_VERSION
from ecom_tasks.rair.protocol import RairItem, load_items
from ecom_tasks.rair.rules import RuleSet, load_rules, provenance
from ecom_tasks.rair.scoring import score_reply, summarize
from ecom_tasks.rair.variants import MAX_TOKENS, TASK_VERSION
from ecom_tasks.scorers import context_limit
from ecom_tasks.scorers.context_limit import CONTEXT_EXCEEDED
from ecom_tasks.scorers.inspect_scorers import context_exceeded_of, outcome_mean, truncated_reply, within_context
from ecom_tasks.scorers.kinds import LABELS, strict_keys
from ecom_tasks.scorers.memo import last_call_memo
from ecom_tasks.scorers.settings import metric_names


def _outcomes(scores: list[SampleScore]) -> list[Outcome]:
    # The numbers of the (epoch-reduced) score, the groups of the sample (Inspect keeps its metadata).
    return [Outcome(s.score.value, **groups_of(s.sample_metadata)) for s in scores if isinstance(s.score.value, dict)]


#: rair_summary and rair_breakdown get the same scores list: one summary serves both.
_summary = last_call_memo(lambda scores, specs: summarize(_outcomes(scores), specs))


def _summary_keys(specs: list[MetricSpec]) -> tuple[str, ...]:
    failures = (*(key for key in COUNTS if key != "n"), context_limit.RATE)
    return (*(spec.name for spec in specs), *strict_keys(specs), *failures, "n", "l2_dim_acc")


@metric
def rair_summary(metrics: list[str] | None = None) -> Metric:
    """The selected ``labels`` metrics (Acc@2, Acc@4, Macro-F1, plugins'), the same on the strict reading
    (``acc2_strict`` ...: exactly the requested output), invalid and truncated rates,
    items, the share of prompts longer than the server's context, L2 mismatch-dimension accuracy."""
    specs = select_metrics(LABELS, metrics)
    keys = _summary_keys(specs)

    def compute(scores: list[SampleScore]) -> Value:
        result = _summary(scores, tuple(specs))
        return {key: result[key] for key in keys if key in result}

    return compute


@metric
def rair_breakdown(metrics: list[str] | None = None) -> Metric:
    """Per industry and hard intent, confusion matrix, error share by gold dimension."""
    specs = select_metrics(LABELS, metrics)
    keys = set(_summary_keys(specs))

    def compute(scores: list[SampleScore]) -> Value:
        result = _summary(scores, tuple(specs))
        return {key: value for key, value in result.items() if key not in keys}

    return compute


@scorer(metrics=[rair_summary(), rair_breakdown()])
def rair_scorer() -> Scorer:
    """Score a RAIR reply: the level after ``</think>``; anything else is invalid (wrong, counted)."""

    async def score(state: TaskState, target: Target) -> Score:
        refused = context_exceeded_of(state.output)  # the server's error, not the model's answer
        sent = [state.input] if isinstance(state.input, str) else [message.text for message in state.input]
        truncated = truncated_reply(state.output)
        parsed, outcome = score_reply(
            state.metadata, state.output.completion, truncated=truncated, prompt=sent, context_exceeded=bool(refused)
        )
        if refused:
            status = {"status": CONTEXT_EXCEEDED}
            return Score(value=outcome.numbers, answer=CONTEXT_EXCEEDED, explanation=refused, metadata=status)
        return Score(
            value=outcome.numbers,
            answer=parsed.display,
            explanation=parsed.detail or parsed.status,
            metadata={"status": parsed.status, "dimension": parsed.dimension},
        )

    return score


def _sample(item: RairItem) -> Sample:
    user = ChatMessageUser(
        content=[ContentText(text=item.user_prompt), ContentImage(image=image_for_inspect(item.image))]
        if item.image
        else item.user_prompt
    )
    return Sample(
        id=item.id,
        input=[ChatMessageSystem(content=item.system_prompt), user],
        target=item.target,
        metadata=item.fields,
    )


def rair_dataset(
    subset: str,
    rules: str | RuleSet | None = "none",
    image: bool = False,
    data: str | None = None,
    language: str | None = None,
    image_access: ImageAccess = DEFAULT_ACCESS,
) -> MemoryDataset:
    """One Sample per record of ``subset``; images are checked with pillow when they will be sent."""
    items = load_items(data, subset=subset, rules=rules, image=image, language=language, image_access=image_access)
    return MemoryDataset(
        [_sample(i) for i in items], name=f"rair_{subset}", location=str(data or fixtures_location("rair"))
    )


def rair_task(
    subset: str,
    /,
    *,
    rules: str | None = "none",
    image: bool | str = False,
    data: str | None = None,
    language: str | None = None,
    metrics: str | None = None,
    max_tokens: int | None = MAX_TOKENS,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
) -> Task:
    """RAIR's one task builder; every parameter is a ``-T`` setting of the tasks below. ``rules``: ``none``
    (the paper's Base), ``builtin`` (our rules document, not the paper's) or a rules file."""
    show_image = parse_flag(image, "image")
    ruleset = load_rules(rules)
    names = metric_names(LABELS, metrics)
    access = ImageAccess.from_options(allow_outside_images, allow_url_images)
    return Task(
        dataset=rair_dataset(subset, ruleset, show_image, data, language, access),
        solver=within_context(generate()),
        scorer=rair_scorer(),
        metrics=[rair_summary(metrics=names), rair_breakdown(metrics=names)],
        config=GenerateConfig(temperature=0.0, max_tokens=max_tokens),
        version=TASK_VERSION,
        epochs=Epochs(1, outcome_mean()),
        # The paper's primary metric (Sec. 6.1): it penalizes majority-class answering.
        headline_metric=HeadlineMetric(metric="macro_f1") if names is None or "macro_f1" in names else None,
        metadata=task_metadata(
            "rair",
            task_version=TASK_VERSION,
            prompt_version=PROMPT_VERSION,
            data=data,
            subset=subset,
            **provenance(ruleset),
            image=show_image,
            language=language or "all",
        ),
    )


@task
@parameters_of(rair_task)
def rair_general(**params: Any) -> Task:
    """RAIR General subset (industry-balanced; Table 5); no rules (Base) by default."""
    return rair_task("general", **params)


@task
@parameters_of(rair_task)
def rair_hard(**params: Any) -> Task:
    """RAIR Hard subset (intents DJ ER SS QA NC MA; Table 5); no rules (Base) by default."""
    return rair_task("hard", **params)


@task
@parameters_of(rair_task, image=True)
def rair_visual(**params: Any) -> Task:
    """RAIR Visually Salient subset with the item image (Table 4 w/ image)."""
    return rair_task("visual", **params)


@task
@parameters_of(rair_task)
def rair_visual_text(**params: Any) -> Task:
    """RAIR Visually Salient subset, text only (Table 4 w/o image)."""
    return rair_task("visual", **params)
