"""Both frameworks against a local OpenAI-compatible server (a stand-in for vLLM).

The served "model" answers every MonBench prompt exactly as the offline
baseline does, so a run over HTTP must reproduce the baseline's numbers: this
checks the whole path (prompt building, client, request shape, reply parsing,
scoring) of ``inspect eval --model openai-api/...`` and lm-eval's
``local-chat-completions``.

Run time: Inspect spends ~35 ms per sample over HTTP (~100 s for the full 2880
samples of ``monbench_perm``, plus ~30 s for the in-process baseline run), so
its test uses ``--limit 576``: the first 8 questions (2 per task, the items are
question-major) under all 72 runs. lm-eval answers the full 2880 requests in a
few seconds and runs unlimited.

The in-process Inspect reference run takes the Task object: under
``python -m pytest`` the current folder is on ``sys.path``, and a stray
``ecom_tasks.egg-info`` there (a setuptools build; ours is hatchling, which
writes none) makes Inspect think the package is neither installed nor
editable, so it registers the tasks without the ``ecom_tasks/`` namespace and
``eval("ecom_tasks/...")`` finds nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import lm_eval
import pytest
from helpers import check_ok, expected_baseline_metrics, run_cli, start_monbench_server
from inspect_ai import eval as inspect_eval
from inspect_ai.log import list_eval_logs, read_eval_log

from ecom_tasks.inspect_evals.monbench import monbench_perm
from ecom_tasks.lm_eval_tasks import TASKS_DIR, task_manager
from ecom_tasks.monbench.protocol import runs_for
from ecom_tasks.monbench.schema import TASKS, load_records
from ecom_tasks.monbench.variants import MAX_TOKENS

N_RUNS = len(runs_for("full"))  # 24 orderings x 3 formats
N_QUESTIONS = len(load_records(None, split="test"))
INSPECT_LIMIT = 8  # questions (one Sample each, its 72 runs inside): the fixtures' first 8 test records are 2 per task


def _roles_and_texts(messages: list[dict]) -> tuple[list[str], tuple[str, ...]]:
    return [m["role"] for m in messages], tuple(str(m["content"]) for m in messages)


def test_inspect_openai_api_roundtrip(tmp_path: Path) -> None:
    # The reference: the same task, limit and scoring with the in-process baseline model.
    # (A Task object, not "ecom_tasks/monbench_perm": in-process name lookup depends on how
    # importlib.metadata sees the package from the current sys.path; see the module docstring.)
    (baseline,) = inspect_eval(
        monbench_perm(),
        model="ecom/baseline",
        limit=INSPECT_LIMIT,
        display="none",
        log_dir=str(tmp_path / "baseline-logs"),
    )
    assert baseline.status == "success" and baseline.results is not None
    reference = {name: m.value for name, m in baseline.results.scores[0].metrics.items()}
    expected = expected_baseline_metrics("full", limit=INSPECT_LIMIT)
    assert reference["acc"] == pytest.approx(expected["acc"])

    log_dir = tmp_path / "logs"
    with start_monbench_server() as server:
        check_ok(
            run_cli(
                [
                    "inspect",
                    "eval",
                    "ecom_tasks/monbench_perm",
                    "--model",
                    "openai-api/vllm/test-model",
                    "--limit",
                    str(INSPECT_LIMIT),
                    "--max-connections",
                    "8",
                    "--log-dir",
                    str(log_dir),
                    "--display",
                    "plain",
                ],
                env={"VLLM_BASE_URL": server.base_url, "VLLM_API_KEY": "x"},
                cwd=tmp_path,
            )
        )
        requests = list(server.requests)

    (info,) = list_eval_logs(str(log_dir))
    log = read_eval_log(info)
    assert log.status == "success"
    assert log.eval.model == "openai-api/vllm/test-model"
    assert log.results is not None
    assert log.results.total_samples == log.results.completed_samples == INSPECT_LIMIT
    metrics = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    assert metrics["acc"] == reference["acc"]
    for task in TASKS:
        assert metrics[f"{task}/acc"] == reference[f"{task}/acc"], task
        assert metrics[f"{task}/n_items"] == 2 * N_RUNS, task
    assert metrics["invalid_rate"] == 0.0
    # Every metric, not only acc, matches the in-process baseline run.
    assert metrics.keys() == reference.keys()
    for name, value in reference.items():
        assert metrics[name] == pytest.approx(value, nan_ok=True), name

    # One chat request per run: the system prompt and the question, nothing else.
    assert len(requests) == INSPECT_LIMIT * N_RUNS
    sent = []
    for body in requests:
        roles, texts = _roles_and_texts(body["messages"])
        assert roles == ["system", "user"]
        assert body["model"] == "test-model"
        # The output limit is the server's unless the user sets one (vLLM: what is left of the context).
        assert body.get("temperature") == 0.0 and "max_tokens" not in body and MAX_TOKENS is None
        sent.append(texts)
    assert baseline.samples is not None
    prompts = [
        (sample.metadata["fan_out"]["systems"][run["system"]], run["user"])
        for sample in baseline.samples
        for run in sample.metadata["fan_out"]["runs"]
    ]
    assert sorted(sent) == sorted(prompts)


@pytest.fixture(scope="module")
def lm_eval_reference() -> dict:
    """``monbench_perm`` results of lm-eval's ``ecom-baseline`` model, in-process."""
    return lm_eval.simple_evaluate(
        model="ecom-baseline",
        tasks=["monbench_perm"],
        task_manager=task_manager(include_defaults=False),
        bootstrap_iters=0,
    )["results"]


