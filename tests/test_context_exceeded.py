"""A prompt longer than the server's context (issue 26): its own counted failure in both frameworks, with a
message naming the prompt length and the context, never the model's invalid answer, and never the end of an
lm-eval run; and output limits that leave the server's context alone.

The loopback server plays a real one (``loopback.openai_server.context_window``): one character is one
token, and a prompt over the window is refused with HTTP 400 in OpenAI's, vLLM's or llama.cpp's words.
The window is set between the fixtures' prompt lengths, so the refused items are known in advance.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import check_ok, run_cli
from inspect_ai import eval as inspect_eval
from loopback.openai_server import context_window, prompt_chars, serve_openai_compatible

from ecom_tasks.inspect_evals.rair import rair_hard
from ecom_tasks.rair.protocol import load_items
from ecom_tasks.scorers import context_limit

OPENAI = (
    "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. "
    "Please reduce the length of the messages."
)
VLLM = (
    "This model's maximum context length is 8192 tokens. However, you requested 24576 tokens (8192 in the "
    "messages, 16384 in the completion). Please reduce the length of the messages or completion."
)
LLAMA_CPP = {
    "code": 400,
    "message": "the request exceeds the available context size, try increasing it",
    "type": "exceed_context_size_error",
    "n_prompt_tokens": 9000,
    "n_ctx": 8192,
}


def test_each_servers_wording_is_recognised_with_its_numbers():
    openai = context_limit.context_exceeded({"error": {"message": OPENAI, "code": "context_length_exceeded"}})
    assert (openai.prompt_tokens, openai.context_tokens, openai.completion_tokens) == (9000, 8192, None)
    vllm = context_limit.context_exceeded(VLLM)
    assert (vllm.prompt_tokens, vllm.context_tokens, vllm.completion_tokens) == (8192, 8192, 16384)
    assert "with 16384 reserved for the reply" in vllm.describe() and "lower the output limit" in vllm.describe()
    llama = context_limit.context_exceeded({"error": LLAMA_CPP})
    assert (llama.prompt_tokens, llama.context_tokens) == (9000, 8192)
    assert llama.describe().startswith("a prompt of 9000 tokens does not fit the server's context of 8192 tokens")
    sglang = context_limit.context_exceeded(
        "The input (9000 tokens) is longer than the model's context length (8192 tokens)."
    )
    assert (sglang.prompt_tokens, sglang.context_tokens) == (9000, 8192)
    for other in ("Invalid API key", "model 'x' not found", "temperature must be at most 2", "", None):
        assert context_limit.context_exceeded(other) is None, other


def test_the_lm_eval_reply_marker_round_trips():
    found = context_limit.context_exceeded(OPENAI)
    assert context_limit.from_reply(context_limit.as_reply(found)) == found.describe()
    assert context_limit.from_reply("L3: the product matches") is None


def _rair_window() -> tuple[int, set[str]]:
    """A window (in characters) that refuses some RAIR Hard prompts, and the ids it refuses."""
    items = load_items(None, subset="hard")
    sizes = sorted(len(i.system_prompt) + len(i.user_prompt) for i in items)
    window = sizes[len(sizes) // 2]
    return window, {i.id for i in items if len(i.system_prompt) + len(i.user_prompt) > window}


def _answer_l3(body: dict) -> str:
    return "Final answer: L3"


@pytest.mark.parametrize("style", ["openai", "vllm", "llama.cpp"])
def test_inspect_counts_a_prompt_over_the_context_apart(tmp_path: Path, style: str):
    window, refused = _rair_window()
    with serve_openai_compatible(context_window(_answer_l3, window, style=style)) as server:
        (log,) = inspect_eval(
            rair_hard(),
            model="openai-api/vllm/test-model",
            model_base_url=server.base_url,
            model_args={"api_key": "x"},
            display="none",
            log_dir=str(tmp_path / "logs"),
        )
    assert log.status == "success", log.error
    n = len(log.samples)
    metrics = {k: m.value for score in log.results.scores for k, m in score.metrics.items()}
    assert 0 < len(refused) < n
    assert metrics["context_exceeded_rate"] == pytest.approx(len(refused) / n)
    # Answered items all named a level: none of the model's answers is invalid, whatever was refused.
    assert metrics["invalid_rate"] == 0.0 and metrics["truncated_rate"] == 0.0
    for sample in log.samples:
        score = sample.scores["rair_scorer"]
        if sample.id in refused:
            assert score.answer == "context_exceeded" and score.value["pred_invalid"] == 1
            assert f"context of {window} tokens" in score.explanation, score.explanation
            size = len(sample.input[0].text) + len(sample.input[1].text)
            assert f"a prompt of {size} tokens" in score.explanation, score.explanation
        else:
            assert score.answer == "L3" and score.value["context_exceeded"] == 0


def _lm_eval(server, tmp_path: Path, tasks: str, *extra: str, concurrent: int = 1):
    out = tmp_path / "out"
    proc = run_cli(
        [
            "ecom-lm-eval",
            "--tasks",
            tasks,
            "--model",
            "local-chat-completions",
            "--model_args",
            f"model=test-model,base_url={server.chat_completions_url},num_concurrent={concurrent}",
            "--apply_chat_template",
            "--log_samples",
            "--output_path",
            str(out),
            *extra,
        ],
        cwd=tmp_path,
        timeout=300,
    )
    return proc, out


@pytest.mark.slow
@pytest.mark.parametrize(("style", "concurrent"), [("llama.cpp", 1), ("vllm", 4)])
def test_lm_eval_counts_it_and_finishes_the_run(tmp_path: Path, style: str, concurrent: int):
    """``local-chat-completions`` retries a 400 and aborts the run; ``ecom-lm-eval`` runs the same model
    with the refusal as a counted reply (the synchronous and the concurrent request paths)."""
    window, refused = _rair_window()
    with serve_openai_compatible(context_window(_answer_l3, window, style=style)) as server:
        proc, out = _lm_eval(server, tmp_path, "rair_hard", concurrent=concurrent)
        requests = list(server.requests)
    check_ok(proc)
    (results_file,) = out.rglob("results_*.json")
    saved = json.loads(results_file.read_text())
    results = saved["results"]["rair_hard"]
    n = len(load_items(None, subset="hard"))
    assert results["context_exceeded_rate,none"] == pytest.approx(len(refused) / n)
    assert results["invalid_rate,none"] == 0.0 and "truncated_rate,none" not in results
    assert len(requests) == n  # each refused prompt asked once: a 400 is not retried
    assert saved["config"]["model"] == "ecom-chat-completions"
    (samples_file,) = out.rglob("samples_rair_hard_*.jsonl")
    for line in samples_file.read_text().splitlines():
        sample = json.loads(line)
        reply = sample["resps"][0][0]
        if sample["doc"]["id"] in refused:
            assert reply.startswith(context_limit.REPLY_MARKER) and f"context of {window} tokens" in reply
        else:
            assert reply == "Final answer: L3"


@pytest.mark.slow
def test_plain_local_chat_completions_still_aborts_on_a_refusal(tmp_path: Path):
    """Why ``ecom-lm-eval`` swaps the model: lm-eval's own ends the whole run with no results file."""
    from ecom_tasks.lm_eval_tasks import TASKS_DIR

    with serve_openai_compatible(context_window(_answer_l3, 10, style="openai")) as server:
        out = tmp_path / "out"
        proc = run_cli(
            [
                "lm_eval",
                "--tasks",
                "rair_hard",
                "--include_path",
                str(TASKS_DIR),
                "--model",
                "local-chat-completions",
                "--model_args",
                f"model=test-model,base_url={server.chat_completions_url},max_retries=1",
                "--apply_chat_template",
                "--limit",
                "1",
                "--output_path",
                str(out),
            ],
            cwd=tmp_path,
            timeout=300,
        )
    assert proc.returncode != 0 and not list(out.rglob("results_*.json"))


