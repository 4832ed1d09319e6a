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

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ecom_tasks.scorers.core import NAN, mean_ci

OUTCOME_FIELDS = ("task", "question", "ordering", "format", "position", "category", "correct", "violation", "mismatch")
POSITION_NAMES = ("A", "B", "C", "D")


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else NAN


def _nanmean(values: list[float]) -> float:
    return _mean([v for v in values if v == v])


def run_accuracies(outcomes: Sequence[Mapping[str, float]]) -> dict[tuple[int, int], float]:
    """Accuracy of every (ordering, format) run."""
    by_run: dict[tuple[int, int], list[float]] = defaultdict(list)
    for o in outcomes:
        by_run[(int(o["ordering"]), int(o["format"]))].append(float(o["correct"]))
    return {run: _mean(v) for run, v in sorted(by_run.items())}


def task_summary(
    outcomes: Sequence[Mapping[str, float]], format_names: Sequence[str], confidence: float = 0.95
) -> dict[str, float]:
    """Metrics of one task: acc ± CI over runs, by position, by format, consistency, failure rates."""
    runs = run_accuracies(outcomes)
    acc, ci = mean_ci(runs.values(), confidence)
    summary = {"acc": acc, "acc_ci": ci, "n_runs": float(len(runs)), "n_items": float(len(outcomes))}
    for p, name in enumerate(POSITION_NAMES):
        summary[f"acc_pos_{name}"] = _mean([float(o["correct"]) for o in outcomes if int(o["position"]) == p])
    for f, name in enumerate(format_names):
        summary[f"acc_fmt_{name}"] = _mean([float(o["correct"]) for o in outcomes if int(o["format"]) == f])
    per_question: dict[int, list[float]] = defaultdict(list)
    for o in outcomes:
        per_question[int(o["question"])].append(float(o["correct"]))
    summary["consistency"] = _mean([float(min(v) == 1.0) for v in per_question.values()])
    summary["violation_rate"] = _mean([float(o["violation"]) for o in outcomes])
    summary["mismatch_rate"] = _mean([float(o["mismatch"]) for o in outcomes])
    return summary


def overall_accuracy(
    outcomes: Sequence[Mapping[str, float]], confidence: float = 0.95
) -> tuple[float, float]:
    """Unweighted mean of the task accuracies, CI over runs (each run averaged over tasks).

    Runs missing for some task are averaged over the tasks that have them.
    """
    by_task: dict[int, list[Mapping[str, float]]] = defaultdict(list)
    for o in outcomes:
        by_task[int(o["task"])].append(o)
    per_task_runs = [run_accuracies(v) for v in by_task.values()]
    all_runs = sorted({run for runs in per_task_runs for run in runs})
    run_means = [_mean([runs[r] for runs in per_task_runs if r in runs]) for r in all_runs]
    return mean_ci(run_means, confidence)


def reweighted_accuracy(
    outcomes: Sequence[Mapping[str, float]], weights: Mapping[int, float]
) -> float:
    """Accuracy with each category's accuracy weighted by a target distribution.

    ``weights`` maps 1-based category ids to their share of real traffic;
    categories absent from the data are dropped and the rest renormalized, and
    items with no category are ignored.
    """
    by_category: dict[int, list[float]] = defaultdict(list)
    for o in outcomes:
        if int(o["category"]) > 0:
            by_category[int(o["category"])].append(float(o["correct"]))
    used = {c: w for c, w in weights.items() if c in by_category and w > 0}
    total = sum(used.values())
    if not total:
        return NAN
    return sum(w * _mean(by_category[c]) for c, w in used.items()) / total


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
    outcomes = list(outcomes)
    tasks = sorted({int(o["task"]) for o in outcomes})
    if len(tasks) <= 1:
        result = task_summary(outcomes, format_names, confidence)
    else:
        per_task = {t: task_summary([o for o in outcomes if int(o["task"]) == t], format_names, confidence) for t in tasks}
        # Overall values are unweighted task means, like Table 2's "Avg." and lm-eval's group rows.
        result = {key: _nanmean([summary[key] for summary in per_task.values()]) for key in per_task[tasks[0]]}
        result["n_items"] = float(len(outcomes))
        for t, summary in per_task.items():
            result.update({f"{task_names[t]}/{k}": v for k, v in summary.items()})
    result["acc"], result["acc_ci"] = overall_accuracy(outcomes, confidence) if outcomes else (NAN, NAN)
    if category_weights:
        result["acc_reweighted"] = reweighted_accuracy(outcomes, category_weights)
    return result
