"""RAIR end to end: Inspect eval() and lm-eval simple_evaluate() with the baseline, scripted
models and a loopback OpenAI-compatible server (images included for the visual subset)."""

from __future__ import annotations

import base64
import hashlib
import itertools
from pathlib import Path

import lm_eval
import lm_eval.models  # noqa: F401  (lm-eval's own models: registering ours first skips its lazy import)
import pytest
from helpers import baseline_rule, check_ok, policy_from_rule, run_cli
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import ContentImage, ModelOutput, get_model
from loopback.openai_server import image_parts, serve_openai_compatible

from ecom_tasks.inspect_evals.rair import rair_general, rair_hard, rair_visual
from ecom_tasks.lm_eval_tasks import task_manager
from ecom_tasks.plugins import baseline_reply, select_metrics
from ecom_tasks.rair.parsing import INVALID_STATUSES
from ecom_tasks.rair.prompts import render_answer
from ecom_tasks.rair.protocol import build_items
from ecom_tasks.rair.rules import load_rules
from ecom_tasks.rair.schema import SUBSETS, load_records
from ecom_tasks.rair.scoring import score_reply, subset_metric_keys, summarize

TASKS = {"general": rair_general, "hard": rair_hard, "visual": rair_visual}
LM_EVAL_TASK = {"general": "rair_general", "hard": "rair_hard", "visual": "rair_visual_text"}
HEADLINE = ("acc2", "acc4", "macro_f1", "invalid_rate", "n", "l2_dim_acc")
RULES_VERSION = "ecom-tasks-rair-rules/1.0"


def baseline_metrics(subset: str, rules: str = "none", image: bool = False) -> dict[str, float]:
    """What the baseline must score, computed straight from the shared core."""
    items = build_items(load_records(subset=subset), rules=load_rules(rules), image=image)
    replies = [baseline_reply([("system", i.system_prompt), ("user", i.user_prompt)]) for i in items]
    return summarize([score_reply(i.fields, r)[1] for i, r in zip(items, replies)], select_metrics("labels"))


def inspect_metrics(log) -> dict[str, float]:
    assert log.status == "success", log.error
    return {name: m.value for s in log.results.scores for name, m in s.metrics.items()}


def lm_eval_rows(results) -> dict[str, dict[str, float]]:
    return {name: {k.split(",")[0]: v for k, v in m.items() if "," in k} for name, m in results["results"].items()}


def assert_same(actual: dict, expected: dict, keys=None) -> None:
    for key in keys or expected:
        assert actual[key] == pytest.approx(expected[key], nan_ok=True), key


def _digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def image_digest(image: str) -> str:
    if image.startswith("data:"):
        return _digest(base64.b64decode(image.split(",", 1)[1]))
    return _digest(Path(image).read_bytes())


def oracle_answers() -> dict[tuple[str, str | None], str]:
    """Correct Fig. 9 replies keyed by (user text, image digest): two visual items share their text."""
    answers = {}
    for item in [*build_items(load_records(), image=False), *build_items(load_records(), image=True)]:
        key = (item.user_prompt, image_digest(item.image) if item.image else None)
        answers[key] = render_answer(
            item.target, item.fields["gold_dimension"] or None, "checked", item.record.language
        )
    return answers


def scripted_model(policy):
    def output(input, tools, tool_choice, config):
        user = input[-1]
        images = (
            [c.image for c in user.content if isinstance(c, ContentImage)] if not isinstance(user.content, str) else []
        )
        key = (user.text, image_digest(images[0]) if images else None)
        return ModelOutput.from_content(model="mockllm/model", content=policy(key))

    return get_model("mockllm/model", custom_outputs=output)


# --- Inspect ------------------------------------------------------------------------------


def test_inspect_baseline_runs_all_three_tasks(tmp_path):
    logs = inspect_eval(
        [rair_general(), rair_hard(), rair_visual()], model="ecom/baseline", log_dir=str(tmp_path), display="none"
    )
    assert [log.eval.task.split("/")[-1] for log in logs] == ["rair_general", "rair_hard", "rair_visual"]
    for subset, log in zip(SUBSETS, logs):
        metrics = inspect_metrics(log)
        assert metrics["n"] == len(load_records(subset=subset))
        assert_same(metrics, baseline_metrics(subset, image=subset == "visual"))
        for language in ("en", "zh"):
            systems = {s.input[0].text for s in log.samples if s.metadata["language"] == language}
            assert len(systems) <= 1  # the static prefix is byte-identical across samples
    visual = logs[2]
    assert all(any(isinstance(c, ContentImage) for c in s.input[1].content) for s in visual.samples)
    # The lexical baseline is a floor, not noise: it gets most Acc@2 right on the General fixtures.
    assert inspect_metrics(logs[0])["acc2"] > 0.5


