"""A first-option model over the loopback OpenAI-compatible server, in both frameworks' CLIs.

The served model always picks option A and writes it as real models often do, the letter with the
option's text inside each requested tag: ``<Label>A. text</Label>``, ``<Answer>A. text</Answer>``
or both, where A and its text are the first option shown in that run's prompt.

Why exactly 0.25: in the permutation design every question is asked under all 24 orders of its
options, and its correct option is shown first in exactly 6 of them (the other three options fill
the remaining positions in 3! = 6 ways), in each of the 3 formats. So every question is right in
exactly 18 of its 72 runs, whatever the data. With one question per task (Inspect ``--limit 4``:
the fixtures' test split starts with one question of each task; lm-eval ``--limit 72``: the first
question's 72 run documents of each task) each run's accuracy is 0 or 1, so every task's mean is
18/72 and the four-task mean is 0.25 with no rounding at all.

The strict reading, reported beside it in the same run (``acc_strict``), takes only a bare letter
in ``<Label>``, so only the Content runs count: 6/72 = 1/12, and the 48 Label and Label+Content
runs are invalid.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import check_ok, run_cli
from inspect_ai.log import list_eval_logs, read_eval_log
from loopback.openai_server import last_user_text, serve_openai_compatible, system_text

from ecom_tasks.lm_eval_tasks import TASKS_DIR
from ecom_tasks.monbench.baseline import last_options_block, requested_format
from ecom_tasks.monbench.protocol import runs_for
from ecom_tasks.monbench.schema import TASKS

N_RUNS = len(runs_for("full"))
assert N_RUNS == 72


def first_option_with_text(body: dict) -> str:
    """``A. <first shown option>`` inside every tag the prompt asks for."""
    _, options = last_options_block(last_user_text(body))
    wants_label, wants_answer = requested_format(system_text(body))
    answer = f"A. {options[0]}"
    tags = ([f"<Label>{answer}</Label>"] if wants_label else []) + (
        [f"<Answer>{answer}</Answer>"] if wants_answer else []
    )
    return " ".join(tags)


def _metrics(log) -> dict[str, float]:
    return {name: m.value for score in log.results.scores for name, m in score.metrics.items()}


@pytest.mark.slow
def test_inspect_first_option_model_scores_exactly_a_quarter(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    with serve_openai_compatible(first_option_with_text, model_name="first") as server:
        check_ok(
            run_cli(
                [
                    "inspect",
                    "eval",
                    "ecom_tasks/monbench_perm",
                    "--model",
                    "openai-api/vllm/first",
                    "--limit",
                    "4",
                    "--max-connections",
                    "16",
                    "--log-dir",
                    str(logs),
                    "--display",
                    "none",
                ],
                env={"VLLM_BASE_URL": server.base_url, "VLLM_API_KEY": "x"},
                cwd=tmp_path,
            )
        )
        requests = list(server.requests)
    assert len(requests) == 4 * N_RUNS
    assert any("<Label>A. " in first_option_with_text(body) for body in requests)
    (info,) = list_eval_logs(str(logs))
    log = read_eval_log(info)
    metrics = _metrics(log)
    assert {sample.metadata["task"] for sample in log.samples} == set(TASKS)  # one question per task
    assert metrics["acc"] == 0.25
    for task in TASKS:
        assert metrics[f"{task}/acc"] == 0.25, task
    assert (metrics["acc_pos_A"], metrics["acc_pos_D"], metrics["invalid_rate"]) == (1.0, 0.0, 0.0)
    assert log.eval.metadata["shots"] == 0 and "parsing" not in log.eval.metadata
    # The strict reading of the same replies, in the same run.
    assert metrics["acc_strict"] == 6 / 72 and metrics["invalid_rate_strict"] == 48 / 72
    for task in TASKS:
        assert metrics[f"{task}/acc_strict"] == 6 / 72, task


@pytest.mark.slow
def test_lm_eval_first_option_model_scores_exactly_a_quarter(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with serve_openai_compatible(first_option_with_text, model_name="first") as server:
        check_ok(
            run_cli(
                [
                    "lm_eval",
                    "--tasks",
                    "monbench_perm",
                    "--include_path",
                    str(TASKS_DIR),
                    "--limit",
                    str(N_RUNS),
                    "--model",
                    "local-chat-completions",
                    "--apply_chat_template",
                    "--model_args",
                    f"model=first,base_url={server.chat_completions_url},num_concurrent=8",
                    "--output_path",
                    str(out),
                ],
                cwd=tmp_path,
            )
        )
        requests = list(server.requests)
    assert len(requests) == len(TASKS) * N_RUNS
    (results_file,) = out.rglob("results_*.json")
    saved = json.loads(results_file.read_text())
    assert saved["results"]["monbench_perm"]["acc,none"] == 0.25
    for task in TASKS:
        row = saved["results"][f"monbench_perm_{task}"]
        assert (row["acc,none"], row["acc_pos_A,none"], row["invalid_rate,none"]) == (0.25, 1.0, 0.0), task
        assert (row["acc_strict,none"], row["invalid_rate_strict,none"]) == (6 / 72, 48 / 72), task
        assert "parsing" not in saved["configs"][f"monbench_perm_{task}"]["metadata"]
    assert saved["results"]["monbench_perm"]["acc_strict,none"] == 6 / 72
