"""MonBench reply parsing: reasoning stripping, lenient-but-never-guessing content matching, and
Label+Content grading (by the label by default, both tags agreeing with ``strict=True``).

What holds in both readings (``parsing="grader"``, the default, and ``parsing="strict"``, task
version 2.0's) is tested under both; the strict reading's own refusals are tested here, the grader
reading's table of realistic replies is in ``test_monbench_grader_parsing.py``.

Every expected value is written by hand; option texts are those of the bundled fixtures.
"""

from __future__ import annotations

import pytest

from ecom_tasks.monbench.parsing import (
    AMBIGUOUS,
    CONFLICTING_TAGS,
    INVALID_STATUSES,
    MISMATCH,
    NO_TAG,
    OK,
    OUT_OF_RANGE,
    PARSINGS,
    STRICT,
    UNCLOSED_THINK,
    UNKNOWN_CONTENT,
    parse_reply,
)
from ecom_tasks.monbench.prompts import render_answer
from ecom_tasks.monbench.protocol import expand, runs_for
from ecom_tasks.monbench.schema import LETTERS, TASKS, load_records
from ecom_tasks.monbench.scoring import score_reply

# Query-query intent (mb-paper-t6, canonical order).
INTENT = ("Substitute", "Complement", "Narrowing", "Irrelevant")
# Query-product relation (mb-paper-fig1-qpr, canonical order): ExactMatch is shown at D.
RELATION = ("Substitute", "Complement", "Irrelevant", "ExactMatch")
# Product co-purchase (mb-paper-t5, canonical order).
CO_PURCHASE = (
    "Kirkland Signature Ito En Matcha Blend (Green Tea), 100% Japanese Green Tea Leaves (200 Tea Bags)",
    "Bassetts Liquorice Allsorts (190g)",
    "MW Polar Canned Vegetables, Cut Yams (15 oz, Pack of 24)",
    "SweetLeaf Sweetener (70-Count Packets, Pack of 3)",
)
# Query-ad relevance (mb-syn-qar-test-2, canonical order).
ADS = (
    "Sony WH-1000XM5 Noise Cancelling Headphones – Save $70 Today. Free 2-Day Shipping.",
    "Travel Insurance Quotes – Cover Your Next Trip From $19.",
    "Noise Complaints? Soundproof Your Apartment With Acoustic Panels.",
    "Headphone Repair Near You – Same-Day Service.",
)
# Two options that differ only by spacing: any content naming one names both.
LOOKALIKES = ("Goldfish Crackers, 6.6 oz", "Gold Fish Crackers, 6.6 oz", "Haribo Sour Dinosaurs", "Fluff Marshmallow")
# Short open-answer options (written for these tests): SHOES, and KIDS_SHOES where one option starts the other.
SHOES = ("Running shoes", "Hiking boots", "Red shoes", "Blue shoes")
KIDS_SHOES = ("Running shoes for kids", "Running shoes", "Hiking boots", "Sandals")


def parsed_tuple(reply, fmt, displayed, **kwargs):
    parsed = parse_reply(reply, fmt, displayed, **kwargs)
    return parsed.position, parsed.status


# --- reasoning: one rule (ecom_tasks.scorers.replies.answer_region) -------------------------------


@pytest.mark.parametrize(
    ("reply", "fmt", "displayed", "position"),
    [
        # The server dropped the opening tag (the chat template put it in the prompt).
        ("reasoning ... </think><Label>B</Label>", "label", INTENT, 1),
        ("I considered <Label>A</Label> first.</think><Label>B</Label>", "label", INTENT, 1),
        ("I compare the queries.\n</think>\n<Answer>Narrowing</Answer>", "content", INTENT, 2),
        # A tag quoted while reasoning is not the answer.
        ("<think>the format is <Label>A</Label>, so</think><Label>C</Label>", "label", INTENT, 2),
        ("<think>maybe <Answer>Substitute</Answer>?</think> <Answer>Irrelevant</Answer>", "content", INTENT, 3),
        (
            "<think>is it <Label>D</Label>?</think><Label>B</Label> <Answer>Complement</Answer>",
            "label_content",
            INTENT,
            1,
        ),
        # Several think blocks: only what follows the last one counts.
        ("<think>a</think><Label>A</Label><think>no, wait</think><Label>D</Label>", "label", INTENT, 3),
        # No think tags at all: the whole reply is the answer.
        ("Prediction: <Label>C</Label>", "label", INTENT, 2),
    ],
)
@pytest.mark.parametrize("parsing", PARSINGS)
def test_reasoning_is_stripped(reply, fmt, displayed, position, parsing):
    assert parsed_tuple(reply, fmt, displayed, parsing=parsing) == (position, OK)


