"""EcomEval in Inspect: tasks, the judge scorer, the exact scorer, the meta-eval (thin; the benchmark
is in ``ecom_tasks.ecomeval``).

``inspect eval ecom_tasks/ecomeval --model M --model-role grader=J`` asks every
question of the data (images as image parts) and has the ``grader`` role
grade each response on the 0-3 rubric (default grader: ``openai/gpt-4.1``,
the paper's, used only when ``OPENAI_API_KEY`` is set: without it and
without a ``grader`` role the task refuses to start, with a
:class:`~ecom_tasks.data.ConfigurationError` naming ``--model-role
grader=...``). ``inspect score LOG --model-role grader=J2`` re-grades a log
with another judge without calling the evaluated model; with ``cache`` on
(the default) a re-score with the same judge makes no judge call.
A panel of graders: ``--model-role grader_1=A --model-role grader_2=B
--model-role grader_3=C`` (or ``-T graders=role_or_model,...``) grades each
item with every grader; the item's grade is the panel's median (``-T
panel=majority`` for the majority grade), each grader's grade is kept, and
the metrics add per-grader scores and inter-judge agreement. Parameters,
metrics, reference numbers and deviations are in
``ecom_tasks/ecomeval/README.md``.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import HeadlineMetric
from inspect_ai.model import (
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelOutput,
    get_model,
    model_roles,
)
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    Value,
    metric,
    scorer,
)
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from ecom_tasks.data import ConfigurationError
from ecom_tasks.ecomeval.judging import (
    JUDGE_RETRIES,
    Judgement,
    judge_response,
    judgement_explanation,
    judgement_metadata,
    judgement_outcome,
)
from ecom_tasks.ecomeval.metrics import FAILURE_THRESHOLD, PANEL_PREFIX, judge_agreement
from ecom_tasks.ecomeval.prompts import GRADER_VERSION, PROMPT_VERSION
from ecom_tasks.ecomeval.protocol import EcomEvalItem, empty_categories, load_items, skipped_categories_message
from ecom_tasks.ecomeval.schema import FIXTURES_LOCATION, MULTIMODAL_CATEGORY, JudgeCase, load_judge_cases
from ecom_tasks.ecomeval.scoring import outcome_of, score_exact, summarize
from ecom_tasks.ecomeval.variants import DEFAULT_GRADER, MAX_TOKENS
from ecom_tasks.images import DEFAULT_ACCESS, ImageAccess
from ecom_tasks.inspect_evals._inspect_private import inspect_is_building_tasks
from ecom_tasks.plugins import parse_metric_names, select_metrics
from ecom_tasks.provenance import task_metadata
from ecom_tasks.scorers import context_limit
from ecom_tasks.scorers.context_limit import CONTEXT_EXCEEDED, RATE
from ecom_tasks.scorers.inspect_judge import inspect_ask, judge_cache
from ecom_tasks.scorers.inspect_scorers import context_exceeded_of, outcome_mean, outcome_values, within_context
from ecom_tasks.scorers.judge import GRADER_MAX_TOKENS, grader_max_tokens
from ecom_tasks.scorers.kinds import RUBRIC
from ecom_tasks.scorers.panel import MEDIAN, check_method

logger = logging.getLogger(__name__)

FIXTURES = FIXTURES_LOCATION
#: Task version of every EcomEval task (Inspect ``Task.version``, also in ``eval.metadata``).
VERSION = "2.0.0"
GRADER_ROLE = "grader"
#: Roles of a panel's members: ``grader_1``, ``grader_2``, ... (graded in their numeric order).
PANEL_ROLE = re.compile(r"^grader_(\d+)$")
#: Why a judge-graded task cannot start: no ``grader`` role, and the default grader has no key.
GRADER_MISSING = (
    "ecomeval needs a grader model: pass --model-role grader=<model> (e.g. grader=openai/gpt-4.1, or "
    f"grader=openai-api/<service>/<model> for a served model); the default grader {DEFAULT_GRADER} needs "
    "OPENAI_API_KEY, which is not set"
)


def grader_problem(graders: str | list[str] | None = None) -> str | None:
    """Why no grader can be used (:data:`GRADER_MISSING`), or None: a ``grader`` role, panel roles
    ``grader_<n>``, a ``graders`` list or the default grader's key will do. Call it where the run's
    model roles are known (a task built inside an eval, a solver)."""
    roles = model_roles()
    if (
        _names(graders)
        or GRADER_ROLE in roles
        or any(PANEL_ROLE.match(r) for r in roles)
        or os.environ.get("OPENAI_API_KEY")
    ):
        return None
    return GRADER_MISSING


def _names(graders: str | list[str] | None) -> list[str]:
    values = graders.split(",") if isinstance(graders, str) else list(graders or [])
    return [str(v).strip() for v in values if str(v).strip()]


def panel_models(graders: str | list[str] | None = None) -> list[tuple[str, Any]]:
    """(label, Inspect model) of each grader: the ``graders`` named (a role, or a model name such as
    ``openai/gpt-4.1``, labelled ``grader_<i>``); else the ``grader_<n>`` roles in numeric order; else
    the ``grader`` role (default :data:`DEFAULT_GRADER`)."""
    roles = model_roles()
    names = _names(graders)
    if names:
        chosen = []
        for index, name in enumerate(names, 1):
            if name in roles:
                chosen.append((name, get_model(role=name, required=True)))
            elif "/" in name:
                chosen.append((f"grader_{index}", get_model(name)))
            else:
                raise ConfigurationError(
                    f"graders: {name!r} is neither a model role of this run ({', '.join(sorted(roles)) or 'none'}) nor a model name"
                )
        if len({label for label, _ in chosen}) != len(chosen):
            raise ConfigurationError(f"graders: a grader is named twice in {names}")
        return chosen
    panel_roles = [match for match in map(PANEL_ROLE.match, roles) if match is not None]
    numbered = [match.string for match in sorted(panel_roles, key=lambda match: int(match.group(1)))]
    if numbered:
        return [(role, get_model(role=role, required=True)) for role in numbered]
    return [(GRADER_ROLE, get_model(role=GRADER_ROLE, default=DEFAULT_GRADER))]


def check_grader_at_build(graders: str | list[str] | None = None) -> None:
    """Refuse to build a judge-graded task without a usable grader, before any model is called.

    ``inspect eval`` builds tasks with the run's roles in place, so this fails the command at once
    (non-zero exit). A task object built outside an eval (Python, before ``eval(task,
    model_roles=...)``) cannot see its roles yet: :func:`require_grader` checks again at sample start.
    """
    if inspect_is_building_tasks():
        problem = grader_problem(graders)
        if problem:
            raise ConfigurationError(problem)


@solver
def require_grader(graders: str | list[str] | None = None) -> Solver:
    """Setup step of the judge-graded tasks: a sample does not start without a usable grader."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        problem = grader_problem(graders)
        if problem:
            raise ConfigurationError(problem)
        return state

    return solve


