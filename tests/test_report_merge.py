"""Report rules on hand-built logs: merging, settings in row labels, unfinished and failed runs,
the EcomEval and RMIR layouts, plots with and without matplotlib, the CLI."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from helpers import check_ok, run_cli
from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalError,
    EvalLog,
    EvalMetric,
    EvalResults,
    EvalScore,
    EvalSpec,
    read_eval_log,
    write_eval_log,
)
from inspect_ai.model import ModelConfig

from ecom_tasks.report import plots, write_report

MONBENCH_ARGS = {
    "data": None,
    "shots": 0,
    "split": "test",
    "category_weights": None,
    "metrics": None,
    "strict": False,
    "max_tokens": 16384,
}


def make_log(
    path: Path,
    task: str,
    metrics: dict[str, float],
    *,
    model: str = "openai/gpt-4o",
    task_args: dict | None = None,
    created: str = "2026-01-01T10:00:00+00:00",
    status: str = "success",
    metadata: dict | None = None,
    grader: str | None = None,
) -> Path:
    log = EvalLog(
        status=status,
        eval=EvalSpec(
            created=created,
            task=f"ecom_tasks/{task}",
            task_args=task_args or {},
            dataset=EvalDataset(name=task),
            model=model,
            config=EvalConfig(),
            metadata=metadata,
            model_roles={"grader": ModelConfig(model=grader)} if grader else None,
        ),
        results=(
            EvalResults(
                scores=[
                    EvalScore(
                        name="s", scorer="s", metrics={k: EvalMetric(name=k, value=v) for k, v in metrics.items()}
                    )
                ]
            )
            if status == "success"
            else None
        ),
        error=(
            EvalError(message="RuntimeError: the endpoint went away\ntrace", traceback="", traceback_ansi="")
            if status == "error"
            else None
        ),
    )
    write_eval_log(log, str(path))
    return path


def monbench_metrics(acc: float) -> dict[str, float]:
    tasks = ("query_ad_relevance", "product_co_purchase", "query_product_relation", "query_query_intent")
    return {"acc": acc, "acc_ci": 0.01, **{f"{t}/acc": acc for t in tasks}}


def report_folder(tmp_path: Path) -> Path:
    """A report folder beside the test's folder of logs: one inside an input it reads is refused."""
    return tmp_path.with_name(f"{tmp_path.name}-report")


def read_table(out: Path, name: str) -> list[dict[str, str]]:
    with (out / "csv" / f"{name}.csv").open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def run_rows(out: Path, name: str) -> list[dict[str, str]]:
    return [row for row in read_table(out, name) if row["kind"] == "run"]


def test_identical_settings_merge_into_the_latest_run_with_a_count(tmp_path: Path):
    make_log(
        tmp_path / "a.eval",
        "monbench_perm",
        monbench_metrics(0.5),
        task_args=MONBENCH_ARGS,
        created="2026-01-01T10:00:00+00:00",
    )
    make_log(
        tmp_path / "b.eval",
        "monbench_perm",
        monbench_metrics(0.75),
        task_args=MONBENCH_ARGS,
        created="2026-01-02T10:00:00+00:00",
    )
    out = report_folder(tmp_path)
    result = write_report([tmp_path], out, plots=False)
    assert (result.runs, result.failed) == (1, 0)
    [row] = run_rows(out, "monbench_table2")
    assert (row["model"], row["setting"], float(row["acc"])) == ("openai/gpt-4o", "perm (72 runs), 0-shot", 0.75)
    [run] = read_table(out, "runs")
    assert run["runs_merged"] == "2" and run["source"].endswith("b.eval")
    assert set(run["disagree"].split()) == {
        "acc",
        *(
            f"{t}/acc"
            for t in ("query_ad_relevance", "product_co_purchase", "query_product_relation", "query_query_intent")
        ),
    }
    assert "Merged runs whose numbers differ" in (out / "report.md").read_text()


def test_different_settings_are_separate_rows_named_by_the_difference(tmp_path: Path):
    make_log(tmp_path / "a.eval", "monbench_perm", monbench_metrics(0.5), task_args=MONBENCH_ARGS)
    make_log(tmp_path / "b.eval", "monbench_perm", monbench_metrics(0.6), task_args={**MONBENCH_ARGS, "shots": 5})
    make_log(tmp_path / "c.eval", "monbench_cyclic", monbench_metrics(0.7), task_args=MONBENCH_ARGS)
    out = report_folder(tmp_path)
    write_report([tmp_path], out, plots=False)
    rows = {row["setting"]: float(row["acc"]) for row in run_rows(out, "monbench_table2")}
    # The shots are part of MonBench's row label (Table 2 does not state the paper's).
    assert rows == {"perm (72 runs), 0-shot": 0.5, "perm (72 runs), 5-shot": 0.6, "cyclic (12 runs), 0-shot": 0.7}


