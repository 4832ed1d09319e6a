"""Sweeps: ``inspect eval-set`` over two served models x one task of each benchmark into one log
folder, as docs/running.md's "Running many models" recipe runs it (a server per model given with
``--model-spec``, the ``grader`` role on its own server, ``--max-tasks``, ``--retry-attempts``).

One model's server is killed half-way. The same command, re-run once the server is back (on
another port), asks only for the samples that had not finished: counted at the servers, call by
call, from each task's calls per sample. Then ``ecom-tasks report`` covers all eight runs.
"""

from __future__ import annotations

import csv
import threading
from collections import Counter
from pathlib import Path

import pytest
from helpers import baseline_rule, check_ok, run_cli
from inspect_ai.log import list_eval_logs, read_eval_log
from loopback.openai_server import last_user_text, serve_openai_compatible, system_text

#: One task of each benchmark, and the calls one of its samples makes to the evaluated model.
TASKS = {
    "ecom_tasks/monbench_cyclic": 12,  # 4 rotations x 3 formats, fanned out in one sample
    "ecom_tasks/rair_general": 1,
    "ecom_tasks/ecomeval": 1,  # plus one call to the grader
    "ecom_tasks/rmir_reason": 1,  # the model describes the answer image; the lexical retriever searches
}
LIMIT = 10  # samples per task: well over 100 calls per model (a MonBench question alone is 12)
KILL_AFTER = 50  # model-a's server dies before half of its calls


def baseline_policy(body):
    return baseline_rule(system_text(body), last_user_text(body))


def terse_policy(body):
    # model-b answers differently from model-a, so the grader never sees the same prompt twice
    return "I do not know."


class KilledHalfWay:
    """A policy that closes its own server once it has taken ``after`` requests."""

    def __init__(self, after: int) -> None:
        self.after, self.seen, self.lock, self.server = after, 0, threading.Lock(), None

    def __call__(self, body):
        with self.lock:
            self.seen += 1
            if self.seen == self.after:
                threading.Thread(target=self.server.close).start()
        return baseline_policy(body)


def eval_set(log_dir: Path, model_a: str, model_b: str, judge: str, cache: Path):
    """The README recipe; SDK and Inspect retries off so that a dead server fails fast."""
    spec = "{{model: vllm/{name}, base_url: {url}, model_args: {{max_retries: 0}}}}"
    return run_cli(
        [
            "inspect",
            "eval-set",
            *TASKS,
            "--log-dir",
            log_dir,
            "--model-spec",
            spec.format(name="model-a", url=model_a),
            "--model-spec",
            spec.format(name="model-b", url=model_b),
            "--model-role",
            "grader=openai-api/judge/judge",
            "--max-tasks",
            "4",
            "--retry-attempts",
            "1",
            "--max-retries",
            "0",
            "--limit",
            str(LIMIT),
            "--display",
            "none",
        ],
        env={"JUDGE_BASE_URL": judge, "JUDGE_API_KEY": "none", "VLLM_API_KEY": "none", "INSPECT_CACHE_DIR": str(cache)},
        cwd=log_dir.parent,
        timeout=300,
    )


def latest_logs(log_dir: Path) -> dict[tuple[str, str], list]:
    """(task, model) -> its logs, oldest first."""
    found: dict[tuple[str, str], list] = {}
    for info in sorted(list_eval_logs(str(log_dir)), key=lambda i: i.mtime):
        log = read_eval_log(info)
        found.setdefault((log.eval.task, log.eval.model), []).append(log)
    return found


def finished(log) -> set:
    return {s.id for s in log.samples or [] if s.error is None}


def asked(log, ids: set) -> set[str]:
    """The user texts the evaluated model was asked for samples ``ids``."""
    return {
        event.input[-1].text
        for s in log.samples or []
        if s.id in ids
        for event in s.events
        if event.event == "model" and event.role is None
    }