@metric
def ecomeval_metrics(metrics: list[str] | None = None, failure_threshold: float = FAILURE_THRESHOLD) -> Metric:
    """``score`` (Table 2's Average: mean of the text categories, 0-100), ``score_multimodal``
    (Table 4's Average: mean of the multimodal tasks), ``score_items``, the ``category/ language/
    task/ difficulty/`` means, ``judge_failure_rate``, ``score_unreliable`` (1.0 when the failure
    rate is above ``failure_threshold``), ``n`` and any plugin ``rubric`` metric. Reads only
    ``Score.value``, so epoch reduction and re-scoring work."""
    specs = select_metrics(RUBRIC, metrics)
    threshold = float(failure_threshold)

    def compute(scores: list[SampleScore]) -> Value:
        outcomes = outcome_values(scores)
        return {**summarize(outcomes, specs, threshold), RATE: context_limit.rate(outcomes)}

    return compute


def _refused_outcome(fields: dict[str, Any], members: list[str]) -> dict[str, float]:
    """The outcome of an item whose question the server refused (longer than its context): no response to
    grade, so no judge is asked; it counts as grade 0 (from each panel member in ``members``) and apart."""
    outcome = {**outcome_of(fields, 0), CONTEXT_EXCEEDED: 1.0}
    if len(members) > 1:
        for label in members:
            outcome.update({f"{PANEL_PREFIX}{label}/grade": 0.0, f"{PANEL_PREFIX}{label}/graded": 1.0})
    return outcome


async def _judge(
    fields: dict[str, Any],
    response: str | None,
    cache: bool | str,
    max_tokens: int,
    graders: str | list[str] | None,
    method: str,
) -> Judgement:
    problem = grader_problem(graders)
    if problem:  # never a raw provider error from the default grader's missing key
        raise ConfigurationError(problem)
    policy = judge_cache(cache)
    members = panel_models(graders)
    asks = {label: inspect_ask(model, cache=policy) for label, model in members}
    names = {label: str(model) for label, model in members}
    return await judge_response(
        asks, fields, response, names=names, method=method, max_tokens=max_tokens, retries=JUDGE_RETRIES
    )


@scorer(metrics=[ecomeval_metrics()])
def ecomeval_judge(
    cache: bool | str = True,
    grader_max_tokens: int | str = GRADER_MAX_TOKENS,
    graders: str | list[str] | None = None,
    panel: str = MEDIAN,
) -> Scorer:
    """Grade a response against the reference with the ``grader`` role (0-3 rubric, temperature 0,
    at most ``grader_max_tokens`` output tokens; one retry when the grade cannot be read or the reply
    was cut off by a limit; then a judge failure, never a 0). ``cache``: keep grader replies
    (``true``: no expiry; an expiry such as ``1W``; ``false``: off). A panel (roles ``grader_1``,
    ``grader_2``, ... or ``graders``: roles or model names) grades with every member; the item's grade
    is the panel's ``median`` or ``majority`` (``panel``), every member's grade is kept."""
    limit = _grader_limit(grader_max_tokens)
    method = _panel_method(panel)

    async def score(state: TaskState, target: Target) -> Score:
        refused = context_exceeded_of(state.output)
        if refused is not None:
            outcome = _refused_outcome(state.metadata, [label for label, _ in panel_models(graders)])
            return Score(
                value=outcome, answer=CONTEXT_EXCEEDED, explanation=refused, metadata={"status": CONTEXT_EXCEEDED}
            )
        judgement = await _judge(state.metadata, state.output.completion, cache, limit, graders, method)
        return Score(
            value={**judgement_outcome(state.metadata, judgement), CONTEXT_EXCEEDED: 0.0},
            answer=state.output.completion,
            explanation=judgement_explanation(judgement),
            metadata=judgement_metadata(judgement),
        )

    return score


def _panel_method(value: str) -> str:
    try:
        return check_method(value)
    except ValueError as exc:
        raise ConfigurationError(str(exc)) from None