def test_inspect_scripted_oracle_with_invalid_replies_counted(tmp_path):
    answers = oracle_answers()
    bad = itertools.cycle(
        ["L5", "relevant", "", "<think>x</think>\nPartially relevant", "<think>cut off mid-reasoning"]
    )
    calls = itertools.count()

    def policy(key):
        return next(bad) if next(calls) % 4 == 0 else answers[key]

    logs = inspect_eval(
        [rair_general(), rair_hard(), rair_visual()],
        model=scripted_model(policy),
        log_dir=str(tmp_path),
        display="none",
    )
    total = invalid = 0
    for log in logs:
        metrics = inspect_metrics(log)
        statuses = [s.scores["rair_scorer"].metadata["status"] for s in log.samples]
        n_invalid = sum(status in INVALID_STATUSES for status in statuses)
        assert metrics["invalid_rate"] == pytest.approx(n_invalid / len(statuses))
        assert metrics["acc4"] == pytest.approx(1 - n_invalid / len(statuses))
        assert (
            metrics["confusion/L4/invalid"]
            + metrics["confusion/L2/invalid"]
            + metrics["confusion/L1/invalid"]
            + metrics["confusion/L3/invalid"]
            == n_invalid
        )
        if metrics.get("l2_dim_acc") == metrics.get("l2_dim_acc"):  # not nan: some L2 answered L2
            assert metrics["l2_dim_acc"] == 1.0
        total += len(statuses)
        invalid += n_invalid
    assert invalid == (total + 3) // 4


def test_image_and_rules_are_one_parameter_away_and_logged(tmp_path):
    default, changed = inspect_eval(
        [rair_visual(), rair_visual(image=False, rules="builtin")],
        model="ecom/baseline",
        log_dir=str(tmp_path),
        display="none",
    )
    assert (default.eval.task_args["image"], default.eval.task_args["rules"]) == (True, "none")
    assert (changed.eval.task_args["image"], changed.eval.task_args["rules"]) == (False, "builtin")
    assert default.eval.metadata["rules_version"] == "none"
    assert changed.eval.metadata["rules_version"] == RULES_VERSION
    rules_file = Path(__file__).parents[1] / "ecom_tasks" / "rair" / "rules_v1.json"
    assert changed.eval.metadata["rules_sha256"] == hashlib.sha256(rules_file.read_bytes()).hexdigest()
    assert changed.eval.metadata["rules_source"] == "builtin"
    assert (default.eval.metadata["rules_source"], default.eval.metadata["rules_sha256"]) == ("none", "")
    assert all(any(isinstance(c, ContentImage) for c in s.input[1].content) for s in default.samples)
    assert all(isinstance(s.input[1].content, str) for s in changed.samples)
    assert all(f"({RULES_VERSION})" in s.input[0].text for s in changed.samples)
    assert all(f"({RULES_VERSION})" not in s.input[0].text for s in default.samples)
    assert all(s.metadata["rules_version"] == RULES_VERSION for s in changed.samples)
    assert default.eval.headline_metric.metric == "macro_f1"


def test_inspect_command_line_resolves_the_task_and_records_its_args(tmp_path):
    proc = check_ok(
        run_cli(
            [
                "inspect",
                "eval",
                "ecom_tasks/rair_visual",
                "--model",
                "ecom/baseline",
                "--log-dir",
                tmp_path,
                "-T",
                "rules=builtin",
            ],
            cwd=tmp_path,
        )
    )
    assert "macro_f1" in proc.stdout
    [log] = [read_eval_log(str(p)) for p in tmp_path.glob("*.eval")]
    assert log.eval.task == "ecom_tasks/rair_visual" and log.status == "success"
    assert log.eval.task_args["rules"] == "builtin" and log.eval.task_args["image"] is True
    assert_same(inspect_metrics(log), baseline_metrics("visual", rules="builtin", image=True), HEADLINE)


def test_missing_image_file_at_load_time_names_file_row_field(tmp_path):
    path = tmp_path / "visual.jsonl"
    path.write_text(
        '{"id": "v1", "subset": "visual", "query": "red hoodie", "title": "Hoodie", "image": "gone.png",'
        ' "industry": "Fashion & Apparel", "label": "L4", "rule_ids": [], "language": "en"}\n',
        encoding="utf-8",
    )
    with pytest.raises(Exception, match=rf"{path}:1:image: image file not found"):
        rair_visual(data=str(path))
    with pytest.raises(ValueError, match="no RAIR records of subset 'hard'"):
        rair_hard(data=str(path))
    assert len(rair_visual(data=str(path), image=False).dataset) == 1  # text-only runs do not need the file


# --- lm-eval --------------------------------------------------------------------------------


