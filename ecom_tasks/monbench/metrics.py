"""MonBench's metric maths: permutation-robust multiple choice over runs (numpy).

Each scored item is an *outcome*: a flat mapping of numbers, so it can be an
Inspect ``Score.value`` (reducible across epochs) or an lm-eval per-document
metric item alike:

``task``     task index            ``question`` question index
``ordering`` option ordering index ``format``   return-format index
``position`` displayed position of the correct option (0 = A)
``category`` 1-based query category, 0 when unknown
``correct`` / ``invalid`` / ``mismatch`` / ``truncated`` (stopped on the token limit): 0 or 1
``correct_strict`` / ``invalid_strict``: the same for the strict reading of the reply (exactly the
requested tags); absent in old logs

A *run* is one (ordering, format) pair over all questions of a task. The
accuracy metrics (``acc``, ``acc_ci`` and any plugin metric of the
``choice_runs`` kind) are the registered metric specs, computed on
``scorers.kinds.ChoiceRuns``; the breakdowns below are MonBench's own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.scorers.core import NAN
from ecom_tasks.scorers.kinds import ChoiceRuns, compute_metrics

OUTCOME_FIELDS = (
    "task",
    "question",
    "ordering",
    "format",
    "position",
    "category",
    "correct",
    "invalid",
    "mismatch",
    "truncated",
)
#: The strict reading's fields, and the careful fields they stand in for when its metrics are computed.
STRICT_FIELDS = {"correct_strict": "correct", "invalid_strict": "invalid"}
#: Suffix of the strict reading's metrics (``acc_strict``): the same metric code on the strict answer.
STRICT_SUFFIX = "_strict"
POSITION_NAMES = ("A", "B", "C", "D")
_COLUMN = {name: i for i, name in enumerate(OUTCOME_FIELDS)}

# Vectorized with numpy: Inspect recomputes metrics on every live progress update.


def _table(outcomes: Sequence[Mapping[str, float]] | np.ndarray) -> np.ndarray:
    """Outcomes as an (n, fields) float array, columns in OUTCOME_FIELDS order."""
    if isinstance(outcomes, np.ndarray):
        return outcomes
    return np.array([[o[f] for f in OUTCOME_FIELDS] for o in outcomes], dtype=float).reshape(-1, len(OUTCOME_FIELDS))


def _col(table: np.ndarray, name: str) -> np.ndarray:
    return table[:, _COLUMN[name]]


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else NAN


def _nanmean(values: list[float]) -> float:
    kept = [v for v in values if v == v]
    return float(np.mean(kept)) if kept else NAN


def _run_keys(table: np.ndarray) -> np.ndarray:
    return _col(table, "ordering") * 1000 + _col(table, "format")


def choice_runs(table: np.ndarray, confidence: float = 0.95) -> ChoiceRuns:
    """The ``choice_runs``-kind metric input of an outcome table."""
    return ChoiceRuns(_col(table, "correct"), _run_keys(table), _col(table, "task"), confidence)


def run_accuracies(outcomes: Sequence[Mapping[str, float]]) -> dict[tuple[int, int], float]:
    """Accuracy of every (ordering, format) run of one task."""
    table = _table(outcomes)
    runs = choice_runs(table)
    keys = np.unique(runs.run)
    return {(int(k) // 1000, int(k) % 1000): float(a) for k, a in zip(keys, runs.run_accuracies())}


def task_breakdown(table: np.ndarray, format_names: Sequence[str]) -> dict[str, float]:
    """MonBench's own metrics of one task: by position, by format, consistency, failure rates."""
    correct = _col(table, "correct")
    summary = {"n_runs": float(np.unique(_run_keys(table)).size), "n_items": float(len(table))}
    for p, name in enumerate(POSITION_NAMES):
        summary[f"acc_pos_{name}"] = _mean(correct[_col(table, "position") == p])
    for f, name in enumerate(format_names):
        summary[f"acc_fmt_{name}"] = _mean(correct[_col(table, "format") == f])
    # Right in every run (and, after epoch reduction, in every epoch): the worst outcome is 1.
    _, inverse = np.unique(_col(table, "question"), return_inverse=True)
    inverse = inverse.reshape(-1)
    worst = np.full(inverse.max() + 1 if inverse.size else 0, np.inf)
    np.minimum.at(worst, inverse, correct)
    summary["consistency"] = _mean((worst == 1.0).astype(float))
    summary["invalid_rate"] = _mean(_col(table, "invalid"))
    summary["mismatch_rate"] = _mean(_col(table, "mismatch"))
    summary["truncated_rate"] = _mean(_col(table, "truncated"))
    return summary