def _grader_limit(value: int | str) -> int:
    try:
        return grader_max_tokens(value)
    except ValueError as exc:
        raise ConfigurationError(str(exc)) from None


def _failure_threshold(value: float | str) -> float:
    try:
        threshold = float(value)
    except (TypeError, ValueError):
        threshold = float("nan")
    if not 0 <= threshold <= 1:
        raise ConfigurationError(f"judge_failure_threshold must be a share between 0 and 1, got {value!r}")
    return threshold


@scorer(metrics=[ecomeval_metrics()])
def ecomeval_exact_scorer() -> Scorer:
    """Exact match after normalisation with the reference (an option letter or a short answer): grade 3
    for a match, 0 otherwise, so ``score`` reads as exact-match accuracy x 100. No judge."""

    async def score(state: TaskState, target: Target) -> Score:
        refused = context_exceeded_of(state.output)
        if refused is not None:
            outcome = _refused_outcome(state.metadata, [])
            return Score(
                value=outcome, answer=CONTEXT_EXCEEDED, explanation=refused, metadata={"status": CONTEXT_EXCEEDED}
            )
        matched, outcome = score_exact(state.metadata, state.output.completion)
        return Score(
            value={**outcome, CONTEXT_EXCEEDED: 0.0},
            answer=state.output.completion,
            explanation="exact match" if matched else "no exact match",
        )

    return score


def _sample(item: EcomEvalItem) -> Sample:
    content: str | list[Any] = item.prompt
    if item.images:
        content = [ContentText(text=item.prompt), *(ContentImage(image=image) for image in item.images)]
    return Sample(id=item.id, input=[ChatMessageUser(content=content)], target=item.target, metadata=item.fields)


def ecomeval_dataset(
    data: str | None = None, *, image_access: ImageAccess = DEFAULT_ACCESS, **filters: Any
) -> MemoryDataset:
    """One Sample per selected record; images are opened with pillow at load time."""
    items = load_items(data, image_access=image_access, **filters)
    if filters.get("exact"):
        missing = empty_categories(items, filters.get("category"))
        if missing:
            logger.warning(skipped_categories_message("ecomeval_exact", data, missing))
    return MemoryDataset([_sample(i) for i in items], name="ecomeval", location=str(data or FIXTURES))


def _task(
    *,
    data: str | None,
    category: str | None,
    task_name: str | None,
    language: str | None,
    difficulty: str | None,
    multimodal: bool | str | None,
    metrics: str | None,
    cache: bool | str,
    max_tokens: int | None,
    grader_max_tokens: int | str,
    judge_failure_threshold: float | str,
    exact: bool,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
    graders: str | list[str] | None = None,
    panel: str = MEDIAN,
) -> Task:
    names = parse_metric_names(metrics)
    limit = _grader_limit(grader_max_tokens)
    threshold = _failure_threshold(judge_failure_threshold)
    method = _panel_method(panel)
    if not exact:
        check_grader_at_build(graders)
    filters = {
        "category": category,
        "task": task_name,
        "language": language,
        "difficulty": difficulty,
        "multimodal": multimodal,
        "exact": exact,
    }
    dataset = ecomeval_dataset(
        data, image_access=ImageAccess.from_options(allow_outside_images, allow_url_images), **filters
    )
    # Table 2's Average for text items; a run of multimodal items alone has Table 4's as headline.
    only_multimodal = all((s.metadata or {}).get("category") == MULTIMODAL_CATEGORY for s in dataset)
    headline = "score_multimodal" if only_multimodal else "score"
    return Task(
        dataset=dataset,
        setup=None if exact else require_grader(graders),
        solver=within_context(generate()),
        scorer=ecomeval_exact_scorer()
        if exact
        else ecomeval_judge(cache=cache, grader_max_tokens=limit, graders=graders, panel=method),
        metrics=[ecomeval_metrics(metrics=names, failure_threshold=threshold)],
        config=GenerateConfig(temperature=0.0, max_tokens=max_tokens),
        version=VERSION,
        epochs=Epochs(1, outcome_mean()),
        headline_metric=HeadlineMetric(metric=headline) if names is None or headline in names else None,
        metadata={
            **task_metadata(
                "ecomeval", task_version=VERSION, prompt_version=PROMPT_VERSION, data=data, fixtures=FIXTURES
            ),
            "scoring": "exact match" if exact else "judge",
            **(
                {}
                if exact
                else {
                    "grader_role": GRADER_ROLE,
                    "grader_default": DEFAULT_GRADER,
                    "grader_prompt_version": GRADER_VERSION,
                    "judge_temperature": 0.0,
                    "judge_retries": JUDGE_RETRIES,
                    "judge_cache": str(cache),
                    "grader_max_tokens": limit,
                    "judge_failure_threshold": threshold,
                    "graders": ",".join(_names(graders)) or "roles",
                    "panel": method,
                }
            ),
            **{key: ("all" if value in (None, "") else str(value)) for key, value in filters.items() if key != "exact"},
            "data": str(data or FIXTURES),
        },
    )


# --- the judge meta-eval --------------------------------------------------------------------------


@metric
def judge_meta_metrics() -> Metric:
    """``agreement`` (share graded exactly as expected), ``mae``, ``adversarial_high_grade_rate`` (share
    of adversarial cases graded >= 2; should be 0), ``judge_failure_rate``, ``n``; with a panel the
    same per grader (``<label>/agreement``, ...) and the inter-judge ``panel/...`` agreement."""

    def compute(scores: list[SampleScore]) -> Value:
        return judge_agreement(outcome_values(scores))

    return compute


