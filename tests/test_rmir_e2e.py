"""RMIR end to end in Inspect: the lexical retriever offline (``--model none``), scripted embedders
(positives first, reversed, NaN, zero), and reason-then-embed with ecom/baseline, a mockllm script and a
loopback OpenAI-compatible chat server that receives the query images."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import numpy as np
import pytest
from helpers import check_ok, run_cli
from inspect_ai import eval as inspect_eval
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.model import ModelOutput, get_model
from loopback.openai_server import image_parts, last_user_text, serve_openai_compatible

from ecom_tasks import builtin_plugin, hookspecs, plugins
from ecom_tasks.inspect_evals.rmir import VERSION, rmir, rmir_reason
from ecom_tasks.plugins import baseline_reply
from ecom_tasks.rmir.parsing import parse_reply
from ecom_tasks.rmir.prompts import build_reason_prompt
from ecom_tasks.rmir.schema import CATEGORIES, load_data
from ecom_tasks.solvers.reason_then_embed import DESCRIPTION_KEY

DATA = load_data()
POOL_IDS = [p.id for p in DATA.pool]
POOL_TEXT = {p.id: p.description for p in DATA.pool}


def metrics_of(log) -> dict[str, float]:
    assert log.status == "success", log.error
    return {name: m.value for s in log.results.scores for name, m in s.metrics.items()}


def bm25_rankings(texts: dict[str, str]) -> dict[str, list[str] | None]:
    """Each text's full pool ranking by bm25s' own retrieval (ties in pool order), None when no pool term matches."""
    import bm25s
    from bm25s.tokenization import Tokenizer

    tokenizer = Tokenizer(stopwords="en", stemmer=None)
    model = bm25s.BM25()
    model.index(
        tokenizer.tokenize([POOL_TEXT[i] for i in POOL_IDS], return_as="ids", update_vocab=True, show_progress=False),
        show_progress=False,
    )
    out: dict[str, list[str] | None] = {}
    for key, text in texts.items():
        ids = [
            t for t in tokenizer.tokenize([text], return_as="ids", update_vocab=False, show_progress=False)[0] if t > 0
        ]
        if not ids:
            out[key] = None
            continue
        scores = model.get_scores(ids)
        out[key] = [POOL_IDS[i] for i in np.argsort(-scores, kind="stable")]
    return out


def expected_summary(rankings: dict[str, list[str] | None]) -> dict[str, float]:
    """recall@20/50 and MRR by their textbook definitions, overall, per category and category mean."""
    per_query = {}
    for q in DATA.queries:
        ranked = rankings[q.id]
        pos = set(q.positives)
        if ranked is None:
            per_query[q.id] = (0.0, 0.0, 0.0)
            continue
        ranks = [ranked.index(p) + 1 for p in pos]
        per_query[q.id] = (
            sum(r <= 20 for r in ranks) / len(pos),
            sum(r <= 50 for r in ranks) / len(pos),
            1 / min(ranks),
        )
    out = {}
    for j, name in enumerate(("recall@20", "recall@50", "mrr")):
        out[name] = np.mean([v[j] for v in per_query.values()])
        cats = [np.mean([per_query[q.id][j] for q in DATA.queries if q.category == c]) for c in CATEGORIES]
        for c, v in zip(CATEGORIES, cats):
            out[f"{c}/{name}"] = v
        out[f"category_mean/{name}"] = np.mean(cats)
    out["failure_rate"] = sum(r is None for r in rankings.values()) / len(rankings)
    return out


def assert_metrics(metrics: dict[str, float], expected: dict[str, float]) -> None:
    for key, value in expected.items():
        assert metrics[key] == pytest.approx(value, abs=1e-9), key


# --- embed mode, offline --------------------------------------------------------------------


def test_lexical_runs_offline_from_the_cli_with_model_none(tmp_path):
    logs = tmp_path / "logs"
    check_ok(
        run_cli(
            [
                "inspect",
                "eval",
                "ecom_tasks/rmir",
                "-T",
                "retriever=lexical",
                "--model",
                "none",
                "--log-dir",
                logs,
                "--display",
                "none",
            ],
            env={"ECOM_TASKS_CACHE": str(tmp_path / "cache")},
            cwd=tmp_path,
        )
    )
    (info,) = list_eval_logs(str(logs))
    log = read_eval_log(info)
    metrics = metrics_of(log)
    rankings = bm25_rankings({q.id: q.query_text for q in DATA.queries})
    assert_metrics(metrics, expected_summary(rankings))
    assert 0 < metrics["recall@20"] < 1 and metrics["n"] == 13
    assert {k for k in metrics if k.startswith("category_mean/")} == {
        f"category_mean/{m}" for m in ("recall@20", "recall@50", "mrr", "ndcg@10")
    }
    for sample in log.samples:
        score = sample.scores["rmir_scorer"]
        expected = rankings[sample.id]
        assert score.metadata["ranked"] == (expected[:50] if expected else [])
        assert score.metadata["pool"] == 26
    assert log.eval.task_version == VERSION
    assert log.eval.metadata["pool_input"] == "caption" and log.eval.metadata["split"] is None  # lexical reads captions
    assert not log.stats.model_usage  # no chat model was called


def _manager_with(**factories):
    class Plugin:
        @hookspecs.hookimpl
        def ecom_tasks_retrievers(self):
            return factories

    manager = __import__("pluggy").PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    manager.register(builtin_plugin, name="builtin")
    manager.register(Plugin(), name="test")
    return manager


class ScriptedEmbedder:
    """Query i -> +/- e_i; a pool item -> the sum of e_i over the queries it answers, plus its own
    small component (so that no pool vector is zero)."""

    def __init__(self, sign: float = 1.0, query_output=None) -> None:
        self.id = f"scripted(sign={sign},{id(self)})"
        self.sign, self.query_output = sign, query_output
        self.queries = {q.query_text: i for i, q in enumerate(DATA.queries)}
        self.dim = len(DATA.queries) + len(DATA.pool)

    def embed(self, inputs, role):
        rows = np.zeros((len(inputs), self.dim))
        if role == "query":
            if self.query_output is not None:
                return self.query_output(inputs, self)
            for r, item in enumerate(inputs):
                rows[r, self.queries[item.text]] = self.sign
            return rows
        by_image = {p.image: j for j, p in enumerate(DATA.pool)}
        for r, item in enumerate(inputs):
            assert item.text is None  # the pool is embedded from its images alone (the paper's candidates)
            j = by_image[item.image]
            rows[r, len(DATA.queries) + j] = 0.01
            for i, q in enumerate(DATA.queries):
                if DATA.pool[j].id in q.positives:
                    rows[r, i] = 1.0
        return rows


def test_positives_first_scores_one_and_reversed_the_exact_value(monkeypatch, tmp_path):
    monkeypatch.setenv("ECOM_TASKS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(
        plugins,
        "plugin_manager",
        lambda: _manager_with(oracle=lambda: ScriptedEmbedder(1.0), reversed=lambda: ScriptedEmbedder(-1.0)),
    )
    best, worst = inspect_eval(
        [rmir(retriever="oracle"), rmir(retriever="reversed")],
        model="none",
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    best_metrics = metrics_of(best)
    for name in ("recall@20", "recall@50", "mrr", "ndcg@10", "category_mean/recall@20"):
        assert best_metrics[name] == pytest.approx(1.0), name
    # Reversed: every positive scores below all 26 - npos others, so it ranks last (26 items).
    worst_metrics = metrics_of(worst)
    assert worst_metrics["recall@20"] == 0.0 and worst_metrics["recall@50"] == 1.0
    expected_mrr = np.mean([1 / (26 - len(q.positives) + 1) for q in DATA.queries])
    assert worst_metrics["mrr"] == pytest.approx(expected_mrr)
    assert worst_metrics["failure_rate"] == 0.0


def test_nan_and_wrong_shape_are_errors_zero_is_a_counted_failure(monkeypatch, tmp_path):
    monkeypatch.setenv("ECOM_TASKS_CACHE", str(tmp_path / "cache"))

    def nan(inputs, e):
        return np.full((len(inputs), e.dim), np.nan)

    def short(inputs, e):
        return np.ones((len(inputs), e.dim - 1))

    def zero_for_tadpole(inputs, e):
        rows = np.zeros((len(inputs), e.dim))
        for r, item in enumerate(inputs):
            if "growing up" not in item.text:
                rows[r, e.queries[item.text]] = 1.0
        return rows

    monkeypatch.setattr(
        plugins,
        "plugin_manager",
        lambda: _manager_with(
            nan=lambda: ScriptedEmbedder(query_output=nan),
            short=lambda: ScriptedEmbedder(query_output=short),
            zero=lambda: ScriptedEmbedder(query_output=zero_for_tadpole),
        ),
    )
    logs = inspect_eval(
        [rmir(retriever="nan"), rmir(retriever="short"), rmir(retriever="zero")],
        model="none",
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert logs[0].status == "error" and "NaN or infinite values" in logs[0].error.message
    assert logs[1].status == "error" and re.search(
        r"expected an array of shape \(1, 39\), got \(1, 38\)", logs[1].error.message
    )
    metrics = metrics_of(logs[2])
    assert metrics["failure_rate"] == pytest.approx(1 / 13)
    assert metrics["recall@20"] == pytest.approx(12 / 13)  # the failed query scores 0, the others 1
    assert metrics["temporal/recall@20"] == pytest.approx(3 / 4)
    tadpole = next(s for s in logs[2].samples if s.id == "temp_tadpole").scores["rmir_scorer"]
    assert tadpole.metadata["status"] == "zero_vector" and tadpole.value["failed"] == 1


# --- reason then embed ------------------------------------------------------------------------


def test_reason_then_embed_with_the_baseline(tmp_path, monkeypatch):
    monkeypatch.setenv("ECOM_TASKS_CACHE", str(tmp_path / "cache"))
    (log,) = inspect_eval(rmir_reason(), model="ecom/baseline", log_dir=str(tmp_path / "logs"), display="none")
    metrics = metrics_of(log)
    descriptions = {}
    for q in DATA.queries:
        reply = baseline_reply([("user", build_reason_prompt(q.query_text))])
        descriptions[q.id] = parse_reply(reply).text
    assert_metrics(metrics, expected_summary(bm25_rankings(descriptions)))
    for sample in log.samples:
        assert sample.store[DESCRIPTION_KEY] == descriptions[sample.id]
        assert sample.scores["rmir_scorer"].answer == descriptions[sample.id]


def _target_caption(query_text: str) -> str:
    query = next(q for q in DATA.queries if q.query_text == query_text)
    return POOL_TEXT[query.positives[0]]


def test_reason_then_embed_with_a_mockllm_script(tmp_path, monkeypatch):
    monkeypatch.setenv("ECOM_TASKS_CACHE", str(tmp_path / "cache"))
    seen_images = []

    def output(input, tools, tool_choice, config):
        user = input[-1]
        seen_images.extend(c for c in user.content if getattr(c, "type", "") == "image")
        query_text = re.search(r"^Request: (.+)$", user.text, re.MULTILINE).group(1)
        if "monitor" in query_text:
            return ModelOutput.from_content("mockllm/model", "<think>a cat on a keyboard... I am not sure")  # cut off
        return ModelOutput.from_content(
            "mockllm/model",
            f"<think>work it out</think>\nSome words first.\nDescription: {_target_caption(query_text)}",
        )

    model = get_model("mockllm/model", custom_outputs=output)
    (log,) = inspect_eval(rmir(mode="reason_then_embed"), model=model, log_dir=str(tmp_path / "logs"), display="none")
    metrics = metrics_of(log)
    assert len(seen_images) == 13
    assert metrics["failure_rate"] == pytest.approx(1 / 13)
    # A caption equal to a positive's description ranks a positive first (BM25 on the fixtures).
    assert metrics["mrr"] == pytest.approx(12 / 13)
    assert metrics["causal/recall@20"] == pytest.approx(3 / 4)
    cat = next(s for s in log.samples if s.id == "caus_cat")
    assert (
        cat.store[DESCRIPTION_KEY] is None and cat.scores["rmir_scorer"].metadata["description_status"] == "truncated"
    )


def test_reason_then_embed_through_a_loopback_server_receives_the_query_images(tmp_path):
    def policy(body):
        query_text = re.search(r"^Request: (.+)$", last_user_text(body), re.MULTILINE).group(1)
        return f"Description: {_target_caption(query_text)}"

    logs = tmp_path / "logs"
    with serve_openai_compatible(policy) as server:
        check_ok(
            run_cli(
                [
                    "inspect",
                    "eval",
                    "ecom_tasks/rmir_reason",
                    "--model",
                    "openai-api/vllm/test-model",
                    "--log-dir",
                    logs,
                    "--display",
                    "none",
                ],
                env={
                    "VLLM_BASE_URL": server.base_url,
                    "VLLM_API_KEY": "x",
                    "ECOM_TASKS_CACHE": str(tmp_path / "cache"),
                },
                cwd=tmp_path,
            )
        )
        requests = list(server.requests)
    assert len(requests) == 13
    sent = set()
    for body in requests:
        (part,) = image_parts(body)
        sent.add(base64.b64decode(part["image_url"]["url"].split(",", 1)[1]))
    assert sent == {Path(q.query_image).read_bytes() for q in DATA.queries}
    (info,) = list_eval_logs(str(logs))
    metrics = metrics_of(read_eval_log(info))
    assert metrics["mrr"] == 1.0 and metrics["failure_rate"] == 0.0


def test_eval_retry_finishes_a_failed_reason_then_embed_run(tmp_path):
    from loopback.openai_server import RequestRejected

    state = {"fail": True}

    def policy(body):
        query_text = re.search(r"^Request: (.+)$", last_user_text(body), re.MULTILINE).group(1)
        if "monitor" in query_text and state["fail"]:
            raise RequestRejected("this one fails the first time")
        return f"Description: {_target_caption(query_text)}"

    logs = tmp_path / "logs"
    env = {"VLLM_BASE_URL": "", "VLLM_API_KEY": "x", "ECOM_TASKS_CACHE": str(tmp_path / "cache")}
    with serve_openai_compatible(policy) as server:
        env["VLLM_BASE_URL"] = server.base_url
        first = run_cli(
            [
                "inspect",
                "eval",
                "ecom_tasks/rmir_reason",
                "--model",
                "openai-api/vllm/test-model",
                "--log-dir",
                logs,
                "--display",
                "none",
                "--max-connections",
                "1",
                "--max-samples",
                "1",
            ],
            env=env,
            cwd=tmp_path,
        )
        (info,) = list_eval_logs(str(logs))
        assert read_eval_log(info, header_only=True).status == "error", first.stderr[-2000:]
        state["fail"] = False
        before = len(server.requests)
        check_ok(
            run_cli(["inspect", "eval-retry", info.name, "--log-dir", logs, "--display", "none"], env=env, cwd=tmp_path)
        )
        retried = len(server.requests) - before
    done = [i for i in list_eval_logs(str(logs)) if read_eval_log(i, header_only=True).status == "success"]
    (log,) = [read_eval_log(i) for i in done]
    assert metrics_of(log)["mrr"] == 1.0 and metrics_of(log)["n"] == 13
    assert retried < 13  # samples finished before the error were reused, not asked again
