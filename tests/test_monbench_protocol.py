"""MonBench protocol: orderings, designs, exact prompts, static prefix, answer parsing."""

from __future__ import annotations

import itertools

import pytest

from ecom_tasks.monbench.parsing import (
    CONFLICTING_TAGS,
    MISMATCH,
    NO_TAG,
    OK,
    OUT_OF_RANGE,
    UNCLOSED_THINK,
    UNKNOWN_CONTENT,
    parse_reply,
)
from ecom_tasks.monbench.prompts import build_system_prompt, build_user_prompt
from ecom_tasks.monbench.protocol import CYCLIC_ORDERINGS, ORDERINGS, expand, runs_for
from ecom_tasks.monbench.schema import MonBenchRecord, load_records


def record(**overrides):
    base = dict(
        id="q1",
        task="query_query_intent",
        split="test",
        question="Query 1: ilia skin tint\nQuery 2: ilia foundation",
        choices=("Substitute", "Complement", "Narrowing", "Irrelevant"),
        answer=1,
    )
    return MonBenchRecord(**{**base, **overrides})


def test_orderings_are_itertools_permutations_and_cyclic_are_rotations():
    assert ORDERINGS == tuple(itertools.permutations(range(4)))
    assert ORDERINGS[0] == (0, 1, 2, 3)
    rotations = [ORDERINGS[i] for i in CYCLIC_ORDERINGS]
    assert rotations == [(0, 1, 2, 3), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2)]
    for option in range(4):  # every option visits every position exactly once
        assert sorted(r.index(option) for r in rotations) == [0, 1, 2, 3]


def test_design_sizes_and_ids():
    assert len(runs_for("full")) == 72
    assert len(runs_for("cyclic")) == 12
    assert len(runs_for("canonical", "label")) == 1
    assert len(runs_for("full", "label,content")) == 48
    items = expand([record()], runs_for("full"))
    assert len({item.id for item in items}) == 72
    assert items[0].id == "q1_p0_label" and items[-1].id == "q1_p23_label_content"
    with pytest.raises(ValueError, match="unknown design"):
        runs_for("random")
    with pytest.raises(ValueError, match="unknown return format"):
        runs_for("full", "json")


def test_target_follows_the_permutation():
    rec = record()
    for item in expand([rec], runs_for("full", "label")):
        assert item.displayed[item.target_position] == "Complement"
        assert sorted(item.displayed) == sorted(rec.choices)
    # ordering 23 = (3, 2, 1, 0): reversed, so Complement (index 1) is shown at C.
    last = expand([rec], [r for r in runs_for("full", "label") if r.ordering == 23])[0]
    assert last.displayed == ("Irrelevant", "Narrowing", "Complement", "Substitute")
    assert last.target_letter == "C"
    assert last.target_answer == "<Label>C</Label>"


EXPECTED_LABEL_SYSTEM = (
    "You are a helpful online shopping assistant. Please answer the following question about online shopping. "
    "Choose the option that best describes the relationship between the two queries.\n\n"
    "** Output Format **\n<Label>A/B/C/D</Label>\n**Valid Examples**\n<Label>A</Label>"
)


def test_exact_prompts_label_format():
    item = expand([record()], runs_for("canonical", "label"))[0]
    assert item.system_prompt == EXPECTED_LABEL_SYSTEM
    assert item.user_prompt == (
        "Query 1: ilia skin tint\nQuery 2: ilia foundation\nOptions:\n"
        "A. Substitute\nB. Complement\nC. Narrowing\nD. Irrelevant"
    )


def test_exact_prompts_content_formats():
    assert build_system_prompt("query_query_intent", "content", []).endswith(
        "** Output Format **\n<Answer>Narrowing/Complement/Irrelevant/Substitute</Answer>\n"
        "**Valid Examples**\n<Answer>Narrowing</Answer>"
    )
    assert build_system_prompt("query_product_relation", "label_content", []).endswith(
        "** Output Format **\n<Label>A/B/C/D</Label> <Answer>ExactMatch/Substitute/Complement/Irrelevant</Answer>\n"
        "**Valid Examples**\n<Label>A</Label> <Answer>ExactMatch</Answer>"
    )
    # Open-content tasks have no fixed vocabulary, so no example that would favour one option.
    assert build_system_prompt("product_co_purchase", "content", []).endswith(
        "** Output Format **\n<Answer>full text of the chosen option</Answer>"
    )


