"""EcomEval in Inspect: the tasks, the judge and exact scorers (thin: the benchmark is ``ecom_tasks.ecomeval``,
the judge ``ecomeval.judging``; the judge meta-eval is ``ecomeval_judge_meta``). Model roles, panels, settings and
re-scoring: ``ecom_tasks/ecomeval/README.md``."""

from __future__ import annotations

from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import HeadlineMetric
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText, GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value, metric, scorer
from inspect_ai.solver import TaskState, generate

from ecom_tasks.ecomeval.judging import (
    JudgeSettings,
    judge_response,
    judgement_explanation,
    judgement_metadata,
    judgement_values,
    refused_metadata,
    refused_values,
)
from ecom_tasks.ecomeval.metrics import FAILURE_THRESHOLD, Outcome, panel_labels, summarize
from ecom_tasks.ecomeval.prompts import PROMPT_VERSION
from ecom_tasks.ecomeval.protocol import load_items
from ecom_tasks.ecomeval.schema import FIXTURES_LOCATION, MULTIMODAL_CATEGORY, TEXT_CATEGORIES
from ecom_tasks.ecomeval.scoring import score_exact
from ecom_tasks.ecomeval.variants import DEFAULT_GRADER, MAX_TOKENS
from ecom_tasks.images import DEFAULT_ACCESS, ImageAccess, image_for_inspect
from ecom_tasks.inspect_evals._task_parameters import parameters_of
from ecom_tasks.plugins import select_metrics
from ecom_tasks.provenance import task_metadata
from ecom_tasks.scorers import context_limit, inspect_judge
from ecom_tasks.scorers.context_limit import CONTEXT_EXCEEDED, RATE
from ecom_tasks.scorers.inspect_judge import GRADER_ROLE, grader_names, inspect_panel, judge_cache, require_grader
from ecom_tasks.scorers.inspect_scorers import (
    context_exceeded_of,
    outcome_mean,
    outcome_values,
    truncated_reply,
    within_context,
)
from ecom_tasks.scorers.judge import GRADER_MAX_TOKENS
from ecom_tasks.scorers.kinds import RUBRIC
from ecom_tasks.scorers.panel import MEDIAN
from ecom_tasks.scorers.settings import metric_names

#: Task version of every EcomEval task (Inspect ``Task.version``, also in ``eval.metadata``). 3: ``Score.value``
#: holds only numbers; the item's groups are its sample metadata. 3.1: the grade and exact answers are read as a
#: careful human reads them (boxed and headed grades, a grade the response wrote reported by the grader is not
#: the grader's; answers in the data's languages, "Therefore, B.", "B, because ...", "Answer: b"; a short answer
#: after a lead-in or before its reason, "The answer is Nike.", "Nike, because ...", a number by value, "20.0").
#: 3.3.0: a copy of the question with curled quotes or dashes is an echo; "Final Score: 1; it claims 3" is 1.
VERSION = "3.3.0"


#: The builder's parameters that set the judge: not parameters of ``ecomeval_exact``, which has none.
JUDGE_SETTINGS = ("cache", "grader_max_tokens", "judge_failure_threshold", "graders", "panel")

#: Whose graders: EcomEval's, with the paper's default grader.
GRADERS = {"task": "ecomeval", "default": DEFAULT_GRADER}


def outcomes_of(scores: list[SampleScore]) -> list[Outcome]:
    """Each score's numbers (``Score.value``, as the epochs reduced them) with its sample's groups (the
    sample metadata) and the panel's member labels (named by the judgements' metadata)."""
    labels = panel_labels(s.score.metadata for s in scores)
    return [
        Outcome.of(value, s.sample_metadata or {}, labels) for s in scores if isinstance(value := s.score.value, dict)
    ]


@metric
def ecomeval_metrics(metrics: list[str] | None = None, failure_threshold: float = FAILURE_THRESHOLD) -> Metric:
    """EcomEval's metrics (``metrics.summarize``; keys: the README's "Metrics"). Reads the numbers of
    ``Score.value`` and the groups of the sample metadata, so epoch reduction and re-scoring work."""
    specs = select_metrics(RUBRIC, metrics)
    threshold = float(failure_threshold)

    def compute(scores: list[SampleScore]) -> Value:
        return {**summarize(outcomes_of(scores), specs, threshold), RATE: context_limit.rate(outcome_values(scores))}

    return compute


def refused_score(refused: str, labels: list[str]) -> Score:
    """The score of a question the evaluated model's server refused (longer than its context)."""
    metadata = refused_metadata(refused, labels)
    return Score(value=refused_values(labels), answer=CONTEXT_EXCEEDED, explanation=refused, metadata=metadata)


@scorer(metrics=[ecomeval_metrics()])
def ecomeval_judge(
    cache: bool | str = True,
    grader_max_tokens: int | str = GRADER_MAX_TOKENS,
    graders: str | list[str] | None = None,
    panel: str = MEDIAN,
) -> Scorer:
    """Grade a response against the reference with the ``grader`` role or a panel (``judging.judge_response``;
    the settings as the task's, README "Settings")."""
    # Checked here too, not only in the task: `inspect score` builds this scorer from its logged options.
    settings = JudgeSettings.from_options(grader_max_tokens, panel)
    judge_cache(cache)  # a wrong cache is refused now, not at the first grade

    async def score(state: TaskState, target: Target) -> Score:
        members = inspect_judge.panel_models(graders, **GRADERS)
        refused = context_exceeded_of(state.output)
        if refused is not None:
            return refused_score(refused, [label for label, _ in members])
        asks, names = inspect_panel(members, cache)
        judgement = await judge_response(
            asks,
            state.metadata,
            state.output.completion,
            names=names,
            method=settings.method,
            max_tokens=settings.max_tokens,
        )
        return Score(
            value=judgement_values(judgement),
            answer=state.output.completion,
            explanation=judgement_explanation(judgement),
            metadata=judgement_metadata(judgement),
        )

    return score


