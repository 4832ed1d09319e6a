"""The report written out: markdown and one self-contained HTML page from Jinja2 templates (``templates/``) that
escape every value (docs/security.md), and CSV (one file per table, numbers unrounded: docs/reports.md)."""

from __future__ import annotations

import base64
import functools
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jinja2 import Environment, FunctionLoader, StrictUndefined, Template
from markupsafe import Markup

from ecom_tasks import files
from ecom_tasks.errors import printable
from ecom_tasks.results import MergedRun, Run
from ecom_tasks.tables import (
    FIXTURE_FLAG,
    UNRELIABLE_FLAG,
    Column,
    Row,
    Table,
    csv_text,
    file_slug,
    json_value,
    readable,
    truncation_unknown,
)

#: A cell whose value the run's framework cannot know (lm-eval's truncation share).
UNKNOWN = "unknown"
BENCHMARK_TITLES = {"rair": "RAIR", "ecomeval": "EcomEval (Shopee)", "rmir": "RMIR", "monbench": "MonBench"}
#: The run listing's columns (CSV field -> header); the CSV also has ``created``.
RUN_HEADERS = {
    "status": "status",
    "benchmark": "benchmark",
    "task": "task",
    "framework": "framework",
    "model": "model",
    "model_in_tables": "model in tables",
    "data": "data",
    "settings": "settings",
    "runs_merged": "runs merged",
    "disagree": "differing metrics",
    "source": "source",
    "error": "error",
}
RUN_FIELDS = (*list(RUN_HEADERS)[:10], "created", *list(RUN_HEADERS)[10:])
#: Columns of the run listing shown in markdown (the CSV and the page have them all).
_MD_RUN_FIELDS = ("status", "benchmark", "task", "framework", "model_in_tables", "data", "runs_merged", "source")


def format_value(value: float | None, display: str) -> str:
    if value is None:
        return ""
    if value != value:  # nan: a metric that does not apply
        return "n/a"
    if display == "percent":
        return f"{value * 100:.2f}"
    if display == "fraction":
        return f"{value:.3f}"
    if display == "count" and float(value).is_integer():
        return f"{value:.0f}"
    return f"{value:.2f}"


def _cell(table: Table, column: Column, row: Row) -> str:
    value = row.cells.get(column.key)
    truncation = column.log_key.rpartition("/")[2] == "truncated_rate"
    if value is None and truncation and any(truncation_unknown(run) for run in row.merged):
        return UNKNOWN
    return format_value(value, column.display or table.display) + row.marks.get(column.key, "")


#: What a row's flags say (both templates show it under the summary).
FLAGS_TEXT = (
    "A row's flags stand beside its numbers: a run made with --limit (part of the data), the share of replies "
    "that were invalid, cut off by the token limit, over the server's context or otherwise failed whenever it is "
    "above 0, a truncation share lm-eval cannot know (it passes no stop reason), and recall@K over a pool of K "
    "items or fewer."
)

#: What a table's values are, by its ``display``.
UNIT_TEXT = {
    "percent": "values in %",
    "fraction": "values as fractions (0-1)",
    "score": "scores 0-100",
    "count": "counts",
}


# --- the view both templates show --------------------------------------------------------


@dataclass
class Cell:
    """A table cell, or a header (``numeric``: a column of numbers)."""

    text: str
    css: str = ""
    title: str = ""
    flags: list[Cell] = field(default_factory=list)  # a row's flags, as badges under its model
    numeric: bool = False


@dataclass
class GridRow:
    cells: list[Cell]
    css: str = ""


@dataclass
class Grid:
    headers: list[Cell]
    rows: list[GridRow]


@dataclass
class TableView(Grid):
    anchor: str = ""
    title: str = ""
    unit: str = ""
    note: str = ""
    image: str = ""


@dataclass
class Section:
    anchor: str
    title: str
    tables: list[TableView]


FLAG_CSS = {UNRELIABLE_FLAG: "unreliable", FIXTURE_FLAG: "fixture"}