@solver
def gold_response() -> Solver:
    """The sample's fixed response becomes the output: the evaluated model is never called."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.output = ModelOutput.from_content(model="gold", content=state.metadata["response"])
        state.completed = True
        return state

    return solve


@scorer(metrics=[judge_meta_metrics()])
def ecomeval_judge_meta_scorer(
    cache: bool | str = True,
    grader_max_tokens: int | str = GRADER_MAX_TOKENS,
    graders: str | list[str] | None = None,
    panel: str = MEDIAN,
) -> Scorer:
    """Grade a gold case with the ``grader`` role (or a panel) exactly as ``ecomeval_judge`` grades responses."""
    limit = _grader_limit(grader_max_tokens)
    method = _panel_method(panel)

    async def score(state: TaskState, target: Target) -> Score:
        judgement = await _judge(state.metadata, state.metadata["response"], cache, limit, graders, method)
        expected = int(state.metadata["expected_grade"])
        value = judgement_outcome({}, judgement)
        value.update(expected=float(expected), adversarial=float(state.metadata["kind"] == "adversarial"))
        return Score(
            value=value,
            answer=str(judgement.grade) if judgement.grade is not None else judgement.status,
            explanation=judgement_explanation(judgement),
            metadata={"expected_grade": expected, **judgement_metadata(judgement)},
        )

    return score


def _case_sample(case: JudgeCase) -> Sample:
    return Sample(
        id=case.id,
        input=case.question,
        target=case.reference,
        metadata={
            "question": case.question,
            "reference": case.reference,
            "response": case.response,
            "expected_grade": case.expected_grade,
            "kind": case.kind,
            "source": case.source,
        },
    )


@task
def ecomeval_judge_meta(
    data: str | None = None,
    cache: bool | str = True,
    grader_max_tokens: int = GRADER_MAX_TOKENS,
    graders: str | None = None,
    panel: str = MEDIAN,
) -> Task:
    """Check the ``grader`` role (or a panel: roles ``grader_1``, ``grader_2``, ... or ``graders``) on a
    gold set: the paper's App. D verdicts, adversarial responses (format without content, a claim of
    being right, wrong language, empty, a prompt injection) and controls; a panel reports each
    grader's agreement with the expected grades too. Run with ``--model none``: only graders are called."""
    limit = _grader_limit(grader_max_tokens)
    method = _panel_method(panel)
    check_grader_at_build(graders)
    cases = load_judge_cases(data)
    return Task(
        dataset=MemoryDataset(
            [_case_sample(c) for c in cases], name="ecomeval_judge_meta", location=str(data or f"{FIXTURES}/judge_meta")
        ),
        setup=require_grader(graders),
        solver=gold_response(),
        scorer=ecomeval_judge_meta_scorer(cache=cache, grader_max_tokens=limit, graders=graders, panel=method),
        version=VERSION,
        epochs=Epochs(1, outcome_mean()),
        headline_metric=HeadlineMetric(metric="agreement"),
        metadata={
            # The "model" evaluated here is the grader: its prompt is the one that counts.
            **task_metadata(
                "ecomeval",
                task_version=VERSION,
                prompt_version=GRADER_VERSION,
                data=data,
                fixtures=f"{FIXTURES}/judge_meta",
            ),
            "grader_role": GRADER_ROLE,
            "grader_default": DEFAULT_GRADER,
            "grader_prompt_version": GRADER_VERSION,
            "judge_cache": str(cache),
            "grader_max_tokens": limit,
            "graders": ",".join(_names(graders)) or "roles",
            "panel": method,
        },
    )


__all__ = [
    "ecomeval_exact_scorer",
    "ecomeval_judge",
    "ecomeval_judge_meta",
    "ecomeval_judge_meta_scorer",
    "ecomeval_metrics",
    "gold_response",
    "judge_meta_metrics",
    "require_grader",
]  # and the generated tasks (PRESETS), added at the end


# --- Generated by ecom_tasks/inspect_evals/_generate_tasks.py from ecom_tasks/ecomeval/variants.py; do not edit by hand. ---
# fmt: off

@task
def ecomeval(
    data: str | None = None,
    category: str | None = None,
    task: str | None = None,
    language: str | None = None,
    difficulty: str | None = None,
    multimodal: bool | str | None = None,
    metrics: str | None = None,
    cache: bool | str = True,
    max_tokens: int | None = MAX_TOKENS,
    grader_max_tokens: int = GRADER_MAX_TOKENS,
    judge_failure_threshold: float = FAILURE_THRESHOLD,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
    graders: str | None = None,
    panel: str = MEDIAN,
) -> Task:
    """EcomEval, every category, graded by the LLM judge (0-3 rubric).

    Filters (comma lists; default all): category (slugs or the paper's names), task, language, difficulty; multimodal
    true = only items with images, false = only text items. Also metrics, cache (judge replies), max_tokens (the
    evaluated model's; default: the server's), grader_max_tokens (the grader's output limit), judge_failure_threshold
    (share of judge failures above which score_unreliable is 1), allow_outside_images / allow_url_images (image paths
    outside the data's folder, http(s) URLs: refused by default), graders (a panel: comma list of model roles or model
    names; default the grader_<n> roles, else grader) and panel (median or majority). Details:
    ``ecom_tasks/ecomeval/README.md``.
    """
    return _task(
        exact=False, data=data, category=category, task_name=task, language=language, difficulty=difficulty,
        multimodal=multimodal, metrics=metrics, cache=cache, max_tokens=max_tokens, grader_max_tokens=grader_max_tokens,
        judge_failure_threshold=judge_failure_threshold, allow_outside_images=allow_outside_images,
        allow_url_images=allow_url_images, graders=graders, panel=panel,
    )