@scorer(metrics=[ecomeval_metrics()])
def ecomeval_exact_scorer() -> Scorer:
    """Exact match after normalisation with the reference (an option letter or a short answer): grade 3
    for a match, 0 otherwise, so ``score`` reads as exact-match accuracy x 100. No judge."""

    async def score(state: TaskState, target: Target) -> Score:
        refused = context_exceeded_of(state.output)
        if refused is not None:
            return refused_score(refused, [])
        matched, values = score_exact(state.metadata, state.output.completion, truncated=truncated_reply(state.output))
        return Score(
            value={**values, CONTEXT_EXCEEDED: 0.0},
            answer=state.output.completion,
            explanation="exact match" if matched else "no exact match",
        )

    return score


def ecomeval_dataset(
    data: str | None = None, *, image_access: ImageAccess = DEFAULT_ACCESS, **filters: Any
) -> MemoryDataset:
    """One Sample per selected record; images are opened with pillow at load time."""
    items = load_items(data, image_access=image_access, **filters)
    samples = []
    for item in items:
        content: str | list[Any] = item.prompt
        if item.images:
            content = [
                ContentText(text=item.prompt),
                *(ContentImage(image=image_for_inspect(image)) for image in item.images),
            ]
        samples.append(
            Sample(id=item.id, input=[ChatMessageUser(content=content)], target=item.target, metadata=item.fields)
        )
    return MemoryDataset(samples, name="ecomeval", location=str(data or FIXTURES_LOCATION))


def judge_record(settings: JudgeSettings, cache: bool | str, graders: Any, with_threshold: bool = True) -> dict:
    """The judge's settings in a task's metadata (the same record ``ecom-tasks judge`` writes)."""
    return settings.record(
        with_threshold=with_threshold,
        grader_role=GRADER_ROLE,
        grader_default=DEFAULT_GRADER,
        judge_cache=str(cache),
        graders=",".join(grader_names(graders)) or "roles",
        panel=settings.method,
    )


def ecomeval_task(
    *,
    data: str | None = None,
    category: str | None = None,
    task: str | None = None,
    language: str | None = None,
    difficulty: str | None = None,
    multimodal: bool | str | None = None,
    metrics: str | None = None,
    max_tokens: int | None = MAX_TOKENS,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
    cache: bool | str = True,
    grader_max_tokens: int | str = GRADER_MAX_TOKENS,
    judge_failure_threshold: float | str = FAILURE_THRESHOLD,
    graders: str | list[str] | None = None,
    panel: str = MEDIAN,
    exact: bool = False,
) -> Task:
    """EcomEval's one task builder; every parameter is a ``-T`` setting of the tasks below (EcomEval's
    README, "Settings"; ``allow_outside_images`` / ``allow_url_images``: image paths outside the data's
    folder, http(s) URLs, refused by default). ``JUDGE_SETTINGS`` are the judge's."""
    names = metric_names(RUBRIC, metrics)
    settings = JudgeSettings.from_options(grader_max_tokens, panel, judge_failure_threshold)
    filters = dict(category=category, task=task, language=language, difficulty=difficulty, multimodal=multimodal)
    access = ImageAccess.from_options(allow_outside_images, allow_url_images)
    dataset = ecomeval_dataset(data, image_access=access, **filters, exact=exact)
    # Table 2's Average for text items; a run of multimodal items alone has Table 4's as headline.
    only_multimodal = all((s.metadata or {}).get("category") == MULTIMODAL_CATEGORY for s in dataset)
    headline = "score_multimodal" if only_multimodal else "score"
    judged = {} if exact else judge_record(settings, cache, graders)
    return Task(
        dataset=dataset,
        setup=None if exact else require_grader(graders, **GRADERS),
        solver=within_context(generate()),
        scorer=ecomeval_exact_scorer()
        if exact
        else ecomeval_judge(cache=cache, grader_max_tokens=settings.max_tokens, graders=graders, panel=settings.method),
        metrics=[ecomeval_metrics(metrics=names, failure_threshold=settings.failure_threshold)],
        config=GenerateConfig(temperature=0.0, max_tokens=max_tokens),
        version=VERSION,
        epochs=Epochs(1, outcome_mean()),
        headline_metric=HeadlineMetric(metric=headline) if names is None or headline in names else None,
        metadata={
            **task_metadata("ecomeval", task_version=VERSION, prompt_version=PROMPT_VERSION, data=data),
            "scoring": "exact match" if exact else "judge",
            **judged,
            **{key: ("all" if value in (None, "") else str(value)) for key, value in filters.items()},
            "data": str(data or FIXTURES_LOCATION),
        },
    )


@task
@parameters_of(ecomeval_task, "exact")
def ecomeval(**params: Any) -> Task:
    """EcomEval graded by the LLM judge (0-3 rubric); every category unless -T category=."""
    return ecomeval_task(**params)


@task
@parameters_of(ecomeval_task, "exact", *JUDGE_SETTINGS, category=",".join(TEXT_CATEGORIES))
def ecomeval_exact(**params: Any) -> Task:
    """EcomEval text items with an exact-answer reference, scored by exact match (no judge)."""
    return ecomeval_task(exact=True, **params)