def test_unfinished_and_failed_runs_are_listed_and_never_enter_a_table(tmp_path: Path):
    make_log(tmp_path / "ok.eval", "monbench_perm", monbench_metrics(0.5), task_args=MONBENCH_ARGS)
    make_log(
        tmp_path / "err.eval",
        "monbench_perm",
        {},
        task_args=MONBENCH_ARGS,
        status="error",
        created="2026-01-03T10:00:00+00:00",
    )
    # Inspect's JSON log format is read too (named as Inspect names its logs).
    make_log(
        tmp_path / "2026-01-04T10-00-00+00-00_started.json",
        "monbench_perm",
        {},
        task_args=MONBENCH_ARGS,
        status="started",
        created="2026-01-04T10:00:00+00:00",
    )
    # An lm-eval --log_samples file whose results file was never written.
    lm = tmp_path / "lm" / "some-model"
    lm.mkdir(parents=True)
    (lm / "samples_rair_hard_2026-01-05T10-00-00.123456.jsonl").write_text('{"doc_id": 0}\n')
    out = report_folder(tmp_path)
    result = write_report([tmp_path], out, plots=False)
    assert (result.runs, result.failed) == (1, 3)
    [row] = run_rows(out, "monbench_table2")
    assert float(row["acc"]) == 0.5
    statuses = {(r["status"], Path(r["source"]).name, r["error"]) for r in read_table(out, "runs")}
    assert statuses == {
        ("success", "ok.eval", ""),
        ("error", "err.eval", "RuntimeError: the endpoint went away"),
        ("started", "2026-01-04T10-00-00+00-00_started.json", ""),
        (
            "unfinished",
            "samples_rair_hard_2026-01-05T10-00-00.123456.jsonl",
            "samples file without a results file (the run did not finish)",
        ),
    }
    md = (out / "report.md").read_text()
    assert "- error: monbench_perm [inspect] openai/gpt-4o" in md and "- unfinished: rair_hard [lm-eval]" in md


def test_ecomeval_tables_name_the_judge_and_show_judge_failures(tmp_path: Path):
    metrics = {
        "score": 61.25,
        "score_items": 60.0,
        "judge_failure_rate": 0.125,
        "category/ecom_qa": 70.0,
        "category/ecom_multimodal": 52.5,
        "language/en": 66.0,
        "language/th": 40.0,
        "task/product_cover_image_selection": 55.0,
        "task/brand_knowledge": 80.0,
        "difficulty/hard": 30.0,
        "score_multimodal": 55.0,
        "score_unreliable": 0.0,
    }
    args = {"data": None, "category": None, "language": None, "cache": True}
    make_log(
        tmp_path / "a.eval",
        "ecomeval",
        metrics,
        task_args=args,
        grader="openai/gpt-4.1",
        metadata={"benchmark": "ecomeval", "scoring": "judge"},
    )
    make_log(
        tmp_path / "b.eval",
        "ecomeval",
        {**metrics, "score": 50.0},
        task_args=args,
        grader="anthropic/claude-x",
        metadata={"benchmark": "ecomeval", "scoring": "judge"},
    )
    out = report_folder(tmp_path)
    write_report([tmp_path], out, plots=False)
    table2 = {row["setting"]: row for row in run_rows(out, "ecomeval_table2")}
    assert set(table2) == {"judge openai/gpt-4.1", "judge anthropic/claude-x"}
    assert (
        float(table2["judge openai/gpt-4.1"]["score"]) == 61.25
        and float(table2["judge anthropic/claude-x"]["score"]) == 50.0
    )
    assert float(table2["judge openai/gpt-4.1"]["judge_failure_rate"]) == 0.125
    assert [float(r["task/product_cover_image_selection"]) for r in run_rows(out, "ecomeval_table4")] == [55.0, 55.0]
    assert {r["language/th"] for r in run_rows(out, "ecomeval_table3")} == {"40.0"}
    md = (out / "report.md").read_text()
    # 0-100 scores with two decimals; the failure rate in %.
    assert (
        "| openai/gpt-4o | judge openai/gpt-4.1 | inspect | bundled fixtures | ⚠ fixtures: not comparable with the paper "
        "| 61.25 |  |  |  |  | 70.00 | 60.00 | 12.50 |" in md
    )
    assert "| GPT-4.1 |  | paper (Closed-Source Large Language Models) |  |  | 73.52 |" in md


