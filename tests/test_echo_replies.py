"""Replies that copy their prompt earn nothing (issue 26): the shared echo rule and every parser using it.

What a reply reproduces from its prompt (instructions, format lines, examples,
placeholders, level definitions, option lists), however garbled in spacing,
markdown or case, is never read as an answer; what remains is read as before.
The first tests are the issue's own examples; then the rule itself
(``ecom_tasks.scorers.replies.find_echoes``); then each parser; last, garbled
cut-off copies of every bundled prompt, none of which may earn anything.
"""

from __future__ import annotations

import random

import pytest
from test_echo_loopback import garbled_copy
from test_monbench_parsing import ADS, CO_PURCHASE, INTENT, RELATION

from ecom_tasks.ecomeval.parsing import NO_GRADE, parse_grade
from ecom_tasks.ecomeval.prompts import build_grader_prompt
from ecom_tasks.monbench import parsing as monbench_parsing
from ecom_tasks.monbench.construction.parsing import parse_relevance
from ecom_tasks.monbench.construction.prompts import VOTE_SYSTEM
from ecom_tasks.monbench.prompts import build_system_prompt as monbench_system
from ecom_tasks.monbench.prompts import build_user_prompt as monbench_user
from ecom_tasks.monbench.prompts import output_format_block
from ecom_tasks.monbench.protocol import load_items as monbench_items
from ecom_tasks.monbench.schema import TASKS, load_records
from ecom_tasks.monbench.scoring import score_reply as monbench_score
from ecom_tasks.rair import parsing as rair_parsing
from ecom_tasks.rair.construction.parsing import parse_intent, parse_rule_ids, parse_visual
from ecom_tasks.rair.construction.prompts import INTENT_SYSTEM, RULES_SYSTEM_HEAD, VISUAL_SYSTEM
from ecom_tasks.rair.prompts import build_system_prompt as rair_system
from ecom_tasks.rair.protocol import build_items
from ecom_tasks.rair.rules import load_rules
from ecom_tasks.rair.schema import load_records as rair_records
from ecom_tasks.rair.scoring import score_reply as rair_score
from ecom_tasks.scorers import replies
from ecom_tasks.scorers.replies import find_echoes, squeezed, strip_echoes

RAIR_SYSTEM = rair_system("en")
RAIR_USER = "Input:\nUser Query: burgundy dress\nItem Title: Red midi dress\nItem Shop: X\nItem CPV: red\nItem SKU: M"
RAIR_PROMPT = (RAIR_SYSTEM, RAIR_USER)
INTENT_LABEL_CONTENT = monbench_system("query_query_intent", "label_content", [])
INTENT_LABEL = monbench_system("query_query_intent", "label", [])
INTENT_QUESTION = monbench_user("Query 1: foundation\nQuery 2: ilia skin tint", INTENT)


def rair(reply, truncated=None, prompt=RAIR_PROMPT):
    parsed = rair_parsing.parse_reply(reply, prompt=prompt, truncated=truncated)
    return parsed.label if parsed.valid else parsed.status


def monbench(reply, fmt, displayed=INTENT, prompt=None):
    parsed = monbench_parsing.parse_reply(reply, fmt, displayed, prompt=prompt)
    return "ABCD"[parsed.position] if parsed.position is not None else parsed.status


# --- the issue's examples (each was read as an answer before) ----------------------------------------


@pytest.mark.parametrize("prompt", [None, (INTENT_LABEL, INTENT_QUESTION)], ids=["fixed-parts", "prompt-sent"])
def test_issue_monbench_a_garbled_echo_of_the_format_example_is_no_answer(prompt):
    # The copied example is always <Label>A</Label>: read as an answer, an echo scored at position A.
    assert monbench("** Valid Examples**\n<Label>A</Label>", "label", prompt=prompt) == monbench_parsing.NO_TAG
    assert monbench("**valid examples**\n\n<label>A</label>", "label", prompt=prompt) == monbench_parsing.NO_TAG
    # An answer after the echo is read.
    assert (
        monbench("** Valid Examples**\n<Label>A</Label>\n\nMy answer: <Label>C</Label>", "label", prompt=prompt) == "C"
    )


