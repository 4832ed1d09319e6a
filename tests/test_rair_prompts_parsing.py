"""RAIR prompts (Fig. 9, static prefix), reply parsing and the baseline responder."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from inspect_ai.model import ContentImage

from ecom_tasks.inspect_evals.rair import rair_dataset
from ecom_tasks.plugins import baseline_reply
from ecom_tasks.rair.baseline import respond_rair
from ecom_tasks.rair.parsing import (
    EMPTY,
    INVALID_STATUSES,
    NO_LABEL,
    OK,
    OTHER_DIMENSION,
    OUT_OF_RANGE,
    RULE_BRACKET,
    RULE_LAST_LEVEL,
    RULE_LAST_LINE,
    RULE_MARKER,
    UNCLOSED_THINK,
    canonical_dimension,
    parse_reply,
)
from ecom_tasks.rair.prompts import (
    build_system_prompt,
    build_user_prompt,
    render_answer,
)
from ecom_tasks.rair.protocol import build_items
from ecom_tasks.rair.rules import builtin_rules, load_rules
from ecom_tasks.rair.schema import DIMENSIONS, LEVELS, SUBSETS, load_records
from ecom_tasks.rair.scoring import score_reply

RULE_MODES = ("none", "builtin")


@pytest.mark.parametrize("subset", SUBSETS)
@pytest.mark.parametrize("rules", RULE_MODES)
@pytest.mark.parametrize("image", [False, True])
def test_static_prefix_is_byte_identical_across_samples(subset, rules, image):
    records = load_records(subset=subset)
    items = build_items(records, rules=load_rules(rules), image=image)
    by_language: dict[str, set[str]] = {}
    for item in items:
        by_language.setdefault(item.record.language, set()).add(item.system_prompt)
        assert item.record.query in item.user_prompt and item.record.title in item.user_prompt
        assert item.record.query not in item.system_prompt
    assert all(len(prompts) == 1 for prompts in by_language.values())
    again = build_items(records, rules=load_rules(rules), image=image)
    assert [(i.system_prompt, i.user_prompt) for i in again] == [(i.system_prompt, i.user_prompt) for i in items]


def test_inspect_samples_share_the_system_message_and_carry_images():
    with_image = rair_dataset("visual", rules="builtin", image=True)
    systems = {sample.input[0].text for sample in with_image if sample.metadata["language"] == "en"}
    assert len(systems) == 1 and "Relevance rules (ecom-tasks-rair-rules/1.0)" in systems.pop()
    for sample in with_image:
        assert sample.input[0].role == "system"
        images = [c for c in sample.input[1].content if isinstance(c, ContentImage)]
        assert len(images) == 1 and sample.metadata["image_shown"] is True
        assert sample.metadata["rules_version"] == "ecom-tasks-rair-rules/1.0"
    without = rair_dataset("visual", image=False)
    assert all(isinstance(s.input[1].content, str) for s in without)
    assert all("Relevance rules" not in s.input[0].text for s in without)


def test_prompt_follows_fig9():
    system = build_system_prompt("en")
    for part in (
        "expert in e-commerce relevance analysis",
        "<think> and </think>",
        "[L2-Style Mismatch]",
        "L1 (Irrelevant)",
        "L2 (Partially Irrelevant)",
        "L3 (Closely Relevant)",
        "L4 (Perfectly Relevant)",
    ):
        assert part in system
    assert "Image" not in system and "Image" in build_system_prompt("en", image=True)
    [record] = [r for r in load_records() if r.id == "rair-syn-gen-sport-3"]
    assert build_user_prompt(record) == (
        "Input:\nUser Query: Nike running shorts official store\nItem Title: Nike Dri-FIT running shorts\n"
        "Item Shop: Sports Outlet Mall\nItem CPV: \nItem SKU: "
    )
    zh = next(r for r in load_records(language="zh"))
    assert build_user_prompt(zh).startswith("输入：\n用户查询：")
    assert "<think>" in build_system_prompt("zh") and "[L2-款式不匹配]" in build_system_prompt("zh")


def test_rules_text_goes_after_the_instructions():
    plain, guided = build_system_prompt("en"), build_system_prompt("en", builtin_rules())
    assert guided.startswith(plain) and builtin_rules().render("en") in guided


# --- parsing -----------------------------------------------------------------------------

REPLIES = [
    ("<think>brand ok</think>\nL3", "L3", None, OK),
    ("<think>L4 maybe? no.</think>\n[L2-Brand Mismatch]", "L2", "Brand", OK),
    ("[L2-Spec Mismatch]", "L2", "Specification", OK),
    ("<think>x</think>[L2-款式不匹配]", "L2", "Style", OK),
    ("<think>x</think>\n[L2 - Target Audience Mismatch]", "L2", "Audience", OK),
    ("<think>x</think>\n[L2-Vibes Mismatch]", "L2", OTHER_DIMENSION, OK),
    ("<think>x</think>\nL2", "L2", None, OK),
    ("<think>x</think>\n**L4**", "L4", None, OK),
    ("<think>x</think>\nThe answer is L1.", "L1", None, OK),
    ("<think>x</think>相关性等级为L3", "L3", None, OK),
    ("<think>a</think>L2<think>b</think>\nL4", "L4", None, OK),
    ("L5", None, None, OUT_OF_RANGE),
    ("<think>x</think>\nL0", None, None, OUT_OF_RANGE),
    ("relevant", None, None, NO_LABEL),
    ("<think>it is L3</think>\nPartially relevant", None, None, NO_LABEL),
    ("", None, None, EMPTY),
    (None, None, None, EMPTY),
    ("<think>x</think>   \n", None, None, EMPTY),
    ("<think>never closed, L3", None, None, UNCLOSED_THINK),
    # Several levels named: the last one counts (these two were multiple_labels before).
    ("<think>x</think>\nL2 or L3", "L3", None, OK),
    ("<think>x</think>\nL3 and L5", None, None, OUT_OF_RANGE),
]


@pytest.mark.parametrize(("reply", "label", "dimension", "status"), REPLIES)
def test_parse_reply(reply, label, dimension, status):
    parsed = parse_reply(reply)
    assert (parsed.label, parsed.dimension, parsed.status) == (label, dimension, status)
    assert parsed.valid == (status == OK)
    assert (status in INVALID_STATUSES) == (status != OK)


#: Typical instruct-model replies naming more than one level: (reply, label, dimension, status, rule).
INSTRUCT_REPLIES = [
    ("Final answer: L3 — not L4 because the colour differs", "L3", None, OK, RULE_MARKER),
    ("The item is L2 at most... Final Answer: [L2-Color Mismatch]", "L2", "Color", OK, RULE_MARKER),
    ("I think L4.\n\nL3", "L3", None, OK, RULE_LAST_LINE),
    ("**Final answer:** L1", "L1", None, OK, RULE_MARKER),
    ("最终答案：L2", "L2", None, OK, RULE_MARKER),
    ("最终答案：【L2-颜色不匹配】", "L2", "Color", OK, RULE_MARKER),
    ("答案：L3（不是L4，颜色有差异）", "L3", None, OK, RULE_MARKER),
    ("相关性：L1", "L1", None, OK, RULE_MARKER),
    ("<think>L1? L2?</think>\nFinal Answer - L4", "L4", None, OK, RULE_MARKER),
    ("Relevance: L2. Not L1, since the category matches.\n[L2-Brand Mismatch]", "L2", "Brand", OK, RULE_MARKER),
    ("Level: L3\nL4 would need the exact size.", "L3", None, OK, RULE_MARKER),
    ("## Final Answer\n\n**L3**", "L3", None, OK, RULE_MARKER),
    # a line break separates a marker from its level only after a heading, not after prose
    ("Colours differ at the detail level\nL4 would need an exact match, so L3.", "L3", None, OK, RULE_LAST_LEVEL),
    ("The final answer is **L4**.", "L4", None, OK, RULE_MARKER),
    ("Answer: L1\nFinal answer: L2", "L2", None, OK, RULE_MARKER),  # the last marker wins
    ("Brand differs, so not L4 or L3.\n[L2-Brand Mismatch]", "L2", "Brand", OK, RULE_BRACKET),
    ("Query wants red; the item is blue. L4 is out. **L2**.", "L2", None, OK, RULE_LAST_LEVEL),
    ("Close, but not L4:\n\n- **L3**.", "L3", None, OK, RULE_LAST_LINE),
    ("Between L2 and L3 I lean to L3 overall", "L3", None, OK, RULE_LAST_LEVEL),
    ("[L2 or L3]", "L3", None, OK, RULE_LAST_LEVEL),  # not the bracket form: no dimension, two levels
    ("The item matches the query well.", None, None, NO_LABEL, ""),
    ("L5", None, None, OUT_OF_RANGE, RULE_LAST_LINE),
    ("Final answer: L5 (beyond L4)", None, None, OUT_OF_RANGE, RULE_MARKER),
    ("<think>weighing L3 against L4", None, None, UNCLOSED_THINK, ""),
    ("<think>Final answer: L3", None, None, UNCLOSED_THINK, ""),
]


@pytest.mark.parametrize(("reply", "label", "dimension", "status", "rule"), INSTRUCT_REPLIES)
def test_parse_reply_with_several_levels_named(reply, label, dimension, status, rule):
    parsed = parse_reply(reply)
    assert (parsed.label, parsed.dimension, parsed.status, parsed.rule) == (label, dimension, status, rule)
    if status == OK:
        assert parsed.detail == rule  # the rule shows in the Inspect explanation
    else:
        assert parsed.detail and not parsed.valid


def test_the_reasoning_is_stripped_by_the_shared_rule():
    # The level in the reasoning never counts; the one after the last </think> does.
    assert parse_reply("<think>Final answer: L1</think>\nL4").label == "L4"
    assert parse_reply("<think>a</think>Answer: L2<think>b</think>\nL3").label == "L3"
    assert parse_reply("reasoning only, opening tag dropped by the server</think>\nL3").label == "L3"
    assert parse_reply("<think>Final answer: L3</think>").status == EMPTY


@pytest.mark.parametrize("language", ["en", "zh"])
def test_rendered_answers_parse_back(language):
    for level in LEVELS:
        for dimension in (DIMENSIONS if level == "L2" else [None]):
            parsed = parse_reply(render_answer(level, dimension, "some reasoning with L1 and L4", language))
            assert (parsed.label, parsed.dimension, parsed.status) == (level, dimension, OK)


def test_dimension_aliases():
    assert canonical_dimension("Set/Single") == "Bundle"
    assert canonical_dimension("Model ID mismatch") == "Specification"
    assert canonical_dimension("颜色不符") == "Color"
    assert canonical_dimension("IP image") == "IP"
    assert canonical_dimension("Vibes") is None


FIELDS = {"label": "L2", "industry": "Automotive", "intent": "", "gold_dimension": "Brand"}


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_reply_is_scored_without_raising(reply):
    parsed, outcome = score_reply(FIELDS, reply)
    assert outcome["pred_invalid"] == int(not parsed.valid)
    assert sum(outcome[f"pred_L{i}"] for i in range(1, 5)) + outcome["pred_invalid"] == 1
    assert outcome["acc4"] == int(parsed.label == "L2")


def test_score_reply_encodes_the_l2_dimension():
    _, right = score_reply(FIELDS, "<think>x</think>[L2-Brand Mismatch]")
    _, wrong = score_reply(FIELDS, "<think>x</think>[L2-Color Mismatch]")
    assert right["dim_scored"] == right["dim_match"] == 1 and right["pred_dim"] == DIMENSIONS.index("Brand") + 1
    assert wrong["dim_scored"] == 1 and wrong["dim_match"] == 0
    _, invalid = score_reply(FIELDS, "L5")
    assert invalid["pred_invalid"] == 1 and invalid["acc2"] == invalid["acc4"] == 0


# --- the baseline responder ----------------------------------------------------------------


def test_baseline_answers_every_fixture_prompt_validly_and_deterministically():
    for item in build_items(load_records(), rules=builtin_rules()):
        messages = [("system", item.system_prompt), ("user", item.user_prompt)]
        reply = respond_rair(messages)
        assert reply == baseline_reply(messages) == respond_rair(messages)
        assert parse_reply(reply).valid, (item.id, reply)
        assert reply.startswith("<think>")


def test_baseline_heuristic_levels():
    def answer(query, title):
        return respond_rair([("user", f"Input:\nUser Query: {query}\nItem Title: {title}\nItem Shop: \nItem CPV: \nItem SKU: ")])

    assert answer("burgundy dress", "Burgundy dress for women").endswith("\nL4")
    assert answer("burgundy dress", "blue summer dress").endswith("[L2-Color Mismatch]")
    assert answer("cordless drill", "chicken feed pellets").endswith("\nL1")
    assert respond_rair([("user", "What is 2 + 2?")]) is None


def test_a_rules_file_is_read_once_per_version(tmp_path, monkeypatch):
    """lm-eval builds a RAIR task and its documents apart; both get the same parse of a user's file,
    and an edited file is read again."""
    path = tmp_path / "my_rules.txt"
    path.write_text("Rule one: brand must match.\n", encoding="utf-8")
    reads = []
    original = Path.read_bytes

    def counting(self):
        if self == path:
            reads.append(self)
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    first, second = load_rules(str(path)), load_rules(str(path))
    assert first is second and len(reads) == 1
    path.write_text("Rule one: brand must match.\nRule two: size must match.\n", encoding="utf-8")
    edited = load_rules(str(path))
    assert len(reads) == 2
    assert "Rule two" in edited.verbatim and edited.sha256 != first.sha256
