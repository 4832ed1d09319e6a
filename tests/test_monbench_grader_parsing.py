"""MonBench replies as real instruct and reasoning models write them, each with the grade a careful
human grader gives (the ``grader`` reading, the default) and the grade of task version 2.0's
``strict`` reading.

A grade is the letter of the option the reply identifies (the displayed position), or the status
of an invalid reply: a reply naming two options or none is invalid and counted, never a guess.
Every case quoted in issue 16 is here (marked "issue 16"). Option texts are the bundled fixtures'.
"""

from __future__ import annotations

import pytest

# The options of the paper's examples, in canonical order (INTENT, RELATION, CO_PURCHASE, ADS) and two
# that differ only by spacing (LOOKALIKES): the same tables as the strict parser's tests.
from test_monbench_parsing import ADS, CO_PURCHASE, INTENT, KIDS_SHOES, LOOKALIKES, RELATION, SHOES  # noqa: E402

from ecom_tasks.data import ConfigurationError
from ecom_tasks.monbench.parsing import (
    AMBIGUOUS,
    CONFLICTING_TAGS,
    GRADER,
    NO_TAG,
    OK,
    OUT_OF_RANGE,
    STRICT,
    UNCLOSED_THINK,
    UNKNOWN_CONTENT,
    parse_reply,
)
from ecom_tasks.monbench.prompts import output_format_block
from ecom_tasks.monbench.scoring import score_reply

THINK = "<think>The first query is a facial product, the second a foundation. Could be A (Substitute) or B.</think>\n"

