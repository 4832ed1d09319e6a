"""Reports: the papers' tables and figures from Inspect logs and lm-eval results, with the papers' rows.

``ecom-tasks report PATH... [--out DIR] [--format md,csv,html]`` calls
:func:`write_report`. The pieces: ``runs`` (logs and result folders read into
one record, ``ecom_tasks.results.Run``, merged), ``tables`` (each benchmark's
layouts, which live in ``ecom_tasks/<benchmark>/paper_tables.py`` beside the
paper's numbers in ``reference_results.csv``, built on ``ecom_tasks/tables.py``),
``plots`` (matplotlib, optional) and ``render`` (md, csv, html). ``text`` keeps
the fixed-width console tables the demo prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ecom_tasks.files import OutputFolder, claim_folder, create_parents
from ecom_tasks.report.text import (
    by_benchmark,
    format_table,
    inspect_rows,
    lm_eval_rows,
)
from ecom_tasks.results import SUCCESS, UNREADABLE

FORMATS = ("md", "csv", "html")
#: The file that makes a folder a report folder (``{"command": "report"}``): a report replaces report.md,
#: report.html, csv/*.csv and plots/*.png by name, so it writes only into a folder it made.
REPORT_MARKER = ".ecom-tasks-report.json"

__all__ = [
    "parse_formats",
    "FORMATS",
    "REPORT_MARKER",
    "open_report_folder",
    "ReportFiles",
    "by_benchmark",
    "format_table",
    "inspect_rows",
    "lm_eval_rows",
    "write_report",
]


@dataclass
class ReportFiles:
    out: Path
    files: list[Path] = field(default_factory=list)
    tables: int = 0
    runs: int = 0
    failed: int = 0
    notice: str = ""
    #: One line per input that could not be read (a FIFO, malformed JSON...), naming the file.
    problems: list[str] = field(default_factory=list)

    @property
    def html(self) -> Path | None:
        return next((f for f in self.files if f.suffix == ".html"), None)


def parse_formats(text: str | Sequence[str]) -> tuple[str, ...]:
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text) if n.strip()]
    unknown = sorted(set(names) - set(FORMATS))
    if unknown or not names:
        raise ValueError(f"unknown report format(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(FORMATS)}")
    return tuple(dict.fromkeys(names))


def open_report_folder(out: str | Path, inputs: Iterable[str | Path] = (), *, option: str = "--out") -> OutputFolder:
    """The report folder ``out``, checked writable before any log is read: a new or empty folder (marked with
    :data:`REPORT_MARKER`) or one an earlier report marked; a colleague's folder is refused untouched
    (:func:`ecom_tasks.files.claim_folder`). Missing parent folders are made once ``out`` is known to lie outside
    every input, so a refused ``--out`` leaves no folder behind in an input."""
    folder = OutputFolder(out, inputs=inputs, what="report folder")
    create_parents(folder.root)
    folder.check_writable()
    claim_folder(folder, REPORT_MARKER, "command", "report", option=option)
    return folder


def write_report(
    paths: Iterable[str | Path],
    out: str | Path,
    formats: str | Sequence[str] = FORMATS,
    *,
    progress: bool = False,
    plots: bool = True,
    baseline: str | None = None,
    resamples: int | None = None,
) -> ReportFiles:
    """Read every run under ``paths``, build the tables and write them to ``out`` (a folder).

    Every file is written through :class:`ecom_tasks.files.OutputFolder`: inside ``out``, never through
    a symlink planted there, and ``out`` is refused when it is a file, or is or lies inside an input, or
    is not a report folder (:func:`open_report_folder`).
    """
    from ecom_tasks.report import plots as plotting
    from ecom_tasks.report import render
    from ecom_tasks.report.runs import merge_runs, read_runs
    from ecom_tasks.report.tables import build_tables

    chosen = parse_formats(formats)
    inputs = [Path(p) for p in paths]
    folder = open_report_folder(out, inputs)  # before reading every log
    runs = read_runs(inputs, progress=progress)  # every file read once: the comparison takes these runs too
    merged, failed = merge_runs(runs)
    comparisons, unread_samples = _comparison_tables(runs, merged, baseline, resamples)
    tables = build_tables(merged) + comparisons
    result = ReportFiles(folder.root, tables=len(tables), runs=len(merged), failed=len(failed))
    unreadable = [run for run in failed if run.status == UNREADABLE]
    result.problems = [run.error if run.source in run.error else f"{run.source}: {run.error}" for run in unreadable]
    result.problems += unread_samples

    images: dict[str, bytes] = {}
    if plots and any(t.plot for t in tables) and ("md" in chosen or "html" in chosen):
        if plotting.available():
            images = {table.slug: png for table in tables if (png := plotting.draw(table)) is not None}
        else:
            result.notice = f"No figures: {plotting.INSTALL_HINT}. The tables are complete."

    place = _Placement()

    def write(name: str, data: bytes) -> str:
        relative = place(name)
        result.files.append(folder.write_bytes(relative, data))
        return relative

    if "md" in chosen:
        plot_paths = {slug: write(f"plots/{slug}.png", png) for slug, png in images.items()}
        text = render.markdown(tables, merged, failed, plot_paths, result.notice)
        write("report.md", text.encode("utf-8"))
    if "csv" in chosen:
        for table in tables:
            write(f"csv/{table.slug}.csv", render.table_csv(table).encode("utf-8"))
        write("csv/runs.csv", render.runs_csv(merged, failed).encode("utf-8"))
    if "html" in chosen:
        write("report.html", render.html_page(tables, merged, failed, images, result.notice).encode("utf-8"))
    return result


def _comparison_tables(
    runs: Sequence[Any], merged: Sequence[Any], baseline: str | None, resamples: int | None
) -> tuple[list[Any], list[str]]:
    """ "Which model is better" tables for the tasks that two or more models ran (``report.compare``), and the
    files of per-item outcomes that could not be read (those runs are left out); they are read only for those tasks."""
    from collections import defaultdict

    from ecom_tasks.report import stats
    from ecom_tasks.report.compare import DESIGNS, compare_runs, compared_task, model_runs, report_tables

    models: dict[tuple[str, str], set[str]] = defaultdict(set)
    for run in merged:
        if run.benchmark in DESIGNS:  # merged runs are all successful
            models[(run.benchmark, compared_task(run))].add(f"{run.model_name}/{run.framework}")
    wanted = {key for key, names in models.items() if len(names) > 1}
    if not wanted:
        return [], []
    compared, _, unreadable = model_runs([run for run in runs if run.status == SUCCESS], only=wanted)
    n_resamples = resamples or stats.N_RESAMPLES  # compare's default: the calibrated one (docs/comparisons.md)
    return report_tables(compare_runs(compared, baseline=baseline, n_resamples=n_resamples), baseline), unreadable


class _Placement:
    """The name each written file gets below the report folder: never twice the same (a name already
    taken gets ``-2``, ``-3``...). Table file names come from benchmark names in the logs, made safe by
    ``ecom_tasks.tables.file_slug``; :class:`~ecom_tasks.files.OutputFolder` keeps every write inside."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def __call__(self, relative: str) -> str:
        path = base = PurePosixPath(relative)
        number = 1
        while path.as_posix() in self.taken:
            number += 1
            path = base.with_name(f"{base.stem}-{number}{base.suffix}")
        self.taken.add(path.as_posix())
        return path.as_posix()