@pytest.mark.parametrize("prompt", [None, (INTENT_LABEL_CONTENT, INTENT_QUESTION)], ids=["fixed-parts", "prompt-sent"])
def test_issue_monbench_a_label_beside_the_formats_placeholder_list_is_no_answer(prompt):
    for reply in (
        "<Label>B</Label> <Answer>Narrowing/Complement/Irrelevant/Substitute</Answer>",
        "<Label>A</Label> <Answer>Narrowing/Complement/Irrelevant/Substitute</Answer>",
        "<Answer>Narrowing/Complement/Irrelevant/Substitute</Answer> <Label>B</Label>",
    ):
        assert monbench(reply, "label_content", prompt=prompt) == monbench_parsing.NO_TAG, reply
    # The placeholder line copied, then the model's own answer on a line of its own.
    reply = "<Label>A/B/C/D</Label> <Answer>Narrowing/Complement/Irrelevant/Substitute</Answer>\n<Label>B</Label>"
    assert monbench(reply, "label_content", prompt=prompt) == "B"


def test_issue_rair_a_definition_cut_off_by_the_token_limit_is_no_answer():
    assert rair("- L4 (Perfect", truncated=True) == rair_parsing.NO_LABEL
    # A copy stopping inside a word of the prompt was cut off, whether or not the stop reason is known.
    assert rair("- L4 (Perfect") == rair_parsing.NO_LABEL
    # The whole definition list copied, garbled, cut off at the same place.
    copy = RAIR_SYSTEM.split("Relevance Levels:")[1].split("Perfectly")[0].upper().replace(" ", "  ") + "PERFECT"
    assert rair(copy, truncated=True) == rair(copy) == rair_parsing.NO_LABEL
    # An answer stated as one and then cut off is complete: it is read.
    assert rair("The answer is L4 (Perfect", truncated=True) == "L4"


def test_issue_rair_the_final_answer_instruction_copied_is_no_answer():
    assert rair("output only the final level: L1, or for L2 cases …") == rair_parsing.NO_LABEL
    assert rair("Final Answer: After </think>, output only the final level: L1") == rair_parsing.NO_LABEL


def test_issue_rair_an_instruction_for_l2_cases_is_no_answer():
    assert rair("For L2 cases, output [L2-Mismatch]") == rair_parsing.NO_LABEL
    assert rair("For L2 cases, output [L2-Mismatch]", prompt=None) == rair_parsing.NO_LABEL
    # The same form stated as the answer is one.
    assert rair("[L2-Mismatch]") == "L2"
    assert rair("For this item: [L2-Brand Mismatch]") == "L2"


# --- the shared rule ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "garble",
    [
        lambda t: t,
        str.upper,
        str.lower,
        lambda t: t.replace(" ", "   "),
        lambda t: t.replace(" ", "\n"),
        lambda t: t.replace(": ", ":"),
        lambda t: "**" + t.replace("(", "`(").replace(")", ")`") + "**",
        lambda t: "# " + t.replace("\n", "\n## "),
    ],
    ids=["verbatim", "upper", "lower", "spaces", "line-breaks", "no-space", "markdown", "headings"],
)
def test_a_copy_is_found_however_its_spacing_markdown_or_case_is_garbled(garble):
    copied = "Key Attributes: Pay attention to Category, Brand, Style Details, Material"
    reply = f"Let me think.\n{garble(copied)}\nSo: L3"
    stripped = strip_echoes(reply, RAIR_SYSTEM)
    assert stripped.startswith("Let me think") and stripped.rstrip().endswith("So: L3")
    assert "attention" not in stripped.lower() and "material" not in stripped.lower()


def test_a_copy_with_curled_quotes_and_dashes_is_found():
    """A model (or its detokenizer) that writes the prompt's apostrophes, quotes and hyphens typographically still
    copies it: "Levi’s" is the prompt's "Levi's"."""
    prompt = "Query: levi's jeans\nItem: Levi's 501 Men's Original Fit Jeans - Dark \"Stonewash\" Blue"
    copied = "Item: Levi\u2019s 501 Men\u2019s Original Fit Jeans \u2013 Dark \u201cStonewash\u201d Blue"
    stripped = strip_echoes(f"{copied}\nSo: L3", prompt)
    assert stripped.strip() == "So: L3", stripped
    assert strip_echoes("Levi\u2019s fits, as I see it.\nSo: L3", prompt).startswith("Levi\u2019s fits")