@pytest.mark.slow
def test_eval_set_resumes_a_sweep_after_a_server_dies_and_the_report_covers_every_run(tmp_path):
    log_dir, cache = tmp_path / "sweep", tmp_path / "inspect-cache"
    killer = KilledHalfWay(KILL_AFTER)
    with (
        serve_openai_compatible(killer, model_name="model-a") as a,
        serve_openai_compatible(terse_policy, model_name="model-b") as b,
        serve_openai_compatible(baseline_policy, model_name="judge") as judge,
    ):
        killer.server = a
        first = eval_set(log_dir, a.base_url, b.base_url, judge.base_url, cache)
        assert first.returncode != 0, first.stderr[-3000:]  # model-a's tasks failed
        b_calls_first = len(b.requests)
    runs = latest_logs(log_dir)
    calls_per_model = sum(
        per_sample * runs[(task, "vllm/model-b")][-1].results.total_samples for task, per_sample in TASKS.items()
    )
    assert calls_per_model >= 2 * KILL_AFTER
    assert KILL_AFTER <= len(a.requests) < calls_per_model
    assert set(runs) == {(task, model) for task in TASKS for model in ("vllm/model-a", "vllm/model-b")}
    for task in TASKS:
        assert runs[(task, "vllm/model-b")][-1].status == "success"
    # model-b: every sample once, nothing more
    assert b_calls_first == calls_per_model
    done = {task: finished(runs[(task, "vllm/model-a")][-1]) for task in TASKS}
    for task in TASKS:  # eval-set's own retry (--retry-attempts 1) against the dead server kept what had finished
        for earlier in runs[(task, "vllm/model-a")][:-1]:
            assert finished(earlier) <= done[task]
    assert any(runs[(task, "vllm/model-a")][-1].status == "error" for task in TASKS)
    assert 0 < sum(map(len, done.values()))
    finished_prompts = set().union(*(asked(runs[(t, "vllm/model-a")][-1], done[t]) for t in TASKS))

    # The same command, the servers back (model-a on a new port).
    with (
        serve_openai_compatible(baseline_policy, model_name="model-a") as a,
        serve_openai_compatible(terse_policy, model_name="model-b") as b,
        serve_openai_compatible(baseline_policy, model_name="judge") as judge,
    ):
        check_ok(eval_set(log_dir, a.base_url, b.base_url, judge.base_url, cache))
        again_a = [last_user_text(body) for body in a.requests]
        again_b, again_judge = len(b.requests), len(judge.requests)
    runs = latest_logs(log_dir)
    total = {task: runs[(task, "vllm/model-a")][-1].results.total_samples for task in TASKS}
    assert all(
        runs[(task, model)][-1].status == "success" for task in TASKS for model in ("vllm/model-a", "vllm/model-b")
    )
    # Only the unfinished samples of model-a are asked again, each with all of its calls.
    assert len(again_a) == sum(per_sample * (total[task] - len(done[task])) for task, per_sample in TASKS.items())
    assert not finished_prompts & set(again_a)
    assert again_b == 0
    # The grader grades the unfinished EcomEval samples (fewer when a cancelled sample's grade was cached).
    unfinished = total["ecom_tasks/ecomeval"] - len(done["ecom_tasks/ecomeval"])
    assert again_judge <= unfinished and (again_judge > 0) == (unfinished > 0)

    out = tmp_path / "report"
    # Few resamples: this checks which runs the report covers, not its comparison section.
    report = ["ecom-tasks", "report", str(log_dir), "--out", str(out), "--format", "csv", "--resamples", "99"]
    check_ok(run_cli(report, cwd=tmp_path))
    with open(out / "csv" / "runs.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert Counter((r["task"], r["model_in_tables"], r["status"]) for r in rows) == Counter(
        (task.removeprefix("ecom_tasks/"), model, "success") for task in TASKS for model in ("model-a", "model-b")
    )
