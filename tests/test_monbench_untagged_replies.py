"""MonBench's careful reading where the format was not followed (issue 27): a clear answer without the requested
tag, in the other tag, a letter where the option's text was asked, an option in Chinese. Each row is the grade a
careful human gives the reply, read with the prompt the scorer sends (its copies are no answer); the strict reading
beside it refuses all of them, so the gap between the two figures shows what such readings add."""

from __future__ import annotations

import pytest
from test_monbench_parsing import CO_PURCHASE, INTENT

from ecom_tasks.monbench.parsing import parse_reply, parse_strict
from ecom_tasks.monbench.prompts import build_system_prompt, build_user_prompt
from ecom_tasks.monbench.schema import LETTERS

QUESTION = "Query 1: foundation\nQuery 2: ilia skin tint"
OPTIONS = "\n".join(f"{letter}. {text}" for letter, text in zip(LETTERS, INTENT))  # as the prompt lists them

# (reply, format, options shown, the careful grade: a letter, or the invalid status). INTENT: A Substitute,
# B Complement, C Narrowing, D Irrelevant.
ROWS = [
    # A clear answer without any tag.
    ("B", "label", INTENT, "B"),
    ("(B)", "label", INTENT, "B"),
    ("Answer: B", "label", INTENT, "B"),
    ("**Final answer:** B", "label", INTENT, "B"),
    ("The answer is B.", "label", INTENT, "B"),
    ("So the correct answer is B, because a skin tint goes with a foundation.", "label", INTENT, "B"),
    ("Prediction: B Explanation: a skin tint is worn with a foundation.", "label", INTENT, "B"),  # the paper's form
    ("I think it is B.", "label", INTENT, "B"),
    ("I'd go with Complement.", "label", INTENT, "B"),
    ('{"label": "B"}', "label", INTENT, "B"),
    ("答案：B", "label", INTENT, "B"),
    ("Complement", "label", INTENT, "B"),
    ("The two are worn together.\n\nB", "label", INTENT, "B"),  # reasoning, then the letter alone
    ("A skin tint is lighter than a foundation.\n\nAnswer: Complementary", "content", INTENT, "B"),
    ("The relationship is Complement.", "content", INTENT, "B"),
    ("Answer: B (Complement)", "label_content", INTENT, "B"),
    # ... after the model weighed every option.
    ("A. Substitute: no.\nB. Complement: yes, worn together.\nC. Narrowing: no.\n\nAnswer: B", "label", INTENT, "B"),
    # ... corrected: the correction stands; two different answers or a hedge are no answer.
    ("Answer: A. Wait, actually the answer is B.", "label", INTENT, "B"),
    ("Answer: A\nAnswer: B", "label", INTENT, "ambiguous"),
    ("Answer: B or C", "label", INTENT, "ambiguous"),
    ("The answer is not A.", "label", INTENT, "no_tag"),
    ("I can't tell which option fits.", "label", INTENT, "no_tag"),
    ("A skin tint and a foundation are both face products.", "label", INTENT, "no_tag"),  # "A" is the article
    # The other tag than the one asked for.
    ("<Answer>Complement</Answer>", "label", INTENT, "B"),
    ("<Label>B</Label>", "content", INTENT, "B"),
    ("<Answer>Complement</Answer>", "label_content", INTENT, "B"),
    # A letter where the option's text was asked.
    ("<Answer>B</Answer>", "content", INTENT, "B"),
    ("<Answer>Option B</Answer>", "content", INTENT, "B"),
    ("<Answer>B</Answer>", "content", CO_PURCHASE, "B"),
    ("<Answer>E</Answer>", "content", INTENT, "unknown_content"),
    # The option in Chinese.
    ("<Answer>互补</Answer>", "content", INTENT, "B"),
    ("<Answer>替代品。</Answer>", "content", INTENT, "A"),
    ("<Answer>不相关</Answer>", "content", INTENT, "D"),
    ("<Label>互补</Label>", "label", INTENT, "B"),
    ("互补", "label", INTENT, "B"),
    # ... and an answer stated in Chinese: chosen ("我选择B", "应该选B", "选B，因为 ..."), or thought ("我认为是B");
    # not one ruled out ("这不应该是B", "我不认为是B") nor an analysis of each option.
    ("我选择B。", "label", INTENT, "B"),
    ("应该选B", "label", INTENT, "B"),
    ("答案应该是B", "label", INTENT, "B"),
    ("选B，因为两者搭配使用。", "label", INTENT, "B"),
    ("我认为是B，因为两者搭配使用。", "label", INTENT, "B"),
    ("我选择互补", "label", INTENT, "B"),
    ("<Label>选B</Label>", "label", INTENT, "B"),
    ("<Label>应该选B</Label>", "label", INTENT, "B"),
    # ... a letter against Chinese text or punctuation ("B。因为 ...", "B比较合适", "C而不是B"); another letter offered
    # beside it ("B或C", "B，或者A") is a hedge; a capital inside a Chinese word is none ("A字裙", an A-line skirt).
    ("<Label>B。因为两者搭配使用</Label>", "label", INTENT, "B"),
    ("<Label>B比较合适</Label>", "label", INTENT, "B"),
    ("<Label>C而不是B</Label>", "label", INTENT, "C"),
    ("应该是C而不是B", "label", INTENT, "C"),
    ("我觉得选B比较合适", "label", INTENT, "B"),
    ("<Label>B或C</Label>", "label", INTENT, "ambiguous"),
    ("<Label>B，或者A</Label>", "label", INTENT, "ambiguous"),
    ("<Label>B，不是A</Label>", "label", INTENT, "B"),
    ("<Label>B。这是A字裙的搭配</Label>", "label", INTENT, "B"),
    ("这不应该是B。", "label", INTENT, "no_tag"),
    ("我不认为是B。", "label", INTENT, "no_tag"),
    ("我认为是因为颜色不同。", "label", INTENT, "no_tag"),
    ("选项A：替代品，不对。\n选项B：互补，正确。\n选项C：细化，不对。", "label", INTENT, "no_tag"),
    ("<Answer>互补或替代</Answer>", "content", INTENT, "unknown_content"),  # no one label
    # A tag never closed: the reply stopped before its closing tag (a stop sequence, a small model); the reply reads as
    # it would without the broken tag.
    ("<Label>B", "label", INTENT, "B"),
    ("The two go together.\n<Label>B", "label", INTENT, "B"),
    ("<Label>B</Lab", "label", INTENT, "B"),
    ("<Label>A. Substitute", "label", INTENT, "no_tag"),  # read as without the tag: a copied option line
    ("<Answer>Compl", "content", INTENT, "no_tag"),  # read as without the tag: a cut copy of an option
    ("<Label>B\nExplanation: a skin tint is worn with a foundation.", "label", INTENT, "B"),
    ("<Answer>Complement\nBecause they go together.", "content", INTENT, "B"),
    ("<Answer>Complement</", "label_content", INTENT, "B"),
    ("<Label>B or C", "label", INTENT, "ambiguous"),
    ("I will answer in a <Label> tag.", "label", INTENT, "no_tag"),
    # A concession: an answer offered tentatively and turned from gives way to the one turned to (issue 27, item 4);
    # a hedge after the turn stays one, and an answer given before a tentative aside stands.
    ("It could be A at first sight, but on balance: B", "label", INTENT, "B"),
    ("<Label>It could be A at first sight, but on balance B</Label>", "label", INTENT, "B"),
    ("<Label>A might look right, but B</Label>", "label", INTENT, "B"),
    ("<Label>It might look like A at first, but it is B. Both are worn on the face.</Label>", "label", INTENT, "B"),
    ("<Answer>Substitute might seem right, but it is really a Complement</Answer>", "content", INTENT, "B"),
    ("<Answer>Narrowing may seem to fit, however Complement is the relation.</Answer>", "content", INTENT, "B"),
    ("<Label>C is possible, but B</Label>", "label", INTENT, "B"),
    ("<Label>It could be B, but A is also possible</Label>", "label", INTENT, "ambiguous"),
    ("<Label>It may be B, but perhaps C</Label>", "label", INTENT, "ambiguous"),
    ("<Label>B, because it could be worn with a foundation, but not as a Substitute</Label>", "label", INTENT, "B"),
    ("<Label>It could be A, but it is not</Label>", "label", INTENT, "out_of_range"),
    # Copies of the prompt are no answer: the option list whole or cut off, an option line as the whole reply,
    # the question; an answer the model adds after a copy is.
    (OPTIONS, "label", INTENT, "no_tag"),
    ("Options:\nA. Substitute\nB.", "label", INTENT, "no_tag"),
    ("Options:\nA.", "label", INTENT, "no_tag"),
    ("B. Complement", "label", INTENT, "no_tag"),
    (f"{QUESTION}\nOptions:\n{OPTIONS}", "label", INTENT, "no_tag"),
    (f"{QUESTION}\nOptions:\n{OPTIONS}\n\nAnswer: B", "label", INTENT, "B"),
    # Text imitating the prompt's sections is no answer either.
    ("** Output Format **\n<Label>A/B/C/D</Label>\n**Valid Examples**\n<Label>A</Label>", "label", INTENT, "no_tag"),
    ("** Output Format **\n<Answer>Narrowing/Complement/Irrelevant/Substitute</Answer>", "content", INTENT, "no_tag"),
    ("Here are some examples to help you answer the question:", "label", INTENT, "no_tag"),
]