def test_few_shot_block_is_in_the_system_prompt():
    shots = [
        record(
            id="s1",
            question="Query 1: waterpik\nQuery 2: waterpik pink",
            choices=("Narrowing", "Irrelevant", "Complement", "Substitute"),
            answer=0,
        ),
    ]
    system = build_system_prompt("query_query_intent", "label_content", shots)
    assert system.endswith(
        "Here are some examples to help you answer the question:\n\n"
        "Query 1: waterpik\nQuery 2: waterpik pink\nOptions:\nA. Narrowing\nB. Irrelevant\nC. Complement\nD. Substitute\n"
        "<Label>A</Label> <Answer>Narrowing</Answer>"
    )


@pytest.mark.parametrize("shots", [0, 1, 5])
def test_static_prefix_is_byte_identical_across_questions(shots):
    records = load_records(split="test")
    fewshot = load_records(split="fewshot")
    items = expand(records, runs_for("cyclic"), fewshot=fewshot, shots=shots)
    by_key: dict[tuple[str, str], set[str]] = {}
    for item in items:
        by_key.setdefault((item.record.task, item.run.format), set()).add(item.system_prompt)
    assert len(by_key) == 12
    assert all(len(prompts) == 1 for prompts in by_key.values())
    # ...and it is a prefix: the question is only in the user turn.
    for item in items:
        assert item.record.question not in item.system_prompt


def test_prompts_are_deterministic():
    records = load_records(split="test")
    first = [(i.id, i.system_prompt, i.user_prompt) for i in expand(records, runs_for("full"))]
    second = [(i.id, i.system_prompt, i.user_prompt) for i in expand(load_records(split="test"), runs_for("full"))]
    assert first == second


def test_too_few_fewshot_records_is_an_error():
    with pytest.raises(ValueError, match="5-shot needs 5 few-shot records"):
        expand([record()], runs_for("canonical"), fewshot=[record(id="s1")], shots=5)
    with pytest.raises(ValueError, match="shots must be one of"):
        expand([record()], runs_for("canonical"), fewshot=[], shots=3)


SHOWN = ("Substitute", "Complement", "Narrowing", "Irrelevant")


@pytest.mark.parametrize(
    ("fmt", "reply", "position", "status"),
    [
        ("label", "<Label>B</Label>", 1, OK),
        ("label", "Prediction: <Label> b </Label> because ...", 1, OK),
        ("label", "<Label>B</Label> and again <Label>B</Label>", 1, OK),
        ("label", "B", 1, OK),  # a clear answer without the tag (the strict reading refuses it)
        ("label", "", None, NO_TAG),
        ("label", "<Label>B</Label> <Label>C</Label>", None, CONFLICTING_TAGS),
        ("label", "<Label>E</Label>", None, OUT_OF_RANGE),
        ("label", "<Label>AB</Label>", None, OUT_OF_RANGE),
        ("label", "<think>maybe <Label>A</Label></think><Label>C</Label>", 2, OK),
        ("label", "<think>still thinking <Label>A</Label>", None, UNCLOSED_THINK),
        ("content", "<Answer>complement</Answer>", 1, OK),
        ("content", "<Answer> Narrowing. </Answer>", 2, OK),
        ("content", "The answer is Complement", 1, OK),
        ("content", "I am not sure.", None, NO_TAG),
        ("content", "<Answer>Compliment</Answer>", None, UNKNOWN_CONTENT),
        ("content", "<Answer>Complement</Answer><Answer>Substitute</Answer>", None, CONFLICTING_TAGS),
        ("label_content", "<Label>B</Label> <Answer>Complement</Answer>", 1, OK),
        # Graded by the label by default (strict mode: tests/test_monbench_parsing.py).
        ("label_content", "<Label>A</Label> <Answer>Complement</Answer>", 0, OK),
        ("label_content", "<Label>B</Label>", 1, OK),
        ("label_content", "<Answer>Complement</Answer>", 1, OK),  # no label: the content tag answers
        ("label_content", "<Label>Z</Label> <Answer>Complement</Answer>", None, OUT_OF_RANGE),
    ],
)
def test_parse_answer(fmt, reply, position, status):
    parsed = parse_reply(reply, fmt, SHOWN)
    assert (parsed.position, parsed.status) == (position, status)
    assert parsed.invalid == (status not in (OK, MISMATCH))


def test_no_substring_guessing_outside_tags():
    # The right option's text appears beside an empty tag, or inside prose: no answer.
    assert parse_reply("Complement <Label></Label>", "label", SHOWN).status == OUT_OF_RANGE
    assert parse_reply("The queries complement each other in B's way.", "label_content", SHOWN).status == NO_TAG
    assert parse_reply("I pick B. Complement", "label_content", SHOWN).position == 1  # stated: a careful human's B


def test_user_prompt_builder():
    assert build_user_prompt("Q", ["a", "b", "c", "d"]) == "Q\nOptions:\nA. a\nB. b\nC. c\nD. d"
