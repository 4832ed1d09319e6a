"""Permutation-robust multiple-choice metrics (MonBench's protocol, reusable).

Each scored item is an *outcome*: a flat mapping of numbers, so it can be an
Inspect ``Score.value`` (reducible across epochs) or an lm-eval per-document
metric item alike:

``task``     task index            ``question`` question index
``ordering`` option ordering index ``format``   return-format index
``position`` displayed position of the correct option (0 = A)
``category`` 1-based query category, 0 when unknown
``correct`` / ``violation`` / ``mismatch``: 0 or 1

A *run* is one (ordering, format) pair over all questions of a task.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ecom_tasks.scorers.core import NAN, mean_ci

OUTCOME_FIELDS = ("task", "question", "ordering", "format", "position", "category", "correct", "violation", "mismatch")
POSITION_NAMES = ("A", "B", "C", "D")
_COLUMN = {name: i for i, name in enumerate(OUTCOME_FIELDS)}

# Vectorized with numpy: Inspect recomputes metrics on every live progress update.


def _table(outcomes: Sequence[Mapping[str, float]]) -> np.ndarray:
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


def _group_means(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct keys and the mean of ``values`` within each."""
    distinct, inverse = np.unique(keys, return_inverse=True)
    return distinct, np.bincount(inverse, weights=values) / np.bincount(inverse)


def _run_keys(table: np.ndarray) -> np.ndarray:
    return _col(table, "ordering") * 1000 + _col(table, "format")


def run_accuracies(outcomes: Sequence[Mapping[str, float]]) -> dict[tuple[int, int], float]:
    """Accuracy of every (ordering, format) run."""
    table = _table(outcomes)
    keys, accs = _group_means(_run_keys(table), _col(table, "correct"))
    return {(int(k) // 1000, int(k) % 1000): float(a) for k, a in zip(keys, accs)}


def task_summary(
    outcomes: Sequence[Mapping[str, float]], format_names: Sequence[str], confidence: float = 0.95
) -> dict[str, float]:
    """Metrics of one task: acc ± CI over runs, by position, by format, consistency, failure rates."""
    table = _table(outcomes)
    correct = _col(table, "correct")
    _, run_accs = _group_means(_run_keys(table), correct)
    acc, ci = mean_ci(run_accs, confidence)
    summary = {"acc": acc, "acc_ci": ci, "n_runs": float(run_accs.size), "n_items": float(len(table))}
    for p, name in enumerate(POSITION_NAMES):
        summary[f"acc_pos_{name}"] = _mean(correct[_col(table, "position") == p])
    for f, name in enumerate(format_names):
        summary[f"acc_fmt_{name}"] = _mean(correct[_col(table, "format") == f])
    # Right in every run (and, after epoch reduction, in every epoch): the worst outcome is 1.
    _, inverse = np.unique(_col(table, "question"), return_inverse=True)
    worst = np.full(inverse.max() + 1 if inverse.size else 0, np.inf)
    np.minimum.at(worst, inverse, correct)
    summary["consistency"] = _mean((worst == 1.0).astype(float))
    summary["violation_rate"] = _mean(_col(table, "violation"))
    summary["mismatch_rate"] = _mean(_col(table, "mismatch"))
    return summary


def overall_accuracy(
    outcomes: Sequence[Mapping[str, float]], confidence: float = 0.95
) -> tuple[float, float]:
    """Unweighted mean of the task accuracies, CI over runs (each run averaged over tasks).

    Runs missing for some task are averaged over the tasks that have them.
    """
    table = _table(outcomes)
    runs = _run_keys(table)
    tasks = _col(table, "task")
    # Accuracy per (task, run), then the mean over tasks within each run.
    pair_keys, pair_accs = _group_means(tasks * 1_000_000 + runs, _col(table, "correct"))
    _, run_means = _group_means(pair_keys % 1_000_000, pair_accs)
    return mean_ci(run_means, confidence)


def reweighted_accuracy(
    outcomes: Sequence[Mapping[str, float]], weights: Mapping[int, float]
) -> float:
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
    task_names: Sequence[str],
    format_names: Sequence[str],
    *,
    category_weights: Mapping[int, float] | None = None,
    confidence: float = 0.95,
) -> dict[str, float]:
    """All metrics; with several tasks, per-task keys are prefixed ``<task>/``.

    The top-level ``acc``/``acc_ci`` are always the overall (unweighted
    task-mean) accuracy, which for a single task is that task's accuracy.
    """
    table = _table(list(outcomes))
    tasks = [int(t) for t in np.unique(_col(table, "task"))]
    if len(tasks) <= 1:
        result = task_summary(table, format_names, confidence)
    else:
        per_task = {t: task_summary(table[_col(table, "task") == t], format_names, confidence) for t in tasks}
        # Overall values are unweighted task means, like Table 2's "Avg." and lm-eval's group rows.
        result = {key: _nanmean([summary[key] for summary in per_task.values()]) for key in per_task[tasks[0]]}
        result["n_items"] = float(len(table))
        for t, summary in per_task.items():
            result.update({f"{task_names[t]}/{k}": v for k, v in summary.items()})
    result["acc"], result["acc_ci"] = overall_accuracy(table, confidence) if len(table) else (NAN, NAN)
    if category_weights:
        result["acc_reweighted"] = reweighted_accuracy(table, category_weights)
    return result