@pytest.mark.parametrize("script", ["lm_eval", "ecom-lm-eval"])
def test_lm_eval_local_chat_completions_roundtrip(script: str, tmp_path: Path, lm_eval_reference: dict) -> None:
    out_dir = tmp_path / "out"
    include = ["--include_path", str(TASKS_DIR)] if script == "lm_eval" else []
    with start_monbench_server() as server:
        proc = run_cli(
            [
                script,
                "--tasks",
                "monbench_perm",
                *include,
                "--model",
                "local-chat-completions",
                "--model_args",
                f"model=test-model,base_url={server.chat_completions_url},num_concurrent=4",
                "--apply_chat_template",
                "--output_path",
                str(out_dir),
            ],
            cwd=tmp_path,
        )
        requests = list(server.requests)
    check_ok(proc)

    reference = lm_eval_reference
    expected = expected_baseline_metrics("full")
    assert reference["monbench_perm"]["acc,none"] == pytest.approx(expected["acc"])
    (results_file,) = out_dir.rglob("results_*.json")
    saved = json.loads(results_file.read_text())
    results = saved["results"]
    assert results["monbench_perm"]["acc,none"] == reference["monbench_perm"]["acc,none"]
    for task in TASKS:
        name = f"monbench_perm_{task}"
        assert results[name]["acc,none"] == reference[name]["acc,none"], name
        assert results[name]["acc,none"] == pytest.approx(expected[f"{task}/acc"]), name
        assert results[name]["invalid_rate,none"] == 0.0, name
        assert results[name]["sample_len"] == N_RUNS * len(load_records(None, split="test", tasks=[task]))
    for key, value in reference["monbench_perm"].items():
        if isinstance(value, float):
            assert results["monbench_perm"][key] == pytest.approx(value, nan_ok=True), key

    # One chat request per document, each a system turn (the per-document description) and the question.
    assert len(requests) == N_QUESTIONS * N_RUNS
    for body in requests:
        roles, texts = _roles_and_texts(body["messages"])
        assert roles == ["system", "user"]
        assert body["model"] == "test-model"
        assert "** Output Format **" in texts[0]
        assert "\nA. " in texts[1] and "\nD. " in texts[1]


# --- a reasoning model: a long <think> block (quoting wrong answers), then the answer ---------------


