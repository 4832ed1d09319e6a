"""A model server that hangs: what stops the request in each framework (docs/running.md, "Hung servers").

The loopback server never answers its first request (``hang_first``: the connection stays open and
silent until the server closes); every later request gets the offline baseline's reply. One
MonBench question in one run, so exactly one request hangs.

- Inspect: ``attempt_timeout`` (``--attempt-timeout``) abandons the hung attempt and retries it.
  ``timeout`` (``--timeout``) is the budget of a request with its retries, checked between attempts:
  it does not cut a hung attempt short.
- lm-eval ``local-chat-completions``: the ``timeout`` model argument bounds each attempt, and the
  request is retried (``max_retries``).
"""

from __future__ import annotations

import time
from pathlib import Path

import lm_eval
import pytest
from helpers import baseline_rule, policy_from_rule
from inspect_ai import eval as inspect_eval
from loopback.openai_server import Hang, hang_first, serve_openai_compatible

from ecom_tasks.inspect_evals.monbench import monbench
from ecom_tasks.lm_eval_tasks import task_manager

BASELINE = policy_from_rule(baseline_rule)


def one_question():
    return monbench(task="query_query_intent", design="canonical", formats="label")


def run_inspect(server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **eval_args):
    monkeypatch.setenv("VLLM_BASE_URL", server.base_url)
    monkeypatch.setenv("VLLM_API_KEY", "x")
    start = time.monotonic()
    [log] = inspect_eval(
        one_question(), model="openai-api/vllm/hung", limit=1, log_dir=str(tmp_path), display="none", **eval_args
    )
    return log, time.monotonic() - start


@pytest.mark.slow
def test_inspect_attempt_timeout_abandons_a_hung_request_and_retries(tmp_path, monkeypatch):
    with serve_openai_compatible(hang_first(BASELINE), model_name="hung") as server:
        log, elapsed = run_inspect(server, tmp_path, monkeypatch, attempt_timeout=1)
        asked = len(server.requests)
    assert log.status == "success", log.error
    assert asked == 2  # the hung attempt, then its retry
    metrics = {name: m.value for score in log.results.scores for name, m in score.metrics.items()}
    assert metrics["invalid_rate"] == 0.0  # the retry's reply was scored
    # The log shows the abandoned attempt and the one that answered.
    hung, answered = [e for e in log.samples[0].events if e.event == "model"]
    assert "attempt_timeout" in str(hung.error) and answered.error is None
    assert elapsed < 30  # not the server's hour


def test_inspect_timeout_alone_does_not_cut_a_hung_attempt_short(tmp_path, monkeypatch):
    # The server stays silent for 3 s, then drops the connection; a 1 s `timeout` waits it out.
    with serve_openai_compatible(hang_first(BASELINE, seconds=3), model_name="hung") as server:
        log, elapsed = run_inspect(server, tmp_path, monkeypatch, timeout=1)
    assert elapsed >= 3


def test_hang_first_hangs_only_the_first_requests():
    policy = hang_first(lambda body: "ok", requests=2, seconds=5)
    for _ in range(2):
        with pytest.raises(Hang):
            policy({})
    assert policy({}) == "ok"


@pytest.mark.slow
@pytest.mark.parametrize("concurrent", [1, 2])  # 1: requests' read timeout; more: aiohttp's total timeout
def test_lm_eval_timeout_model_arg_abandons_a_hung_request_and_retries(concurrent):
    with serve_openai_compatible(hang_first(BASELINE), model_name="hung") as server:
        start = time.monotonic()
        results = lm_eval.simple_evaluate(
            model="local-chat-completions",
            model_args=f"model=hung,base_url={server.chat_completions_url},num_concurrent={concurrent},timeout=1,max_retries=3",
            tasks=["monbench_canonical_query_query_intent"],
            limit=1,
            apply_chat_template=True,
            task_manager=task_manager(include_defaults=False),
            bootstrap_iters=0,
        )
        elapsed = time.monotonic() - start
        asked = len(server.requests)
    assert asked == 2
    row = results["results"]["monbench_canonical_query_query_intent"]
    assert row["invalid_rate,none"] == 0.0
    assert elapsed < 60