def _strict_table(outcomes: Sequence[Mapping[str, float]]) -> np.ndarray | None:
    """The outcome table with the strict reading in the ``correct`` and ``invalid`` columns, or None
    when some outcome has no strict reading (old logs)."""
    if isinstance(outcomes, np.ndarray) or not all(field in o for o in outcomes for field in STRICT_FIELDS):
        return None
    fields = [next((s for s, c in STRICT_FIELDS.items() if c == f), f) for f in OUTCOME_FIELDS]
    return np.array([[o[f] for f in fields] for o in outcomes], dtype=float).reshape(-1, len(OUTCOME_FIELDS))


def strict_summary(table: np.ndarray, specs: Sequence[MetricSpec], confidence: float = 0.95) -> dict[str, float]:
    """The strict reading's metrics of a strict outcome table: the selected ``choice_runs`` metrics
    and the invalid rate, suffixed ``_strict``."""
    result = {**compute_metrics(specs, choice_runs(table, confidence)), "invalid_rate": _mean(_col(table, "invalid"))}
    return {f"{key}{STRICT_SUFFIX}": value for key, value in result.items()}


def strict_keys(specs: Sequence[MetricSpec]) -> list[str]:
    """The keys :func:`strict_summary` gives."""
    return [f"{name}{STRICT_SUFFIX}" for name in (*(spec.name for spec in specs), "invalid_rate")]


def reweighted_accuracy(outcomes: Sequence[Mapping[str, float]] | np.ndarray, weights: Mapping[int, float]) -> float:
    """Accuracy with each category's accuracy weighted by a target distribution.

    ``weights`` maps 1-based category ids to their share of real traffic;
    categories absent from the data are dropped and the rest renormalized, and
    items with no category are ignored.
    """
    table = _table(outcomes)
    category, correct = _col(table, "category"), _col(table, "correct")
    present = {int(c) for c in np.unique(category) if c > 0}
    used = {c: w for c, w in weights.items() if c in present and w > 0}
    total = sum(used.values())
    if not total:
        return NAN
    return sum(w * _mean(correct[category == c]) for c, w in used.items()) / total


def summarize(
    outcomes: Iterable[Mapping[str, float]],
    specs: Sequence[MetricSpec],
    task_names: Sequence[str],
    format_names: Sequence[str],
    *,
    category_weights: Mapping[int, float] | None = None,
    confidence: float = 0.95,
) -> dict[str, float]:
    """All metrics; with several tasks, per-task keys are prefixed ``<task>/``.

    The selected ``choice_runs`` metrics (``specs``) are computed on the whole
    table: for ``acc``/``acc_ci`` that is the unweighted task mean with its CI
    over runs (each run averaged over tasks), Table 2's "Avg.". MonBench's own
    breakdowns at the top level are unweighted means of the per-task values. Outcomes that carry
    the strict reading also give its metrics (``acc_strict``, ``invalid_rate_strict``, ...).
    """
    outcomes = list(outcomes)
    table = _table(outcomes)
    strict_table = _strict_table(outcomes)
    tasks = [int(t) for t in np.unique(_col(table, "task"))]

    def task_summary(part: np.ndarray, strict_part: np.ndarray | None) -> dict[str, float]:
        summary = {**compute_metrics(specs, choice_runs(part, confidence)), **task_breakdown(part, format_names)}
        if strict_part is not None:
            summary.update(strict_summary(strict_part, specs, confidence))
        return summary

    if len(tasks) <= 1:
        result = task_summary(table, strict_table)
    else:
        per_task = {
            t: task_summary(
                table[_col(table, "task") == t],
                None if strict_table is None else strict_table[_col(table, "task") == t],
            )
            for t in tasks
        }
        result = {key: _nanmean([summary[key] for summary in per_task.values()]) for key in per_task[tasks[0]]}
        result["n_items"] = float(len(table))
        result.update(compute_metrics(specs, choice_runs(table, confidence)))
        if strict_table is not None:
            result.update(strict_summary(strict_table, specs, confidence))
        for t, summary in per_task.items():
            result.update({f"{task_names[t]}/{k}": v for k, v in summary.items()})
    if category_weights:
        result["acc_reweighted"] = reweighted_accuracy(table, category_weights)
    return result


def outcome_table(outcomes: Sequence[Mapping[str, float]]) -> np.ndarray:
    """Per-run outcomes as the numeric table :func:`headline` reads (rows concatenate across questions)."""
    return _table(outcomes)


def headline(table: np.ndarray, specs: Sequence[MetricSpec]) -> dict[str, float]:
    """The selected ``choice_runs`` metrics of an outcome table, without the breakdowns: what a
    comparison recomputes on every resample of questions."""
    return compute_metrics(specs, choice_runs(table))