@pytest.mark.parametrize("parsing", PARSINGS)
@pytest.mark.parametrize("fmt", ["label", "content", "label_content"])
def test_unclosed_think_is_invalid(fmt, parsing):
    reply = "<think>long reasoning cut off <Label>A"
    parsed = parse_reply(reply, fmt, INTENT, parsing=parsing)
    assert (parsed.position, parsed.status, parsed.invalid) == (None, UNCLOSED_THINK, True)
    # Even a complete answer inside the unfinished reasoning is not read.
    parsed = parse_reply("<think>I think <Label>B</Label> <Answer>Complement</Answer>", fmt, INTENT, parsing=parsing)
    assert (parsed.position, parsed.status) == (None, UNCLOSED_THINK)
    assert UNCLOSED_THINK in INVALID_STATUSES


FIELDS = {
    "record_id": "mb-paper-t6",
    "task": "query_query_intent",
    "question_index": 0,
    "ordering": 0,
    "format": "label_content",
    "displayed": list(INTENT),
    "target_position": 1,
    "category": "",
}


def test_a_reply_cut_off_while_thinking_counts_as_truncated_and_invalid():
    _, outcome = score_reply(FIELDS, "<think>long reasoning cut off <Label>A")
    assert (outcome["correct"], outcome["invalid"], outcome["truncated"]) == (0, 1, 1)
    # The framework's stop reason wins when it is known (Inspect): a complete reply that hit the limit.
    _, outcome = score_reply(FIELDS, "<Label>B</Label> <Answer>Complement</Answer>", truncated=True)
    assert (outcome["correct"], outcome["truncated"]) == (1, 1)
    _, outcome = score_reply(FIELDS, "<Label>B</Label> <Answer>Complement</Answer>")
    assert outcome["truncated"] == 0


# --- Content: normalised matching, letter prefix allowed, never a guess ---------------------------


@pytest.mark.parametrize(
    ("reply", "displayed", "position"),
    [
        # The option text preceded by its shown letter.
        (
            "<Answer>A. Sony WH-1000XM5 Noise Cancelling Headphones – Save $70 Today. Free 2-Day Shipping.</Answer>",
            ADS,
            0,
        ),
        ("<Answer>B. Bassetts Liquorice Allsorts (190g)</Answer>", CO_PURCHASE, 1),
        ("<Answer>(B) Bassetts Liquorice Allsorts (190g)</Answer>", CO_PURCHASE, 1),
        ("<Answer>B) Bassetts Liquorice Allsorts (190g)</Answer>", CO_PURCHASE, 1),
        ("<Answer>B: Bassetts Liquorice Allsorts (190g)</Answer>", CO_PURCHASE, 1),
        ("<Answer>b. bassetts liquorice allsorts (190g)</Answer>", CO_PURCHASE, 1),
        ("<Answer>D. Irrelevant</Answer>", INTENT, 3),
        ("<Answer>(C) Narrowing</Answer>", INTENT, 2),
        # A different case.
        ("<Answer>bassetts liquorice allsorts (190G)</Answer>", CO_PURCHASE, 1),
        ("<Answer>HEADPHONE REPAIR NEAR YOU – SAME-DAY SERVICE.</Answer>", ADS, 3),
        ("<Answer>NARROWING</Answer>", INTENT, 2),
        # The relation labels' spacing does not matter.
        ("<Answer>Exact Match</Answer>", RELATION, 3),
        ("<Answer>exactmatch</Answer>", RELATION, 3),
        ("<Answer>EXACT  MATCH.</Answer>", RELATION, 3),
        ("<Answer>D. Exact Match</Answer>", RELATION, 3),
        # Surrounding quotes, trailing punctuation, extra whitespace, full-width characters (NFKC).
        ('<Answer>"Complement"!</Answer>', INTENT, 1),
        ("<Answer> 'Substitute'; </Answer>", INTENT, 0),
        ("<Answer>\u201cIrrelevant\u201d</Answer>", INTENT, 3),
        ("<Answer>Travel   Insurance Quotes –\nCover Your Next Trip From $19</Answer>", ADS, 1),
        ("<Answer>\uff23\uff4f\uff4d\uff50\uff4c\uff45\uff4d\uff45\uff4e\uff54</Answer>", INTENT, 1),
        # The same answer twice (once with its letter) is one answer.
        ("<Answer>B. Complement</Answer> so <Answer>complement</Answer>", INTENT, 1),
    ],
)
@pytest.mark.parametrize("parsing", PARSINGS)
def test_content_accepts_the_option_text(reply, displayed, position, parsing):
    for fmt, label in (("content", ""), ("label_content", f"<Label>{'ABCD'[position]}</Label> ")):
        parsed = parse_reply(label + reply, fmt, displayed, parsing=parsing)
        assert (parsed.position, parsed.status, parsed.disagreement) == (position, OK, False), fmt
        strict = parse_reply(label + reply, fmt, displayed, strict=True, parsing=parsing)
        assert (strict.position, strict.status) == (position, OK), fmt


