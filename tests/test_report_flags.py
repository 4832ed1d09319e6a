"""What the report marks beside a headline (issue 26): runs made with ``--limit``, the shares of invalid,
truncated and failed replies, a truncation share lm-eval cannot know, recall@K over a pool of K items
or fewer; and a data build's stages stay out of the benchmark tables."""

from __future__ import annotations

import json
from pathlib import Path

from inspect_ai.log import read_eval_log, write_eval_log
from test_report_merge import MONBENCH_ARGS, make_log, monbench_metrics, read_table, report_folder, run_rows

from ecom_tasks.report import write_report
from ecom_tasks.tables import TRUNCATION_UNKNOWN_FLAG

RAIR_META = {"benchmark": "rair", "subset": "general", "rules_source": "none", "image": False}


def _rair(path: Path, **metrics: float) -> Path:
    values = {"acc2": 0.25, "acc4": 0.125, "macro_f1": 0.1, "invalid_rate": 0.0, "truncated_rate": 0.0, "n": 8.0}
    return make_log(path, "rair_general", {**values, **metrics}, metadata=RAIR_META, task_args={"rules": "none"})


def _with_limit(path: Path, limit: int) -> Path:
    log = read_eval_log(str(path))
    log.eval.config.limit = limit
    write_eval_log(log, str(path))
    return path


def _flags(out: Path, table: str) -> list[list[str]]:
    return [row["flags"].split("; ") if row["flags"] else [] for row in run_rows(out, table)]


def _lm_eval_results(folder: Path, task: str, metrics: dict[str, float], *, limit: int | None = None) -> Path:
    config_metadata = {"version": 1.2, "benchmark": task.split("_")[0]}
    results = {
        "results": {task: {"alias": task, **{f"{k},none": v for k, v in metrics.items()}}},
        "configs": {task: {"metadata": config_metadata, "dataset_kwargs": {"subset": "general"}}},
        "config": {"model": "local-chat-completions", "model_args": "model=m", "limit": limit},
        "date": 1767261600.0,
    }
    path = folder / "results_2026-01-01T10-00-00.000001.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results))
    return path


def test_an_acc2_built_on_invalid_and_cut_off_replies_is_flagged_with_their_shares(tmp_path: Path):
    """The issue's run: Acc@2 .25 from replies 62.5% invalid and all cut off by the token limit."""
    _rair(tmp_path / "bad.eval", invalid_rate=0.625, truncated_rate=1.0)
    out = report_folder(tmp_path)
    write_report([tmp_path], out, plots=False)
    [row] = run_rows(out, "rair_table5")
    assert row["general/acc2"] == "0.25"
    flags = row["flags"].split("; ")
    assert "invalid 62.5%" in flags and "truncated 100.0%" in flags, flags
    # Beside the headline: the markdown row of Table 5 carries them.
    table5 = (out / "report.md").read_text().split("RAIR Table 5")[1].split("###")[0]
    assert "invalid 62.5%" in next(line for line in table5.splitlines() if "| 0.250 |" in line)


def test_clean_runs_carry_no_failure_flag(tmp_path: Path):
    _rair(tmp_path / "clean.eval")
    out = report_folder(tmp_path)
    write_report([tmp_path], out, plots=False)
    assert not any("invalid" in f or "truncated" in f for flags in _flags(out, "rair_table5") for f in flags)


def test_limit_runs_are_marked_in_both_frameworks(tmp_path: Path):
    _with_limit(_rair(tmp_path / "inspect.eval"), 5)
    _lm_eval_results(tmp_path / "lm", "rair_general", {"acc2": 0.5, "acc4": 0.25, "macro_f1": 0.2}, limit=3)
    out = report_folder(tmp_path)
    write_report([tmp_path], out, plots=False)
    # The CSV writes a cell starting like a formula ("--limit ...") with a leading apostrophe (docs/reports.md).
    flags = {r["source"]: r["flags"].removeprefix("'").split("; ") for r in run_rows(out, "rair_table5")}
    assert "--limit 5: a part of the data" in flags["inspect"], flags
    assert "--limit 3: a part of the data" in flags["lm-eval"], flags