def test_a_bare_answer_that_occurs_in_the_prompt_is_kept():
    for reply in ("L3", "L1, L3", "[L2-Style Mismatch]", "Level: L1", "The final level: L1"):
        assert strip_echoes(reply, RAIR_SYSTEM, answers=rair_parsing._ANSWERS) == reply
    for reply in ("<Label>A</Label>", "<Label>A</Label> <Answer>Narrowing</Answer>"):
        assert strip_echoes(reply, INTENT_LABEL_CONTENT, answers=monbench_parsing._TAGS, min_chars=12) == reply
    assert parse_relevance("Answer: relevant").label == "relevant"


def test_an_answer_is_never_cut_in_two():
    # "<Answer>" opens the model's own tag right after a copied placeholder line.
    reply = "<Label>A/B/C/D</Label><Answer>Complement</Answer>"
    echoes = find_echoes(reply, INTENT_LABEL_CONTENT, answers=monbench_parsing._TAGS, min_chars=12)
    assert "<Answer>Complement</Answer>" in echoes.stripped()


def test_answers_opening_a_copy_after_the_models_own_words_are_kept():
    reply = "Final answer: L4 (Perfectly Relevant): Completely satisfies the query intent."
    assert strip_echoes(reply, RAIR_SYSTEM, answers=rair_parsing._ANSWERS).strip() == (
        "Final answer: L4 (Perfectly Relevant)"
    )
    assert rair(reply) == "L4"
    # ... but not when the copy goes on to list other levels: that is the prompt's list.
    assert rair("Final answer: L1, L3 or L4, or for L2 the bracketed form [L2-<attribute> Mismatch].") == "no_label"
    # A definition line copied on its own is the prompt's text, not the model's choice.
    assert rair("- L1 (Irrelevant): Complete category mismatch with no association.") == "no_label"
    # ... in Chinese too, though the line is 13 characters: a CJK character counts twice towards the minimum.
    zh_prompt = (rair_system("zh"), RAIR_USER)
    assert rair("- L4（完全相关）：完全满足查询意图。", prompt=zh_prompt) == "no_label"  # was L4
    assert rair("我认为是L4，完全满足查询意图。", prompt=zh_prompt) == "L4"
    assert rair("最终答案：L3", prompt=zh_prompt) == "L3"


def test_the_last_line_of_a_cut_off_reply_is_read_only_when_it_is_no_fragment_of_the_prompt():
    # Stopped by the limit: a fragment of the prompt on the last line is where a copy broke off.
    assert rair("Level: L1", truncated=True) == "no_label"
    assert rair("Level: L1", truncated=False) == rair("Level: L1") == "L1"
    assert rair("<think>brand and colour match</think>\nL4", truncated=True) == "L4"
    assert rair("L3\n\nThe colour is close but the shade differs, so it is not", truncated=True) == "L3"


def test_a_copy_runs_on_from_the_system_message_into_the_user_message():
    # The end of the system message (a format example) and the start of the user message, one copy.
    system = monbench_system("query_query_intent", "content", [])
    reply = "<answer>narrowing</answer>\n\nquery 1: foundation\nQuery 2: ilia skin tint"
    assert monbench(reply, "content", prompt=(system, INTENT_QUESTION)) == monbench_parsing.NO_TAG
    assert monbench("<Answer>Narrowing</Answer>", "content", prompt=(system, INTENT_QUESTION)) == "C"


def test_a_few_shot_examples_answer_copied_is_no_answer():
    records = [r for r in load_records(None, split="test") if r.task == "product_co_purchase"]
    shot = next(r for r in records if not set(r.choices) & set(CO_PURCHASE))
    system = monbench_system("product_co_purchase", "label_content", [shot])
    user = monbench_user("Which product?", CO_PURCHASE)
    example = system.split("\n")[-1]  # the example's own answer line: its option is not shown here
    assert example.startswith("<Label>")
    assert monbench(f"{example}\n\nUser Que", "label_content", CO_PURCHASE, prompt=(system, user)) == "no_tag"
    assert (
        monbench(
            "<Label>B</Label> <Answer>Bassetts Liquorice Allsorts (190g)</Answer>",
            "label_content",
            CO_PURCHASE,
            prompt=(system, user),
        )
        == "B"
    )


def test_a_long_copy_is_found():
    assert rair((RAIR_SYSTEM.upper() + "\n") * 60 + "L3") == "L3"  # (its time: benchmarks/reader_speed.py)


