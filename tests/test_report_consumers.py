"""What the report shows from the benchmarks' newer records (issue 16) and what a newcomer must be
able to read in it (issue 18), on hand-built logs that carry the keys the benchmarks write:

- EcomEval: ``score`` (Table 2's Average: the five text categories' mean), ``score_multimodal``
  (Table 4's Average: the multimodal tasks' mean), ``score_unreliable`` (the judge failed too often);
- MonBench: ``shots`` (Inspect ``eval.metadata``, lm-eval ``configs.<task>.metadata``);
- every run: its data (fixtures or a named dataset with its hash), readable settings and labels,
  one name per model across the two frameworks, stable figure colours, Averages in view.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from statistics import mean

import pytest
from test_report_merge import MONBENCH_ARGS, make_log, monbench_metrics, read_table, report_folder, run_rows

from ecom_tasks.report import write_report
from ecom_tasks.results import INSPECT, LM_EVAL, model_alias
from ecom_tasks.tables import FIXTURE_FLAG, UNRELIABLE_FLAG

ECOMEVAL_ARGS = {"data": None, "category": None, "language": None, "cache": True}
TEXT_CATEGORIES = {
    "ecom_generation": 40.0,
    "user_understanding": 55.0,
    "shopping_reasoning": 62.5,
    "shopping_concepts": 80.0,
    "ecom_qa": 71.25,
}
MULTIMODAL_TASKS = {
    "product_cover_image_selection": 30.0,
    "multimodal_brand_recognition": 90.0,
    "multimodal_search_relevance": 45.0,
}


def ecomeval_metrics(*, unreliable: bool = False, new: bool = True) -> dict[str, float]:
    """A judge run's metrics as the benchmark writes them. Table 2's Average and Table 4's, by hand:
    (40 + 55 + 62.5 + 80 + 71.25) / 5 = 61.75 and (30 + 90 + 45) / 3 = 55.0. An old log's score
    averaged the multimodal category (item mean 52.0) in: (308.75 + 52) / 6."""
    metrics = {
        **{f"category/{c}": v for c, v in TEXT_CATEGORIES.items()},
        **{f"task/{t}": v for t, v in MULTIMODAL_TASKS.items()},
        "category/ecom_multimodal": 52.0,
        "score_items": 60.0,
        "judge_failure_rate": 0.75 if unreliable else 0.05,
    }
    if new:
        metrics.update(score=61.75, score_multimodal=55.0, score_unreliable=1.0 if unreliable else 0.0)
    else:
        metrics.update(score=(308.75 + 52.0) / 6)
    return metrics


def test_ecomeval_averages_compare_like_with_like(tmp_path: Path):
    assert mean(TEXT_CATEGORIES.values()) == 61.75 and mean(MULTIMODAL_TASKS.values()) == 55.0
    meta = {"benchmark": "ecomeval", "scoring": "judge"}
    make_log(
        tmp_path / "new.eval",
        "ecomeval",
        ecomeval_metrics(),
        task_args=ECOMEVAL_ARGS,
        grader="openai/gpt-4.1",
        metadata=meta,
    )
    make_log(
        tmp_path / "old.eval",
        "ecomeval",
        ecomeval_metrics(new=False),
        task_args=ECOMEVAL_ARGS,
        grader="openai/gpt-4.1-mini",
        metadata=meta,
    )
    out = report_folder(tmp_path)
    write_report([tmp_path], out, plots=False)
    table2 = {r["setting"]: r for r in run_rows(out, "ecomeval_table2")}
    table4 = {r["setting"]: r for r in run_rows(out, "ecomeval_table4")}
    # Our score sits in Table 2's Average column, our score_multimodal in Table 4's (the paper's column name).
    assert float(table2["judge openai/gpt-4.1"]["score"]) == 61.75
    assert float(table4["judge openai/gpt-4.1"]["multimodal_average"]) == 55.0
    assert float(table4["judge openai/gpt-4.1"]["category/ecom_multimodal"]) == 52.0  # its own column, not the Average
    reference = next(r for r in read_table(out, "ecomeval_table4") if r["kind"] == "reference")
    assert reference["multimodal_average"] != ""  # the paper's Average is in the same column
    # An older log's six-category score is never shown as Table 2's Average; it had no Table 4 Average.
    assert (
        table2["judge openai/gpt-4.1-mini"]["score"] == ""
        and float(table2["judge openai/gpt-4.1-mini"]["score_items"]) == 60.0
    )
    assert table4["judge openai/gpt-4.1-mini"]["multimodal_average"] == ""
    md = (out / "report.md").read_text()
    assert re.search(
        r"\| openai/gpt-4o \| judge openai/gpt-4\.1 \| inspect \| bundled fixtures \| [^|]+ \| 61\.75 \|", md
    )


def test_an_unreliable_judge_is_flagged_in_md_csv_and_html(tmp_path: Path):
    meta = {"benchmark": "ecomeval", "scoring": "judge"}
    make_log(
        tmp_path / "bad.eval",
        "ecomeval",
        ecomeval_metrics(unreliable=True),
        task_args=ECOMEVAL_ARGS,
        grader="x/flaky",
        metadata=meta,
    )
    make_log(
        tmp_path / "good.eval", "ecomeval", ecomeval_metrics(), task_args=ECOMEVAL_ARGS, grader="x/solid", metadata=meta
    )
    out = report_folder(tmp_path)
    write_report([tmp_path], out, plots=False)
    for table in ("ecomeval_table2", "ecomeval_table4", "ecomeval_tasks"):
        rows = {r["setting"]: r["flags"] for r in run_rows(out, table)}
        assert UNRELIABLE_FLAG in rows["judge x/flaky"] and UNRELIABLE_FLAG not in rows["judge x/solid"], table
    md_rows = [line for line in (out / "report.md").read_text().splitlines() if "| judge x/" in line]
    assert md_rows and all((UNRELIABLE_FLAG in line) == ("x/flaky" in line) for line in md_rows)
    page = (out / "report.html").read_text()
    flagged = re.findall(r'<tr class="flagged">(.*?)</tr>', page)
    unreliable = [row for row in flagged if 'class="flag unreliable"' in row]
    assert unreliable and all("judge x/flaky" in row for row in unreliable)
    assert any("judge x/solid" in row for row in flagged)  # flagged for the fixtures only
    assert not any("judge x/solid" in row and "unreliable" in row for row in flagged)


def lm_eval_monbench(path: Path, shots: int | None) -> Path:
    """An lm-eval results file of the monbench_perm group, each task recording its shots (or not)."""
    tasks = ("query_ad_relevance", "product_co_purchase", "query_product_relation", "query_query_intent")
    names = [f"monbench_perm_{t}" for t in tasks]
    meta = {"version": 2.0, **({"shots": shots} if shots is not None else {})}
    results = {
        "results": {
            "monbench_perm": {"acc,none": 0.5},
            **{f" - {n}": {"acc,none": 0.5} for n in names},
        },
        "groups": {"monbench_perm": {"acc,none": 0.5}},
        "group_subtasks": {"monbench_perm": names},
        "configs": {
            n: {"metadata": meta, "dataset_kwargs": {"tasks": [t], "design": "full"}} for n, t in zip(names, tasks)
        },
        "config": {"model": "ecom-baseline", "model_args": "", "limit": None},
        "n-shot": {n: 0 for n in names},
        "date": 1767261600.0,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results), encoding="utf-8")
    return path


def test_monbench_rows_name_their_shots_in_both_frameworks(tmp_path: Path):
    make_log(
        tmp_path / "five.eval",
        "monbench_perm",
        monbench_metrics(0.5),
        task_args={**MONBENCH_ARGS, "shots": 5},
        metadata={"benchmark": "monbench", "shots": 5},
    )
    # Older Inspect log: no metadata, no task argument.
    args = {k: v for k, v in MONBENCH_ARGS.items() if k != "shots"}
    make_log(tmp_path / "old.eval", "monbench_cyclic", monbench_metrics(0.25), task_args=args, model="openai/old")
    lm_eval_monbench(tmp_path / "lm" / "new" / "results_2026-01-01T10-00-00.000001.json", 5)
    lm_eval_monbench(tmp_path / "lm" / "old" / "results_2026-01-01T10-00-00.000002.json", None)
    out = report_folder(tmp_path)
    write_report([tmp_path], out, plots=False)
    rows = sorted((r["model"], r["source"], r["setting"]) for r in run_rows(out, "monbench_table2"))
    assert rows == [
        ("ecom/baseline", "lm-eval", "perm (72 runs), 5-shot"),
        ("ecom/baseline", "lm-eval", "perm (72 runs), shots=?"),
        ("openai/gpt-4o", "inspect", "perm (72 runs), 5-shot"),
        ("openai/old", "inspect", "cyclic (12 runs), shots=?"),
    ]
    # The paper's rows say that Table 2 does not state its shots.
    assert {r["setting"] for r in read_table(out, "monbench_table2") if r["kind"] == "reference"} == {
        "perm (72 runs), shots not stated"
    }


def test_parametric_monbench_labels_count_the_runs_it_made(tmp_path: Path):
    base = {**MONBENCH_ARGS, "task": "all"}
    make_log(
        tmp_path / "a.eval",
        "monbench",
        monbench_metrics(0.5),
        task_args={**base, "design": "full", "formats": ["label", "content"]},
    )
    make_log(
        tmp_path / "b.eval",
        "monbench",
        monbench_metrics(0.6),
        task_args={**base, "design": "cyclic", "formats": "label_content"},
    )
    make_log(
        tmp_path / "c.eval", "monbench", monbench_metrics(0.7), task_args={**base, "design": "full", "formats": None}
    )
    out = report_folder(tmp_path)
    write_report([tmp_path], out, plots=False)
    # 24 orderings x 2 formats = 48 runs; 4 rotations x 1 format = 4; the full design 72.
    assert {r["setting"] for r in run_rows(out, "monbench_table2")} == {
        "perm (48 runs: label, content), 0-shot",
        "cyclic (4 runs: label_content), 0-shot",
        "perm (72 runs), 0-shot",
    }


def test_labels_and_settings_read_plainly(tmp_path: Path):
    make_log(tmp_path / "a.eval", "monbench_perm", monbench_metrics(0.5), task_args=MONBENCH_ARGS)
    make_log(
        tmp_path / "b.eval",
        "monbench_perm",
        monbench_metrics(0.6),
        task_args={**MONBENCH_ARGS, "category_weights": {"1": 2.0, "2": 1.0}},
    )
    log = make_log(tmp_path / "c.eval", "monbench_perm", monbench_metrics(0.7), task_args=MONBENCH_ARGS)
    from inspect_ai.log import read_eval_log, write_eval_log

    limited = read_eval_log(str(log))
    limited.eval.config.limit = 10
    write_eval_log(limited, str(log))
    out = report_folder(tmp_path)
    write_report([tmp_path], out, plots=False)
    settings = {r["setting"] for r in run_rows(out, "monbench_table2")}
    assert settings == {
        "perm (72 runs), 0-shot; category_weights=unset, limit=none",
        "perm (72 runs), 0-shot; category_weights=1: 2.0, 2: 1.0, limit=none",
        "perm (72 runs), 0-shot; category_weights=unset, limit=10",
    }
    # The run listing: key=value on the page and in markdown-free text, JSON (not JSON in JSON) in the CSV.
    page = (out / "report.html").read_text()
    assert "category_weights=1: 2.0, 2: 1.0; limit=10" not in page  # different runs
    assert "category_weights=1: 2.0, 2: 1.0; max_tokens=16384; shots=0; split=test; strict=false" in page
    assert "\\&#34;" not in page and "{&#34;" not in page
    runs = {r["source"].rsplit("/", 1)[-1]: r for r in read_table(out, "runs")}
    assert json.loads(runs["b.eval"]["settings"])["category_weights"] == {"1": 2.0, "2": 1.0}


@pytest.mark.parametrize(
    ("framework", "recorded", "shown"),
    [
        (INSPECT, "ecom/baseline", "ecom/baseline"),
        (LM_EVAL, "ecom-baseline", "ecom/baseline"),
        (INSPECT, "openai-api/vllm/Qwen/Qwen3-8B", "Qwen/Qwen3-8B"),
        (LM_EVAL, "local-chat-completions:Qwen/Qwen3-8B", "Qwen/Qwen3-8B"),
        (INSPECT, "vllm/Qwen/Qwen3-8B", "Qwen/Qwen3-8B"),
        (LM_EVAL, "vllm:Qwen/Qwen3-8B", "Qwen/Qwen3-8B"),
        (LM_EVAL, "hf:Qwen/Qwen3-8B", "Qwen/Qwen3-8B"),
        (INSPECT, "openai/gpt-4o", "openai/gpt-4o"),
        (LM_EVAL, "openai-chat-completions:gpt-4o", "openai/gpt-4o"),
        (INSPECT, "anthropic/claude-x", "anthropic/claude-x"),
        (INSPECT, "mockllm/model", "mockllm/model"),
        (LM_EVAL, "dummy", "dummy"),
        (INSPECT, "openai-api/vllm", "openai-api/vllm"),  # no model part: left as recorded
    ],
)
def test_model_alias_rule(framework: str, recorded: str, shown: str):
    assert model_alias(framework, recorded) == shown


def test_one_model_across_frameworks_is_one_name(tmp_path: Path):
    make_log(
        tmp_path / "a.eval",
        "monbench_perm",
        monbench_metrics(0.5),
        task_args=MONBENCH_ARGS,
        model="openai-api/vllm/Qwen/Qwen3-8B",
    )
    results = json.loads(lm_eval_monbench(tmp_path / "lm" / "results_2026-01-01T10-00-00.000001.json", 0).read_text())
    results["config"] = {
        "model": "local-chat-completions",
        "model_args": "model=Qwen/Qwen3-8B,base_url=http://127.0.0.1:8000/v1",
    }
    (tmp_path / "lm" / "results_2026-01-01T10-00-00.000001.json").write_text(json.dumps(results))
    out = report_folder(tmp_path)
    write_report([tmp_path], out, plots=False)
    rows = {(r["model"], r["source"]) for r in run_rows(out, "monbench_table2")}
    assert rows == {("Qwen/Qwen3-8B", "inspect"), ("Qwen/Qwen3-8B", "lm-eval")}
    listing = {(r["model"], r["model_in_tables"]) for r in read_table(out, "runs")}
    assert ("openai-api/vllm/Qwen/Qwen3-8B", "Qwen/Qwen3-8B") in listing
    assert ("local-chat-completions:Qwen/Qwen3-8B", "Qwen/Qwen3-8B") in listing


def test_each_row_states_its_data(tmp_path: Path):
    make_log(
        tmp_path / "fixtures.eval", "monbench_perm", monbench_metrics(0.5), task_args=MONBENCH_ARGS, model="x/fixtures"
    )
    make_log(
        tmp_path / "named.eval",
        "monbench_perm",
        monbench_metrics(0.6),
        task_args={**MONBENCH_ARGS, "data": "data/monbench.jsonl"},
        metadata={"benchmark": "monbench", "data_sha256": "ab12cd34ef56" + "0" * 52},
        model="x/named",
    )
    make_log(
        tmp_path / "nohash.eval",
        "monbench_perm",
        monbench_metrics(0.7),
        task_args={**MONBENCH_ARGS, "data": "org/monbench"},
        model="x/hub",
    )
    out = report_folder(tmp_path)
    write_report([tmp_path], out, plots=False)
    rows = {r["model"]: (r["data"], r["flags"]) for r in run_rows(out, "monbench_table2")}
    assert rows == {
        "x/fixtures": ("bundled fixtures", FIXTURE_FLAG),
        "x/named": ("data/monbench.jsonl (sha256:ab12cd34ef56)", ""),
        "x/hub": ("org/monbench", ""),
    }
    page = (out / "report.html").read_text()
    table_rows = [
        row for row in re.findall(r"<tr[^>]*>(.*?)</tr>", page) if 'class="src"' in row
    ]  # not the run listing
    fixture_rows = [row for row in table_rows if "x/fixtures" in row]
    assert fixture_rows and all('class="flag fixture"' in row for row in fixture_rows)
    assert not [row for row in table_rows if "x/named" in row and "flag" in row]


def test_fig5_colours_do_not_depend_on_which_dimensions_a_report_has(tmp_path: Path):
    pytest.importorskip("matplotlib")
    from ecom_tasks.report.plots import column_colours
    from ecom_tasks.report.runs import merge_runs, read_runs
    from ecom_tasks.report.tables import build_tables

    def errors_table(shares: dict[str, float], folder: Path):
        metrics = {"acc2": 0.5, "acc4": 0.25, "macro_f1": 0.2, **{f"error_share/{k}": v for k, v in shares.items()}}
        meta = {"benchmark": "rair", "subset": "general", "rules_source": "none", "image": False}
        make_log(folder / "a.eval", "rair_general", metrics, metadata=meta)
        merged, _ = merge_runs(read_runs([folder]))
        return next(t for t in build_tables(merged) if t.slug == "rair_errors")

    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    few = errors_table({"color": 0.5, "none": 0.5}, tmp_path / "one")
    many = errors_table({"style": 0.2, "color": 0.2, "material": 0.2, "year": 0.2, "none": 0.2}, tmp_path / "two")
    few_colours, many_colours = column_colours(few), column_colours(many)
    for key in ("error_share/color", "error_share/none", "error_share/category"):
        assert few_colours[key] == many_colours[key], key
    assert len(set(many_colours.values())) == len(many_colours)  # distinct dimensions, distinct colours
    # Columns in Table 8's order whatever order the log lists them in.
    assert [c.key for c in many.columns] == [
        "error_share/category",
        "error_share/style",
        "error_share/color",
        "error_share/brand",
        "error_share/material",
        "error_share/specification",
        "error_share/year",
        "error_share/none",
    ]


@pytest.mark.slow
def test_average_columns_are_in_view_at_1400_px(tmp_path: Path):
    """A wide table scrolls inside its box; its Averages must be visible without scrolling."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (the test extra) not installed")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("headless Chromium not installed (Debian: apt-get install chromium)")
    long_model = "openai-api/some-service/" + "a-really-long-model-name-" * 3
    # Two rows of one model that differ in a long setting: a long row label.
    make_log(tmp_path / "m.eval", "monbench_perm", monbench_metrics(0.5), task_args=MONBENCH_ARGS, model=long_model)
    weights = {str(i): 1.0 + i for i in range(12)}
    make_log(
        tmp_path / "m2.eval",
        "monbench_perm",
        monbench_metrics(0.5),
        task_args={**MONBENCH_ARGS, "category_weights": weights},
        model=long_model,
    )
    # Both flags (fixtures, unreliable judge) on the widest EcomEval rows.
    make_log(
        tmp_path / "e.eval",
        "ecomeval",
        ecomeval_metrics(unreliable=True),
        task_args=ECOMEVAL_ARGS,
        grader="openai/gpt-4.1",
        metadata={"benchmark": "ecomeval"},
        model=long_model,
    )
    make_log(
        tmp_path / "r.eval",
        "rmir",
        {"recall@20": 0.5, "recall@50": 0.7, "functional/recall@20": 0.4, "mrr": 0.3},
        task_args={"retriever": "lexical", "mode": "embed"},
        model=long_model,
    )
    out = report_folder(tmp_path)
    write_report([tmp_path], out, formats="html", plots=False)
    with sync_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto((out / "report.html").as_uri())
            boxes = page.eval_on_selector_all(
                "th.headline",
                "cells => cells.map(c => { const r = c.getBoundingClientRect(); "
                "return [c.closest('div.table').previousElementSibling.previousElementSibling.textContent, c.textContent, r.right]; })",
            )
            page_width = page.evaluate("() => document.documentElement.scrollWidth")
        finally:
            browser.close()
    titles = {title.split(":")[0] for title, _, _ in boxes}
    assert {"MonBench Table 2", "EcomEval Table 2", "EcomEval Table 4", "RMIR Table 2"} <= titles
    assert all(right <= 1400 for _, _, right in boxes), [b for b in boxes if b[2] > 1400]
    assert page_width <= 1400  # the tables scroll in their boxes, not the page
