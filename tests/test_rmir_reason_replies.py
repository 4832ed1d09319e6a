"""Reason-then-embed replies that must earn nothing, and servers that drop the image.

A reply that copies its prompt (the instructions, the format line ``Description: <the caption>``,
the request), however garbled in spacing, case or markdown, has no description of its own; a reply
cut off by the token limit is read only where its description ended before the cut. Over a loopback
OpenAI-compatible server, a model that only echoes its prompt gets 0 "ok" and a 100% failure rate. A
server that drops the image (HTTP 200, too few prompt tokens, or a reply saying there is no image) is
counted in ``images_dropped_rate`` and named in a warning.
"""

from __future__ import annotations

import logging
import re

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model
from loopback import openai_server
from loopback.openai_server import Reply, image_parts, last_user_text, serve_openai_compatible

from ecom_tasks.inspect_evals.rmir import rmir, rmir_reason
from ecom_tasks.rmir.parsing import FAILED_STATUSES, parse_reply
from ecom_tasks.rmir.prompts import build_reason_prompt
from ecom_tasks.rmir.schema import load_data
from ecom_tasks.solvers.reason_then_embed import IMAGES_DROPPED_KEY, STATUS_KEY

DATA = load_data()
QUERY = "What would this cat look like after knocking the glass off the table?"
PROMPT = build_reason_prompt(QUERY)
CAPTIONS = {p.id: p.description for p in DATA.pool}


def garble(text: str) -> str:
    """A copy as small models make it: upper case, doubled spaces, labels in bold."""
    text = text.upper().replace(" ", "  ")
    return re.sub(r"^(\w+):", r"**\1:**", text, flags=re.MULTILINE)


# --- the parser --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        PROMPT,
        garble(PROMPT),
        "Sure! " + PROMPT,
        "Description: <the caption>",
        "**description :**  <The  Caption>",
        "the caption",
        f"Description: {QUERY}",
        f"> DESCRIPTION: {QUERY.upper()}",
        f"Request: {QUERY}\nDescription: <the caption>",
        "Finish with one last line of the form: Description: <the caption>",
        PROMPT + "\nok",  # a copy with a scrap of its own is still a copy
    ],
)
def test_a_reply_that_copies_its_prompt_has_no_description(reply):
    parsed = parse_reply(reply, prompt=PROMPT)
    assert parsed.text is None and parsed.status == "echo" and parsed.failed


@pytest.mark.parametrize(
    "reply, description",
    [
        # A description line right after a copied line keeps its marker.
        (
            "Finish with one last line of the form:\nDescription: A cat beside broken glass.",
            "A cat beside broken glass.",
        ),
        # ... or on the same line, where a copied line ran into it.
        (
            "Finish with one last line of the form: Description: A cat beside broken glass.",
            "A cat beside broken glass.",
        ),
        # The copied format line after the model's own description is not read; the description is.
        (
            "Description: A cat beside shards of glass.\nFinish with one last line of the form:\n"
            "Description: <the caption>",
            "A cat beside shards of glass.",
        ),
        # Naming an object the request names is not copying the request.
        ("Description: A cat next to the glass on the table edge.", "A cat next to the glass on the table edge."),
        # The request restated inside the description is dropped; the model's own words stay.
        (f"Description: {QUERY} A cat beside broken glass.", "A cat beside broken glass."),
        # A full-width colon (CJK models): the marked line, not the reasoning before it.
        (
            "The request asks what fell; the image shows glass.\nDescription：A cat beside broken glass.",
            "A cat beside broken glass.",
        ),
        ("**Description：** 一只猫在碎玻璃旁边。", "一只猫在碎玻璃旁边。"),
    ],
)
def test_the_models_own_description_is_read_beside_copied_text(reply, description):
    parsed = parse_reply(reply, prompt=PROMPT)
    assert (parsed.text, parsed.status) == (description, "ok")


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("Let me think.\nDescription: A cat beside a bro", (None, "truncated")),  # cut inside the description
        ("Description: A cat beside broken glass.\nAlso, the", ("A cat beside broken glass.", "ok")),  # ended before
        ("A cat beside broken glass on a tiled floor.", (None, "truncated")),  # no marked description
        ("Description:\nA cat beside", (None, "truncated")),  # the description was on the cut line
        (garble(PROMPT)[:400], (None, "truncated")),  # a copy cut off: nothing of its own
        ("<think>first the cat, then", (None, "truncated")),  # cut while thinking
    ],
)
def test_a_cut_off_reply_is_read_only_where_its_description_ended_before_the_cut(reply, expected):
    parsed = parse_reply(reply, prompt=PROMPT, truncated=True)
    assert (parsed.text, parsed.status) == expected


def test_finished_replies_read_as_before():
    assert parse_reply("Description: A cat beside broken glass.", prompt=PROMPT, truncated=False).status == "ok"
    unmarked = parse_reply("A cat beside broken glass on a tiled floor.", prompt=PROMPT)
    assert (unmarked.text, unmarked.status) == ("A cat beside broken glass on a tiled floor.", "unmarked")
    assert parse_reply("", prompt=PROMPT).status == "empty"
    # Without the prompt sent (a log scored again), the fixed instructions are still known.
    assert parse_reply("Description: <the caption>").status == "echo"
    assert parse_reply(garble(PROMPT)).status == "echo"