@pytest.mark.parametrize(
    ("reply", "displayed", "status", "grader_status"),
    [
        # The letter names option A, the text is option B.
        ("<Answer>A. Bassetts Liquorice Allsorts (190g)</Answer>", CO_PURCHASE, UNKNOWN_CONTENT, AMBIGUOUS),
        ("<Answer>(A) Complement</Answer>", INTENT, UNKNOWN_CONTENT, AMBIGUOUS),
        ("<Answer>C: Exact Match</Answer>", RELATION, UNKNOWN_CONTENT, AMBIGUOUS),
        # A letter outside A-D before a real option.
        ("<Answer>E. Complement</Answer>", INTENT, UNKNOWN_CONTENT, UNKNOWN_CONTENT),
        # The normalised value names two options.
        ("<Answer>goldfish crackers, 6.6 oz</Answer>", LOOKALIKES, UNKNOWN_CONTENT, AMBIGUOUS),
        ("<Answer>A. Gold Fish Crackers, 6.6 oz</Answer>", LOOKALIKES, UNKNOWN_CONTENT, AMBIGUOUS),
        # Not an option at all (only a letter, a misspelling); the strict reading also refuses a part
        # of the text, an explanation and a hyphenated label (the grader reading accepts those).
        ("<Answer>B</Answer>", INTENT, UNKNOWN_CONTENT, OK),  # the grader reading: a letter names its option
        ("<Answer>Compliment</Answer>", INTENT, UNKNOWN_CONTENT, UNKNOWN_CONTENT),
        ("<Answer>Bassetts Liquorice Allsorts</Answer>", CO_PURCHASE, UNKNOWN_CONTENT, OK),
        ("<Answer>Complement, because both are ILIA products</Answer>", INTENT, UNKNOWN_CONTENT, OK),
        ("<Answer>Exact-Match</Answer>", RELATION, UNKNOWN_CONTENT, OK),
        # A correction inside the value that names no option: the value is read whole, and names none.
        ("<Answer>red shoes — correction: purple shoes</Answer>", SHOES, UNKNOWN_CONTENT, UNKNOWN_CONTENT),
        # An answer word before the text (the grader reading reads the text after it).
        ("<Answer>Answer: Complement</Answer>", INTENT, UNKNOWN_CONTENT, OK),
        # An open-answer option's text and an explanation (the grader reading reads the option), or a hedge.
        ("<Answer>Running shoes, because the query asks for sport footwear</Answer>", SHOES, UNKNOWN_CONTENT, OK),
        ("<Answer>Running shoes or hiking boots</Answer>", SHOES, UNKNOWN_CONTENT, AMBIGUOUS),
        # Two different answers.
        ("<Answer>Complement</Answer><Answer>B. Substitute</Answer>", INTENT, CONFLICTING_TAGS, CONFLICTING_TAGS),
        ("<Answer>Complement</Answer><Answer>Compliment</Answer>", INTENT, CONFLICTING_TAGS, CONFLICTING_TAGS),
    ],
)
def test_content_never_guesses(reply, displayed, status, grader_status):
    parsed = parse_reply(reply, "content", displayed, parsing=STRICT)
    assert (parsed.position, parsed.status, parsed.invalid) == (None, status, True)
    grader = parse_reply(reply, "content", displayed)
    assert grader.status == grader_status
    assert grader.invalid == (grader_status != OK)