@task
def ecomeval_ecom_qa(
    data: str | None = None,
    category: str | None = "ecom_qa",
    task: str | None = None,
    language: str | None = None,
    difficulty: str | None = None,
    multimodal: bool | str | None = None,
    metrics: str | None = None,
    cache: bool | str = True,
    max_tokens: int | None = MAX_TOKENS,
    grader_max_tokens: int = GRADER_MAX_TOKENS,
    judge_failure_threshold: float = FAILURE_THRESHOLD,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
    graders: str | None = None,
    panel: str = MEDIAN,
) -> Task:
    """EcomEval Ecom QA, graded by the LLM judge.

    Filters (comma lists; default all): category (slugs or the paper's names), task, language, difficulty; multimodal
    true = only items with images, false = only text items. Also metrics, cache (judge replies), max_tokens (the
    evaluated model's; default: the server's), grader_max_tokens (the grader's output limit), judge_failure_threshold
    (share of judge failures above which score_unreliable is 1), allow_outside_images / allow_url_images (image paths
    outside the data's folder, http(s) URLs: refused by default), graders (a panel: comma list of model roles or model
    names; default the grader_<n> roles, else grader) and panel (median or majority). Details:
    ``ecom_tasks/ecomeval/README.md``.
    """
    return _task(
        exact=False, data=data, category=category, task_name=task, language=language, difficulty=difficulty,
        multimodal=multimodal, metrics=metrics, cache=cache, max_tokens=max_tokens, grader_max_tokens=grader_max_tokens,
        judge_failure_threshold=judge_failure_threshold, allow_outside_images=allow_outside_images,
        allow_url_images=allow_url_images, graders=graders, panel=panel,
    )


@task
def ecomeval_shopping_concepts(
    data: str | None = None,
    category: str | None = "shopping_concepts",
    task: str | None = None,
    language: str | None = None,
    difficulty: str | None = None,
    multimodal: bool | str | None = None,
    metrics: str | None = None,
    cache: bool | str = True,
    max_tokens: int | None = MAX_TOKENS,
    grader_max_tokens: int = GRADER_MAX_TOKENS,
    judge_failure_threshold: float = FAILURE_THRESHOLD,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
    graders: str | None = None,
    panel: str = MEDIAN,
) -> Task:
    """EcomEval Shopping Concept, graded by the LLM judge.

    Filters (comma lists; default all): category (slugs or the paper's names), task, language, difficulty; multimodal
    true = only items with images, false = only text items. Also metrics, cache (judge replies), max_tokens (the
    evaluated model's; default: the server's), grader_max_tokens (the grader's output limit), judge_failure_threshold
    (share of judge failures above which score_unreliable is 1), allow_outside_images / allow_url_images (image paths
    outside the data's folder, http(s) URLs: refused by default), graders (a panel: comma list of model roles or model
    names; default the grader_<n> roles, else grader) and panel (median or majority). Details:
    ``ecom_tasks/ecomeval/README.md``.
    """
    return _task(
        exact=False, data=data, category=category, task_name=task, language=language, difficulty=difficulty,
        multimodal=multimodal, metrics=metrics, cache=cache, max_tokens=max_tokens, grader_max_tokens=grader_max_tokens,
        judge_failure_threshold=judge_failure_threshold, allow_outside_images=allow_outside_images,
        allow_url_images=allow_url_images, graders=graders, panel=panel,
    )


@task
def ecomeval_user_understanding(
    data: str | None = None,
    category: str | None = "user_understanding",
    task: str | None = None,
    language: str | None = None,
    difficulty: str | None = None,
    multimodal: bool | str | None = None,
    metrics: str | None = None,
    cache: bool | str = True,
    max_tokens: int | None = MAX_TOKENS,
    grader_max_tokens: int = GRADER_MAX_TOKENS,
    judge_failure_threshold: float = FAILURE_THRESHOLD,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
    graders: str | None = None,
    panel: str = MEDIAN,
) -> Task:
    """EcomEval User Understanding, graded by the LLM judge.

    Filters (comma lists; default all): category (slugs or the paper's names), task, language, difficulty; multimodal
    true = only items with images, false = only text items. Also metrics, cache (judge replies), max_tokens (the
    evaluated model's; default: the server's), grader_max_tokens (the grader's output limit), judge_failure_threshold
    (share of judge failures above which score_unreliable is 1), allow_outside_images / allow_url_images (image paths
    outside the data's folder, http(s) URLs: refused by default), graders (a panel: comma list of model roles or model
    names; default the grader_<n> roles, else grader) and panel (median or majority). Details:
    ``ecom_tasks/ecomeval/README.md``.
    """
    return _task(
        exact=False, data=data, category=category, task_name=task, language=language, difficulty=difficulty,
        multimodal=multimodal, metrics=metrics, cache=cache, max_tokens=max_tokens, grader_max_tokens=grader_max_tokens,
        judge_failure_threshold=judge_failure_threshold, allow_outside_images=allow_outside_images,
        allow_url_images=allow_url_images, graders=graders, panel=panel,
    )