# --- over a loopback server -------------------------------------------------------------------------


def run_reason(server, tmp_path, monkeypatch, name: str = "logs", **task_args):
    monkeypatch.setenv("ECOM_TASKS_CACHE", str(tmp_path / "cache"))
    model = get_model("openai-api/vllm/test-model", base_url=server.base_url, api_key="x")
    (log,) = inspect_eval(rmir_reason(**task_args), model=model, log_dir=str(tmp_path / name), display="none")
    assert log.status == "success", log.error
    metrics = {key: m.value for s in log.results.scores for key, m in s.metrics.items()}
    return log, metrics


def echo_policy(copy, finish: str):
    return lambda body: Reply(copy(last_user_text(body)), finish)


@pytest.mark.parametrize(
    "copy, finish",
    [
        (lambda prompt: prompt, "stop"),  # the whole prompt, word for word
        (lambda prompt: garble(prompt)[: len(garble(prompt)) * 2 // 3], "length"),  # garbled, cut off by the limit
        (lambda prompt: "Description: " + re.search(r"^Request: (.+)$", prompt, re.M).group(1), "stop"),
    ],
    ids=["verbatim", "garbled-cut-off", "request-as-description"],
)
def test_a_model_that_echoes_its_prompt_scores_nothing_and_fails_every_query(tmp_path, monkeypatch, copy, finish):
    with serve_openai_compatible(echo_policy(copy, finish)) as server:
        log, metrics = run_reason(server, tmp_path, monkeypatch)
    statuses = [sample.store[STATUS_KEY] for sample in log.samples]
    assert len(statuses) == len(DATA.queries) and "ok" not in statuses and "unmarked" not in statuses
    assert set(statuses) <= set(FAILED_STATUSES)
    assert metrics["failure_rate"] == 1.0 and metrics["recall@20"] == 0.0 and metrics["mrr"] == 0.0


def target_caption(body) -> str:
    query_text = re.search(r"^Request: (.+)$", last_user_text(body), re.MULTILINE).group(1)
    query = next(q for q in DATA.queries if q.query_text == query_text)
    return CAPTIONS[query.positives[0]]


def test_a_server_that_counts_too_few_prompt_tokens_for_the_image_is_flagged(tmp_path, monkeypatch, caplog):
    def few_tokens(prompt: str, completion: str) -> dict[str, int]:
        c = len(completion.split())
        return {"prompt_tokens": 15, "completion_tokens": c, "total_tokens": 15 + c}

    monkeypatch.setattr(openai_server, "_usage", few_tokens)  # HTTP 200, 15 prompt tokens for an image request
    seen = []

    def policy(body):
        seen.append(len(image_parts(body)))
        return f"Description: {target_caption(body)}"

    with serve_openai_compatible(policy) as server:
        with caplog.at_level(logging.WARNING, logger="ecom_tasks.solvers.reason_then_embed"):
            log, metrics = run_reason(server, tmp_path, monkeypatch)
    assert seen == [1] * len(DATA.queries)  # every request carried its image
    assert metrics["images_dropped_rate"] == 1.0
    assert metrics["mrr"] == 1.0  # the descriptions are read as usual: flagged, not failed
    for sample in log.samples:
        assert "the server counted 15 prompt tokens" in sample.store[IMAGES_DROPPED_KEY]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "images_dropped_rate" in warnings[0] and "15 prompt tokens" in warnings[0]


def test_a_reply_saying_it_sees_no_image_is_flagged_and_a_normal_server_is_not(tmp_path, monkeypatch):
    blind = {"monitor"}

    def policy(body):
        if any(word in last_user_text(body) for word in blind):
            return f"I can't see any image attached, so I will guess.\nDescription: {target_caption(body)}"
        return f"Description: {target_caption(body)}"

    with serve_openai_compatible(policy) as server:
        log, metrics = run_reason(server, tmp_path, monkeypatch)
    flagged = {sample.id for sample in log.samples if sample.store[IMAGES_DROPPED_KEY]}
    expected = {q.id for q in DATA.queries if any(word in q.query_text for word in blind)}
    assert flagged == expected and expected
    assert metrics["images_dropped_rate"] == pytest.approx(len(expected) / len(DATA.queries))
    for sample in log.samples:
        if sample.id in flagged:
            assert "can't see any image" in sample.store[IMAGES_DROPPED_KEY]


def test_embed_runs_have_no_images_dropped_rate(tmp_path, monkeypatch):
    monkeypatch.setenv("ECOM_TASKS_CACHE", str(tmp_path / "cache"))
    (log,) = inspect_eval(rmir(), model="none", log_dir=str(tmp_path / "logs"), display="none")
    metrics = {key: m.value for s in log.results.scores for key, m in s.metrics.items()}
    assert "images_dropped_rate" not in metrics and metrics["n"] == len(DATA.queries)