def test_lm_eval_truncation_is_unknown_never_zero(tmp_path: Path):
    """lm-eval hands a task no stop reason: its truncation share reads 'unknown' beside Inspect's 100%."""
    _rair(tmp_path / "inspect.eval", truncated_rate=1.0)
    _lm_eval_results(tmp_path / "lm", "rair_general", {"acc2": 0.25, "acc4": 0.125, "macro_f1": 0.1})
    make_log(
        tmp_path / "monbench.eval",
        "monbench_perm",
        {**monbench_metrics(0.5), "invalid_rate": 0.0, "truncated_rate": 1.0},
        task_args=MONBENCH_ARGS,
    )
    monbench = {
        "results": {"monbench_perm_query_ad_relevance": {"acc,none": 0.5, "invalid_rate,none": 0.0}},
        "configs": {
            "monbench_perm_query_ad_relevance": {
                "metadata": {"version": 2.1, "shots": 0},
                "dataset_kwargs": {"tasks": ["query_ad_relevance"], "design": "full"},
            }
        },
        "config": {"model": "local-chat-completions", "model_args": "model=m"},
        "date": 1767261600.0,
    }
    (tmp_path / "lm2").mkdir()
    (tmp_path / "lm2" / "results_2026-01-01T10-00-00.000001.json").write_text(json.dumps(monbench))
    out = report_folder(tmp_path)
    write_report([tmp_path], out, plots=False)
    flags = {r["source"]: r["flags"].split("; ") for r in run_rows(out, "rair_table5")}
    assert "truncated 100.0%" in flags["inspect"] and TRUNCATION_UNKNOWN_FLAG not in flags["inspect"]
    assert TRUNCATION_UNKNOWN_FLAG in flags["lm-eval"] and not any(
        f.startswith("truncated ") and "%" in f for f in flags["lm-eval"]
    )
    # The MonBench failure table shows the word where Inspect shows a number.
    markdown = (out / "report.md").read_text()
    robustness = markdown[markdown.index("MonBench consistency and failure rates") :]
    lm_eval_line = next(line for line in robustness.splitlines() if "| lm-eval |" in line)
    inspect_line = next(line for line in robustness.splitlines() if "| inspect |" in line and "all tasks" in line)
    assert lm_eval_line.rstrip().endswith("| unknown |"), lm_eval_line
    assert inspect_line.rstrip().endswith("| 100.00 |"), inspect_line
    assert ">unknown</td>" in (out / "report.html").read_text()


def test_recall_at_k_over_a_pool_of_k_items_or_fewer_is_flagged(tmp_path: Path):
    metrics = {"recall@20": 0.6, "recall@50": 1.0, "mrr": 0.5, "failure_rate": 0.0, "n": 5.0, "pool_size": 30.0}
    make_log(tmp_path / "small.eval", "rmir", metrics, model="none/none", task_args={"mode": "embed"})
    make_log(
        tmp_path / "big.eval",
        "rmir",
        {**metrics, "pool_size": 1000.0, "recall@50": 0.7},
        model="none/none",
        task_args={"mode": "embed", "data": "big.jsonl"},
    )
    out = report_folder(tmp_path)
    write_report([tmp_path], out, plots=False)
    flags = {r["recall@50"]: r["flags"] for r in run_rows(out, "rmir_table2")}
    assert "recall@50 with K >= the pool (30 items): every item is in the top 50" in flags["1.0"]
    assert "recall@20" not in flags["1.0"] and "pool" not in flags["0.7"]


def test_build_stages_stay_out_of_the_benchmark_tables(tmp_path: Path):
    """A MonBench build's vote stage records benchmark 'monbench': listed as a run, never a table row."""
    make_log(
        tmp_path / "votes.eval",
        "monbench_build_votes",
        {"mean": 0.0},
        metadata={"benchmark": "monbench", "construction_stage": "votes"},
    )
    make_log(tmp_path / "perm.eval", "monbench_perm", monbench_metrics(0.5), task_args=MONBENCH_ARGS)
    out = report_folder(tmp_path)
    result = write_report([tmp_path], out, plots=False)
    assert result.runs == 2
    tables = {p.name for p in (out / "csv").glob("*.csv")}
    assert "monbench_other.csv" not in tables and "monbench_table2.csv" in tables
    assert len(run_rows(out, "monbench_table2")) == 1
    assert {r["task"] for r in read_table(out, "runs")} == {"monbench_build_votes", "monbench_perm"}
    assert "mean" not in (out / "report.md").read_text().split("## Runs")[0]
