"""Inspect pieces any task reuses: the server's context refusal as a reply, the outcome reducer, and a
labelled-classification scorer with its metrics (an example: docs/plugins.md, "Reusing our scorers")."""

from __future__ import annotations

import re
from typing import Any

from inspect_ai.model import ModelOutput
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    ScoreReducer,
    Target,
    Value,
    mean_score,
    metric,
    score_reducer,
    scorer,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from ecom_tasks.plugins import select_metrics
from ecom_tasks.scorers import context_limit
from ecom_tasks.scorers.core import INVALID
from ecom_tasks.scorers.judge import LIMIT_STOP_REASONS
from ecom_tasks.scorers.kinds import LABELS
from ecom_tasks.scorers.labels import label_outcome, labels_of, summarize_labels

#: Inspect stop reasons of a reply cut off by the token limit (counted in ``truncated_rate``).
TRUNCATED_STOP_REASONS = LIMIT_STOP_REASONS


def context_exceeded_of(output: ModelOutput | None) -> str | None:
    """What the server said when it refused the request because the prompt does not fit its context
    (Inspect hands that on as a reply with stop reason ``model_length``, no usage, the error as text),
    or None for a reply of the model (with output tokens: the context filled up while it generated)."""
    if output is None or (output.usage is not None and output.usage.output_tokens):
        return None
    return context_exceeded_reply(output.completion, output.stop_reason)


def context_exceeded_reply(completion: str | None, stop_reason: str | None) -> str | None:
    """:func:`context_exceeded_of` for a reply kept as its text and stop reason (the fan-out store)."""
    if stop_reason != "model_length":
        return None
    found = context_limit.context_exceeded(completion)
    return found.describe() if found is not None else None


def truncated_reply(output: ModelOutput | None) -> bool:
    """The reply stopped on a token limit (not a request the server refused before generating)."""
    return output is not None and output.stop_reason in TRUNCATED_STOP_REASONS and context_exceeded_of(output) is None


def context_exceeded_output(exc: BaseException, model: str) -> ModelOutput | None:
    """The reply Inspect gives for a refusal it recognises itself (stop reason ``model_length``, the
    server's message as its text), built for one it raises instead (vLLM's and llama.cpp's wording);
    None when ``exc`` is another error."""
    found = context_limit.from_exception(exc)
    if found is None:
        return None
    return ModelOutput.from_content(model=model, content=found.server_message, stop_reason="model_length")


@solver
def within_context(inner: Solver) -> Solver:
    """``inner`` with a ``generate`` that turns the server's refusal of a prompt longer than its
    context into a reply :func:`context_exceeded_of` recognises, instead of failing the sample."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        async def guarded(state: TaskState, *args: Any, **kwargs: Any) -> TaskState:
            try:
                return await generate(state, *args, **kwargs)
            except Exception as exc:
                output = context_exceeded_output(exc, str(state.model))
                if output is None:
                    raise
                state.output = output
                return state

        return await inner(state, guarded)

    return solve


@score_reducer  # no explicit name: Inspect namespaces it (ecom_tasks/outcome_mean) like our other objects
def outcome_mean() -> ScoreReducer:
    """Inspect's ``mean`` reducer, minus the work when there is nothing to reduce: Inspect reduces every
    score, also with one epoch and for each live metric update, and its key-by-key ``statistics.mean``
    was most of our per-sample overhead. One score is returned as it is."""
    mean = mean_score()

    def reduce(scores: list[Score]) -> Score:
        return scores[0] if len(scores) == 1 else mean(scores)

    return reduce


def outcome_values(scores: list[SampleScore]) -> list[dict[str, float]]:
    """The outcome dicts of scored samples (a sample scored otherwise would be a bug upstream)."""
    return [s.score.value for s in scores if isinstance(s.score.value, dict)]  # type: ignore[misc]


@metric
def label_metrics(positive: list[str] | None = None, metrics: list[str] | None = None) -> Metric:
    """The registered ``labels`` metrics (or the ``metrics`` named) plus ``invalid_rate`` and ``n``, over the
    label set read from the outcomes; ``positive`` names the relevant side of Acc@2 (without it: nan)."""
    specs = select_metrics(LABELS, metrics)

    def compute(scores: list[SampleScore]) -> Value:
        outcomes = outcome_values(scores)
        labels = labels_of(outcomes[0]) if outcomes else ()
        return summarize_labels(outcomes, labels, specs, tuple(positive or ()))

    return compute


@scorer(metrics=[label_metrics()])
def label_scorer(labels: list[str]) -> Scorer:
    """The target is the gold label; the reply's answer is the last label of ``labels`` it names
    (whole word, case-insensitive). A reply naming none is invalid: wrong, and counted."""
    names = [str(label) for label in labels]
    pattern = re.compile(
        r"(?<!\w)(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")(?!\w)", re.IGNORECASE
    )
    folded = {n.casefold(): i for i, n in enumerate(names)}

    async def score(state: TaskState, target: Target) -> Score:
        if target.text not in names:
            raise ValueError(f"target {target.text!r} is not one of the labels {names}")
        found = pattern.findall(state.output.completion or "")
        pred = folded[found[-1].casefold()] if found else len(names)
        return Score(
            value=label_outcome(names, names.index(target.text), pred),
            answer=names[pred] if found else INVALID,
        )

    return score
