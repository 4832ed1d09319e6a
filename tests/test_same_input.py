"""The same input in both frameworks, byte for byte (issue 26): for items of every benchmark with text
tasks, the chat messages Inspect sends (``openai-api``) and the ones lm-eval sends
(``local-chat-completions --apply_chat_template``) to the loopback server are identical, role by role
and character by character. Without a chat template lm-eval joins the system prompt and the question;
MonBench then puts a blank line between them, as before."""

from __future__ import annotations

from pathlib import Path

import lm_eval
import pytest
from inspect_ai import eval as inspect_eval
from loopback.openai_server import serve_openai_compatible

from ecom_tasks.inspect_evals.ecomeval import ecomeval, ecomeval_exact
from ecom_tasks.inspect_evals.monbench import monbench_perm
from ecom_tasks.inspect_evals.rair import rair_hard
from ecom_tasks.lm_eval_tasks import task_manager
from ecom_tasks.monbench.protocol import runs_for

Messages = tuple[tuple[str, str], ...]


def _messages(body: dict) -> Messages:
    return tuple((m["role"], m["content"]) for m in body["messages"])


def _inspect(tasks: list, server, tmp_path: Path, grader: str | None = None) -> set[Messages]:
    logs = inspect_eval(
        tasks,
        model="openai-api/same/test-model",
        model_base_url=server.base_url,
        model_args={"api_key": "x"},
        model_roles={"grader": grader} if grader else None,
        limit=1,
        display="none",
        log_dir=str(tmp_path / "inspect"),
    )
    assert all(log.status == "success" for log in logs), [log.error for log in logs]
    return {_messages(body) for body in server.requests if body["model"] == "test-model"}


def _lm_eval(tasks: list[str], server, limit: int) -> set[Messages]:
    lm_eval.simple_evaluate(
        model="local-chat-completions",
        model_args=f"model=test-model,base_url={server.chat_completions_url}",
        tasks=tasks,
        task_manager=task_manager(include_defaults=False),
        apply_chat_template=True,
        limit=limit,
        bootstrap_iters=0,
    )
    return {_messages(body) for body in server.requests}


@pytest.mark.slow
def test_every_text_benchmark_sends_the_same_messages_in_both_frameworks(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("SAME_API_KEY", "x")
    cases = [
        ("rair", [rair_hard(), rair_hard(rules="builtin")], ["rair_hard", "rair_hard_builtin_rules"], 1),
        # One question under all 72 runs (every return format's system prompt); lm-eval: its 72 documents.
        (
            "monbench",
            [monbench_perm(task="query_ad_relevance")],
            ["monbench_perm_query_ad_relevance"],
            len(runs_for("full")),
        ),
        ("ecomeval exact", [ecomeval_exact()], ["ecomeval_exact"], 1),
        ("ecomeval judged", [ecomeval(category="shopping_concepts")], ["ecomeval_shopping_concepts"], 1),
    ]
    for name, inspect_tasks, lm_eval_tasks, limit in cases:
        with (
            serve_openai_compatible(lambda body: "A", model_name="test-model") as server,
            serve_openai_compatible(lambda body: "Final Score: 2", model_name="grader") as grader_server,
        ):
            monkeypatch.setenv("GRADE_BASE_URL", grader_server.base_url)
            monkeypatch.setenv("GRADE_API_KEY", "x")
            inspect_sent = _inspect(inspect_tasks, server, tmp_path / name, grader="openai-api/grade/grader")
            server.requests.clear()
            lm_eval_sent = _lm_eval(lm_eval_tasks, server, limit)
        assert inspect_sent, name
        assert inspect_sent == lm_eval_sent, (name, inspect_sent ^ lm_eval_sent)
        if name == "monbench":
            assert len(inspect_sent) == limit
            # The system message is the prompt itself: no separator of the plain-text form in it.
            assert all(not sent[0][1].endswith("\n\n") for sent in inspect_sent)


def test_without_a_chat_template_monbench_keeps_a_blank_line_after_the_system_prompt():
    (task,) = task_manager(include_defaults=False).load(["monbench_canonical_query_ad_relevance"])["tasks"].values()
    doc = task.eval_docs[0]
    plain = task.fewshot_context(doc, 0)
    assert plain == doc["system_prompt"] + "\n\n" + doc["user_prompt"]
    chat = task.fewshot_context(doc, 0, apply_chat_template=True, chat_template=lambda messages, **_: messages)
    assert chat == [
        {"role": "system", "content": doc["system_prompt"]},
        {"role": "user", "content": doc["user_prompt"]},
    ]