def table_view(table: Table, *, headline_first: bool, image: str = "") -> TableView:
    """The table as rows of cells. ``headline_first`` (the page): the model, with its flags as badges
    under it, then the Average columns, then the rest, so that the Averages of a wide table are in
    view at any width; otherwise (markdown) the paper's order with flags in their own column."""
    headline = [c for c in table.columns if headline_first and c.headline]
    rest = [c for c in table.columns if c not in headline]
    flags_column = table.has_flags and not headline_first
    optional = [name for name, shown in (("flags", flags_column), ("part", table.has_parts)) if shown]
    identity = ["setting", "source", "data", *optional]
    headers = [
        Cell("model"),
        *(Cell(c.header, "headline", numeric=True) for c in headline),
        *(Cell(h) for h in identity),
        *(Cell(c.header, numeric=True) for c in rest),
    ]
    rows = []
    for row in table.rows:
        flags = [Cell(f, FLAG_CSS.get(f, "")) for f in row.flags]
        model = Cell(row.model, css="model", title=row.model, flags=flags if headline_first else [])
        cells = [model, *(Cell(_cell(table, c, row), css="num headline") for c in headline)]
        source = (f"paper ({row.group})" if row.group else "paper") if row.reference else row.source
        cells += [Cell(row.setting), Cell(source, css="src"), Cell(row.data)]
        if flags_column:
            cells.append(Cell("; ".join(f"⚠ {f}" for f in row.flags)))
        if table.has_parts:
            cells.append(Cell(row.part))
        cells += [Cell(_cell(table, c, row), css="num") for c in rest]
        css = " ".join(c for c in ("ref" if row.reference else "", "flagged" if row.flags else "") if c)
        rows.append(GridRow(cells, css))
    return TableView(
        headers,
        rows,
        anchor=table.slug,
        title=table.title,
        unit=UNIT_TEXT[table.display],
        note=table.note + (" On this page the Average columns come first." if headline else ""),
        image=image,
    )


def sections(tables: Sequence[Table], *, headline_first: bool, images: Mapping[str, str]) -> list[Section]:
    found: dict[str, Section] = {}
    for table in tables:
        section = found.get(table.benchmark)
        if section is None:
            title = BENCHMARK_TITLES.get(table.benchmark, table.benchmark or "Other")
            section = found[table.benchmark] = Section(f"b-{file_slug(table.benchmark or 'other')}", title, [])
        section.tables.append(table_view(table, headline_first=headline_first, image=images.get(table.slug, "")))
    return list(found.values())


def _settings_json(settings: Sequence[tuple[str, str]]) -> str:
    """The settings as one JSON object; values that are JSON text are stored as JSON, not re-quoted."""
    return files.dumps_strict({key: json_value(value) for key, value in settings}, sort_keys=True, ensure_ascii=False)


def run_record(run: MergedRun | Run) -> dict[str, object]:
    """A run's line of the run listing (``RUN_FIELDS``)."""
    merged_run = run if isinstance(run, MergedRun) else None
    return {
        "status": run.status,
        "benchmark": run.benchmark or "?",
        "task": run.task,
        "framework": run.framework,
        "model": run.model,
        "model_in_tables": run.model_name,
        "data": run.data,
        "settings": _settings_json(run.settings),
        "runs_merged": merged_run.count if merged_run else 0,
        "disagree": " ".join(merged_run.disagree) if merged_run else "",
        "created": run.created,
        "source": merged_run.latest.source if merged_run else run.source,
        "error": run.error,
    }


def runs_view(merged: Sequence[MergedRun], failed: Sequence[Run], fields: Sequence[str]) -> Grid:
    rows = []
    listed: list[MergedRun | Run] = [*merged, *failed]
    for run in listed:
        record = run_record(run)
        settings = "; ".join(f"{k}={readable(v)}" for k, v in run.settings)  # the CSV keeps the values' JSON
        texts = {**{k: str(v) for k, v in record.items()}, "settings": settings}
        cells = [Cell(texts[k], css="num" if k == "runs_merged" else "") for k in fields]
        rows.append(GridRow(cells, "" if record["status"] == "success" else "failed"))
    return Grid([Cell(RUN_HEADERS[k], numeric=k == "runs_merged") for k in fields], rows)


# --- markdown -------------------------------------------------------------------------------

