"""The papers' tables as data, and the pieces each benchmark's ``paper_tables.tables(runs)`` builds them with: the
paper's rows beside ours, cells in the logs' unit, unrounded (``report/render.py`` formats them; docs/reports.md)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ecom_tasks import files
from ecom_tasks.reference_results import reference_rows
from ecom_tasks.results import FIXTURES, LM_EVAL, MergedRun

PAPER = "paper"
FIXTURE_FLAG = "fixtures: not comparable with the paper"
UNRELIABLE_FLAG = "judge unreliable: failure rate above the threshold"
#: The start of the flag of a run made with ``--limit`` (Inspect ``eval.config.limit``, lm-eval ``config.limit``).
LIMIT_FLAG = "--limit"
TRUNCATION_UNKNOWN_FLAG = "truncated: unknown (lm-eval passes no stop reason)"
#: Benchmarks whose runs count replies cut off by the token limit (``truncated_rate``).
TRUNCATION_BENCHMARKS = frozenset({"rair", "monbench"})
#: Failure shares a row is flagged with when above 0: (metric, label). EcomEval's judge failures have
#: their own column and the unreliable flag.
FAILURE_SHARES = (
    ("invalid_rate", "invalid"),
    ("truncated_rate", "truncated"),
    ("context_exceeded_rate", "prompt over the server's context"),
    ("failure_rate", "failed"),
)
#: How a setting a row does not record reads in its label.
_UNSET = {"limit": "none", "shots": "?"}
_SAFE_NAME = re.compile(r"[a-z0-9][a-z0-9_]*")


def file_slug(name: str) -> str:
    """A name safe as a file name and an HTML id; one cleaned up (``../../x``, ``"><script>``) gets a short hash of
    itself appended, so two names that clean up alike stay two files."""
    if _SAFE_NAME.fullmatch(name) and len(name) <= 64:
        return name
    cleaned = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40] or "x"
    return f"{cleaned}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}"


#: What a spreadsheet reads as the start of a formula (OWASP's list for CSV injection).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value: object) -> object:
    """A CSV cell a spreadsheet shows as text: a name from a colleague's log or data that starts like a
    formula (``=HYPERLINK(...)``) gets a leading apostrophe; numbers, and text that reads as one, stay."""
    if not isinstance(value, str) or not value.startswith(_FORMULA_STARTS):
        return value
    try:
        float(value)
    except ValueError:
        return "'" + value
    return value


def csv_text(header: Iterable[object], rows: Iterable[Iterable[object]], line_end: str = "\n") -> str:
    """A CSV file's text, every cell through :func:`spreadsheet_cell`."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator=line_end)
    writer.writerow(header)
    writer.writerows([spreadsheet_cell(value) for value in row] for row in rows)
    return buffer.getvalue()


def json_value(value: str) -> Any:
    """A recorded setting's value: decoded when it is JSON text of a list or an object, else as it is (a log is
    untrusted: text too deep or with a huge integer stays text, by :func:`ecom_tasks.files.json_problem`)."""
    if value[:1] in "[{":
        decoded, problem = files.json_problem(value, allow_nan=True)
        if problem is None:
            return decoded
    return value


def readable(value: str) -> str:
    """A recorded setting as a person reads it: JSON lists and objects unpacked (``a, b``; ``k: v``)."""
    parsed = json_value(value)

    def text(v: Any) -> str:
        return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)

    if isinstance(parsed, list):
        return ", ".join(text(v) for v in parsed)
    if isinstance(parsed, dict):
        return ", ".join(f"{k}: {text(v)}" for k, v in parsed.items())
    return value


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    #: Overrides the table's ``display`` for this column (e.g. a 0-1 rate in a 0-100 table).
    display: str | None = None
    #: The log's metric that fills the column in run rows, when it is not named ``key``
    #: (``key`` is the paper's column, as in ``reference_results.csv``).
    metric: str = ""
    #: An Average the page keeps in view (shown first among the numbers in HTML).
    headline: bool = False

    @property
    def log_key(self) -> str:
        return self.metric or self.key