@pytest.mark.parametrize("budget", [replies._SEARCH_BUDGET, 0], ids=["searches", "automaton"])
def test_both_ways_of_finding_copied_stretches_give_the_longest_copy_ending_at_each_character(monkeypatch, budget):
    monkeypatch.setattr(replies, "_SEARCH_BUDGET", budget)
    rng = random.Random(7)

    def longest_by_hand(key: str, prompt_key: str) -> list[int]:
        return [
            next(end - start for start in range(end + 1) if key[start:end] in prompt_key)
            for end in range(1, len(key) + 1)
        ]

    for alphabet in ("ab", "abc L3<>", "级别L3 ab"):
        for _ in range(300):
            prompt = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
            reply_key = replies._keyed("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))))[0]
            part = replies._Part(prompt)
            assert part.matching(reply_key) == longest_by_hand(reply_key, part.key), (prompt, reply_key)


# --- every parser ------------------------------------------------------------------------------------


def test_scoring_reads_the_prompt_from_the_lm_eval_document():
    # lm-eval documents carry the prompts: a copy of the user message (the item's fields) is no answer.
    fields = {"label": "L3", "system_prompt": RAIR_SYSTEM, "user_prompt": RAIR_USER + "\nItem Note: L3 grade fabric"}
    parsed, outcome = rair_score(fields, "Item Note: L3 grade fabric, very soft and warm")
    assert parsed.label is None and outcome  # the note's L3 is the prompt's text
    fields = {
        "record_id": "x", "task": "query_query_intent", "question_index": 0, "ordering": 0, "format": "label",
        "displayed": list(INTENT), "target_position": 0, "category": "",
        "system_prompt": INTENT_LABEL, "user_prompt": INTENT_QUESTION,
    }  # fmt: skip
    assert monbench_score(fields, "**Valid Examples**\n<Label>A</Label>")[1]["invalid"] == 1
    assert monbench_score(fields, "<Label>A</Label>")[1]["correct"] == 1


def test_the_grader_reply_copying_its_prompt_gives_no_grade():
    prompt = build_grader_prompt("Which size fits?", "M", "Size M.\nThe customer should pick it.\nFinal Score: 3")
    copy = prompt.split("<response>")[1].split("</response>")[0]  # the response copied: its own "grade"
    assert parse_grade(f"The response reads:{copy}", prompt=prompt).status == NO_GRADE
    assert parse_grade(prompt.upper().replace("\n</RESPONSE>\n", ""), prompt=prompt).status == NO_GRADE
    assert parse_grade(prompt, prompt=prompt).detail == "the grader's reply only repeats its prompt"
    # The rubric quoted in the grader's own reasoning, then its own last line.
    own = "It agrees with the reference in substance and meets every requirement of the question.\nFinal Score: 3"
    assert parse_grade(own, prompt=prompt).grade == 3
    # The asked-for line filled in after the copied instruction is the grader's own grade.
    instruction = "then a last line of exactly this form, with N one of 0, 1, 2, 3:\n"
    assert parse_grade(instruction + "Final Score: 2").grade == 2
    assert parse_grade(instruction + "Final Score: \\boxed{2}").grade == 2  # boxed, as reasoning judges write it
    # Without the prompt, the fixed text of the grader prompt is compared.
    assert parse_grade(prompt.split("<question>")[0]).detail == "the grader's reply only repeats its prompt"


@pytest.mark.parametrize(
    ("parse", "system", "own"),
    [
        (parse_intent, INTENT_SYSTEM, "<answer>NC</answer>"),
        (parse_visual, VISUAL_SYSTEM, "\\boxed{1}"),
        (lambda reply: parse_rule_ids(reply, ["R1"]), RULES_SYSTEM_HEAD, "Rule IDs: R1"),
        (parse_relevance, VOTE_SYSTEM, "Answer: relevant"),
    ],
    ids=["rair-intent", "rair-visual", "rair-rules", "monbench-votes"],
)
def test_a_build_vote_copying_its_instructions_abstains(parse, system, own):
    tail = system[-160:]
    for copy in (system, tail, tail.upper().replace(" ", "  "), system[: len(system) // 2]):
        assert parse(copy).failed, copy[-80:]
    assert not parse(f"{tail}\n\n{own}").failed  # the copy, then the model's own answer
    assert not parse(own).failed


@pytest.mark.parametrize(
    ("parse", "reply"),
    [
        (parse_intent, "<answer>NC</answer> or <answer>Other</answer>"),
        (parse_visual, "\\boxed{1} or \\boxed{0}"),
        (parse_relevance, "Answer: relevant\nor\nAnswer: irrelevant"),
    ],
)
def test_a_vote_offering_the_formats_two_answers_abstains(parse, reply):
    assert parse(reply).status == "ambiguous"


# --- the strict readings -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "label", "dimension"),
    [
        ("<think>colour differs</think>\nL3", "L3", None),
        ("L1", "L1", None),
        ("  L4\n", "L4", None),
        ("[L2-Brand Mismatch]", "L2", "Brand"),
        ("<think>x</think>[L2-Vibes Mismatch]", "L2", "other"),
        ("【L2-颜色不匹配】", "L2", "Color"),
        ("L2", None, None),  # L2 comes in its bracketed form
        ("**L3**", None, None),
        ("Final answer: L3", None, None),
        ("L3.", None, None),
        ("L3 rather than L4", None, None),
        ("[L2-<attribute> Mismatch]", None, None),
        ("l3", None, None),
        ("", None, None),
        ("<think>L3", None, None),
    ],
)
def test_rair_strict_reading_takes_exactly_the_requested_output(reply, label, dimension):
    parsed = rair_parsing.parse_strict(reply)
    assert (parsed.label, parsed.dimension) == (label, dimension), parsed.detail
    assert parsed.valid == (label is not None)


def test_monbench_strict_reading_is_task_version_2s():
    assert monbench_parsing.parse_strict("<Label>B</Label>", "label", INTENT).position == 1
    assert monbench_parsing.parse_strict("<Label>B. Complement</Label>", "label", INTENT).status == "out_of_range"
    assert monbench_parsing.parse_strict("<Answer>Exactmatch</Answer>", "content", RELATION).position == 3


# --- garbled, cut-off copies of every bundled prompt ----------------------------------------------------


def _copies(prompt: str, count: int) -> list[str]:
    return [garbled_copy(prompt, seed) for seed in range(count)]


@pytest.mark.parametrize(("subset", "rules"), [("general", "none"), ("hard", "builtin"), ("visual", "none")])
def test_no_garbled_cut_off_copy_of_a_rair_prompt_earns_anything(subset, rules):
    items = build_items(rair_records(subset=subset), rules=load_rules(rules), image=subset == "visual")
    for item in items:
        for copy in _copies(f"{item.system_prompt}\n\n{item.user_prompt}", 3):
            for truncated in (True, None):
                parsed = rair_parsing.parse_reply(
                    copy, prompt=(item.system_prompt, item.user_prompt), truncated=truncated
                )
                assert not parsed.valid, (parsed, copy[-200:])


@pytest.mark.parametrize("shots", [0, 1])
def test_no_garbled_cut_off_copy_of_a_monbench_prompt_earns_anything(shots):
    items = monbench_items(None, tasks=TASKS, split="test", design="cyclic", formats=None, shots=shots)
    for item in items[:: 3 if shots else 1][:150]:
        for copy in _copies(f"{item.system_prompt}\n\n{item.user_prompt}", 2):
            parsed = monbench_parsing.parse_reply(
                copy, item.run.format, item.displayed, prompt=(item.system_prompt, item.user_prompt)
            )
            assert parsed.invalid, (parsed, copy[-300:])


def test_every_format_block_copied_alone_is_no_answer():
    for task in TASKS:
        shown = INTENT if task == "query_query_intent" else RELATION if task == "query_product_relation" else ADS
        for fmt in ("label", "content", "label_content"):
            block = output_format_block(task, fmt)
            for copy in (block, block.upper(), block.replace("**", "").replace("\n", "\n\n")):
                assert monbench_parsing.parse_reply(copy, fmt, shown).invalid, (task, fmt, copy)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("L3" + " " * 500 + "x", "L3 x"),  # a run of more than 8 blanks is one space
        ("a" + " " * 8 + "b", "a" + " " * 8 + "b"),  # 8 are kept
        ("a \n   \t  \n b", "a\n\nb"),  # its line breaks, two at most
        ("a\n" + " " * 20 + "b", "a\nb"),
        ("a" + "\n" * 50 + "b", "a\n\nb"),
    ],
)
def test_long_runs_of_blanks_are_squeezed(text, expected):
    assert squeezed(text) == expected