@pytest.mark.slow
def test_the_output_limit_is_the_servers_unless_the_user_sets_one(tmp_path: Path):
    """vLLM refuses a request whose prompt plus max_tokens exceeds the context: with no limit sent,
    a well-configured server refuses nothing; a user's limit is sent as given in both frameworks."""
    window = max(len(i.system_prompt) + len(i.user_prompt) for i in load_items(None, subset="hard")) + 100
    with serve_openai_compatible(context_window(_answer_l3, window, style="vllm", reserve_output=True)) as server:
        (log,) = inspect_eval(
            rair_hard(),
            model="openai-api/vllm/test-model",
            model_base_url=server.base_url,
            model_args={"api_key": "x"},
            display="none",
            log_dir=str(tmp_path / "logs"),
            limit=2,
        )
        (capped,) = inspect_eval(
            rair_hard(max_tokens=50),
            model="openai-api/vllm/test-model",
            model_base_url=server.base_url,
            model_args={"api_key": "x"},
            display="none",
            log_dir=str(tmp_path / "logs"),
            limit=2,
        )
        inspect_requests = list(server.requests)
        server.requests.clear()
        check_ok(_lm_eval(server, tmp_path, "rair_hard", "--limit", "2")[0])
        default_requests = list(server.requests)
        server.requests.clear()
        check_ok(_lm_eval(server, tmp_path, "rair_hard", "--limit", "2", "--gen_kwargs", "max_gen_toks=40")[0])
        capped_requests = list(server.requests)
    metrics = {k: m.value for score in log.results.scores for k, m in score.metrics.items()}
    assert metrics["context_exceeded_rate"] == 0.0 and metrics["acc4"] == capped.results.scores[0].metrics["acc4"].value
    assert [r.get("max_tokens") for r in inspect_requests] == [None, None, 50, 50]
    assert [r.get("max_tokens") for r in default_requests] == [None, None]
    assert [r.get("max_tokens") for r in capped_requests] == [40, 40]
    # The old default (16384) would have been refused by this server for every item.
    assert all(prompt_chars(r) + 16384 > window for r in default_requests)