# (reply, format, options shown, the grader's grade, the strict reading's grade)
CASES = [
    # --- Label ------------------------------------------------------------------------------------
    ("<Label>B</Label>", "label", INTENT, "B", "B"),
    ("<Label>B. Complement</Label>", "label", INTENT, "B", OUT_OF_RANGE),  # issue 16
    ("<Label>Option B</Label>", "label", INTENT, "B", OUT_OF_RANGE),  # issue 16
    ("<Label>(B)</Label>", "label", INTENT, "B", "B"),  # issue 16 (2.0 took it already)
    ("<Label>B) Complement</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("<Label>The answer is B</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("<Label>Answer: (B)</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("<Label>Prediction: B</Label>", "label", INTENT, "B", OUT_OF_RANGE),  # the paper's replies open so
    # A choice in the first person, or "my answer".
    ("<Label>My answer is B</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("<Label>I choose B</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("<Label>I'd pick (C)</Label>", "label", INTENT, "C", OUT_OF_RANGE),
    ("<Label>I think B</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("<Label>我选B</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("<Label>I choose B or C</Label>", "label", INTENT, AMBIGUOUS, OUT_OF_RANGE),
    ("<Label>I think not A</Label>", "label", INTENT, OUT_OF_RANGE, OUT_OF_RANGE),
    ("<label>b</label>", "label", INTENT, "B", "B"),
    ("<Label>\uff22</Label>", "label", INTENT, "B", OUT_OF_RANGE),  # a full-width letter
    ("<Label>Complement</Label>", "label", INTENT, "B", OUT_OF_RANGE),  # the option's text in the label
    ("<Label>D. Exact Match</Label>", "label", RELATION, "D", OUT_OF_RANGE),
    # A letter and its option's text with no sign between: the letter, when the text is its own option's.
    ("<Label>B Complement</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("<Label>B Substitute</Label>", "label", INTENT, AMBIGUOUS, OUT_OF_RANGE),
    ("<Label>A Substitute</Label>", "label", INTENT, "A", OUT_OF_RANGE),
    ("<Answer>B Complement</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),
    # The relation named after a colon.
    ("<Answer>The relationship is: Complement</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),
    ("<Answer>Relationship: Complement</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),
    ("<Answer>Relationship: Complement, not Substitute</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),
    # The format line echoed before the answer is not an answer (issue 16).
    ("Output format: <Label>A/B/C/D</Label>\n\n<Label>B</Label>", "label", INTENT, "B", CONFLICTING_TAGS),
    (
        "** Output Format ** <Label>A/B/C/D</Label> **Valid Examples** <Label>A</Label>\n\nMy answer: <Label>C</Label>",
        "label",
        INTENT,
        "C",
        CONFLICTING_TAGS,
    ),
    ("<Label>A/B/C/D</Label>", "label", INTENT, NO_TAG, OUT_OF_RANGE),  # only the echo: no answer
    # Reasoning preambles: only what follows </think> counts.
    (THINK + "<Label>B</Label>", "label", INTENT, "B", "B"),
    ("Let me think.\n</think>\n\n<Label>Option C</Label>", "label", INTENT, "C", OUT_OF_RANGE),
    ("<think>The queries share a brand, so <Label>A", "label", INTENT, UNCLOSED_THINK, UNCLOSED_THINK),
    # Markdown.
    ("**Answer:** <Label>**B**</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("### Final answer\n`<Label>C</Label>`", "label", INTENT, "C", "C"),
    # LaTeX's answer box (reasoning models trained on maths).
    ("<Label>\\boxed{B}</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("<Label>$\\boxed{\\text{B}}$</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    # Chinese.
    ("两个查询是互补关系。\n<Label>B</Label>", "label", INTENT, "B", "B"),
    ("<Label>选项B</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("<Label>B项</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("答案：<Label>B（互补）</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("<Label>B，不是A</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    # JSON: a key is not the requested tag, yet its value is a clear answer; a tag inside JSON is read as one.
    ('{"Label": "B"}', "label", INTENT, "B", NO_TAG),
    ('```json\n{"answer": "<Label>B</Label>"}\n```', "label", INTENT, "B", "B"),
    # Contrast: the rejected option is not the answer.
    ("<Label>B</Label>, not A", "label", INTENT, "B", "B"),
    ("<Label>B, not A</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("<Label>B (rather than C)</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("<Label>B. A complementary product, not a substitute</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    # Hedges name two options: invalid, counted.
    ("<Label>A or B</Label>", "label", INTENT, AMBIGUOUS, OUT_OF_RANGE),
    ("<Label>B/C</Label>", "label", INTENT, AMBIGUOUS, OUT_OF_RANGE),
    ("<Label>B, or maybe A</Label>", "label", INTENT, AMBIGUOUS, OUT_OF_RANGE),
    ("<Label>A</Label> or <Label>B</Label>", "label", INTENT, CONFLICTING_TAGS, CONFLICTING_TAGS),
    # A tag ruled out by "not": the other stands.
    ("Not <Label>A</Label> but <Label>B</Label>", "label", INTENT, "B", CONFLICTING_TAGS),
    ("<Label>B</Label>, not <Label>A</Label>", "label", INTENT, "B", CONFLICTING_TAGS),
    ("The answer is not <Label>A</Label>.", "label", INTENT, NO_TAG, "A"),
    ("I'm not sure, but <Label>B</Label>", "label", INTENT, "B", "B"),
    # A correction between two tags: the later one stands (the strict reading sees two tags).
    ("<Label>A</Label>\nWait, that's wrong.\n<Label>B</Label>", "label", INTENT, "B", CONFLICTING_TAGS),
    (
        "<Label>A</Label> <Answer>Substitute</Answer>\nActually, on reflection: <Label>B</Label> <Answer>Complement</Answer>",
        "label_content",
        INTENT,
        "B",
        CONFLICTING_TAGS,
    ),
    (
        "<Label>A</Label> ... Actually, hmm. <Label>B</Label> or <Label>C</Label>",
        "label",
        INTENT,
        CONFLICTING_TAGS,
        CONFLICTING_TAGS,
    ),
    # A correction inside a tag's value: the corrected answer stands; a cue inside an explanation corrects nothing.
    ("<Label>A, actually B</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("<Label>A (wait, no: C)</Label>", "label", INTENT, "C", OUT_OF_RANGE),
    # ...its cue in markdown emphasis ("_wait_": the underscore is a word character, yet no part of the word).
    ("<Label>A, _wait_, B</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("<Answer>Substitute, _actually_ Complement</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),
    # ...to a letter of no option: the answer is withdrawn, and what stands names none (as <Label>E</Label>).
    ("<Label>A, actually E</Label>", "label", INTENT, OUT_OF_RANGE, OUT_OF_RANGE),
    ("<Label>A (wait, no: E)</Label>", "label", INTENT, OUT_OF_RANGE, OUT_OF_RANGE),
    ("<Label>A. Wait, actually F</Label>", "label", INTENT, OUT_OF_RANGE, OUT_OF_RANGE),
    ("<Answer>Substitute, actually E</Answer>", "content", INTENT, UNKNOWN_CONTENT, UNKNOWN_CONTENT),
    # ...or to a word of no option (a misspelling is another word): withdrawn too; a word that keeps it keeps it.
    ("<Answer>Substitute, actually Compliment</Answer>", "content", INTENT, UNKNOWN_CONTENT, UNKNOWN_CONTENT),
    ("<Label>A, wait, Compliment.</Label>", "label", INTENT, OUT_OF_RANGE, OUT_OF_RANGE),
    ("<Label>B, actually yes</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("<Label>B (actually the best fit)</Label> ", "label", INTENT, "B", OUT_OF_RANGE),
    # A cue opening the value corrects the reasoning before the tag.
    ("<Label>Actually B</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("<Label>Wait, B</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("<Answer>Actually Complement</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),
    ("<Label>Wait, A or B</Label>", "label", INTENT, AMBIGUOUS, OUT_OF_RANGE),
    ("<Label>Actually, the best fit</Label>", "label", INTENT, OUT_OF_RANGE, OUT_OF_RANGE),
    ("<Label>B (actually the best fit)</Label>", "label", INTENT, "B", OUT_OF_RANGE),
    ("<Label>A, actually B</Label> <Answer>Complement</Answer>", "label_content", INTENT, "B", OUT_OF_RANGE),
    ("<Answer>Substitute, actually Complement</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),
    ("<Answer>red shoes — correction: blue shoes</Answer>", "content", SHOES, "D", UNKNOWN_CONTENT),
    (
        "<Answer>Travel Insurance Quotes – correction: Headphone Repair Near You</Answer>",
        "content",
        ADS,
        "D",
        UNKNOWN_CONTENT,
    ),
    (
        "<Answer>Bassetts Liquorice Allsorts — correction: Potato chips</Answer>",
        "content",
        CO_PURCHASE,
        UNKNOWN_CONTENT,
        UNKNOWN_CONTENT,
    ),
    # The letter and its text disagree.
    ("<Label>B. Substitute</Label>", "label", INTENT, AMBIGUOUS, OUT_OF_RANGE),
    # Refusals and answers outside the tag.
    ("I'm sorry, but I can't determine the relationship between these queries.", "label", INTENT, NO_TAG, NO_TAG),
    ("<Label>N/A</Label>", "label", INTENT, OUT_OF_RANGE, OUT_OF_RANGE),
    ("<Label>None of the above</Label>", "label", INTENT, OUT_OF_RANGE, OUT_OF_RANGE),
    ("<Label>E</Label>", "label", INTENT, OUT_OF_RANGE, OUT_OF_RANGE),
    ("Answer: B", "label", INTENT, "B", NO_TAG),  # a clear answer without the tag
    # --- Content, relation tasks (closed labels) -----------------------------------------------------
    ("<Answer>Complement</Answer>", "content", INTENT, "B", "B"),
    ("<Answer>Complementary</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),  # issue 16
    ("<Answer>Narrowed</Answer>", "content", INTENT, "C", UNKNOWN_CONTENT),
    ("<Answer>Substitutes</Answer>", "content", INTENT, "A", UNKNOWN_CONTENT),
    ("<Answer>Exact match</Answer>", "content", RELATION, "D", "D"),
    ("<Answer>\\boxed{Complement}</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),
    ("<Answer>Exact Matches</Answer>", "content", RELATION, "D", UNKNOWN_CONTENT),
    ("<Answer>B. Complementary</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),
    ("<Answer>Complement, because both are ILIA products</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),
    ("<Answer>Complement, not Substitute</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),
    ("<Answer>Complement or Substitute</Answer>", "content", INTENT, AMBIGUOUS, UNKNOWN_CONTENT),
    # An answer word before the text.
    ("<Answer>Answer: Complement</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),
    ("<Answer>The answer is Complement</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),
    ("<Answer>My answer is Complement</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),
    ("<Answer>I'd go with Complement</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),
    ("<Answer>I think Complement, not Substitute</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),
    ("<Answer>Answer: Compliment</Answer>", "content", INTENT, UNKNOWN_CONTENT, UNKNOWN_CONTENT),
    # A short sentence stating the relation, and an article after the words (no letter A).
    ("<Answer>The relationship is Complement</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),
    ("<Answer>It is a Complement relationship.</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),
    ("<Answer>It's a substitute</Answer>", "content", INTENT, "A", UNKNOWN_CONTENT),
    ("<Answer>It is an Exact Match</Answer>", "content", RELATION, "D", UNKNOWN_CONTENT),
    ("<Answer>The answer is a Complement</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),
    ("<Answer>It is Bassetts Liquorice Allsorts (190g)</Answer>", "content", CO_PURCHASE, "B", UNKNOWN_CONTENT),
    ("<Answer>The relationship is not Complement</Answer>", "content", INTENT, UNKNOWN_CONTENT, UNKNOWN_CONTENT),
    ("<Answer>It is not a Complement relationship</Answer>", "content", INTENT, UNKNOWN_CONTENT, UNKNOWN_CONTENT),
    ("<Answer>The relationship is Complement or Substitute</Answer>", "content", INTENT, AMBIGUOUS, UNKNOWN_CONTENT),
    ("<Answer>Answer: A Complement</Answer>", "content", INTENT, AMBIGUOUS, UNKNOWN_CONTENT),  # capital A: a letter
    ("<Answer>Compliment</Answer>", "content", INTENT, UNKNOWN_CONTENT, UNKNOWN_CONTENT),  # another word
    ("<Answer>互补</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),  # the option in another language
    ("<Answer>B</Answer>", "content", INTENT, "B", UNKNOWN_CONTENT),  # a letter where the text was asked
    ("<Answer>None of these</Answer>", "content", INTENT, UNKNOWN_CONTENT, UNKNOWN_CONTENT),
    (
        "Format: <Answer>Narrowing/Complement/Irrelevant/Substitute</Answer>\nAnswer: <Answer>Narrowing</Answer>",
        "content",
        INTENT,
        "C",
        CONFLICTING_TAGS,
    ),
    (THINK + "<Answer>Complement</Answer>", "content", INTENT, "B", "B"),
    # --- Content, open-answer tasks (ad relevance, co-purchase) ---------------------------------------
    ("<Answer>Bassetts Liquorice Allsorts</Answer>", "content", CO_PURCHASE, "B", UNKNOWN_CONTENT),  # issue 16: prefix
    ("<Answer>SweetLeaf Sweetener</Answer>", "content", CO_PURCHASE, "D", UNKNOWN_CONTENT),
    ("<Answer>Kirkland Signature Ito En Matcha Blend...</Answer>", "content", CO_PURCHASE, "A", UNKNOWN_CONTENT),
    ("<Answer>Liquorice Allsorts</Answer>", "content", CO_PURCHASE, "B", UNKNOWN_CONTENT),  # issue 16: abbreviation
    ("<Answer>Kirkland Matcha Green Tea</Answer>", "content", CO_PURCHASE, "A", UNKNOWN_CONTENT),
    ("<Answer>Sony WH-1000XM5 Headphones</Answer>", "content", ADS, "A", UNKNOWN_CONTENT),
    (
        "<Answer>Sony WH-1000XM5 Noise Cancelling Headphones – Save $70 Today</Answer>",
        "content",
        ADS,
        "A",
        UNKNOWN_CONTENT,
    ),
    ("<Answer>Travel insurance</Answer>", "content", ADS, "B", UNKNOWN_CONTENT),
    (
        "<Answer>Answer: Travel Insurance Quotes – Cover Your Next Trip From $19.</Answer>",
        "content",
        ADS,
        "B",
        UNKNOWN_CONTENT,
    ),
    ("<Answer>B) Travel Insurance Quotes</Answer>", "content", ADS, "B", UNKNOWN_CONTENT),
    ("<Answer>**Headphone Repair Near You – Same-Day Service.**</Answer>", "content", ADS, "D", UNKNOWN_CONTENT),
    # The first word of C, and a word of A: names two options.
    ("<Answer>Noise</Answer>", "content", ADS, AMBIGUOUS, UNKNOWN_CONTENT),
    ("<Answer>Gold Fish Crackers</Answer>", "content", LOOKALIKES, AMBIGUOUS, UNKNOWN_CONTENT),
    ("<Answer>Headphones</Answer>", "content", ADS, UNKNOWN_CONTENT, UNKNOWN_CONTENT),  # one word, not a prefix
    ("<Answer>A. Bassetts Liquorice Allsorts (190g)</Answer>", "content", CO_PURCHASE, AMBIGUOUS, UNKNOWN_CONTENT),
    ("<Answer>Bassetts or SweetLeaf</Answer>", "content", CO_PURCHASE, UNKNOWN_CONTENT, UNKNOWN_CONTENT),
    ("<Answer>full text of the chosen option</Answer>", "content", ADS, NO_TAG, UNKNOWN_CONTENT),  # only the echo
    # An option's full text followed by an explanation: the option, unless the explanation names another
    # option without rejecting it or offers another answer; the longest option first.
    (
        "<Answer>Running shoes, because the query asks for sport footwear</Answer>",
        "content",
        SHOES,
        "A",
        UNKNOWN_CONTENT,
    ),
    ("<Answer>Running shoes. The query is about sport.</Answer>", "content", SHOES, "A", UNKNOWN_CONTENT),
    ("<Answer>Running shoes, not hiking boots</Answer>", "content", SHOES, "A", UNKNOWN_CONTENT),
    ("<Answer>Running shoes or hiking boots</Answer>", "content", SHOES, AMBIGUOUS, UNKNOWN_CONTENT),
    (
        "<Answer>Running shoes for kids, because the query is for a child</Answer>",
        "content",
        KIDS_SHOES,
        "A",
        UNKNOWN_CONTENT,
    ),
    (
        "<Answer>Running shoes, because the query asks for sport footwear</Answer>",
        "content",
        KIDS_SHOES,
        "B",
        UNKNOWN_CONTENT,
    ),
    (
        "<Answer>Bassetts Liquorice Allsorts (190g), because liquorice goes with halvah</Answer>",
        "content",
        CO_PURCHASE,
        "B",
        UNKNOWN_CONTENT,
    ),
    (
        "<Answer>Bassetts Liquorice Allsorts (190g) or SweetLeaf</Answer>",
        "content",
        CO_PURCHASE,
        AMBIGUOUS,
        UNKNOWN_CONTENT,
    ),
    (
        "<Answer>Bassetts Liquorice Allsorts (190g), rather than SweetLeaf Sweetener (70-Count Packets, Pack of 3)</Answer>",
        "content",
        CO_PURCHASE,
        "B",
        UNKNOWN_CONTENT,
    ),
    (
        "<Answer>Sony WH-1000XM5 Noise Cancelling Headphones – Save $70 Today. Free 2-Day Shipping. "
        "The query asks for noise cancelling headphones.</Answer>",
        "content",
        ADS,
        "A",
        UNKNOWN_CONTENT,
    ),
    (
        "<Answer>Goldfish Crackers, 6.6 oz, because kids like them</Answer>",
        "content",
        LOOKALIKES,
        AMBIGUOUS,
        UNKNOWN_CONTENT,
    ),
    # --- Label+Content: graded by the label -----------------------------------------------------------
    ("<Label>B</Label> <Answer>Complement</Answer>", "label_content", INTENT, "B", "B"),
    ("<Label>B. Complement</Label> <Answer>Complement</Answer>", "label_content", INTENT, "B", OUT_OF_RANGE),
    ("<Label>Option B</Label> <Answer>Complementary</Answer>", "label_content", INTENT, "B", OUT_OF_RANGE),
    (
        "<Label>A/B/C/D</Label> <Answer>Narrowing/Complement/Irrelevant/Substitute</Answer>\n"
        "<Label>B</Label> <Answer>Complement</Answer>",
        "label_content",
        INTENT,
        "B",
        CONFLICTING_TAGS,
    ),
    ("<Label>A/B/C/D</Label> <Answer>Complement</Answer>", "label_content", INTENT, NO_TAG, OUT_OF_RANGE),
    ("<Label>A or B</Label> <Answer>Complement</Answer>", "label_content", INTENT, AMBIGUOUS, OUT_OF_RANGE),
    ("<Label>(D)</Label> <Answer>Headphone Repair</Answer>", "label_content", ADS, "D", "D"),
    ("我选 <Label>B</Label> <Answer>Bassetts Liquorice Allsorts</Answer>", "label_content", CO_PURCHASE, "B", "B"),
    ("<think>A? no.</think><Label>B</Label><Answer>Complement</Answer>", "label_content", INTENT, "B", "B"),
    ("Sorry, I cannot answer that.", "label_content", INTENT, NO_TAG, NO_TAG),
    # --- copies of the prompt, garbled, whole or cut off, are no answers (issue 26) -----------------------
    (
        "**OUTPUT FORMAT**\n<LABEL>A/B/C/D</LABEL>\n** VALID EXAMPLES**\n<LABEL>A</LABEL>",
        "label",
        INTENT,
        NO_TAG,
        CONFLICTING_TAGS,
    ),
    ("** Valid Examples**\n<Label>A</Label>", "label", INTENT, NO_TAG, "A"),  # issue 26: the example at A
    # The format block copied in the model's own words: its example is still the prompt's.
    ("Output: <Label>A/B/C/D</Label>\nExample: <Label>A</Label>", "label", INTENT, NO_TAG, CONFLICTING_TAGS),
    ("** Valid Examples**\n<Label>A</Label> <Answer>Narrowing</Answer>", "label_content", INTENT, NO_TAG, "A"),
    (  # issue 26: the placeholder list beside a label is the format line copied
        "<Label>B</Label> <Answer>Narrowing/Complement/Irrelevant/Substitute</Answer>",
        "label_content",
        INTENT,
        NO_TAG,
        "B",
    ),
    (
        "** output format **\n<label>a/b/c/d</label> <answer>narrowing/complement/irrelevant/substitute</answer>\n"
        "**valid examples**\n<label>a</label> <answer>narrowing</answer>",
        "label_content",
        INTENT,
        NO_TAG,
        CONFLICTING_TAGS,
    ),
    (
        "** Output Format **\n<Answer>full text of the chosen option</Answer>\n\nOptions:\nA. Sony WH-1000XM5",
        "content",
        ADS,
        NO_TAG,
        UNKNOWN_CONTENT,
    ),
    (
        "YOU ARE A HELPFUL ONLINE SHOPPING ASSISTANT. PLEASE ANSWER THE FOLLOWING QUESTION ABOUT ONLINE SHOPPING. "
        "Select the product that the user may also buy.\n\n** Output Format **\n<Label>A/B/C/D</Label> "
        "<Answer>full text of the chosen option</Answer>\n**Valid Exa",
        "label_content",
        CO_PURCHASE,
        NO_TAG,
        OUT_OF_RANGE,
    ),
    # The question restated, then the model's own answer; the preamble copied, then an answer.
    (
        "Query 1: foundation\nQuery 2: ilia skin tint\nOptions:\nA. Substitute\nB. Complement\nC. Narrowing\n"
        "D. Irrelevant\n<Label>B</Label>",
        "label",
        INTENT,
        "B",
        "B",
    ),
    (
        "You are a helpful online shopping assistant. Please answer the following question about online shopping.\n"
        "<Label>D</Label>",
        "label",
        INTENT,
        "D",
        "D",
    ),
    (
        "The relationship between the product and the query is a substitute.\n<Label>A</Label> <Answer>Substitute</Answer>",
        "label_content",
        RELATION,
        "A",
        "A",
    ),
    # --- rambling, and replies cut off mid-sentence or mid-tag ---------------------------------------------
    ("<Label>B", "label", INTENT, "B", NO_TAG),  # never closed: read as "B" (a reply known to be cut off is not)
    ("<Answer>Compl", "content", INTENT, NO_TAG, NO_TAG),
    (
        "Let me think about this. The first query is a foundation and the second a skin tint from another brand, so "
        "a user searching one may well want the other instead.\n\n<Answer>Substitute</Answer>\n\nI hope this helps! "
        "Let me know if",
        "content",
        INTENT,
        "A",
        "A",
    ),
    (
        "<Label>C</Label>\nExplanation: option C is correct because the second query narrows the fi",
        "label",
        INTENT,
        "C",
        "C",
    ),
]


def grade(parsed) -> str:
    return "ABCD"[parsed.position] if parsed.status == OK else parsed.status


def test_the_table_is_large_and_covers_every_format():
    assert len(CASES) >= 30
    for fmt in ("label", "content", "label_content"):
        assert sum(case[1] == fmt for case in CASES) >= 10, fmt


@pytest.mark.parametrize(("reply", "fmt", "displayed", "grader", "strict"), CASES)
def test_a_reply_gets_the_grade_a_careful_grader_gives(reply, fmt, displayed, grader, strict):
    parsed = parse_reply(reply, fmt, displayed)
    assert grade(parsed) == grader, parsed.detail
    assert parsed.invalid == (grader not in "ABCD")
    assert parse_reply(reply, fmt, displayed, parsing=GRADER) == parsed  # the default
    assert grade(parse_reply(reply, fmt, displayed, parsing=STRICT)) == strict


@pytest.mark.parametrize(("reply", "fmt", "displayed", "grader", "strict"), CASES)
def test_a_decided_reply_says_which_rule_decided(reply, fmt, displayed, grader, strict):
    parsed = parse_reply(reply, fmt, displayed)
    assert bool(parsed.rule) == (parsed.status == OK)


@pytest.mark.parametrize(
    ("reply", "displayed", "rule"),
    [
        ("<Answer>Complement</Answer>", INTENT, "text"),
        ("<Answer>Complementary</Answer>", INTENT, "morphology"),
        ("<Answer>Bassetts Liquorice Allsorts</Answer>", CO_PURCHASE, "prefix"),
        ("<Answer>Liquorice Allsorts</Answer>", CO_PURCHASE, "abbreviation"),
        ("<Answer>Complement, because both are ILIA products</Answer>", INTENT, "label_explained"),
        ("<Answer>B. Complementary</Answer>", INTENT, "letter_text"),
        ("<Answer>Substitute, actually Complement</Answer>", INTENT, "corrected"),
        ("<Answer>Running shoes, because the query asks for sport footwear</Answer>", SHOES, "text_explained"),
    ],
)
def test_the_rule_names_the_reading(reply, displayed, rule):
    assert parse_reply(reply, "content", displayed).rule == rule


def test_prefix_and_abbreviation_are_for_open_answer_options_only():
    # A relation label is a closed vocabulary: a fragment of one is not an answer.
    assert parse_reply("<Answer>Exact</Answer>", "content", RELATION).status == UNKNOWN_CONTENT
    assert parse_reply("<Answer>Sub</Answer>", "content", INTENT).status == UNKNOWN_CONTENT
    # The same fragments name an open-answer option.
    assert grade(parse_reply("<Answer>Sony</Answer>", "content", ADS)) == "A"


def test_every_format_line_echo_is_recognised():
    # What the prompt really shows, for every task and format, echoed before a real answer.
    from ecom_tasks.monbench.prompts import render_answer
    from ecom_tasks.monbench.schema import RELATION_LABELS, TASKS

    for task in TASKS:
        shown = RELATION_LABELS.get(task, CO_PURCHASE)
        for fmt in ("label", "content", "label_content"):
            echo = output_format_block(task, fmt)
            reply = f"{echo}\n\nMy answer:\n{render_answer(fmt, 2, shown)}"
            assert grade(parse_reply(reply, fmt, shown)) == "C", (task, fmt, reply)


def test_label_content_strict_agreement_uses_the_grader_reading():
    # strict=True (both tags must agree) reads each tag as the grader does.
    reply = "<Label>B. Complement</Label> <Answer>Complementary</Answer>"
    assert grade(parse_reply(reply, "label_content", INTENT, strict=True)) == "B"
    reply = "<Label>Option B</Label> <Answer>Substitutes</Answer>"
    parsed = parse_reply(reply, "label_content", INTENT, strict=True)
    assert (parsed.status, parsed.disagreement) == ("mismatch", True)


def test_score_reply_carries_both_readings():
    fields = {
        "record_id": "mb-paper-t6",
        "task": "query_query_intent",
        "question_index": 0,
        "ordering": 0,
        "format": "label",
        "displayed": list(INTENT),
        "target_position": 1,
        "category": "",
    }
    _, outcome = score_reply(fields, "<Label>B. Complement</Label>")
    assert (outcome["correct"], outcome["invalid"]) == (1, 0)
    assert (outcome["correct_strict"], outcome["invalid_strict"]) == (0, 1)  # strict: a bare letter only
    _, outcome = score_reply(fields, "<Label>B</Label>")
    assert (outcome["correct"], outcome["invalid"], outcome["correct_strict"], outcome["invalid_strict"]) == (
        1,
        0,
        1,
        0,
    )
    _, outcome = score_reply(fields, "<Label>A</Label>")
    assert (outcome["correct"], outcome["invalid"], outcome["correct_strict"], outcome["invalid_strict"]) == (
        0,
        0,
        0,
        0,
    )


def test_an_unknown_reading_is_a_configuration_error():
    with pytest.raises(ConfigurationError, match="parsing must be one of grader, strict"):
        parse_reply("<Label>B</Label>", "label", INTENT, parsing="lenient")