def test_rmir_rows_name_mode_and_embedder(tmp_path: Path):
    metrics = {
        "recall@20": 0.5,
        "recall@50": 0.75,
        "functional/recall@20": 0.4,
        "category_mean/recall@20": 0.45,
        "mrr": 0.3,
        "ndcg@10": 0.35,
    }
    embed_args = {
        "retriever": "openai_embeddings",
        "retriever_args": json.dumps({"base_url": "http://x", "model": "vlm2vec-7b"}),
        "mode": "embed",
        "k": "20,50",
    }
    make_log(tmp_path / "a.eval", "rmir", metrics, model="none/none", task_args=embed_args)
    make_log(
        tmp_path / "b.eval",
        "rmir",
        {**metrics, "recall@20": 0.6},
        model="openai/gpt-4o",
        task_args={**embed_args, "mode": "reason_then_embed"},
    )
    out = report_folder(tmp_path)
    write_report([tmp_path], out, plots=False)
    rows = {(r["model"], r["setting"]): r for r in run_rows(out, "rmir_table2")}
    assert set(rows) == {
        ("openai_embeddings:vlm2vec-7b", "embed"),
        ("openai_embeddings:vlm2vec-7b", "reason_then_embed with openai/gpt-4o"),
    }
    assert float(rows[("openai_embeddings:vlm2vec-7b", "embed")]["recall@20"]) == 0.5
    assert float(rows[("openai_embeddings:vlm2vec-7b", "reason_then_embed with openai/gpt-4o")]["recall@20"]) == 0.6
    md = (out / "report.md").read_text()
    assert "| openai_embeddings:vlm2vec-7b | embed | inspect | ? | 40.00 |" in md
    assert "| UME-R1-7B (Qwen2-VL-7B) |" in md


def _rair_log(path: Path) -> Path:
    metrics = {"acc2": 0.5, "acc4": 0.25, "macro_f1": 0.2, "error_share/category": 0.6, "error_share/none": 0.4}
    for gold in ("L1", "L2", "L3", "L4"):
        metrics.update({f"confusion/{gold}/{p}": 1.0 for p in ("L1", "L2", "L3", "L4", "invalid")})
    meta = {"benchmark": "rair", "subset": "general", "rules_source": "none", "image": False}
    return make_log(path, "rair_general", metrics, task_args={"rules": "none", "image": False}, metadata=meta)


def test_plots_are_embedded_in_the_html_and_written_for_markdown(tmp_path: Path):
    pytest.importorskip("matplotlib")
    _rair_log(tmp_path / "a.eval")
    out = report_folder(tmp_path)
    result = write_report([tmp_path], out)
    assert result.notice == ""
    pngs = sorted(p.name for p in (out / "plots").glob("*.png"))
    assert pngs == ["rair_confusion.png", "rair_errors.png"]
    assert all((out / "plots" / name).read_bytes().startswith(b"\x89PNG") for name in pngs)
    page = (out / "report.html").read_text()
    assert page.count('src="data:image/png;base64,') == 2 and "plots/" not in page
    assert "![RAIR confusion matrices" in (out / "report.md").read_text()