@dataclass
class Row:
    model: str
    setting: str
    source: str  # inspect | lm-eval | paper
    cells: dict[str, float]
    reference: bool = False
    group: str = ""  # the paper's row group (e.g. "Closed-source Models")
    part: str = ""  # a sub-row: a MonBench task, a RAIR gold level
    residual: tuple[tuple[str, str], ...] = ()
    merged: tuple[MergedRun, ...] = field(default=(), repr=False)
    #: What the row's runs were run on (empty for the paper's rows).
    data: str = ""
    #: Warnings a reader must see next to the numbers (fixtures, an unreliable judge).
    flags: tuple[str, ...] = ()
    #: Text shown right after a cell's value, by column key (a comparison's significance stars).
    marks: dict[str, str] = field(default_factory=dict)
    #: A row computed across runs (a comparison), not one run's numbers: the CSV's kind says so.
    comparison: bool = False


@dataclass
class Table:
    benchmark: str
    name: str
    title: str
    columns: list[Column]
    rows: list[Row]
    #: How values display: ``percent`` (fraction x 100), ``fraction``, ``score`` (0-100), ``count``.
    display: str = "percent"
    note: str = ""
    #: ``heatmap`` | ``confusion`` | ``bars`` | None
    plot: str | None = None
    #: Column keys in a fixed order that gives each its colour in a figure, the same in every
    #: report whichever columns a report has (RAIR's Fig. 5 dimensions).
    palette: tuple[str, ...] = ()

    @property
    def slug(self) -> str:
        """File name and HTML id: safe whatever the (log-supplied) benchmark name is."""
        return f"{file_slug(self.benchmark)}_{self.name}"

    @property
    def has_parts(self) -> bool:
        return any(row.part for row in self.rows)

    @property
    def has_flags(self) -> bool:
        return any(row.flags for row in self.rows)

    def run_rows(self) -> list[Row]:
        return [row for row in self.rows if not row.reference]


# --- assembling rows from runs --------------------------------------------------------


@dataclass
class Slots:
    """The merged runs behind one row, by slot (a RAIR subset, a MonBench task or ``all``)."""

    model: str
    source: str
    setting: str
    residual: tuple[tuple[str, str], ...]
    runs: dict[str, MergedRun] = field(default_factory=dict)

    def metric(self, slot: str, name: str) -> float | None:
        run = self.runs.get(slot)
        return None if run is None else run.metrics.get(name)


def residual(run: MergedRun, excluded: Iterable[str]) -> tuple[tuple[str, str], ...]:
    skip = set(excluded)
    return tuple((k, v) for k, v in run.settings if k not in skip)


def assemble(
    runs: Iterable[MergedRun],
    classify: Callable[[MergedRun], tuple[str, str] | None],
    excluded: Iterable[str] = (),
    model: Callable[[MergedRun], str] | None = None,
) -> list[Slots]:
    """Group runs into rows: ``classify(run) -> (setting text, slot)`` or None to leave it out; runs of two tasks
    that would fill one cell (a preset and the parametric task) are kept apart by the task name."""
    excluded = tuple(excluded)
    placed = []
    for run in runs:
        where = classify(run)
        if where is not None:
            setting, slot = where
            name = model(run) if model else run.model_name
            placed.append((run, (name, run.framework, residual(run, excluded), setting), slot))
    tasks: dict[tuple, set[str]] = {}
    for run, key, slot in placed:
        tasks.setdefault((key, slot), set()).add(run.task)
    rows: dict[tuple, Slots] = {}
    for run, key, slot in placed:
        if len(tasks[(key, slot)]) > 1:
            key = (*key[:2], (*key[2], ("task", run.task)), key[3])
        row = rows.setdefault(key, Slots(key[0], run.framework, key[3], key[2]))
        current = row.runs.get(slot)
        if current is None or (run.created, run.source) > (current.created, current.source):
            row.runs[slot] = run
    return list(rows.values())


def distinguish(rows: list[Row]) -> None:
    """Append the settings that differ between rows of the same model and framework to ``setting``."""
    by_identity: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        if not row.reference:
            by_identity.setdefault((row.model, row.source), []).append(row)
    for group in by_identity.values():
        keys = sorted({k for row in group for k, _ in row.residual})
        differing = [k for k in keys if len({dict(row.residual).get(k) for row in group}) > 1]
        for row in group:
            values = dict(row.residual)
            extra = ", ".join(
                f"{k}={_short(readable(values[k]) if k in values else _UNSET.get(k, 'unset'))}" for k in differing
            )
            if extra:
                row.setting = f"{row.setting}; {extra}" if row.setting else extra