def _window(sizes: list[int]) -> tuple[int, int]:
    """A window between the sizes (the median), and how many prompts it refuses."""
    window = sorted(sizes)[len(sizes) // 2]
    return window, sum(size > window for size in sizes)


def test_monbench_runs_over_the_context_are_counted_in_the_fan_out(tmp_path: Path):
    """MonBench asks its runs inside one sample: a refused run is counted, the sample and the run go on."""
    from ecom_tasks.inspect_evals.monbench import monbench_canonical
    from ecom_tasks.monbench.protocol import load_items as monbench_items

    items = monbench_items(None, tasks=("query_ad_relevance",), design="canonical", formats=["label"])
    window, refused = _window([len(i.system_prompt) + len(i.user_prompt) for i in items])
    with serve_openai_compatible(context_window(lambda body: "<Label>B</Label>", window, style="llama.cpp")) as server:
        (log,) = inspect_eval(
            monbench_canonical(task="query_ad_relevance"),
            model="openai-api/vllm/test-model",
            model_base_url=server.base_url,
            model_args={"api_key": "x"},
            display="none",
            log_dir=str(tmp_path / "logs"),
        )
    assert log.status == "success", log.error
    metrics = {k: m.value for score in log.results.scores for k, m in score.metrics.items()}
    assert 0 < refused < len(items)
    assert metrics["context_exceeded_rate"] == pytest.approx(refused / len(items))
    assert metrics["invalid_rate"] == 0.0 and metrics["truncated_rate"] == 0.0
    explanations = " ".join(s.scores["monbench_scorer"].explanation for s in log.samples)
    assert "refused by the server" in explanations and f"context of {window} tokens" in explanations


def test_ecomeval_asks_no_judge_about_a_refused_question(tmp_path: Path, monkeypatch):
    from ecom_tasks.ecomeval.protocol import load_items as ecomeval_items
    from ecom_tasks.inspect_evals.ecomeval import ecomeval

    items = ecomeval_items(None, category="shopping_concepts")
    window, refused = _window([len(i.prompt) for i in items])
    with (
        serve_openai_compatible(context_window(lambda body: "A", window, style="vllm")) as shop,
        serve_openai_compatible(lambda body: "Final Score: 3", model_name="judge") as judge,
    ):
        monkeypatch.setenv("CTXJUDGE_BASE_URL", judge.base_url)
        monkeypatch.setenv("CTXJUDGE_API_KEY", "x")
        (log,) = inspect_eval(
            ecomeval(category="shopping_concepts"),
            model="openai-api/vllm/test-model",
            model_base_url=shop.base_url,
            model_args={"api_key": "x"},
            model_roles={"grader": "openai-api/ctxjudge/judge"},
            display="none",
            log_dir=str(tmp_path / "logs"),
        )
        judged = len(judge.requests)
    assert log.status == "success", log.error
    metrics = {k: m.value for score in log.results.scores for k, m in score.metrics.items()}
    assert 0 < refused < len(items) and judged == len(items) - refused
    assert metrics["context_exceeded_rate"] == pytest.approx(refused / len(items))
    assert metrics["judge_failure_rate"] == 0.0
    # Graded 3 where answered, 0 where refused: the refused questions count against the score.
    assert metrics["score_items"] == pytest.approx(100 * (len(items) - refused) / len(items))


def test_rmir_reason_then_embed_counts_a_refused_description_apart(tmp_path: Path):
    from ecom_tasks.inspect_evals.rmir import rmir_reason

    with serve_openai_compatible(context_window(lambda body: "a red mug", 10, style="openai")) as server:
        (log,) = inspect_eval(
            rmir_reason(cache="false"),
            model="openai-api/vllm/test-model",
            model_base_url=server.base_url,
            model_args={"api_key": "x"},
            display="none",
            log_dir=str(tmp_path / "logs"),
        )
    assert log.status == "success", log.error
    metrics = {k: m.value for score in log.results.scores for k, m in score.metrics.items()}
    assert (metrics["context_exceeded_rate"], metrics["failure_rate"], metrics["recall@20"]) == (1.0, 0.0, 0.0)
    score = log.samples[0].scores["rmir_scorer"]
    assert score.metadata["description_status"] == "context_exceeded" and "context of 10 tokens" in score.explanation


def test_within_context_turns_a_refusal_into_a_counted_reply_for_any_solver(tmp_path: Path):
    """A user's own solver wrapped in ``within_context``: llama.cpp's refusal (which Inspect raises) becomes
    the ``model_length`` reply the scorers count, and a prompt that fits is answered as before."""
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate

    from ecom_tasks.scorers.inspect_scorers import within_context

    samples = [Sample(input="short", target="x", id="fits"), Sample(input="long " * 40, target="x", id="over")]
    task = Task(dataset=samples, solver=within_context(generate()))
    with serve_openai_compatible(context_window(lambda body: "an answer", 60, style="llama.cpp")) as server:
        (log,) = inspect_eval(
            task,
            model="openai-api/vllm/test-model",
            model_base_url=server.base_url,
            model_args={"api_key": "x"},
            display="none",
            log_dir=str(tmp_path / "logs"),
        )
    assert log.status == "success", log.error
    outputs = {sample.id: sample.output for sample in log.samples}
    assert outputs["fits"].completion == "an answer" and outputs["fits"].stop_reason == "stop"
    assert outputs["over"].stop_reason == "model_length"
    assert "context" in outputs["over"].completion  # the server's own words