def _reasoning_reply(answer: str, wrong: str) -> str:
    thought = " ".join(["Let me weigh each option against the query once more."] * 400)
    # The model quotes a wrong answer while thinking, and a closing tag without the opening one
    # (as when a chat template opened <think> in the prompt) ends the reasoning.
    return f"{thought} At first glance {wrong} looks right, but no.</think>\n{answer}"


def test_reasoning_model_is_scored_correctly_in_both_frameworks_with_the_defaults(tmp_path: Path) -> None:
    from loopback.openai_server import last_user_text, serve_openai_compatible

    from ecom_tasks.monbench.protocol import load_items as monbench_items
    from ecom_tasks.rair.prompts import render_answer
    from ecom_tasks.rair.protocol import load_items as rair_items

    # The right answer for every prompt either benchmark can send (one run: user texts are unique).
    monbench = {i.user_prompt: i for i in monbench_items(None, design="canonical", formats=["label"])}
    rair = {i.user_prompt: i for i in rair_items(None, subset="hard")}

    def reasoning_model(body: dict) -> str:
        user = last_user_text(body)
        if user in monbench:
            item = monbench[user]
            wrong = f"<Label>{'ABCD'[(item.target_position + 1) % 4]}</Label>"
            return _reasoning_reply(item.target_answer, wrong)
        item = rair[user]
        wrong = "L1" if item.target != "L1" else "L4"
        dimension = "Brand" if item.target == "L2" else None
        answer = render_answer(item.target, dimension).split("</think>", 1)[1].strip()
        return _reasoning_reply(f"Final answer: {answer}", f"Final answer: {wrong}")

    with serve_openai_compatible(reasoning_model, model_name="thinker") as server:
        logs = tmp_path / "logs"
        check_ok(
            run_cli(
                [
                    "inspect",
                    "eval",
                    "ecom_tasks/monbench_canonical",
                    "ecom_tasks/rair_hard",
                    "--model",
                    "openai-api/vllm/thinker",
                    "--log-dir",
                    str(logs),
                    "--display",
                    "none",
                ],
                env={"VLLM_BASE_URL": server.base_url, "VLLM_API_KEY": "x"},
                cwd=tmp_path,
            )
        )
        out = tmp_path / "out"
        check_ok(
            run_cli(
                [
                    "ecom-lm-eval",
                    "--tasks",
                    "monbench_canonical,rair_hard",
                    "--model",
                    "local-chat-completions",
                    "--model_args",
                    f"model=thinker,base_url={server.chat_completions_url},num_concurrent=4",
                    "--apply_chat_template",
                    "--output_path",
                    str(out),
                ],
                cwd=tmp_path,
            )
        )
        requests = list(server.requests)
    # Neither framework caps the reply unless told to: the server's own limit applies.
    assert requests and all("max_tokens" not in body for body in requests)
    for info in list_eval_logs(str(logs)):
        log = read_eval_log(info, header_only=True)
        metrics = {k: m.value for score in log.results.scores for k, m in score.metrics.items()}
        if log.eval.task.endswith("rair_hard"):
            assert (metrics["acc4"], metrics["macro_f1"], metrics["invalid_rate"]) == (1.0, 1.0, 0.0), metrics
        else:
            assert (metrics["acc"], metrics["invalid_rate"], metrics["truncated_rate"]) == (1.0, 0.0, 0.0), metrics
    (results_file,) = out.rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]
    assert results["rair_hard"]["acc4,none"] == results["rair_hard"]["macro_f1,none"] == 1.0
    assert results["rair_hard"]["invalid_rate,none"] == 0.0
    for task in TASKS:
        assert results[f"monbench_canonical_{task}"]["acc,none"] == 1.0, task
        # lm-eval passes no stop reason: no truncated_rate (unknown, never a 0); nothing was refused.
        assert "truncated_rate,none" not in results[f"monbench_canonical_{task}"], task
        assert results[f"monbench_canonical_{task}"]["context_exceeded_rate,none"] == 0.0, task