def test_content_the_text_wins_over_a_letter_like_start():
    # An option that itself starts like a letter prefix is matched whole first.
    shown = ("A. O. Smith Water Heater Element", "Rheem Anode Rod", "Teflon Tape", "Pipe Wrench")
    assert parsed_tuple("<Answer>a. o. smith water heater element</Answer>", "content", shown) == (0, OK)
    assert parsed_tuple("<Answer>A. A. O. Smith Water Heater Element</Answer>", "content", shown) == (0, OK)
    reversed_shown = shown[::-1]  # now shown at D
    assert parsed_tuple("<Answer>A. O. Smith Water Heater Element</Answer>", "content", reversed_shown) == (3, OK)
    assert parsed_tuple("<Answer>D. A. O. Smith Water Heater Element</Answer>", "content", reversed_shown) == (3, OK)


# --- Label+Content: graded by the label; strict mode requires agreement --------------------------


def test_label_content_disagreement_is_graded_by_the_label():
    reply = "<Label>A</Label> <Answer>Complement</Answer>"  # Table 15's failure: label A, content B
    parsed = parse_reply(reply, "label_content", INTENT)
    assert (parsed.position, parsed.status, parsed.disagreement, parsed.invalid) == (0, OK, True, False)
    assert parsed.detail == "label names A, content names B"

    strict = parse_reply(reply, "label_content", INTENT, strict=True)
    assert (strict.position, strict.status, strict.disagreement, strict.invalid) == (None, MISMATCH, True, False)


def test_label_content_disagreement_with_a_normalised_content():
    reply = "<Label>B</Label> <Answer>D. Exact Match</Answer>"
    parsed = parse_reply(reply, "label_content", RELATION)
    assert (parsed.position, parsed.status, parsed.disagreement) == (1, OK, True)
    assert parsed_tuple(reply, "label_content", RELATION, strict=True) == (None, MISMATCH)


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        ("<Label>Z</Label> <Answer>Complement</Answer>", OUT_OF_RANGE),
        ("<Label>B</Label><Label>C</Label> <Answer>Complement</Answer>", CONFLICTING_TAGS),
    ],
)
@pytest.mark.parametrize("strict", [False, True])
def test_label_content_without_a_valid_label_is_invalid(reply, status, strict):
    parsed = parse_reply(reply, "label_content", INTENT, strict=strict)
    assert (parsed.position, parsed.status, parsed.invalid, parsed.disagreement) == (None, status, True, False)


@pytest.mark.parametrize("reply", ["<Answer>Complement</Answer>", "I pick B. <Answer>B. Complement</Answer>"])
def test_label_content_without_a_label_is_read_by_its_content_unless_both_are_required(reply):
    """The label missing, the content tag is the answer a careful human reads (``other_tag``); ``strict`` asks for
    both tags, and the strict reading for exactly the requested ones."""
    assert parsed_tuple(reply, "label_content", INTENT) == (1, OK)
    assert parse_reply(reply, "label_content", INTENT).rule == "other_tag"
    assert parsed_tuple(reply, "label_content", INTENT, strict=True) == (None, NO_TAG)
    assert parsed_tuple(reply, "label_content", INTENT, parsing=STRICT) == (None, NO_TAG)