def test_lm_eval_groups_with_the_baseline_match_the_shared_core():
    results = lm_eval.simple_evaluate(
        model="ecom-baseline",
        tasks=["rair", "rair_builtin_rules"],
        task_manager=task_manager(include_defaults=False),
        bootstrap_iters=0,
        log_samples=True,
    )
    rows = lm_eval_rows(results)
    for subset in SUBSETS:
        for suffix, rules in (("", "none"), ("_builtin_rules", "builtin")):
            name = LM_EVAL_TASK[subset] + suffix
            expected = baseline_metrics(subset, rules=rules)
            keys = subset_metric_keys(subset, select_metrics("labels"))
            # lm-eval passes no stop reason: no truncated_rate there (unknown, never a 0).
            assert "truncated_rate" not in rows[name] and rows[name]["context_exceeded_rate"] == 0.0
            assert_same(rows[name], expected, [k for k in keys if k in expected and k != "truncated_rate"])
            contexts = [s["arguments"][0][0] for s in results["samples"][name]]
            assert all((f"({RULES_VERSION})" in c) == bool(suffix) for c in contexts)
    for group in ("rair", "rair_builtin_rules"):
        assert set(rows[group]) >= {"acc2", "acc4", "macro_f1", "invalid_rate", "context_exceeded_rate"}
        assert "truncated_rate" not in rows[group]  # lm-eval passes no stop reason: unknown, never 0
    # Which rules were shown is in every task's config of the results: version, sha256, source.
    rules_file = Path(__file__).parents[1] / "ecom_tasks" / "rair" / "rules_v1.json"
    guided = results["configs"]["rair_hard_builtin_rules"]["metadata"]
    assert (guided["rules_source"], guided["rules_version"]) == ("builtin", RULES_VERSION)
    assert guided["rules_sha256"] == hashlib.sha256(rules_file.read_bytes()).hexdigest()
    assert results["configs"]["rair_hard"]["metadata"]["rules_version"] == "none"


# --- the loopback OpenAI-compatible server ---------------------------------------------------


def test_loopback_server_through_inspect_receives_images(tmp_path):
    with serve_openai_compatible(policy_from_rule(baseline_rule)) as server:
        # not memoized: Inspect caches models by name and explicit base URL, so a "openai-api/vllm/test-model"
        # made by an earlier test (its server since stopped) would be reused and hang
        model = get_model("openai-api/vllm/test-model", base_url=server.base_url, api_key="test-key", memoize=False)
        logs = inspect_eval(
            [rair_visual(), rair_hard(rules="builtin")], model=model, log_dir=str(tmp_path), display="none"
        )
        requests = list(server.requests)
    assert_same(inspect_metrics(logs[0]), baseline_metrics("visual", image=True), HEADLINE)
    assert_same(inspect_metrics(logs[1]), baseline_metrics("hard", rules="builtin"), HEADLINE)
    with_images = [r for r in requests if image_parts(r)]
    assert len(with_images) == len(load_records(subset="visual"))
    urls = [part["image_url"]["url"] for r in with_images for part in image_parts(r)]
    assert all(url.startswith("data:image/png;base64,") for url in urls)
    fixture_digests = {image_digest(r.image) for r in load_records(subset="visual")}
    assert {image_digest(url) for url in urls} == fixture_digests
    assert all(r["messages"][0]["role"] == "system" for r in requests)


def test_loopback_server_through_lm_eval_local_chat_completions():
    with serve_openai_compatible(policy_from_rule(baseline_rule)) as server:
        results = lm_eval.simple_evaluate(
            model="local-chat-completions",
            model_args=f"model=test-model,base_url={server.chat_completions_url}",
            tasks=["rair"],
            apply_chat_template=True,
            task_manager=task_manager(include_defaults=False),
            bootstrap_iters=0,
        )
        requests = list(server.requests)
    rows = lm_eval_rows(results)
    for subset in SUBSETS:
        assert_same(rows[LM_EVAL_TASK[subset]], baseline_metrics(subset), HEADLINE)
    # Same builder as Inspect: the system message is the byte-identical static prefix.
    items = {i.user_prompt: i for i in build_items(load_records(), image=False)}
    assert len(requests) == len(load_records())
    for body in requests:
        system, user = body["messages"]
        assert system["role"] == "system" and user["role"] == "user"
        assert system["content"] == items[user["content"]].system_prompt


def test_inspect_counts_replies_stopped_by_the_token_limit(tmp_path):
    # A reasoning model cut off by max_tokens: the provider says so in the stop reason.
    calls = itertools.count()

    def output(input, tools, tool_choice, config):
        cut = next(calls) % 3 == 0
        text = "<think>" + "still weighing the brand and the colour " * 50 if cut else "<think>ok</think>\nL4"
        result = ModelOutput.from_content(
            model="mockllm/model", content=text, stop_reason="max_tokens" if cut else "stop"
        )
        return result

    (log,) = inspect_eval(
        rair_hard(max_tokens=256),
        model=get_model("mockllm/model", custom_outputs=output),
        log_dir=str(tmp_path),
        display="none",
    )
    metrics = inspect_metrics(log)
    n = len(load_records(subset="hard"))
    cut = len(range(0, n, 3))
    assert metrics["truncated_rate"] == pytest.approx(cut / n)
    assert metrics["invalid_rate"] == pytest.approx(cut / n)  # cut off mid-reasoning: no answer
    assert log.eval.task_args["max_tokens"] == 256
