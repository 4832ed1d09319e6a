"""Inspect ``@scorer`` / ``@metric`` wrappers around the shared scoring core."""

from __future__ import annotations

from collections.abc import Mapping

from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    ScoreReducer,
    Scorer,
    Target,
    Value,
    mean_score,
    metric,
    score_reducer,
    scorer,
)
from inspect_ai.solver import TaskState

from ecom_tasks.monbench.scoring import monbench_metrics, score_reply


@score_reducer(name="outcome_mean")
def outcome_mean() -> ScoreReducer:
    """Inspect's ``mean`` reducer, minus the work when there is nothing to reduce.

    Inspect reduces every score across epochs, also with one epoch and also for
    each live metric update; for our dict-valued outcomes its key-by-key
    ``statistics.mean`` was most of our per-sample overhead. One score is
    returned as it is; several are reduced by Inspect's own ``mean``.
    """
    mean = mean_score()

    def reduce(scores: list[Score]) -> Score:
        return scores[0] if len(scores) == 1 else mean(scores)

    return reduce


@metric
def monbench_summary(category_weights: Mapping[int, float] | None = None) -> Metric:
    """MonBench metrics (acc ± CI over runs, by position, by format, consistency, violation rate).

    Reads only ``Score.value`` outcomes, so epoch reduction and re-scoring work.
    """

    def compute(scores: list[SampleScore]) -> Value:
        weights = {int(k): float(v) for k, v in (category_weights or {}).items()}
        return monbench_metrics([s.score.value for s in scores], category_weights=weights)  # type: ignore[misc]

    return compute


@scorer(metrics=[monbench_summary()])
def monbench_scorer() -> Scorer:
    """Score a MonBench reply: only the requested tags count; violations are wrong and counted."""

    async def score(state: TaskState, target: Target) -> Score:
        parsed, outcome = score_reply(state.metadata, state.output.completion)
        chosen = "ABCD"[parsed.position] if parsed.position is not None else None
        return Score(
            value=outcome,
            answer=chosen or parsed.status,
            explanation=parsed.detail or parsed.status,
            metadata={"status": parsed.status},
        )

    return score