@task
def ecomeval_shopping_reasoning(
    data: str | None = None,
    category: str | None = "shopping_reasoning",
    task: str | None = None,
    language: str | None = None,
    difficulty: str | None = None,
    multimodal: bool | str | None = None,
    metrics: str | None = None,
    cache: bool | str = True,
    max_tokens: int | None = MAX_TOKENS,
    grader_max_tokens: int = GRADER_MAX_TOKENS,
    judge_failure_threshold: float = FAILURE_THRESHOLD,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
    graders: str | None = None,
    panel: str = MEDIAN,
) -> Task:
    """EcomEval Shopping Reasoning, graded by the LLM judge.

    Filters (comma lists; default all): category (slugs or the paper's names), task, language, difficulty; multimodal
    true = only items with images, false = only text items. Also metrics, cache (judge replies), max_tokens (the
    evaluated model's; default: the server's), grader_max_tokens (the grader's output limit), judge_failure_threshold
    (share of judge failures above which score_unreliable is 1), allow_outside_images / allow_url_images (image paths
    outside the data's folder, http(s) URLs: refused by default), graders (a panel: comma list of model roles or model
    names; default the grader_<n> roles, else grader) and panel (median or majority). Details:
    ``ecom_tasks/ecomeval/README.md``.
    """
    return _task(
        exact=False, data=data, category=category, task_name=task, language=language, difficulty=difficulty,
        multimodal=multimodal, metrics=metrics, cache=cache, max_tokens=max_tokens, grader_max_tokens=grader_max_tokens,
        judge_failure_threshold=judge_failure_threshold, allow_outside_images=allow_outside_images,
        allow_url_images=allow_url_images, graders=graders, panel=panel,
    )


@task
def ecomeval_ecom_generation(
    data: str | None = None,
    category: str | None = "ecom_generation",
    task: str | None = None,
    language: str | None = None,
    difficulty: str | None = None,
    multimodal: bool | str | None = None,
    metrics: str | None = None,
    cache: bool | str = True,
    max_tokens: int | None = MAX_TOKENS,
    grader_max_tokens: int = GRADER_MAX_TOKENS,
    judge_failure_threshold: float = FAILURE_THRESHOLD,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
    graders: str | None = None,
    panel: str = MEDIAN,
) -> Task:
    """EcomEval Ecom Generative Ability, graded by the LLM judge.

    Filters (comma lists; default all): category (slugs or the paper's names), task, language, difficulty; multimodal
    true = only items with images, false = only text items. Also metrics, cache (judge replies), max_tokens (the
    evaluated model's; default: the server's), grader_max_tokens (the grader's output limit), judge_failure_threshold
    (share of judge failures above which score_unreliable is 1), allow_outside_images / allow_url_images (image paths
    outside the data's folder, http(s) URLs: refused by default), graders (a panel: comma list of model roles or model
    names; default the grader_<n> roles, else grader) and panel (median or majority). Details:
    ``ecom_tasks/ecomeval/README.md``.
    """
    return _task(
        exact=False, data=data, category=category, task_name=task, language=language, difficulty=difficulty,
        multimodal=multimodal, metrics=metrics, cache=cache, max_tokens=max_tokens, grader_max_tokens=grader_max_tokens,
        judge_failure_threshold=judge_failure_threshold, allow_outside_images=allow_outside_images,
        allow_url_images=allow_url_images, graders=graders, panel=panel,
    )


@task
def ecomeval_ecom_multimodal(
    data: str | None = None,
    category: str | None = "ecom_multimodal",
    task: str | None = None,
    language: str | None = None,
    difficulty: str | None = None,
    multimodal: bool | str | None = None,
    metrics: str | None = None,
    cache: bool | str = True,
    max_tokens: int | None = MAX_TOKENS,
    grader_max_tokens: int = GRADER_MAX_TOKENS,
    judge_failure_threshold: float = FAILURE_THRESHOLD,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
    graders: str | None = None,
    panel: str = MEDIAN,
) -> Task:
    """EcomEval Ecom Multimodal, graded by the LLM judge.

    Filters (comma lists; default all): category (slugs or the paper's names), task, language, difficulty; multimodal
    true = only items with images, false = only text items. Also metrics, cache (judge replies), max_tokens (the
    evaluated model's; default: the server's), grader_max_tokens (the grader's output limit), judge_failure_threshold
    (share of judge failures above which score_unreliable is 1), allow_outside_images / allow_url_images (image paths
    outside the data's folder, http(s) URLs: refused by default), graders (a panel: comma list of model roles or model
    names; default the grader_<n> roles, else grader) and panel (median or majority). Details:
    ``ecom_tasks/ecomeval/README.md``.
    """
    return _task(
        exact=False, data=data, category=category, task_name=task, language=language, difficulty=difficulty,
        multimodal=multimodal, metrics=metrics, cache=cache, max_tokens=max_tokens, grader_max_tokens=grader_max_tokens,
        judge_failure_threshold=judge_failure_threshold, allow_outside_images=allow_outside_images,
        allow_url_images=allow_url_images, graders=graders, panel=panel,
    )


