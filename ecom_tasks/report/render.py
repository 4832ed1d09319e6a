"""The report written out: markdown, CSV (one file per table) and one self-contained HTML page.

CSV cells hold the logs' numbers unrounded and unscaled (``repr`` of the float;
reference rows converted to the same unit), so a script can compare them with
the logs. Markdown and HTML show them as the paper does: percent with two
decimals for MonBench and RMIR, three-decimal fractions for RAIR, 0-100 scores
for EcomEval.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from ecom_tasks.report.runs import MergedRun, Run
from ecom_tasks.report.tables import Column, Row, Table

BENCHMARK_TITLES = {"rair": "RAIR", "ecomeval": "EcomEval (Shopee)", "rmir": "RMIR", "monbench": "MonBench"}
#: The run listing's columns (CSV field -> HTML header); the CSV also has ``created``.
RUN_HEADERS = {
    "status": "status",
    "benchmark": "benchmark",
    "task": "task",
    "framework": "framework",
    "model": "model",
    "settings": "settings",
    "runs_merged": "runs merged",
    "disagree": "differing metrics",
    "source": "source",
    "error": "error",
}
RUN_FIELDS = (*list(RUN_HEADERS)[:8], "created", *list(RUN_HEADERS)[8:])


def format_value(value: float | None, display: str) -> str:
    if value is None:
        return ""
    if value != value:  # nan: a metric that does not apply
        return "n/a"
    if display == "percent":
        return f"{value * 100:.2f}"
    if display == "fraction":
        return f"{value:.3f}"
    if display == "count":
        return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"
    return f"{value:.2f}"


def _cell(table: Table, column: Column, row: Row) -> str:
    return format_value(row.cells.get(column.key), column.display or table.display)


def _source(row: Row) -> str:
    if row.reference:
        return f"paper ({row.group})" if row.group else "paper"
    return row.source


def _unit_text(table: Table) -> str:
    return {
        "percent": "values in %",
        "fraction": "values as fractions (0-1)",
        "score": "scores 0-100",
        "count": "counts",
    }[table.display]


def _headers(table: Table) -> list[str]:
    return ["model", "setting", "source", *(["part"] if table.has_parts else []), *(c.header for c in table.columns)]


def _display_row(table: Table, row: Row) -> list[str]:
    return [
        row.model,
        row.setting,
        _source(row),
        *([row.part] if table.has_parts else []),
        *(_cell(table, c, row) for c in table.columns),
    ]


# --- markdown ---------------------------------------------------------------------------


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(
    tables: Sequence[Table], merged: Sequence[MergedRun], failed: Sequence[Run], plots: Mapping[str, str], notice: str
) -> str:
    lines = ["# ecom-tasks report", ""]
    lines.append(
        f"{len(merged)} run row(s) from {sum(m.count for m in merged)} successful run(s); {len(failed)} unfinished or failed."
    )
    lines.append("Rows marked `paper` are the papers' published numbers (reference rows), not our runs.")
    if notice:
        lines += ["", f"> {notice}"]
    current = None
    for table in tables:
        if table.benchmark != current:
            current = table.benchmark
            lines += ["", f"## {BENCHMARK_TITLES.get(current, current)}"]
        lines += [
            "",
            f"### {table.title}",
            "",
            f"_{_unit_text(table)}._" + (f" {table.note}" if table.note else ""),
            "",
        ]
        headers = _headers(table)
        lines.append("| " + " | ".join(_md_escape(h) for h in headers) + " |")
        lines.append(
            "|"
            + "|".join("---" if i < len(headers) - len(table.columns) else "---:" for i in range(len(headers)))
            + "|"
        )
        for row in table.rows:
            lines.append("| " + " | ".join(_md_escape(v) for v in _display_row(table, row)) + " |")
        if table.slug in plots:
            lines += ["", f"![{table.title}]({plots[table.slug]})"]
    lines += [
        "",
        "## Runs",
        "",
        "| status | benchmark | task | framework | model | runs merged | source |",
        "|---|---|---|---|---|---:|---|",
    ]
    for record in run_records(merged, failed):
        lines.append(
            "| "
            + " | ".join(
                _md_escape(str(record[k]))
                for k in ("status", "benchmark", "task", "framework", "model", "runs_merged", "source")
            )
            + " |"
        )
    disagreeing = [m for m in merged if m.disagree]
    if disagreeing:
        lines += ["", "Merged runs whose numbers differ (the latest is shown):"]
        lines += [f"- {m.task} [{m.framework}] {m.model}: {', '.join(m.disagree)}" for m in disagreeing]
    if failed:
        lines += ["", "Unfinished or failed runs (not in any table):"]
        lines += [
            f"- {r.status}: {r.task} [{r.framework}] {r.model} ({r.source}){': ' + r.error if r.error else ''}"
            for r in failed
        ]
    return "\n".join(lines) + "\n"


# --- CSV --------------------------------------------------------------------------------


def table_csv(table: Table) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["kind", "model", "setting", "source", "group", "part", *(c.key for c in table.columns)])
    for row in table.rows:
        cells = [repr(row.cells[c.key]) if c.key in row.cells else "" for c in table.columns]
        writer.writerow(
            ["reference" if row.reference else "run", row.model, row.setting, row.source, row.group, row.part, *cells]
        )
    return buffer.getvalue()


def run_records(merged: Sequence[MergedRun], failed: Sequence[Run]) -> list[dict[str, object]]:
    records = []
    for run in [*merged, *failed]:
        is_merged = isinstance(run, MergedRun)
        records.append(
            {
                "status": run.status,
                "benchmark": run.benchmark or "?",
                "task": run.task,
                "framework": run.framework,
                "model": run.model,
                "settings": json.dumps(dict(run.settings), sort_keys=True, ensure_ascii=False),
                "runs_merged": run.count if is_merged else 0,
                "disagree": " ".join(run.disagree) if is_merged else "",
                "created": run.created,
                "source": run.latest.source if is_merged else run.source,
                "error": run.error,
            }
        )
    return records


def runs_csv(merged: Sequence[MergedRun], failed: Sequence[Run]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=RUN_FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(run_records(merged, failed))
    return buffer.getvalue()


# --- HTML -------------------------------------------------------------------------------

#: Records script errors and console.error calls into the page itself, so a headless browser's
#: --dump-dom shows them (the report has no other script).
_ERROR_PROBE = """<script>
window.__reportErrors = [];
window.addEventListener("error", function (e) { window.__reportErrors.push(String(e.message || e)); record(); });
var __consoleError = console.error;
console.error = function () { window.__reportErrors.push(Array.prototype.join.call(arguments, " ")); record(); __consoleError.apply(console, arguments); };
function record() { var n = document.getElementById("report-errors"); if (n) { n.textContent = JSON.stringify(window.__reportErrors); } }
document.addEventListener("DOMContentLoaded", function () { record(); document.body.setAttribute("data-report-ready", "1"); });
</script>"""

_STYLE = """<style>
body { font-family: -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; margin: 2rem; color: #1d232a; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.25rem; margin-top: 2.2rem; border-bottom: 1px solid #ccd; }
h3 { font-size: 1.02rem; margin-top: 1.6rem; }
table { border-collapse: collapse; font-size: 0.82rem; margin: 0.4rem 0 0.8rem; }
th, td { border: 1px solid #d6dae0; padding: 0.18rem 0.5rem; white-space: nowrap; }
div.table { overflow-x: auto; max-width: 100%; }
th { background: #eef1f5; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.ref td { color: #5b6470; font-style: italic; background: #fafafa; }
tr.failed td { color: #8a1f11; background: #fff1ef; }
tr.ref td.src::before { content: "reference "; font-style: normal; font-size: 0.7rem; background: #e4e0f5; padding: 0 0.3rem; border-radius: 0.2rem; margin-right: 0.2rem; }
p.note { font-size: 0.8rem; color: #4a5360; max-width: 60rem; }
.notice { background: #fff6d6; border: 1px solid #e6c84a; padding: 0.5rem; }
img { max-width: 100%; display: block; margin: 0.4rem 0 1rem; }
nav a { margin-right: 0.8rem; } #report-errors { display: none; }
</style>"""


def _html_table(headers: Sequence[str], rows: Sequence[tuple[str, Sequence[str], int]]) -> str:
    """``rows``: (css class, cells, index of the first numeric cell)."""
    out = [
        '<div class="table"><table><thead><tr>',
        *(f"<th>{html.escape(h)}</th>" for h in headers),
        "</tr></thead><tbody>",
    ]
    for css, cells, numeric_from in rows:
        out.append(f'<tr class="{css}">' if css else "<tr>")
        for i, cell in enumerate(cells):
            classes = "num" if i >= numeric_from else ("src" if headers[i] == "source" else "")
            out.append(
                f'<td class="{classes}">{html.escape(cell)}</td>' if classes else f"<td>{html.escape(cell)}</td>"
            )
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def html_page(
    tables: Sequence[Table],
    merged: Sequence[MergedRun],
    failed: Sequence[Run],
    images: Mapping[str, bytes],
    notice: str,
) -> str:
    benchmarks = list(dict.fromkeys(t.benchmark for t in tables))
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>ecom-tasks report</title>',
        _ERROR_PROBE,
        _STYLE,
        "</head><body>",
        '<div id="report-errors">[]</div>',
        "<h1>ecom-tasks report</h1>",
        f"<p>{len(merged)} run row(s) from {sum(m.count for m in merged)} successful run(s); {len(failed)} unfinished or failed. "
        "Rows marked <em>reference</em> are the papers' published numbers, not our runs.</p>",
    ]
    if notice:
        parts.append(f'<p class="notice">{html.escape(notice)}</p>')
    parts.append(
        "<nav>"
        + "".join(f'<a href="#{b}">{html.escape(BENCHMARK_TITLES.get(b, b))}</a>' for b in benchmarks)
        + '<a href="#runs">Runs</a></nav>'
    )
    current = None
    for table in tables:
        if table.benchmark != current:
            current = table.benchmark
            parts.append(f'<h2 id="{html.escape(current)}">{html.escape(BENCHMARK_TITLES.get(current, current))}</h2>')
        parts.append(f'<h3 id="{html.escape(table.slug)}">{html.escape(table.title)}</h3>')
        parts.append(
            f'<p class="note">{html.escape(_unit_text(table))}.{" " + html.escape(table.note) if table.note else ""}</p>'
        )
        headers = _headers(table)
        numeric_from = len(headers) - len(table.columns)
        parts.append(
            _html_table(
                headers,
                [("ref" if row.reference else "", _display_row(table, row), numeric_from) for row in table.rows],
            )
        )
        if table.slug in images:
            data = base64.b64encode(images[table.slug]).decode("ascii")
            parts.append(f'<img alt="{html.escape(table.title)}" src="data:image/png;base64,{data}">')
    parts.append('<h2 id="runs">Runs</h2>')
    records = run_records(merged, failed)
    headers, keys = list(RUN_HEADERS.values()), list(RUN_HEADERS)
    parts.append(
        _html_table(
            headers,
            [("" if r["status"] == "success" else "failed", [str(r[k]) for k in keys], len(headers)) for r in records],
        )
    )
    parts.append(
        '<p class="note">Runs with identical benchmark, task, framework, model and settings are one row: its numbers are '
        "the latest successful run's; 'runs merged' counts them and 'differing metrics' names any metric on which they "
        "disagree. Unfinished or failed runs are listed here and never enter a table.</p>"
    )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