def _short(value: str, limit: int = 60) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _limit(run: MergedRun) -> str | None:
    value = run.settings_dict.get("limit")
    return None if value in (None, "", "null", "None") else readable(value)


def _share_text(runs: list[MergedRun], metric: str) -> str:
    """``62.5%``, or per task when the row's runs differ: ``62.5% (rair_hard), 10.0% (rair_general)``."""
    values = [(run.task, run.metrics[metric]) for run in runs if run.metrics.get(metric)]
    if len({value for _, value in values}) == 1 and len(values) == len(runs):
        return f"{values[0][1]:.1%}"
    return ", ".join(f"{value:.1%} ({task})" for task, value in values)


def _pool_flags(run: MergedRun) -> list[str]:
    pool = run.metrics.get("pool_size")
    if not pool or pool != pool:
        return []
    found = []
    for name in run.metrics:
        head, at, k = name.rpartition("@")
        if at and k.isdigit() and "/" not in head and int(k) >= pool:
            found.append(f"{name} with K >= the pool ({pool:.0f} items): every item is in the top {k}")
    return found


def data_and_flags(runs: Iterable[MergedRun]) -> tuple[str, tuple[str, ...]]:
    """What the runs of a row were run on, and the warnings a reader must see beside its numbers (docs/reports.md)."""
    runs = list(runs)
    data = " + ".join(dict.fromkeys(run.data for run in runs))
    flags = []
    if any(run.data == FIXTURES for run in runs):
        flags.append(FIXTURE_FLAG)
    if any((run.metrics.get("score_unreliable") or 0.0) > 0 for run in runs):
        flags.append(UNRELIABLE_FLAG)
    limits = sorted({limit for run in runs if (limit := _limit(run)) is not None})
    if limits:
        flags.append(f"{LIMIT_FLAG} {', '.join(limits)}: a part of the data")
    for metric, label in FAILURE_SHARES:
        # lm-eval's truncation share is unknown (below), whatever an older results file holds.
        known = [run for run in runs if not (metric == "truncated_rate" and truncation_unknown(run))]
        if any((run.metrics.get(metric) or 0.0) > 0 for run in known):
            flags.append(f"{label} {_share_text(known, metric)}")
    if any(truncation_unknown(run) for run in runs):
        flags.append(TRUNCATION_UNKNOWN_FLAG)
    for run in runs:
        flags += [flag for flag in _pool_flags(run) if flag not in flags]
    return data, tuple(flags)


def truncation_unknown(run: MergedRun) -> bool:
    """An lm-eval run of a benchmark whose Inspect runs count truncated replies: lm-eval hands a task no
    stop reason, so its share of replies cut off by the token limit is unknown, never 0."""
    return run.framework == LM_EVAL and run.benchmark in TRUNCATION_BENCHMARKS


def run_row(slots: Slots, cells: Mapping[str, float | None], part: str = "") -> Row:
    data, flags = data_and_flags(slots.runs.values())
    return Row(
        model=slots.model,
        setting=slots.setting,
        source=slots.source,
        cells={k: v for k, v in cells.items() if v is not None},
        part=part,
        residual=slots.residual,
        merged=tuple(slots.runs.values()),
        data=data,
        flags=flags,
    )


def paper_rows(benchmark: str, table: str, log_unit: str, setting: Callable[[str], str] | None = None) -> list[Row]:
    return [
        Row(
            model=ref.model,
            setting=setting(ref.setting) if setting else ref.setting,
            source=PAPER,
            cells=dict(ref.values),
            reference=True,
            group=ref.group,
        )
        for ref in reference_rows(benchmark, table, log_unit)
    ]


def finish(table: Table) -> Table | None:
    """Drop a table without run rows (the paper's rows alone are in the benchmark README)."""
    if not table.run_rows():
        return None
    distinguish(table.rows)
    return table


def info_value(run: MergedRun, key: str, default: Any = None) -> Any:
    """A fact the run's task recorded (``run.info``), ``default`` when it is absent or None."""
    value = run.info.get(key, default)
    return default if value is None else value