def test_without_matplotlib_the_report_says_how_to_install_it_and_keeps_the_tables(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(plots, "available", lambda: False)
    _rair_log(tmp_path / "a.eval")
    out = report_folder(tmp_path)
    result = write_report([tmp_path], out)
    assert 'pip install "ecom-tasks[plots]"' in result.notice
    assert 'pip install "ecom-tasks\\[plots\\]"' in (out / "report.md").read_text()  # brackets escaped for markdown
    assert "pip install &#34;ecom-tasks[plots]&#34;" in (out / "report.html").read_text()
    assert not (out / "plots").exists()
    assert float(run_rows(out, "rair_table5")[0]["general/macro_f1"]) == 0.2


def test_report_cli(tmp_path: Path):
    _rair_log(tmp_path / "logs.eval")
    proc = check_ok(
        run_cli(
            ["ecom-tasks", "report", str(tmp_path / "logs.eval"), "--out", str(tmp_path / "out"), "--format", "md,csv"]
        )
    )
    assert f"{tmp_path / 'out' / 'report.md'}" in proc.stdout
    assert (tmp_path / "out" / "csv" / "rair_table5.csv").exists() and not (tmp_path / "out" / "report.html").exists()
    bad = check_ok(run_cli(["ecom-tasks", "report", str(tmp_path / "missing"), "--out", str(tmp_path / "x")]), code=2)
    assert "no such file or folder" in bad.stderr
    bad = check_ok(run_cli(["ecom-tasks", "report", str(tmp_path), "--format", "pdf"]), code=2)
    assert "unknown report format(s) pdf" in bad.stderr


def test_a_preset_and_the_parametric_task_with_the_same_arguments_stay_apart(tmp_path: Path):
    """``monbench_perm`` and ``monbench`` with its defaults fill the same cells: the task name tells them apart."""
    make_log(tmp_path / "a.eval", "monbench_perm", monbench_metrics(0.5), task_args=MONBENCH_ARGS)
    make_log(
        tmp_path / "b.eval",
        "monbench",
        monbench_metrics(0.6),
        task_args={**MONBENCH_ARGS, "task": "all", "design": "full"},
    )
    out = report_folder(tmp_path)
    write_report([tmp_path], out, plots=False)
    rows = {row["setting"]: float(row["acc"]) for row in run_rows(out, "monbench_table2")}
    assert rows == {"perm (72 runs), 0-shot; task=monbench_perm": 0.5, "perm (72 runs), 0-shot; task=monbench": 0.6}


def test_lm_eval_results_file_names_the_served_model(tmp_path: Path):
    results = {
        "results": {
            "rair_general": {
                "alias": "rair_general",
                "acc2,none": 0.5,
                "acc2_stderr,none": "N/A",
                "acc4,none": 0.25,
                "macro_f1,none": 0.2,
            }
        },
        "configs": {
            "rair_general": {
                "metadata": {"version": 1.1, "rules_source": "none"},
                "dataset_kwargs": {"subset": "general"},
            }
        },
        "config": {
            "model": "local-chat-completions",
            "model_args": "model=Qwen/Qwen3-8B,base_url=http://127.0.0.1:8000/v1",
            "limit": None,
        },
        "n-shot": {"rair_general": 0},
        "date": 1767261600.0,
    }
    path = tmp_path / "out" / "Qwen__Qwen3-8B" / "results_2026-01-01T10-00-00.000001.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(results))
    out = report_folder(tmp_path)
    write_report([path], out, plots=False)
    [row] = run_rows(out, "rair_table5")
    # The served model names the row (the alias rule); the run listing keeps lm-eval's own spelling too.
    assert (row["model"], row["setting"], row["source"]) == ("Qwen/Qwen3-8B", "Base", "lm-eval")
    [run] = read_table(out, "runs")
    assert (run["model"], run["model_in_tables"]) == ("local-chat-completions:Qwen/Qwen3-8B", "Qwen/Qwen3-8B")
    assert (float(row["general/acc2"]), float(row["general/acc4"]), float(row["general/macro_f1"])) == (0.5, 0.25, 0.2)
    assert row["hard/acc2"] == ""


def test_an_unreadable_log_or_results_file_is_listed_not_skipped(tmp_path: Path):
    make_log(tmp_path / "ok.eval", "monbench_perm", monbench_metrics(0.5), task_args=MONBENCH_ARGS)
    (tmp_path / "broken.eval").write_bytes(b"not a zip file")
    (tmp_path / "results_2026-01-01T10-00-00.000001.json").write_text("{ truncated")
    out = report_folder(tmp_path)
    result = write_report([tmp_path], out, plots=False)
    assert (result.runs, result.failed) == (1, 2)
    listed = {
        Path(r["source"]).name: (r["status"], r["framework"])
        for r in read_table(out, "runs")
        if r["status"] != "success"
    }
    assert listed == {
        "broken.eval": ("unreadable", "inspect"),
        "results_2026-01-01T10-00-00.000001.json": ("unreadable", "lm-eval"),
    }
    assert float(run_rows(out, "monbench_table2")[0]["acc"]) == 0.5


@pytest.mark.parametrize(("message", "shown"), [(" \n ", "error"), ("", "error"), ("\n  boom\nmore", "boom")])
def test_a_failed_logs_error_is_its_first_line_or_error(tmp_path: Path, message: str, shown: str):
    """A log whose error message is blank (a hostile or truncated log) is listed as failed with "error"; it
    crashed the report with IndexError before."""
    from ecom_tasks.report.runs import inspect_run

    log = read_eval_log(str(make_log(tmp_path / "err.eval", "rair_general", {}, status="error")))
    assert log.error is not None
    log.error.message = message
    assert inspect_run(log, "err.eval").error == shown