def _prompt(fmt: str, shown: tuple[str, ...]) -> tuple[str, str]:
    return build_system_prompt("query_query_intent", fmt, []), build_user_prompt(QUESTION, shown)


def _grade(parsed) -> str:
    return LETTERS[parsed.position] if parsed.position is not None else parsed.status


@pytest.mark.parametrize(("reply", "fmt", "shown", "careful"), ROWS)
def test_the_careful_reading_reads_what_a_careful_human_reads(reply, fmt, shown, careful):
    parsed = parse_reply(reply, fmt, shown, prompt=_prompt(fmt, shown))
    assert _grade(parsed) == careful, parsed.detail
    assert parsed.invalid == (careful not in LETTERS)


@pytest.mark.parametrize(("reply", "fmt", "shown", "careful"), [row for row in ROWS if row[3] in LETTERS])
def test_the_strict_reading_refuses_what_the_format_did_not_ask_for(reply, fmt, shown, careful):
    assert parse_strict(reply, fmt, shown).invalid


def test_the_last_line_of_a_reply_cut_off_is_not_read():
    """'Answer: C' cut off may have been 'Answer: Complement' (B); the lines before it are read."""
    prompt = _prompt("label", INTENT)
    assert parse_reply("Reasoning.\nAnswer: C", "label", INTENT, prompt=prompt, truncated=True).status == "no_tag"
    assert _grade(parse_reply("Answer: B\nMore reason", "label", INTENT, prompt=prompt, truncated=True)) == "B"
    assert _grade(parse_reply("Reasoning.\nAnswer: C", "label", INTENT, prompt=prompt, truncated=False)) == "C"
    assert parse_reply("Reasoning.\n<Answer>Substitute", "content", INTENT, truncated=True).status == "no_tag"


def test_label_and_content_strict_asks_for_both_tags():
    assert parse_reply("Answer: B", "label_content", INTENT, strict=True).status == "no_tag"
    assert parse_reply("<Answer>Complement</Answer>", "label_content", INTENT, strict=True).status == "no_tag"


@pytest.mark.parametrize(
    ("reply", "careful"),
    [
        # Long hostile replies: read, never hung (each about a second at most on one core).
        ("B\n" * 50_000, "B"),  # one answer repeated
        ("A\nB\n" * 25_000, "ambiguous"),
        ("Answer: B\n" * 20_000, "B"),
        ("Options:\n" * 30_000, "no_tag"),
        ("答案：" * 30_000 + "B", "no_tag"),
        ("x " * 50_000, "no_tag"),
        (("Some reasoning here. " * 10 + "\n") * 500 + "Answer: B", "B"),
    ],
)
def test_long_untagged_replies_are_read(reply, careful):
    assert _grade(parse_reply(reply, "label", INTENT, prompt=_prompt("label", INTENT))) == careful
