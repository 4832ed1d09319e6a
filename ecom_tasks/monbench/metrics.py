"""MonBench's metric maths over runs (numpy): the registered ``choice_runs`` metric specs (``acc``, ``acc_ci``, a
plugin's) computed on ``scorers.kinds.ChoiceRuns``, and MonBench's own breakdowns."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import NotRequired, TypedDict

import numpy as np

from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.monbench.schema import LETTERS
from ecom_tasks.scorers.context_limit import CONTEXT_EXCEEDED, RATE
from ecom_tasks.scorers.core import NAN
from ecom_tasks.scorers.kinds import STRICT_SUFFIX, ChoiceRuns, compute_metrics


class RunOutcome(TypedDict):
    """One run of one question: lm-eval's per-document metric object; in Inspect, the numbers of the
    question's ``Score.value`` (:data:`RUN_NUMBERS`) with the groups from its sample's metadata."""

    task: str
    question: str  # the record id
    category: str  # Table 7's query category, "" when unknown
    ordering: int  # index into ``protocol.ORDERINGS``
    format: str
    # The numbers: 0 or 1 per reply (the share of epochs after Inspect's epoch reduction).
    position: float  # displayed position of the correct option (0 = A)
    correct: float
    invalid: float
    mismatch: float  # Label+Content: label and content name different options
    truncated: float  # stopped on the token limit
    correct_strict: NotRequired[float]  # the strict reading (exactly the requested tags); absent in old logs
    invalid_strict: NotRequired[float]
    context_exceeded: NotRequired[float]  # the server refused the prompt as longer than its context


#: A run's numbers, the part of its outcome that epochs reduce; the strict reading's among them.
STRICT_NUMBERS = ("correct_strict", "invalid_strict")
RUN_NUMBERS = ("position", "correct", "invalid", "mismatch", "truncated", *STRICT_NUMBERS, CONTEXT_EXCEEDED)
#: The numeric table the metrics compute on (vectorized: Inspect recomputes metrics on every live update).
_COLUMN = {name: i for i, name in enumerate(("task", "question", "ordering", "format", *RUN_NUMBERS))}


def outcome_table(outcomes: Iterable[RunOutcome], task_names: Sequence[str], format_names: Sequence[str]) -> np.ndarray:
    """Outcomes as an (n, columns) float array. A task or format is its index in ``task_names`` or
    ``format_names``, the same in every table (tables of different questions concatenate); a question is
    numbered as first seen, distinct within one table only; a missing strict reading is nan."""
    questions: dict[str, int] = {}
    rows = [
        (
            task_names.index(o["task"]),
            questions.setdefault(o["question"], len(questions)),
            o["ordering"],
            format_names.index(o["format"]),
            *(o.get(name, 0.0 if name == CONTEXT_EXCEEDED else NAN) for name in RUN_NUMBERS),
        )
        for o in outcomes
    ]
    return np.array(rows, dtype=float).reshape(-1, len(_COLUMN))


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


def task_breakdown(table: np.ndarray, format_names: Sequence[str]) -> dict[str, float]:
    """MonBench's own metrics of one task: by position, by format, consistency, failure rates."""
    correct = _col(table, "correct")
    summary = {"n_runs": float(np.unique(_run_keys(table)).size), "n_items": float(len(table))}
    for p, name in enumerate(LETTERS):
        summary[f"acc_pos_{name}"] = _mean(correct[_col(table, "position") == p])
    for f, name in enumerate(format_names):
        summary[f"acc_fmt_{name}"] = _mean(correct[_col(table, "format") == f])
    # Right in every run (and, after epoch reduction, in every epoch): no outcome below 1.
    _, inverse = np.unique(_col(table, "question"), return_inverse=True)
    misses = np.bincount(inverse.reshape(-1), weights=correct != 1.0)
    summary["consistency"] = _mean((misses == 0).astype(float))
    for name in ("invalid", "mismatch", "truncated"):
        summary[f"{name}_rate"] = _mean(_col(table, name))
    return summary


def _strict_summary(table: np.ndarray, specs: Sequence[MetricSpec], confidence: float) -> dict[str, float]:
    """The strict reading's metrics of an outcome table: the selected ``choice_runs`` metrics computed with
    the strict numbers in the ``correct`` column, and the strict invalid rate, suffixed ``_strict``."""
    strict = table.copy()
    strict[:, _COLUMN["correct"]] = _col(table, "correct_strict")
    result = {
        **compute_metrics(specs, choice_runs(strict, confidence)),
        "invalid_rate": _mean(_col(table, "invalid_strict")),
    }
    return {f"{key}{STRICT_SUFFIX}": value for key, value in result.items()}


def reweighted_accuracy(outcomes: Iterable[RunOutcome], weights: Mapping[str, float]) -> float:
    """Accuracy with each category's accuracy weighted by its share of real traffic (``weights``); categories absent
    from the data are dropped and the rest renormalized, runs with no category ignored."""
    correct: dict[str, list[float]] = defaultdict(list)
    for o in outcomes:
        if o["category"]:
            correct[o["category"]].append(o["correct"])
    used = {c: w for c, w in weights.items() if c in correct and w > 0}
    total = sum(used.values())
    if not total:
        return NAN
    return sum(w * float(np.mean(correct[c])) for c, w in used.items()) / total


def summarize(
    outcomes: Iterable[RunOutcome],
    specs: Sequence[MetricSpec],
    task_names: Sequence[str],
    format_names: Sequence[str],
    *,
    category_weights: Mapping[str, float] | None = None,
    confidence: float = 0.95,
) -> dict[str, float]:
    """All metrics of the README's "Metrics" table; with several tasks, per-task keys are prefixed ``<task>/``,
    the selected ``choice_runs`` metrics (``specs``) are computed on the whole table and MonBench's own
    breakdowns at the top level are unweighted means of the per-task values."""
    outcomes = list(outcomes)
    table = outcome_table(outcomes, task_names, format_names)
    with_strict = not np.isnan(table[:, [_COLUMN[name] for name in STRICT_NUMBERS]]).any()
    tasks = [int(t) for t in np.unique(_col(table, "task"))]

    def summary(part: np.ndarray, breakdown: bool = True) -> dict[str, float]:
        result = compute_metrics(specs, choice_runs(part, confidence))
        if breakdown:
            result.update(task_breakdown(part, format_names))
        if with_strict:
            result.update(_strict_summary(part, specs, confidence))
        return result

    if len(tasks) <= 1:
        result = summary(table)
    else:
        per_task = {t: summary(table[_col(table, "task") == t]) for t in tasks}
        result = {key: _nanmean([values[key] for values in per_task.values()]) for key in per_task[tasks[0]]}
        result["n_items"] = float(len(table))
        result.update(summary(table, breakdown=False))
        for t, values in per_task.items():
            result.update({f"{task_names[t]}/{k}": v for k, v in values.items()})
    if category_weights:
        result["acc_reweighted"] = reweighted_accuracy(outcomes, category_weights)
    result[RATE] = _mean(_col(table, "context_exceeded"))
    return result


def headline(table: np.ndarray, specs: Sequence[MetricSpec]) -> dict[str, float]:
    """The selected ``choice_runs`` metrics of an outcome table, without the breakdowns: what a
    comparison recomputes on every resample of questions."""
    return compute_metrics(specs, choice_runs(table))
