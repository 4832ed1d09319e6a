"""The report on lm-eval's EcomEval runs before and after `ecom-tasks judge`: a run that holds responses
only is listed as such, with what to run; once judged, its grades are a Table 2 row and the responses
run says so. Neither is left as a bare "n" row among the other runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import check_ok, run_cli
from loopback.openai_server import serve_openai_compatible

from ecom_tasks.ecomeval.judge_run import judge_output
from ecom_tasks.ecomeval.paper_tables import AWAITING_FLAG, JUDGED_FLAG
from ecom_tasks.report.runs import merge_runs, read_runs
from ecom_tasks.report.tables import build_tables


@pytest.mark.slow  # two ecom-lm-eval runs and a report on the command line
def test_responses_runs_say_whether_they_are_judged(tmp_path: Path):
    first = tmp_path / "judged"
    check_ok(
        run_cli(
            [
                "ecom-lm-eval",
                "--tasks",
                "ecomeval_ecom_qa",
                "--model",
                "ecom-baseline",
                "--output_path",
                first,
                "--log_samples",
            ],
            cwd=tmp_path,
        )
    )
    second = tmp_path / "waiting"  # another category's responses, never judged
    check_ok(
        run_cli(
            [
                "ecom-lm-eval",
                "--tasks",
                "ecomeval_shopping_concepts",
                "--model",
                "ecom-baseline",
                "--output_path",
                second,
                "--log_samples",
            ],
            cwd=tmp_path,
        )
    )
    with serve_openai_compatible(lambda body: "Compared.\nFinal Score: 2") as server:
        (judged,) = judge_output(
            first, ["openai/judge"], api_bases=[server.base_url], cache_dir=tmp_path / "cache", progress=False
        )
    assert judged.metrics["score"] == pytest.approx(200 / 3) and judged.grader_calls == 11

    merged, failed = merge_runs(read_runs([first, second]))
    assert not failed
    tables = {t.name: t for t in build_tables(merged) if t.benchmark == "ecomeval"}
    assert "other" not in tables  # no bare "n" row left over
    responses = tables["responses"].run_rows()
    flags = {row.setting: row.flags for row in responses}
    assert len(responses) == 2 and all(row.cells == {"n": 11.0} for row in responses)  # 11 items each
    assert JUDGED_FLAG in flags["ecomeval_ecom_qa"] and AWAITING_FLAG not in flags["ecomeval_ecom_qa"]
    assert (
        AWAITING_FLAG in flags["ecomeval_shopping_concepts"] and JUDGED_FLAG not in flags["ecomeval_shopping_concepts"]
    )
    # The judged grades are Table 2's row for this model, its judge named.
    [row] = tables["table2"].run_rows()
    assert row.setting == "judge openai/judge" and row.cells["score"] == pytest.approx(200 / 3)

    # And the rendered report shows the command to a reader of the markdown.
    check_ok(
        run_cli(["ecom-tasks", "report", first, second, "--out", tmp_path / "report", "--format", "md"], cwd=tmp_path)
    )
    page = next((tmp_path / "report").rglob("*.md")).read_text(encoding="utf-8")
    assert AWAITING_FLAG in page and JUDGED_FLAG in page