@task
def ecomeval_exact(
    data: str | None = None,
    category: str | None = "ecom_qa,shopping_concepts,user_understanding,shopping_reasoning,ecom_generation",
    task: str | None = None,
    language: str | None = None,
    difficulty: str | None = None,
    multimodal: bool | str | None = None,
    metrics: str | None = None,
    cache: bool | str = True,
    max_tokens: int | None = MAX_TOKENS,
    grader_max_tokens: int = GRADER_MAX_TOKENS,
    judge_failure_threshold: float = FAILURE_THRESHOLD,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
    graders: str | None = None,
    panel: str = MEDIAN,
) -> Task:
    """EcomEval text items with an exact-answer reference, exact match (no judge).

    Filters (comma lists; default all): category (slugs or the paper's names), task, language, difficulty; multimodal
    true = only items with images, false = only text items. Also metrics, cache (judge replies), max_tokens (the
    evaluated model's; default: the server's), grader_max_tokens (the grader's output limit), judge_failure_threshold
    (share of judge failures above which score_unreliable is 1), allow_outside_images / allow_url_images (image paths
    outside the data's folder, http(s) URLs: refused by default), graders (a panel: comma list of model roles or model
    names; default the grader_<n> roles, else grader) and panel (median or majority). Details:
    ``ecom_tasks/ecomeval/README.md``.
    """
    return _task(
        exact=True, data=data, category=category, task_name=task, language=language, difficulty=difficulty,
        multimodal=multimodal, metrics=metrics, cache=cache, max_tokens=max_tokens, grader_max_tokens=grader_max_tokens,
        judge_failure_threshold=judge_failure_threshold, allow_outside_images=allow_outside_images,
        allow_url_images=allow_url_images, graders=graders, panel=panel,
    )


@task
def ecomeval_exact_ecom_qa(
    data: str | None = None,
    category: str | None = "ecom_qa",
    task: str | None = None,
    language: str | None = None,
    difficulty: str | None = None,
    multimodal: bool | str | None = None,
    metrics: str | None = None,
    cache: bool | str = True,
    max_tokens: int | None = MAX_TOKENS,
    grader_max_tokens: int = GRADER_MAX_TOKENS,
    judge_failure_threshold: float = FAILURE_THRESHOLD,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
    graders: str | None = None,
    panel: str = MEDIAN,
) -> Task:
    """EcomEval Ecom QA exact-answer items, exact match (no judge).

    Filters (comma lists; default all): category (slugs or the paper's names), task, language, difficulty; multimodal
    true = only items with images, false = only text items. Also metrics, cache (judge replies), max_tokens (the
    evaluated model's; default: the server's), grader_max_tokens (the grader's output limit), judge_failure_threshold
    (share of judge failures above which score_unreliable is 1), allow_outside_images / allow_url_images (image paths
    outside the data's folder, http(s) URLs: refused by default), graders (a panel: comma list of model roles or model
    names; default the grader_<n> roles, else grader) and panel (median or majority). Details:
    ``ecom_tasks/ecomeval/README.md``.
    """
    return _task(
        exact=True, data=data, category=category, task_name=task, language=language, difficulty=difficulty,
        multimodal=multimodal, metrics=metrics, cache=cache, max_tokens=max_tokens, grader_max_tokens=grader_max_tokens,
        judge_failure_threshold=judge_failure_threshold, allow_outside_images=allow_outside_images,
        allow_url_images=allow_url_images, graders=graders, panel=panel,
    )


@task
def ecomeval_exact_shopping_concepts(
    data: str | None = None,
    category: str | None = "shopping_concepts",
    task: str | None = None,
    language: str | None = None,
    difficulty: str | None = None,
    multimodal: bool | str | None = None,
    metrics: str | None = None,
    cache: bool | str = True,
    max_tokens: int | None = MAX_TOKENS,
    grader_max_tokens: int = GRADER_MAX_TOKENS,
    judge_failure_threshold: float = FAILURE_THRESHOLD,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
    graders: str | None = None,
    panel: str = MEDIAN,
) -> Task:
    """EcomEval Shopping Concept exact-answer items, exact match (no judge).

    Filters (comma lists; default all): category (slugs or the paper's names), task, language, difficulty; multimodal
    true = only items with images, false = only text items. Also metrics, cache (judge replies), max_tokens (the
    evaluated model's; default: the server's), grader_max_tokens (the grader's output limit), judge_failure_threshold
    (share of judge failures above which score_unreliable is 1), allow_outside_images / allow_url_images (image paths
    outside the data's folder, http(s) URLs: refused by default), graders (a panel: comma list of model roles or model
    names; default the grader_<n> roles, else grader) and panel (median or majority). Details:
    ``ecom_tasks/ecomeval/README.md``.
    """
    return _task(
        exact=True, data=data, category=category, task_name=task, language=language, difficulty=difficulty,
        multimodal=multimodal, metrics=metrics, cache=cache, max_tokens=max_tokens, grader_max_tokens=grader_max_tokens,
        judge_failure_threshold=judge_failure_threshold, allow_outside_images=allow_outside_images,
        allow_url_images=allow_url_images, graders=graders, panel=panel,
    )


