"""MonBench's tables in the report: the paper's Table 2, accuracy by position (Fig. 3) and return format (Fig. 4), robustness."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ecom_tasks.monbench.protocol import FORMATS, runs_for
from ecom_tasks.monbench.schema import TASKS
from ecom_tasks.monbench.variants import TASK_TITLES, VARIANTS
from ecom_tasks.results import MergedRun
from ecom_tasks.tables import Column, Slots, Table, assemble, finish, json_value, paper_rows, readable, run_row

DESIGN_NAMES = {"full": "perm", "cyclic": "cyclic", "canonical": "canonical"}
EXCLUDED = ("task", "design", "formats", "shots")
#: The breakdown tables: name -> (title, metric -> column header, plot).
BREAKDOWNS: dict[str, tuple[str, dict[str, str], str | None]] = {
    "position": (
        "MonBench accuracy by the correct option's position (Fig. 3)",
        {f"acc_pos_{p}": f"at {p}" for p in "ABCD"},
        "heatmap",
    ),
    "format": (
        "MonBench accuracy by return format (Fig. 4)",
        {"acc_fmt_label": "Label", "acc_fmt_content": "Content", "acc_fmt_label_content": "Label+Content"},
        "heatmap",
    ),
    "robustness": (
        "MonBench consistency and failure rates",
        {
            "consistency": "consistency",
            "invalid_rate": "invalid",
            "invalid_rate_strict": "invalid (strict)",
            "mismatch_rate": "mismatch",
            "truncated_rate": "truncated",
        },
        None,
    ),
}


def design_text(design: str, formats: Any = None) -> str:
    """``perm (72 runs)``; ``perm (48 runs: label, content)`` when not every return format ran."""
    if isinstance(formats, str) and formats[:1] == "[":
        formats = json_value(formats)
    try:
        count = len(runs_for(design, formats))
        chosen = {run.format for run in runs_for(design, formats)}
    except (ValueError, TypeError):  # a design or format list this version does not know
        return f"design={design}, formats={readable(str(formats))}" if formats else f"design={design}"
    name = DESIGN_NAMES.get(design, design)
    plural = "run" if count == 1 else "runs"
    if design == "canonical" or len(chosen) == len(FORMATS):
        return f"{name} ({count} {plural})"
    return f"{name} ({count} {plural}: {', '.join(f for f in FORMATS if f in chosen)})"


def shots_text(run: MergedRun) -> str:
    """``5-shot``; ``shots=?`` when the log does not record them (never a guess)."""
    value = run.info.get("shots")
    if value is None:
        value = run.settings_dict.get("shots")
    try:
        shots = float(str(value))
    except ValueError:
        return "shots=?"
    return f"{int(shots)}-shot" if shots.is_integer() and shots >= 0 else "shots=?"


def _dims(run: MergedRun) -> tuple[str, tuple[str, ...]] | None:
    variant = VARIANTS.get(run.task)
    recorded = run.info.get("tasks")
    if isinstance(recorded, list) and recorded and run.info.get("design"):  # Inspect records what ran (-T task=)
        text, tasks = design_text(run.info["design"], run.info.get("formats")), tuple(recorded)
    elif variant is not None:
        text, tasks = design_text(variant.design, variant.formats), variant.tasks
    elif run.task == "monbench":
        settings = run.settings_dict
        task = settings.get("task", "all")
        tasks = TASKS if task == "all" else (task,)
        text = design_text(settings.get("design", "full"), settings.get("formats"))
    else:
        return None
    return f"{text}, {shots_text(run)}", tuple(tasks)


def _reference_setting(setting: str) -> str:
    return f"{design_text('full')}, shots not stated" if setting == "perm" else setting


def tables(runs: Sequence[MergedRun]) -> list[Table]:
    def classify(run: MergedRun) -> tuple[str, str] | None:
        dims = _dims(run)
        if dims is None:
            return None
        text, tasks = dims
        return text, ("all" if len(tasks) > 1 else tasks[0])

    rows_slots = assemble(runs, classify, EXCLUDED)

    def value(slots: Slots, task: str | None, metric: str) -> float | None:
        """``metric`` of ``task`` (None: all tasks) from the all-task run, else from the task's own run."""
        if task is None:
            return slots.metric("all", metric)
        found = slots.metric("all", f"{task}/{metric}")
        return found if found is not None else slots.metric(task, metric)

    columns = [
        *(Column(f"{t}/acc", TASK_TITLES[t]) for t in TASKS),
        Column("acc", "Avg.", headline=True),
        Column("acc_ci", "95% CI ±", headline=True),
        # The strict reading (exactly the requested tags) beside the headline; the paper has no such column.
        Column("acc_strict", "Avg. (strict)", headline=True),
    ]
    # A key ``<task>/<metric>`` is the task's, a bare metric the all-task figure.
    parts = {c.key: c.key.rpartition("/") for c in columns}
    rows = [
        run_row(slots, {key: value(slots, task or None, metric) for key, (task, _, metric) in parts.items()})
        for slots in rows_slots
    ]
    tables: list[Table | None] = [
        finish(
            Table(
                "monbench",
                "table2",
                "MonBench Table 2: accuracy per task, average ± 95% CI",
                columns,
                rows + paper_rows("monbench", "table2", "fraction", _reference_setting),
                note="Avg. and its CI come from the all-task run (Inspect) or group (lm-eval; lm-eval groups carry no CI). "
                "Our rows name their shots; the paper's Table 2 does not state its shots (Sec. 3.4 says 5-shot).",
            )
        )
    ]

    for name, (title, metrics, plot) in BREAKDOWNS.items():
        rows = []
        for slots in rows_slots:
            for task in (None, *TASKS):
                cells = {metric: value(slots, task, metric) for metric in metrics}
                if any(v is not None for v in cells.values()):
                    rows.append(run_row(slots, cells, part=TASK_TITLES[task] if task else "all tasks"))
        columns = [Column(metric, header) for metric, header in metrics.items()]
        tables.append(finish(Table("monbench", name, title, columns, rows, plot=plot)))
    return [t for t in tables if t is not None]
