"""Inspect ``@scorer`` / ``@metric`` wrappers for RAIR around the shared scoring core.

Metrics read only ``Score.value`` outcomes (see ``scorers.relevance``), so
epoch reduction and ``inspect score`` re-scoring work; on an empty list
(live progress) they report ``nan`` instead of failing.
"""

from __future__ import annotations

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value, metric, scorer
from inspect_ai.solver import TaskState

from ecom_tasks.rair.scoring import rair_metrics, score_reply
from ecom_tasks.scorers.relevance import HEADLINE

SUMMARY_KEYS = (*HEADLINE, "l2_dim_acc")


def _outcomes(scores: list[SampleScore]) -> list[dict[str, float]]:
    return [s.score.value for s in scores if isinstance(s.score.value, dict)]  # type: ignore[misc]


@metric
def rair_summary() -> Metric:
    """Acc@2, Acc@4, Macro-F1 (L1-L4), invalid-prediction rate, items, L2 mismatch-dimension accuracy."""

    def compute(scores: list[SampleScore]) -> Value:
        result = rair_metrics(_outcomes(scores))
        return {key: result[key] for key in SUMMARY_KEYS}

    return compute


@metric
def rair_breakdown() -> Metric:
    """Per industry and hard intent (acc2/acc4/macro_f1/n), confusion matrix, error share by gold dimension."""

    def compute(scores: list[SampleScore]) -> Value:
        result = rair_metrics(_outcomes(scores))
        return {key: value for key, value in result.items() if key not in SUMMARY_KEYS}

    return compute


@scorer(metrics=[rair_summary(), rair_breakdown()])
def rair_scorer() -> Scorer:
    """Score a RAIR reply: the level after ``</think>``; anything else is invalid (wrong, counted)."""

    async def score(state: TaskState, target: Target) -> Score:
        parsed, outcome = score_reply(state.metadata, state.output.completion)
        return Score(
            value=outcome,
            answer=parsed.display,
            explanation=parsed.detail or parsed.status,
            metadata={"status": parsed.status, "dimension": parsed.dimension},
        )

    return score