@pytest.mark.parametrize(
    ("reply", "strict_status", "grader_strict_status"),
    [
        ("<Label>B</Label>", NO_TAG, NO_TAG),
        ("<Label>B</Label> <Answer>Compliment</Answer>", UNKNOWN_CONTENT, UNKNOWN_CONTENT),
        ("<Label>B</Label> <Answer>A. Complement</Answer>", UNKNOWN_CONTENT, AMBIGUOUS),
        ("<Label>B</Label> <Answer>Complement</Answer><Answer>Narrowing</Answer>", CONFLICTING_TAGS, CONFLICTING_TAGS),
    ],
)
@pytest.mark.parametrize("parsing", PARSINGS)
def test_label_content_with_a_bad_content(reply, strict_status, grader_strict_status, parsing):
    parsed = parse_reply(reply, "label_content", INTENT, parsing=parsing)
    assert (parsed.position, parsed.status, parsed.disagreement) == (1, OK, False)
    strict = parse_reply(reply, "label_content", INTENT, strict=True, parsing=parsing)
    expected = strict_status if parsing == STRICT else grader_strict_status
    assert (strict.position, strict.status, strict.invalid) == (None, expected, True)


@pytest.mark.parametrize(
    ("reply", "strict", "correct", "invalid", "mismatch"),
    [
        # FIELDS: the target is B (Complement).
        ("<Label>B</Label> <Answer>Complement</Answer>", False, 1, 0, 0),
        ("<Label>B</Label> <Answer>Complement</Answer>", True, 1, 0, 0),
        ("<Label>B</Label> <Answer>Substitute</Answer>", False, 1, 0, 1),
        ("<Label>B</Label> <Answer>Substitute</Answer>", True, 0, 0, 1),
        ("<Label>A</Label> <Answer>Complement</Answer>", False, 0, 0, 1),
        ("<Label>A</Label> <Answer>Complement</Answer>", True, 0, 0, 1),
        ("<Label>B</Label> <Answer>Compliment</Answer>", False, 1, 0, 0),
        ("<Label>B</Label> <Answer>Compliment</Answer>", True, 0, 1, 0),
        ("<Answer>Complement</Answer>", False, 1, 0, 0),  # no label: the content answers
        ("<Answer>Complement</Answer>", True, 0, 1, 0),  # both tags required
        ("<think>long reasoning cut off <Label>A", False, 0, 1, 0),
    ],
)
def test_score_reply_outcome(reply, strict, correct, invalid, mismatch):
    _, outcome = score_reply(FIELDS, reply, strict=strict)
    assert (outcome["correct"], outcome["invalid"], outcome["mismatch"]) == (correct, invalid, mismatch)
    # The other fields do not depend on the reply.
    assert {k: outcome[k] for k in ("task", "question", "ordering", "format", "position", "category")} == {
        "task": "query_query_intent",
        "question": "mb-paper-t6",
        "ordering": 0,
        "format": "label_content",
        "position": 1,
        "category": "",
    }


# --- round trip: every perfect reply parses back to its position -------------------------------


@pytest.mark.parametrize("parsing", PARSINGS)
@pytest.mark.parametrize("strict", [False, True])
def test_every_rendered_answer_parses_back(strict, parsing):
    items = expand(load_records(None, split="test"), runs_for("cyclic"))
    # The fixtures may grow; what matters is that every task and format is covered.
    assert {(item.record.task, item.run.format) for item in items} == {
        (task, fmt) for task in TASKS for fmt in ("label", "content", "label_content")
    }
    for item in items:
        for position in range(4):
            reply = render_answer(item.run.format, position, item.displayed)
            parsed = parse_reply(reply, item.run.format, item.displayed, strict=strict, parsing=parsing)
            assert (parsed.position, parsed.status, parsed.disagreement) == (position, OK, False), (item.id, reply)
            # ...also with the shown letter before the content, and after a reasoning block.
            if item.run.format != "label":
                lettered = reply.replace("<Answer>", f"<Answer>{LETTERS[position]}. ")
                reasoned = f"<think>options {', '.join(item.displayed)}; <Label>A</Label>?</think>\n{lettered}"
                for variant in (lettered, reasoned):
                    again = parse_reply(variant, item.run.format, item.displayed, strict=strict, parsing=parsing)
                    assert (again.position, again.status) == (position, OK), (item.id, variant)