_MD_ESCAPES = str.maketrans(
    {mark: "\\" + mark for mark in "\\|`*[]"} | {"<": "&lt;", ">": "&gt;", "&": "&amp;", "\r": " ", "\n": " "}
)


def md_escape(value: Any) -> str:
    """Text as one inert markdown table cell or line: no raw HTML (``<>&`` as entities), no
    links or images (``[``/``]``), no code or emphasis marks, no cell or line break, no control character a
    terminal showing the file would obey (:func:`~ecom_tasks.errors.printable`)."""
    return printable(str(value).translate(_MD_ESCAPES))


@functools.cache
def _page(name: str) -> Template:
    """``report.md.j2`` (:func:`md_escape` on every value) or ``report.html.j2`` (autoescape), from ``templates/``."""
    markdown = name.endswith(".md.j2")
    environment = Environment(
        loader=FunctionLoader(_template),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=not markdown,
        finalize=md_escape if markdown else None,
    )
    return environment.get_template(name)


def _template(name: str) -> str:
    return files.package_text("ecom_tasks.report", f"templates/{name}")


def _asset(name: str) -> str:
    """A style sheet or script placed in the page as it is, without its file's final newline."""
    return _template(name).removesuffix("\n")


def _context(
    tables: Sequence[Table], merged: Sequence[MergedRun], failed: Sequence[Run], notice: str
) -> dict[str, Any]:
    """What both templates show above and around the tables."""
    return {
        "summary": f"{len(merged)} run row(s) from {sum(m.count for m in merged)} successful run(s); "
        f"{len(failed)} unfinished or failed.",
        "flags_text": FLAGS_TEXT,
        "fixture_rows": any(FIXTURE_FLAG in row.flags for table in tables for row in table.rows),
        "fixture_flag": FIXTURE_FLAG,
        "notice": notice,
    }


def markdown(
    tables: Sequence[Table], merged: Sequence[MergedRun], failed: Sequence[Run], plots: Mapping[str, str], notice: str
) -> str:
    return _page("report.md.j2").render(
        **_context(tables, merged, failed, notice),
        sections=sections(tables, headline_first=False, images=plots),
        runs=runs_view(merged, failed, _MD_RUN_FIELDS),
        disagreeing=[m for m in merged if m.disagree],
        failed=failed,
    )


# --- CSV --------------------------------------------------------------------------------


def table_csv(table: Table) -> str:
    header = ["kind", "model", "setting", "source", "data", "flags", "group", "part", *(c.key for c in table.columns)]
    rows = []
    for row in table.rows:
        kind = "reference" if row.reference else "comparison" if row.comparison else "run"
        identity = [kind, row.model, row.setting, row.source, row.data, "; ".join(row.flags), row.group, row.part]
        rows.append([*identity, *(repr(row.cells[c.key]) if c.key in row.cells else "" for c in table.columns)])
    return csv_text(header, rows)


def runs_csv(merged: Sequence[MergedRun], failed: Sequence[Run]) -> str:
    listed: list[MergedRun | Run] = [*merged, *failed]
    return csv_text(RUN_FIELDS, ([run_record(run)[name] for name in RUN_FIELDS] for run in listed))


# --- HTML -------------------------------------------------------------------------------


def html_page(
    tables: Sequence[Table],
    merged: Sequence[MergedRun],
    failed: Sequence[Run],
    images: Mapping[str, bytes],
    notice: str,
) -> str:
    uris = {slug: "data:image/png;base64," + base64.b64encode(png).decode("ascii") for slug, png in images.items()}
    # The page's only script (ours, static) records script errors, console.error calls and whatever the
    # page's Content-Security-Policy blocked into the page, for a headless browser's --dump-dom, and flags
    # that it ran; the policy admits it by the hash of its exact text.
    probe = _asset("probe.js")
    probe_hash = base64.b64encode(hashlib.sha256(probe.encode("utf-8")).digest()).decode("ascii")
    return _page("report.html.j2").render(
        # Our own files, not data: the only markup that is not escaped.
        probe=Markup(probe),
        probe_sha256=probe_hash,
        style=Markup(_asset("style.css")),
        **_context(tables, merged, failed, notice),
        sections=sections(tables, headline_first=True, images=uris),
        runs=runs_view(merged, failed, list(RUN_HEADERS)),
    )
