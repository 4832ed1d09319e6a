"""RAIR prompts (Fig. 9, static prefix) and the baseline responder (reply parsing: test_rair_replies.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.model import ContentImage

from ecom_tasks import files
from ecom_tasks.inspect_evals.rair import rair_dataset
from ecom_tasks.plugins import baseline_reply
from ecom_tasks.rair.baseline import judge, read_prompt, respond_rair
from ecom_tasks.rair.parsing import RULE_FORM, RULE_LONE_LINE, parse_reply
from ecom_tasks.rair.prompts import build_system_prompt, build_user_prompt
from ecom_tasks.rair.protocol import build_items
from ecom_tasks.rair.rules import builtin_rules, load_rules
from ecom_tasks.rair.schema import SUBSETS, load_records

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


# --- the baseline responder ----------------------------------------------------------------


def test_baseline_answers_every_fixture_prompt_validly_and_deterministically():
    for item in build_items(load_records(), rules=builtin_rules()):
        messages = [("system", item.system_prompt), ("user", item.user_prompt)]
        reply = respond_rair(messages)
        assert reply == baseline_reply(messages) == respond_rair(messages)
        # the parser reads back exactly the level (and L2 dimension) the baseline chose
        level, dimension, _ = judge(read_prompt(messages)[1])
        parsed = parse_reply(reply)
        assert (parsed.label, parsed.dimension) == (level, dimension), (item.id, reply)
        assert parsed.rule in (RULE_FORM, RULE_LONE_LINE)
        assert reply.startswith("<think>")


def test_baseline_heuristic_levels():
    def answer(query, title):
        return respond_rair(
            [("user", f"Input:\nUser Query: {query}\nItem Title: {title}\nItem Shop: \nItem CPV: \nItem SKU: ")]
        )

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
    original = files.read_bytes

    def counting(target, **options):
        if Path(target) == path:
            reads.append(target)
        return original(target, **options)

    monkeypatch.setattr(files, "read_bytes", counting)
    first, second = load_rules(str(path)), load_rules(str(path))
    assert first is second and len(reads) == 1
    path.write_text("Rule one: brand must match.\nRule two: size must match.\n", encoding="utf-8")
    edited = load_rules(str(path))
    assert len(reads) == 2
    assert "Rule two" in edited.verbatim and edited.sha256 != first.sha256