@task
def ecomeval_exact_user_understanding(
    data: str | None = None,
    category: str | None = "user_understanding",
    task: str | None = None,
    language: str | None = None,
    difficulty: str | None = None,
    multimodal: bool | str | None = None,
    metrics: str | None = None,
    cache: bool | str = True,
    max_tokens: int | None = MAX_TOKENS,
    grader_max_tokens: int = GRADER_MAX_TOKENS,
    judge_failure_threshold: float = FAILURE_THRESHOLD,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
    graders: str | None = None,
    panel: str = MEDIAN,
) -> Task:
    """EcomEval User Understanding exact-answer items, exact match (no judge).

    Filters (comma lists; default all): category (slugs or the paper's names), task, language, difficulty; multimodal
    true = only items with images, false = only text items. Also metrics, cache (judge replies), max_tokens (the
    evaluated model's; default: the server's), grader_max_tokens (the grader's output limit), judge_failure_threshold
    (share of judge failures above which score_unreliable is 1), allow_outside_images / allow_url_images (image paths
    outside the data's folder, http(s) URLs: refused by default), graders (a panel: comma list of model roles or model
    names; default the grader_<n> roles, else grader) and panel (median or majority). Details:
    ``ecom_tasks/ecomeval/README.md``.
    """
    return _task(
        exact=True, data=data, category=category, task_name=task, language=language, difficulty=difficulty,
        multimodal=multimodal, metrics=metrics, cache=cache, max_tokens=max_tokens, grader_max_tokens=grader_max_tokens,
        judge_failure_threshold=judge_failure_threshold, allow_outside_images=allow_outside_images,
        allow_url_images=allow_url_images, graders=graders, panel=panel,
    )


@task
def ecomeval_exact_shopping_reasoning(
    data: str | None = None,
    category: str | None = "shopping_reasoning",
    task: str | None = None,
    language: str | None = None,
    difficulty: str | None = None,
    multimodal: bool | str | None = None,
    metrics: str | None = None,
    cache: bool | str = True,
    max_tokens: int | None = MAX_TOKENS,
    grader_max_tokens: int = GRADER_MAX_TOKENS,
    judge_failure_threshold: float = FAILURE_THRESHOLD,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
    graders: str | None = None,
    panel: str = MEDIAN,
) -> Task:
    """EcomEval Shopping Reasoning exact-answer items, exact match (no judge).

    Filters (comma lists; default all): category (slugs or the paper's names), task, language, difficulty; multimodal
    true = only items with images, false = only text items. Also metrics, cache (judge replies), max_tokens (the
    evaluated model's; default: the server's), grader_max_tokens (the grader's output limit), judge_failure_threshold
    (share of judge failures above which score_unreliable is 1), allow_outside_images / allow_url_images (image paths
    outside the data's folder, http(s) URLs: refused by default), graders (a panel: comma list of model roles or model
    names; default the grader_<n> roles, else grader) and panel (median or majority). Details:
    ``ecom_tasks/ecomeval/README.md``.
    """
    return _task(
        exact=True, data=data, category=category, task_name=task, language=language, difficulty=difficulty,
        multimodal=multimodal, metrics=metrics, cache=cache, max_tokens=max_tokens, grader_max_tokens=grader_max_tokens,
        judge_failure_threshold=judge_failure_threshold, allow_outside_images=allow_outside_images,
        allow_url_images=allow_url_images, graders=graders, panel=panel,
    )


@task
def ecomeval_exact_ecom_generation(
    data: str | None = None,
    category: str | None = "ecom_generation",
    task: str | None = None,
    language: str | None = None,
    difficulty: str | None = None,
    multimodal: bool | str | None = None,
    metrics: str | None = None,
    cache: bool | str = True,
    max_tokens: int | None = MAX_TOKENS,
    grader_max_tokens: int = GRADER_MAX_TOKENS,
    judge_failure_threshold: float = FAILURE_THRESHOLD,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
    graders: str | None = None,
    panel: str = MEDIAN,
) -> Task:
    """EcomEval Ecom Generative Ability exact-answer items, exact match (no judge).

    Filters (comma lists; default all): category (slugs or the paper's names), task, language, difficulty; multimodal
    true = only items with images, false = only text items. Also metrics, cache (judge replies), max_tokens (the
    evaluated model's; default: the server's), grader_max_tokens (the grader's output limit), judge_failure_threshold
    (share of judge failures above which score_unreliable is 1), allow_outside_images / allow_url_images (image paths
    outside the data's folder, http(s) URLs: refused by default), graders (a panel: comma list of model roles or model
    names; default the grader_<n> roles, else grader) and panel (median or majority). Details:
    ``ecom_tasks/ecomeval/README.md``.
    """
    return _task(
        exact=True, data=data, category=category, task_name=task, language=language, difficulty=difficulty,
        multimodal=multimodal, metrics=metrics, cache=cache, max_tokens=max_tokens, grader_max_tokens=grader_max_tokens,
        judge_failure_threshold=judge_failure_threshold, allow_outside_images=allow_outside_images,
        allow_url_images=allow_url_images, graders=graders, panel=panel,
    )


#: One task per variant of ecom_tasks/ecomeval/variants.py, by name.
PRESETS = {
    "ecomeval": ecomeval,
    "ecomeval_ecom_qa": ecomeval_ecom_qa,
    "ecomeval_shopping_concepts": ecomeval_shopping_concepts,
    "ecomeval_user_understanding": ecomeval_user_understanding,
    "ecomeval_shopping_reasoning": ecomeval_shopping_reasoning,
    "ecomeval_ecom_generation": ecomeval_ecom_generation,
    "ecomeval_ecom_multimodal": ecomeval_ecom_multimodal,
    "ecomeval_exact": ecomeval_exact,
    "ecomeval_exact_ecom_qa": ecomeval_exact_ecom_qa,
    "ecomeval_exact_shopping_concepts": ecomeval_exact_shopping_concepts,
    "ecomeval_exact_user_understanding": ecomeval_exact_user_understanding,
    "ecomeval_exact_shopping_reasoning": ecomeval_exact_shopping_reasoning,
    "ecomeval_exact_ecom_generation": ecomeval_exact_ecom_generation,
}
__all__ += list(PRESETS)
# fmt: on
# --- End of generated code. ---