@pytest.mark.parametrize(
    ("reply", "fmt", "displayed", "status", "position"),
    [
        # Thousands of corrections in one value: read whole (no recursion as deep; it was a RecursionError).
        ("<Label>" + " actually ".join(["A"] * 2000) + " actually B</Label>", "label", RELATION, AMBIGUOUS, None),
        ("<Answer>" + " actually ".join(["Substitute"] * 2000) + "</Answer>", "content", RELATION, OK, 0),
        ("<Answer>" + "Answer: " * 2000 + "Complement</Answer>", "content", RELATION, UNKNOWN_CONTENT, None),
        # A few: the last correction stands.
        ("<Label>A, actually B, wait, actually C</Label>", "label", RELATION, OK, 2),
        # A rejection is read right before each of thousands of mentions (once linear, it was quadratic).
        ("<Answer>" + " and ".join(["Running shoes"] * 5000) + "</Answer>", "content", SHOES, UNKNOWN_CONTENT, None),
        ("<Label>B, " + " or ".join(["A"] * 5000) + "</Label>", "label", RELATION, AMBIGUOUS, None),
        # A letter of no option corrected to, thousands of times or after thousands of cues: the answer withdrawn.
        ("<Label>A" + ", actually E" * 8333 + "</Label>", "label", RELATION, OUT_OF_RANGE, None),
        ("<Label>A, " + "actually, " * 10000 + "E</Label>", "label", RELATION, OUT_OF_RANGE, None),
        ("<Answer>Substitute" + ", actually E" * 8333 + "</Answer>", "content", RELATION, UNKNOWN_CONTENT, None),
        # Lead-in sentences repeated are read once (and their stems not taken); spaces; a label repeated after one.
        (
            "<Answer>" + "The relationship is " * 5000 + "Complement</Answer>",
            "content",
            RELATION,
            UNKNOWN_CONTENT,
            None,
        ),
        ("<Answer>" + "It is a " * 12500 + "Complement</Answer>", "content", RELATION, UNKNOWN_CONTENT, None),
        ("<Answer>It is" + " " * 100000 + "a Complement relationship</Answer>", "content", RELATION, OK, 1),
        ("<Answer>The relationship is " + "Complement " * 9000 + "</Answer>", "content", RELATION, OK, 1),
        # A run of spaces around a letter's place: it backtracked (after "Option": over 2 minutes at 4,000 spaces, cubic;
        # after a letter: 7.6 s at 30,000, quadratic).
        ("<Label>Option" + " " * 100000 + "x</Label>", "label", RELATION, OUT_OF_RANGE, None),
        ("<Label>B" + " " * 100000 + "(Complement)</Label>", "label", RELATION, OK, 1),
        # Cues joined by underscores (a word character, yet emphasis): each was exposed in turn as the value was
        # cleaned and recursed once per cue (a RecursionError at 500); now counted, read whole.
        ("<Label>" + "wait*_" * 16000 + "</Label>", "label", RELATION, OUT_OF_RANGE, None),
        ("<Answer>" + "wait*_" * 16000 + "</Answer>", "content", RELATION, UNKNOWN_CONTENT, None),
        # A letter before its option's text repeated (each repeat is looked up as an option's text).
        ("<Label>B" + " Complement" * 9000 + "</Label>", "label", RELATION, OK, 1),
        ("<Answer>Relationship:" + " Complement" * 9000 + "</Answer>", "content", RELATION, OK, 1),
    ],
    ids=[
        "corrections",
        "repeats",
        "answer-words",
        "three-corrections",
        "mentions",
        "letters",
        "withdrawn-repeats",
        "withdrawn-cue-run",
        "withdrawn-content",
        "relationship-lead-ins",
        "it-is-lead-ins",
        "lead-in-spaces",
        "lead-in-then-repeats",
        "spaces-after-answer-word",
        "spaces-after-letter",
        "underscored-cues",
        "underscored-cues-content",
        "spaced-letter-repeats",
        "relationship-colon-repeats",
    ],
)
def test_a_long_hostile_value_is_read_without_error(reply, fmt, displayed, status, position):
    parsed = parse_reply(reply, fmt, displayed)
    assert (parsed.status, parsed.position) == (status, position)
