"""Fixed-width text tables (the demo's console output): Inspect logs and lm-eval results pivoted to task rows x metric columns."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ecom_tasks.report.runs import inspect_run, lm_eval_runs
from ecom_tasks.results import Run

#: Column order for the tables (others follow alphabetically).
PREFERRED_COLUMNS = (
    "acc",
    "acc_ci",
    "acc2",
    "acc4",
    "macro_f1",
    *(f"acc_pos_{position}" for position in "ABCD"),
    "acc_fmt_label",
    "acc_fmt_content",
    "acc_fmt_label_content",
    "consistency",
    "invalid_rate",
    "mismatch_rate",
    "truncated_rate",
    "context_exceeded_rate",
    "l2_dim_acc",
)
COUNT_COLUMNS = frozenset({"n"})
SHORT_NAMES = {
    "acc_fmt_label": "fmt_L",
    "acc_fmt_content": "fmt_C",
    "acc_fmt_label_content": "fmt_LC",
    **{f"acc_pos_{position}": f"pos_{position}" for position in "ABCD"},
    "invalid_rate": "invalid",
    "truncated_rate": "trunc",
    "context_exceeded_rate": "over_ctx",
    "mismatch_rate": "mismatch",
    "consistency": "consist",
}


def _rows(runs: Iterable[Run]) -> dict[str, dict[str, float]]:
    """``{row: {metric: value}}``: a run's top-level metrics make its task's row, and each ``<group>/<metric>`` a
    row of its own; other breakdowns (``acc2/industry/x``, ``confusion/L1/L2``) are too many for a summary table
    and stay in the logs."""
    rows: dict[str, dict[str, float]] = {}
    for run in runs:
        for name, value in run.metrics.items():
            group, _, metric = name.rpartition("/")
            if not group:
                rows.setdefault(run.task, {})[name] = value
            elif metric in PREFERRED_COLUMNS and "/" not in group:
                rows.setdefault(f"{run.task}/{group}", {})[metric] = value
    return rows


def inspect_rows(log: Any) -> dict[str, dict[str, float]]:
    """The rows of an Inspect EvalLog."""
    return _rows([inspect_run(log, "")])


def lm_eval_rows(results: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """The rows of ``simple_evaluate``'s result dict (a row per task and group)."""
    return _rows(lm_eval_runs(results, ""))


def format_table(rows: Mapping[str, Mapping[str, float]], *, skip: tuple[str, ...] = ("n_runs", "n_items")) -> str:
    """Fixed-width text table; ``nan`` where a metric does not apply."""
    names = {m for metrics in rows.values() for m in metrics if m not in skip}
    columns = [c for c in PREFERRED_COLUMNS if c in names] + sorted(names - set(PREFERRED_COLUMNS))
    width = max([len(r) for r in rows] + [4])
    headers = [SHORT_NAMES.get(c, c) for c in columns]
    widths = [max(len(h), 6) for h in headers]
    lines = ["  ".join([f"{'task':<{width}}", *(f"{h:>{w}}" for h, w in zip(headers, widths))])]
    for row, metrics in rows.items():
        cells = [
            " " * w if (value := metrics.get(c)) is None else f"{value:>{w}{'.0f' if c in COUNT_COLUMNS else '.4f'}}"
            for c, w in zip(columns, widths)
        ]
        lines.append("  ".join([f"{row:<{width}}", *cells]))
    return "\n".join(lines)


def by_benchmark(rows: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, Mapping[str, float]]]:
    """Rows grouped by benchmark (the task name up to its first ``_`` or ``/``), one table each."""
    grouped: dict[str, dict[str, Mapping[str, float]]] = {}
    for row, metrics in rows.items():
        benchmark = row.split("/")[0].split("_")[0]
        grouped.setdefault(benchmark, {})[row] = metrics
    return grouped
