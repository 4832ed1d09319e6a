"""Results tables and the README's first command (`ecom-tasks demo`)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from helpers import check_ok, expected_baseline_metrics, run_cli

from ecom_tasks.report import by_benchmark, format_table, lm_eval_rows


def test_lm_eval_rows_keep_headline_metrics_and_drop_breakdowns():
    results = {
        "results": {
            " - monbench_perm_query_query_intent": {"alias": "x", "acc,tags": 0.25, "acc_stderr,tags": "N/A"},
            "rair_general": {
                "acc2,none": 0.5,
                "acc2/industry/food,none": 1.0,
                "confusion/L1/L2,none": 3.0,
                "n,none": 12.0,
            },
        }
    }
    assert lm_eval_rows(results) == {
        "monbench_perm_query_query_intent": {"acc": 0.25},
        "rair_general": {"acc2": 0.5, "n": 12.0},
    }


def test_format_table_orders_columns_and_leaves_gaps():
    table = format_table({"rair_general": {"macro_f1": 0.5, "acc2": 0.25, "n": 12.0}, "rair": {"acc2": float("nan")}})
    assert table.splitlines() == [
        "task            acc2  macro_f1       n",
        "rair_general  0.2500    0.5000      12",
        "rair             nan                  ",
    ]
    assert list(by_benchmark({"monbench/x": {}, "rair_hard": {}, "monbench_perm": {}})) == ["monbench", "rair"]


def test_demo_prints_a_results_table_for_every_benchmark(tmp_path: Path):
    proc = check_ok(run_cli(["ecom-tasks", "demo", "--log-dir", str(tmp_path / "logs")], cwd=tmp_path))
    out = proc.stdout
    assert "Inspect: model ecom/baseline on the bundled fixtures" in out
    assert "lm-eval: model ecom-baseline on the bundled fixtures" in out
    # The fixtures' one EcomEval item outside its 37 tasks is named in one line, not a raw Python warning.
    assert "WARNING: task(s) outside EcomEval's 37, kept as given: 'prohibited_product_image_detection'" in proc.stderr
    assert "UnknownTasksWarning" not in proc.stderr
    expected = expected_baseline_metrics("full")
    # The MonBench headline row, in both frameworks, with the baseline's known accuracy.
    inspect_row, lm_eval_row = re.findall(r"^monbench_perm\s+([0-9.]+)\s", out, re.M)
    assert float(inspect_row) == float(lm_eval_row) == round(expected["acc"], 4) == 0.4125
    for task in ("rair_general", "rair_hard", "rair_visual", "rair_visual_text"):
        assert re.search(rf"^{task}\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+", out, re.M), task
    assert list((tmp_path / "logs").glob("*.eval"))
    # It ends with the report of its own runs, in both frameworks, and says where it is.
    report = tmp_path / "logs" / "report"
    assert f"{report / 'report.html'}" in out.splitlines()[-1] or f"{report / 'report.html'}" in out
    assert (report / "report.md").exists() and (report / "csv" / "runs.csv").exists()
    with (report / "csv" / "monbench_table2.csv").open(encoding="utf-8") as fh:
        rows = {(r["model"], r["source"]): r for r in csv.DictReader(fh) if r["kind"] == "run"}
    # One model across the frameworks (ecom/baseline and ecom-baseline), a row per framework.
    assert set(rows) == {("ecom/baseline", "inspect"), ("ecom/baseline", "lm-eval")}
    assert {round(float(r["acc"]), 4) for r in rows.values()} == {0.4125}
    check_demo_report(report)


def check_demo_report(report: Path) -> None:
    """Every run row of the demo's report says it ran on the fixtures and is flagged as not comparable
    (CSV, markdown, page); settings read as key=value; the baseline is one model name."""
    run_rows = []
    for path in sorted((report / "csv").glob("*.csv")):
        if path.name != "runs.csv":
            with path.open(encoding="utf-8") as fh:
                run_rows += [(path.stem, r) for r in csv.DictReader(fh) if r["kind"] == "run"]
    assert run_rows
    unmarked = [
        (t, r["model"], r["setting"])
        for t, r in run_rows
        if r["data"] != "bundled fixtures" or "not comparable" not in r["flags"]
    ]
    assert not unmarked
    assert {r["model"] for _, r in run_rows} == {"ecom/baseline", "lexical"}  # RMIR rows name the embedder
    md = (report / "report.md").read_text().split("\n## Runs\n")[0]  # the tables, not the run listing
    md_rows = [line for line in md.splitlines() if "| bundled fixtures |" in line]
    assert md_rows and all("not comparable with the paper" in line for line in md_rows)
    page = (report / "report.html").read_text()
    table_rows = [
        row
        for row in re.findall(r"<tr([^>]*)>(.*?)</tr>", page, re.S)
        if 'class="src">inspect' in row[1] or 'class="src">lm-eval' in row[1]
    ]
    assert len(table_rows) == len(run_rows)
    assert all("flagged" in attrs and 'class="flag fixture"' in cells for attrs, cells in table_rows)
    # Settings as key=value, not JSON in JSON.
    assert "\\&#34;" not in page and "{&#34;" not in page and "max_tokens=" in page
