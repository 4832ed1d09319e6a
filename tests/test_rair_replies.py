"""RAIR reply parsing: the level a reply asserts, read as a careful human grader would.

Each row is a reply as real instruct and reasoning models write them, with the
grade a careful human gives it: the level (and the L2 mismatch dimension when
the reply names one), or why it is no answer. ``rule`` is what decided.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecom_tasks.plugins import select_metrics
from ecom_tasks.rair.parsing import (
    AMBIGUOUS,
    EMPTY,
    INVALID_STATUSES,
    NO_LABEL,
    OK,
    OTHER_DIMENSION,
    OUT_OF_RANGE,
    RULE_CONFLICT,
    RULE_FORM,
    RULE_HEDGE,
    RULE_LONE_LINE,
    RULE_MARKER,
    RULE_START,
    RULE_STATED,
    UNCLOSED_THINK,
    canonical_dimension,
    parse_reply,
)
from ecom_tasks.rair.prompts import build_system_prompt, render_answer
from ecom_tasks.rair.schema import DIMENSIONS, LEVELS
from ecom_tasks.rair.scoring import score_reply, summarize

#: Replies quoted in issue 16, with the grade the issue gives them.
ISSUE_CASES = {
    "L3 rather than L4": ("L3", None, OK),
    "I'd rate this L3. It can't be L4 because …": ("L3", None, OK),
    "L2. Not L1, since the category is related.": ("L2", None, OK),
    "L3\nIt would be L4 only if it were burgundy.": ("L3", None, OK),
    "L1 or L3": (None, None, AMBIGUOUS),
    "Level 4": ("L4", None, OK),
    "Perfectly Relevant": ("L4", None, OK),
    "【L2-尺码不匹配】": ("L2", "Specification", OK),
    "L2 - Brand Mismatch": ("L2", "Brand", OK),
}

# (reply, level, dimension, status, rule)
REPLIES = [
    # --- a filled-in attribute form (Gemma 3 270M's replies): "Size: L2" is a size, not a level ---------
    pytest.param("- Category: dress\n- Size: L2\n- Color: red", None, None, NO_LABEL, "", id="form-size-value"),
    pytest.param("- Size: L2\n- Color: red\n\nFinal answer: L3", "L3", None, OK, RULE_MARKER, id="form-then-answer"),
    pytest.param("Category: L4\nBrand: L2", None, None, NO_LABEL, "", id="form-per-attribute-levels"),
    pytest.param("Relevance: L4", "L4", None, OK, RULE_MARKER, id="form-relevance-field-is-the-answer"),
    # --- the issue's cases -----------------------------------------------------------------
    pytest.param("L3 rather than L4", "L3", None, OK, RULE_START, id="issue-rather-than"),
    pytest.param("I'd rate this L3. It can't be L4 because …", "L3", None, OK, RULE_START, id="issue-cant-be"),
    pytest.param("L2. Not L1, since the category is related.", "L2", None, OK, RULE_START, id="issue-not"),
    pytest.param("L3\nIt would be L4 only if it were burgundy.", "L3", None, OK, RULE_LONE_LINE, id="issue-only-if"),
    pytest.param("L1 or L3", None, None, AMBIGUOUS, RULE_HEDGE, id="issue-hedge"),
    pytest.param("Level 4", "L4", None, OK, RULE_LONE_LINE, id="issue-level-in-words"),
    pytest.param("Perfectly Relevant", "L4", None, OK, RULE_LONE_LINE, id="issue-level-name"),
    pytest.param("【L2-尺码不匹配】", "L2", "Specification", OK, RULE_FORM, id="issue-chinese-dimension"),
    pytest.param("L2 - Brand Mismatch", "L2", "Brand", OK, RULE_FORM, id="issue-unbracketed-form"),
    # --- the prompt's own output form, with reasoning ------------------------------------------
    pytest.param("<think>Brand and colour match.</think>\nL4", "L4", None, OK, RULE_LONE_LINE, id="think-then-level"),
    pytest.param(
        "<think>\nThe query asks for Nike running shorts from the official store; the item is Nike shorts from an "
        "outlet. L4 is out, L3 maybe?\n</think>\n\n[L2-Store Mismatch]",
        "L2",
        "Store",
        OK,
        RULE_FORM,
        id="think-then-mismatch-form",
    ),
    pytest.param(
        "reasoning, the opening tag was in the chat template</think>\n**L3**",
        "L3",
        None,
        OK,
        RULE_LONE_LINE,
        id="think-open-tag-dropped",
    ),
    pytest.param(
        "<think>x</think>\n[L2 - Target Audience Mismatch]",
        "L2",
        "Audience",
        OK,
        RULE_FORM,
        id="form-fig9-attribute-name",
    ),
    pytest.param(
        "<think>x</think>\n[L2-Vibes Mismatch]", "L2", OTHER_DIMENSION, OK, RULE_FORM, id="form-unknown-dimension"
    ),
    pytest.param("<think>颜色不同</think>\n【L2-颜色不匹配】", "L2", "Color", OK, RULE_FORM, id="form-chinese"),
    pytest.param(
        "[L2-Brand Mismatch] [L2-Color Mismatch]", "L2", "Brand", OK, RULE_FORM, id="form-two-dimensions-first-counts"
    ),
    # --- explicit final-answer markers ---------------------------------------------------------
    pytest.param(
        "Final answer: L3 — not L4 because the colour differs", "L3", None, OK, RULE_MARKER, id="marker-then-contrast"
    ),
    pytest.param("**Final answer:** L1", "L1", None, OK, RULE_MARKER, id="marker-markdown"),
    pytest.param("## Final Answer\n\n**L3**", "L3", None, OK, RULE_MARKER, id="marker-heading"),
    pytest.param("Answer: L1\nFinal answer: L2", "L2", None, OK, RULE_MARKER, id="marker-last-wins"),
    pytest.param(
        "The item is L2 at most... Final Answer: [L2-Color Mismatch]",
        "L2",
        "Color",
        OK,
        RULE_MARKER,
        id="marker-with-form",
    ),
    pytest.param(
        "Relevance: L2. Not L1, since the category matches.\n[L2-Brand Mismatch]",
        "L2",
        "Brand",
        OK,
        RULE_MARKER,
        id="marker-dimension-from-form",
    ),
    pytest.param(
        "Final answer: Level 2 (Brand Mismatch)",
        "L2",
        "Brand",
        OK,
        RULE_MARKER,
        id="marker-level-in-words-with-dimension",
    ),
    pytest.param(
        "Relevance level: L4 (Perfectly Relevant). The item fully satisfies the query.",
        "L4",
        None,
        OK,
        RULE_MARKER,
        id="marker-code-and-name",
    ),
    pytest.param(
        '{"relevance": "L3", "reason": "red is close to burgundy, so not L4"}', "L3", None, OK, RULE_MARKER, id="json"
    ),
    pytest.param(
        '```json\n{"level": "L2", "mismatch_type": "Brand"}\n```',
        "L2",
        "Brand",
        OK,
        RULE_MARKER,
        id="json-fenced-with-dimension",
    ),
    pytest.param(
        '{"relevance": "L2", "mismatch": "颜色"}', "L2", "Color", OK, RULE_MARKER, id="json-chinese-dimension"
    ),
    pytest.param("<answer>L4</answer>", "L4", None, OK, RULE_MARKER, id="answer-tag"),
    pytest.param("最终答案：【L2-颜色不匹配】", "L2", "Color", OK, RULE_MARKER, id="marker-chinese-form"),
    pytest.param("答案：L3（不是L4，颜色有差异）", "L3", None, OK, RULE_MARKER, id="marker-chinese-contrast"),
    pytest.param(
        "该商品品牌不符，判定为L2（品牌不匹配）。", "L2", "Brand", OK, RULE_MARKER, id="chinese-verdict-with-dimension"
    ),
    pytest.param("相关性：完全相关", "L4", None, OK, RULE_MARKER, id="marker-chinese-level-name"),
    pytest.param("结论：部分不相关", "L2", None, OK, RULE_MARKER, id="marker-chinese-l2-name"),
    pytest.param("Final answer: 3", "L3", None, OK, RULE_MARKER, id="marker-bare-number"),
    # a number after a marker, then the name of its level
    pytest.param("Level: 3 (Closely Relevant)", "L3", None, OK, RULE_MARKER, id="marker-number-then-its-name"),
    pytest.param("Score: 4 — Perfectly Relevant", "L4", None, OK, RULE_MARKER, id="marker-number-dash-its-name"),
    pytest.param(
        "Rating: 2 - Partially Irrelevant (brand mismatch)",
        "L2",
        "Brand",
        OK,
        RULE_MARKER,
        id="marker-number-name-and-dimension",
    ),
    pytest.param("Level: 3 (Perfectly Relevant)", None, None, NO_LABEL, "", id="marker-number-other-levels-name"),
    # a number after a marker out of the four levels; "3/4" only after a score ("Final answer: 3/4" may hedge)
    pytest.param("Relevance: 3 out of 4", "L3", None, OK, RULE_MARKER, id="marker-number-out-of-four"),
    pytest.param("Score: 3/4", "L3", None, OK, RULE_MARKER, id="marker-score-over-four"),
    pytest.param("Final answer: 3/4", None, None, NO_LABEL, "", id="marker-number-slash-four-may-hedge"),
    pytest.param("Score: 3 out of 5", None, None, NO_LABEL, "", id="marker-number-out-of-another-scale"),
    # "/4" also after relevance (a measure); after a level or an answer it may name two levels
    pytest.param("Relevance: 2/4", "L2", None, OK, RULE_MARKER, id="marker-relevance-over-four"),
    pytest.param("相关性：3/4", "L3", None, OK, RULE_MARKER, id="marker-chinese-relevance-over-four"),
    pytest.param("Level: 3/4", None, None, NO_LABEL, "", id="marker-level-slash-four-may-hedge"),
    pytest.param("Relevance: 3 on a scale of 1 to 4", "L3", None, OK, RULE_MARKER, id="marker-number-on-the-scale"),
    # a number closing its sentence is read; one opening a list item after a marker is not; "3, or 4" hedges
    pytest.param("Final answer: 3.", "L3", None, OK, RULE_MARKER, id="marker-number-full-stop"),
    pytest.param(
        "Assessment:\n1. Category matches\n2. Colour differs", None, None, NO_LABEL, "", id="marker-then-numbered-list"
    ),
    pytest.param("Final answer: 3, or maybe 4", None, None, NO_LABEL, "", id="marker-number-comma-or-hedge"),
    # ...its reason after it on the marker's line is read, unless the next item of a list follows or it hedges
    pytest.param("Final answer: 3. The colour differs.", "L3", None, OK, RULE_MARKER, id="marker-number-then-reason"),
    pytest.param("Relevance: 3. The brand matches.", "L3", None, OK, RULE_MARKER, id="relevance-number-then-reason"),
    pytest.param("Final answer: 3. It is not L4.", "L3", None, OK, RULE_MARKER, id="marker-number-reason-rejects"),
    pytest.param(
        "Final answer: 1. The brand matches.\n2. The colour differs.", None, None, NO_LABEL, "", id="marker-list-item"
    ),
    pytest.param("Final answer: 1. Brand matches 2. Colour differs", None, None, NO_LABEL, "", id="marker-list-inline"),
    pytest.param("Final answer:\n3. The colour differs.", None, None, NO_LABEL, "", id="marker-list-next-line"),
    pytest.param("Final answer: 3. Or maybe 4.", None, None, AMBIGUOUS, RULE_MARKER, id="marker-number-or-maybe"),
    pytest.param(
        "Final answer: 3. Or maybe L4.", None, None, AMBIGUOUS, RULE_MARKER, id="marker-number-or-maybe-level"
    ),
    pytest.param("Final answer: 3.\nOr maybe L4.", None, None, AMBIGUOUS, RULE_MARKER, id="marker-number-then-hedge"),
    # a level number in prose as a rating verb's object
    pytest.param("I would rate this as a 3.", "L3", None, OK, RULE_START, id="rated-as-a-number"),
    pytest.param("I'd rate it a 2.", "L2", None, OK, RULE_START, id="rated-it-a-number"),
    pytest.param("I would give this a 4.", "L4", None, OK, RULE_START, id="given-a-number"),
    pytest.param("I rate this 3 out of 4.", "L3", None, OK, RULE_START, id="rated-out-of-four"),
    pytest.param("I'd rate this 3/4.", "L3", None, OK, RULE_START, id="rated-over-four"),
    pytest.param("The shade is off. I'd score it a 3.", "L3", None, OK, RULE_STATED, id="scored-later-in-the-text"),
    pytest.param("On a scale of 1 to 4, I would rate this a 3.", "L3", None, OK, RULE_START, id="scale-then-rated"),
    pytest.param("I would rate this a 3 on a scale of 1 to 4.", "L3", None, OK, RULE_START, id="rated-on-the-scale"),
    pytest.param("I would rate this as a **3**.", "L3", None, OK, RULE_START, id="rated-number-in-markdown"),
    pytest.param("I wouldn't rate it a 4; L3.", "L3", None, OK, RULE_START, id="rated-negated-then-level"),
    # Reluctance is no verdict: "hard to rate this a 4" says it is not quite a 4.
    pytest.param("It is hard to rate this a 4.", None, None, NO_LABEL, "", id="hard-to-rate"),
    pytest.param("It is hard to rate this a 4. I rate it 3.", "L3", None, OK, RULE_STATED, id="hard-to-rate-then-own"),
    pytest.param("I hesitate to call this L4; it is L3.", "L3", None, OK, RULE_START, id="hesitate-to-call"),
    pytest.param("I can hardly call this L4, so L3.", "L3", None, OK, RULE_START, id="hardly-call"),
    pytest.param("很难评为L4，应为L3。", "L3", None, OK, RULE_START, id="zh-hard-to-rate"),
    pytest.param(
        "If the colour matched, I'd give it a 4. It doesn't, so I'd give it a 3.",
        "L3",
        None,
        OK,
        RULE_STATED,
        id="rated-conditional-then-rated",
    ),
    pytest.param(
        "To give it a 4, the shade would have to match; I'd give it a 3.",
        "L3",
        None,
        OK,
        RULE_START,
        id="rated-as-a-purpose-then-rated",
    ),
    pytest.param("I would rate this as a 3.\n\nL4", None, None, AMBIGUOUS, RULE_CONFLICT, id="rated-against-lone-line"),
    pytest.param("I would rate this as a 3 or a 4.", None, None, NO_LABEL, "", id="rated-hedge"),
    pytest.param("I'd rate it a 3, or maybe a 4.", None, None, NO_LABEL, "", id="rated-comma-or-hedge"),
    pytest.param("I'd rate it a 3 out of 5.", None, None, NO_LABEL, "", id="rated-on-another-scale"),
    pytest.param("I'd give it 3 stars.", None, None, NO_LABEL, "", id="rated-in-stars"),
    pytest.param("On a scale of 1 to 4, the colour differs.", None, None, NO_LABEL, "", id="scale-without-a-rating"),
    pytest.param("I see 3 problems with the match.", None, None, NO_LABEL, "", id="a-count-is-no-rating"),
    pytest.param("I would rate this a 3. The colour differs.", "L3", None, OK, RULE_START, id="rated-then-a-reason"),
    pytest.param("I'd give it a solid 3", "L3", None, OK, RULE_START, id="rated-a-solid-number"),
    # a level's name after the rated number: read when it is that number's level
    pytest.param("I'd rate it a 3 (Closely Relevant)", "L3", None, OK, RULE_START, id="rated-number-and-its-name"),
    pytest.param("I'd rate it a 3 (Perfectly Relevant)", None, None, NO_LABEL, "", id="rated-number-another-name"),
    # a contrast turning from a rated number to another names two levels, as "L4, but really L3" does
    pytest.param("L4, but it is really L3.", None, None, AMBIGUOUS, RULE_CONFLICT, id="level-then-contrast-to-level"),
    pytest.param(
        "I'd give it a 4, but it is really a 3.", None, None, AMBIGUOUS, RULE_CONFLICT, id="rated-then-contrast-really"
    ),
    pytest.param("I'd give it a 4, but honestly a 3.", None, None, AMBIGUOUS, RULE_CONFLICT, id="rated-then-honestly"),
    pytest.param(
        "I'd give it a 4, but I'll settle on a 3.", None, None, AMBIGUOUS, RULE_CONFLICT, id="rated-then-settle-on"
    ),
    pytest.param("I'd give it a 4, but not a 3.", "L4", None, OK, RULE_START, id="rated-then-contrast-negated"),
    # another party's view gives way to the reply's own level; alone, it stands ("could" alone is no hedge)
    pytest.param("Some would rate this a 4. I rate it a 3.", "L3", None, OK, RULE_STATED, id="others-rate-i-rate"),
    pytest.param("Some would call this L4. I call it L3.", "L3", None, OK, RULE_STATED, id="others-call-i-call"),
    pytest.param("Others might rate it a 4. I'd rate it a 3.", "L3", None, OK, RULE_STATED, id="others-might-rate"),
    pytest.param("You could rate it a 4. I'd rate it a 3.", "L3", None, OK, RULE_STATED, id="you-could-then-own"),
    pytest.param("I'd rate it a 3, but some would rate it a 4.", "L3", None, OK, RULE_START, id="own-then-others"),
    pytest.param("Some would call this L4.", "L4", None, OK, RULE_START, id="others-view-alone"),
    pytest.param("You could rate it a 4.", "L4", None, OK, RULE_START, id="you-could-rate-alone"),
    pytest.param("It could be L4.", "L4", None, OK, RULE_START, id="could-be-alone"),
    pytest.param(
        'The rubric says to "give it a 4" only when every attribute matches. The colour differs, so L3.',
        "L3",
        None,
        OK,
        RULE_STATED,
        id="rating-in-a-quoted-definition",
    ),
    pytest.param("Final answer: L2 or L3", None, None, AMBIGUOUS, RULE_MARKER, id="marker-hedged"),
    pytest.param(
        "The relevance is L3 or L4 depending on how strictly colour is judged.",
        None,
        None,
        AMBIGUOUS,
        RULE_MARKER,
        id="marker-hedged-prose",
    ),
    pytest.param("Final answer: L5 (beyond L4)", None, None, OUT_OF_RANGE, RULE_MARKER, id="marker-out-of-range"),
    # a looping reply: naming two levels as the answer is a hedge; a loop of one level is that level
    pytest.param("Final answer: L3 L4 L3 L4 L3 L4", None, None, AMBIGUOUS, RULE_MARKER, id="marker-loop-two-levels"),
    pytest.param("Final answer: L3 L3 L3 L3", "L3", None, OK, RULE_MARKER, id="marker-loop-one-level"),
    pytest.param("Final answer: L3, L4", None, None, AMBIGUOUS, RULE_MARKER, id="marker-two-levels-listed"),
    pytest.param(
        "Final answer: [L2-Brand Mismatch]\n\nL3", None, None, AMBIGUOUS, RULE_MARKER, id="marker-then-another-level"
    ),
    pytest.param(
        "Final answer: L3\nFinal answer: L4\nFinal answer: L3",
        None,
        None,
        AMBIGUOUS,
        RULE_MARKER,
        id="markers-loop-back-to-a-level",
    ),
    pytest.param("**Final Answer:** L3\n\n**Final Answer:** L3", "L3", None, OK, RULE_MARKER, id="marker-repeated"),
    pytest.param(
        "Final answer: L4. Wait, actually the colour differs. Final answer: L3",
        "L3",
        None,
        OK,
        RULE_MARKER,
        id="marker-corrected",
    ),
    # --- contrast, negation, hypotheticals -------------------------------------------------------
    pytest.param(
        "Brand differs, so not L4 or L3.\n[L2-Brand Mismatch]", "L2", "Brand", OK, RULE_FORM, id="negation-over-a-list"
    ),
    pytest.param(
        "Query wants red; the item is blue. L4 is out. **L2**.", "L2", None, OK, RULE_STATED, id="level-is-out"
    ),
    pytest.param(
        "Colours differ at the detail level\nL4 would need an exact match, so L3.",
        "L3",
        None,
        OK,
        RULE_STATED,
        id="would-need",
    ),
    pytest.param("Close, but not L4:\n\n- **L3**.", "L3", None, OK, RULE_LONE_LINE, id="not-then-bullet"),
    pytest.param("The answer is not L4 but L3.", "L3", None, OK, RULE_START, id="not-but"),
    pytest.param(
        "L3 (closely relevant) rather than L4 (perfectly relevant)",
        "L3",
        None,
        OK,
        RULE_START,
        id="rather-than-with-names",
    ),
    pytest.param("Although L4 is tempting, L3 fits better.", "L3", None, OK, RULE_START, id="although"),
    # a level offered tentatively, turned from in its sentence, then another asserted: a concession
    pytest.param(
        "The item could be L4 at first sight, but on balance:\nL3",
        "L3",
        None,
        OK,
        RULE_LONE_LINE,
        id="issue-concession",
    ),
    pytest.param(
        "It might look like L4, but the colour differs, so L3.", "L3", None, OK, RULE_START, id="concession-might-look"
    ),
    pytest.param("L4 at first glance, but on balance L3.", "L3", None, OK, RULE_START, id="concession-at-first-glance"),
    pytest.param("乍看像L4，但颜色不同，所以是L3。", "L3", None, OK, RULE_START, id="concession-chinese"),
    # ... or turned down outright; "not a perfect match" explains the level, it does not turn it down
    pytest.param(
        "It could be L4 at first sight, but it is not.", None, None, NO_LABEL, "", id="concession-turned-down"
    ),
    pytest.param("L4 seems likely, but not quite. L3", "L3", None, OK, RULE_STATED, id="turned-down-then-level"),
    pytest.param(
        "It could be L3, but it is not a perfect match.", "L3", None, OK, RULE_START, id="tentative-level-explained"
    ),
    # ... but two levels each offered tentatively are a hedge
    pytest.param(
        "It could be L3, but L4 is also plausible.", None, None, AMBIGUOUS, RULE_HEDGE, id="concession-then-hedge"
    ),
    pytest.param(
        "It might be L3, but it might also be L4.", None, None, AMBIGUOUS, RULE_CONFLICT, id="two-tentative-levels"
    ),
    pytest.param("I'll go with L3 over L4.", "L3", None, OK, RULE_START, id="over"),
    # a level the item comes near is one it does not reach
    pytest.param("L3 (close to L4)", "L3", None, OK, RULE_START, id="close-to"),
    pytest.param("It's almost L4, but L3.", "L3", None, OK, RULE_START, id="almost"),
    pytest.param("It's nearly L4. L3.", "L3", None, OK, RULE_STATED, id="nearly"),
    # ... only right before the level: here the colon gives the answer, and "almost certainly" is sure
    pytest.param("It's nearly a perfect match: L4.", "L4", None, OK, RULE_START, id="nearly-a-description-then-level"),
    pytest.param("This is almost certainly L3.", "L3", None, OK, RULE_START, id="almost-certainly"),
    # "an L3 case" after "is" asserts it; as a condition ("For an L2 case, ...") it does not
    pytest.param("This is a solid L3 case.", "L3", None, OK, RULE_START, id="is-a-level-case"),
    pytest.param("This is a solid L3 case, not L4.", "L3", None, OK, RULE_START, id="is-a-level-case-not"),
    pytest.param("An L2 case would need a mismatch. L4.", "L4", None, OK, RULE_STATED, id="a-level-case-would"),
    pytest.param("What is an L4 case? It needs a full match. L3.", "L3", None, OK, RULE_STATED, id="what-is-a-case"),
    pytest.param(
        "I'd pick L3 instead of L4, as opposed to L2 for a brand clash.",
        "L3",
        None,
        OK,
        RULE_START,
        id="instead-of-as-opposed-to",
    ),
    pytest.param(
        "If it were burgundy, it would be L4. As it is red, L3.", "L3", None, OK, RULE_STATED, id="conditional-sentence"
    ),
    pytest.param(
        "This is clearly L2. It would be L3 if the brand were a sub-brand, and L1 if the category were unrelated.",
        "L2",
        None,
        OK,
        RULE_START,
        id="hypothetical-alternatives",
    ),
    pytest.param(
        "L3.\n\nL4 would be too generous given the colour difference, and L2 too harsh.",
        "L3",
        None,
        OK,
        RULE_LONE_LINE,
        id="too-generous",
    ),
    pytest.param("Neither L1 nor L2; L3.", "L3", None, OK, RULE_START, id="neither-nor"),
    pytest.param("Neither L1, L2 nor L4: L3.", "L3", None, OK, RULE_START, id="neither-comma-list-nor"),
    pytest.param(
        "The item is not a perfect match (L4), but it is closely relevant (L3).",
        "L3",
        None,
        OK,
        RULE_START,
        id="not-a-perfect-match",
    ),
    pytest.param(
        "L4. Wait, actually the colour is red, not burgundy. L3.", "L3", None, OK, RULE_STATED, id="self-correction"
    ),
    pytest.param("L4, or rather L3", "L3", None, OK, RULE_START, id="or-rather"),
    # A correction offered tentatively leaves the reply between its levels (each was read as the later level).
    pytest.param("L3. Actually, maybe L4.", None, None, AMBIGUOUS, RULE_HEDGE, id="correction-maybe"),
    pytest.param("L3. Wait, it might be L4.", None, None, AMBIGUOUS, RULE_HEDGE, id="correction-might"),
    pytest.param("L3. Actually L4 is possible too.", None, None, AMBIGUOUS, RULE_HEDGE, id="correction-possible-too"),
    pytest.param("L3 (actually, maybe L2).", None, None, AMBIGUOUS, RULE_HEDGE, id="correction-in-brackets"),
    pytest.param("L3。其实可能是L4。", None, None, AMBIGUOUS, RULE_HEDGE, id="correction-zh-maybe"),
    pytest.param(
        "Relevance: L3. Actually, perhaps L4.", None, None, AMBIGUOUS, RULE_MARKER, id="marker-correction-perhaps"
    ),
    # ... as does a level offered tentatively after another without a correction; a level ruled "too strict" does not.
    pytest.param("L2. L3 might also fit.", None, None, AMBIGUOUS, RULE_HEDGE, id="after-another-might-also"),
    pytest.param("L2\n\nHmm, L3 might fit too.", None, None, AMBIGUOUS, RULE_HEDGE, id="after-another-fit-too"),
    pytest.param("L2. L3 is possible too.", None, None, AMBIGUOUS, RULE_HEDGE, id="after-another-possible"),
    pytest.param("L2. L3 as well.", None, None, AMBIGUOUS, RULE_HEDGE, id="after-another-as-well"),
    pytest.param("L2. L3 too strict.", "L2", None, OK, RULE_START, id="after-another-too-strict"),
    pytest.param("L2. L2 might fit too.", "L2", None, OK, RULE_START, id="after-the-same-level"),
    pytest.param("L2, though L3 might also fit.", "L2", None, OK, RULE_START, id="conceded-alternative"),
    pytest.param("L3 is plausible too, but L2 is the answer.", "L2", None, OK, RULE_START, id="plausible-then-turn"),
    pytest.param("L4 is possible, but L3 fits better.", "L3", None, OK, RULE_START, id="possible-then-turn"),
    # A modal that states a level ("L3 would be better"), unless a condition or a turn follows it.
    pytest.param("L3 would be better.", "L3", None, OK, RULE_START, id="modal-better"),
    pytest.param("I think L3 would be better here.", "L3", None, OK, RULE_START, id="modal-better-here"),
    pytest.param("L3 would be appropriate if the colour matched.", None, None, NO_LABEL, "", id="modal-if"),
    pytest.param("L4 would fit, but the colour differs, so L3.", "L3", None, OK, RULE_START, id="modal-but"),
    pytest.param(
        "L4 would be more appropriate, but the colour differs, so L3.", "L3", None, OK, RULE_START, id="modal-more-but"
    ),
    # ... and a firm correction, or a firm answer after the tentative one, still stands.
    pytest.param("L3. Actually, L4.", "L4", None, OK, RULE_STATED, id="correction-firm"),
    pytest.param("L3. Wait, it might be L4. Yes, L4.", "L4", None, OK, RULE_STATED, id="correction-then-firm"),
    pytest.param("L4. Actually, maybe L4.", "L4", None, OK, RULE_STATED, id="correction-same-level"),
    pytest.param(
        "L4. Wait, actually the colour could be red, not burgundy. L3.",
        "L3",
        None,
        OK,
        RULE_STATED,
        id="correction-reasoned-then-firm",
    ),
    pytest.param("L3。其实是L4。", "L4", None, OK, RULE_START, id="correction-zh-firm"),
    pytest.param("Is it L4? No, the colour differs. L3.", "L3", None, OK, RULE_STATED, id="question-then-answer"),
    pytest.param("If I had to choose, I would say L3.", "L3", None, OK, RULE_START, id="if-i-had-to-choose"),
    # "unless": the level stands with a caveat, and gives way to a level asserted after it
    pytest.param(
        "L3 unless the shade matches, in which case L4.", "L3", None, OK, RULE_START, id="unless-in-which-case"
    ),
    pytest.param("L4 unless the brand is fake.", "L4", None, OK, RULE_START, id="unless-caveat"),
    pytest.param("L4, unless the colour matters. It does, so L3.", "L3", None, OK, RULE_STATED, id="unless-then-level"),
    pytest.param(
        "If the colour were exact I'd say L4, but it isn't, so L3.",
        "L3",
        None,
        OK,
        RULE_START,
        id="conditional-then-so",
    ),
    pytest.param(
        "如果颜色一致则为L4，但商品是红色，所以为L3。", "L3", None, OK, RULE_START, id="chinese-conditional-then-so"
    ),
    pytest.param(
        "L3 would fit best; L4 would fit only if the colour matched.", "L3", None, OK, RULE_START, id="would-fit-best"
    ),
    pytest.param("Assigning L4 would be wrong here. **Output:** L3", "L3", None, OK, RULE_MARKER, id="output-marker"),
    pytest.param("是L3而不是L4", "L3", None, OK, RULE_START, id="chinese-er-bu-shi"),
    pytest.param(
        "查询“酒红色连衣裙”，商品为红色连衣裙，颜色相近但不完全一致，因此相关性为L3，而非L4。",
        "L3",
        None,
        OK,
        RULE_MARKER,
        id="chinese-er-fei",
    ),
    pytest.param("不是L4，因为颜色不同。L3", "L3", None, OK, RULE_START, id="chinese-bu-shi"),
    pytest.param("除非是酒红色，否则不能算L4。答案：L3", "L3", None, OK, RULE_MARKER, id="chinese-chu-fei"),
    pytest.param("L4需要颜色完全一致，所以是L3。", "L3", None, OK, RULE_START, id="chinese-xu-yao"),
    pytest.param("并非L1，类目相关但品牌不符：L2", "L2", None, OK, RULE_START, id="chinese-bing-fei"),
    # --- hedges and conflicts ---------------------------------------------------------------------
    pytest.param("<think>x</think>\nL2 or L3", None, None, AMBIGUOUS, RULE_HEDGE, id="hedge-after-think"),
    pytest.param("L3/L4", None, None, AMBIGUOUS, RULE_HEDGE, id="hedge-slash"),
    pytest.param("L2-L3", None, None, AMBIGUOUS, RULE_HEDGE, id="hedge-range"),
    pytest.param("[L2 or L3]", None, None, AMBIGUOUS, RULE_HEDGE, id="hedge-bracketed"),
    pytest.param("L3. Or maybe L4.", None, None, AMBIGUOUS, RULE_HEDGE, id="hedge-or-maybe"),
    pytest.param("L3或L4都有可能", None, None, AMBIGUOUS, RULE_HEDGE, id="hedge-chinese"),
    pytest.param("<think>x</think>\nL3 and L5", None, None, AMBIGUOUS, RULE_HEDGE, id="hedge-with-out-of-range"),
    pytest.param("Between L2 and L3 I lean to L3 overall", "L3", None, OK, RULE_START, id="hedge-then-decision"),
    pytest.param("L2 or L3 — I'd go with L3.", "L3", None, OK, RULE_START, id="hedge-then-go-with"),
    pytest.param("I think L4.\n\nL3", None, None, AMBIGUOUS, RULE_CONFLICT, id="two-asserted-levels"),
    pytest.param("[L2-Brand Mismatch]\n\nL3", None, None, AMBIGUOUS, RULE_CONFLICT, id="form-against-lone-line"),
    # --- level names in words ---------------------------------------------------------------------
    pytest.param("Level 3 – Closely Relevant", "L3", None, OK, RULE_LONE_LINE, id="level-word-and-name"),
    pytest.param("Level four.", "L4", None, OK, RULE_LONE_LINE, id="level-number-word"),
    pytest.param(
        "Irrelevant. The item is a pillow, not a soundproofing solution.",
        "L1",
        None,
        OK,
        RULE_START,
        id="name-opens-answer",
    ),
    pytest.param(
        "The brand is irrelevant here; the item is exactly what was asked: L4.",
        "L4",
        None,
        OK,
        RULE_START,
        id="name-in-prose-is-no-level",
    ),
    pytest.param("3级", "L3", None, OK, RULE_LONE_LINE, id="chinese-grade"),
    pytest.param("相关性等级：第3级", "L3", None, OK, RULE_MARKER, id="chinese-marker-grade"),
    # --- markdown and long replies of instruct models ----------------------------------------------
    pytest.param(
        "### Analysis\n- **Category**: dress vs dress ✔\n- **Color**: burgundy vs red ✘ (close)\n\n"
        "The colour is close but not identical, so this is not a perfect match.\n\n**Relevance: L3**",
        "L3",
        None,
        OK,
        RULE_MARKER,
        id="markdown-analysis",
    ),
    pytest.param(
        'The user is searching for a "Burgundy Dress". The item is a women\'s red midi dress. Category matches. '
        "According to the levels, L4 requires complete satisfaction, so it's not L4. L2 would apply if a key attribute "
        "failed outright, which isn't the case. Therefore the relevance is **L3**.",
        "L3",
        None,
        OK,
        RULE_MARKER,
        id="prose-weighing-levels",
    ),
    pytest.param(
        "Step 1: category matches.\nStep 2: brand Puma vs Nike.\n\nL2 - Brand Mismatch\n\nAn L1 would only apply to an unrelated category.",
        "L2",
        "Brand",
        OK,
        RULE_FORM,
        id="steps-then-unbracketed-form",
    ),
    pytest.param(
        "L2\n\nReason: brand mismatch (Puma vs Nike).", "L2", None, OK, RULE_LONE_LINE, id="level-then-reason"
    ),
    # --- echoes of the prompt -----------------------------------------------------------------------
    pytest.param(
        "Output Format: For L2 cases, specify the mismatch type in brackets, e.g., [L2-Style Mismatch].\n"
        "Final Answer: After </think>, output only the final level: L1, L3 or L4, or for L2 the bracketed form "
        "[L2-<attribute> Mismatch].\n\nL3",
        "L3",
        None,
        OK,
        RULE_LONE_LINE,
        id="echo-format-lines",
    ),
    pytest.param(
        build_system_prompt("en").split("Relevance Levels:")[1]
        + "\nThe category and brand match but the colour is off, so L3.",
        "L3",
        None,
        OK,
        RULE_START,  # the copied definitions are not read: the model's own first sentence opens the answer
        id="echo-level-definitions",
    ),
    pytest.param("On the L1-L4 scale this item is L3.", "L3", None, OK, RULE_START, id="echo-scale"),
    # a level's definition referred to ("L3 says ..."): no answer, even when the reply stops there
    pytest.param(
        "Burgundy is close to red. Looking at the definitions, L3 says",
        None,
        None,
        NO_LABEL,
        "",
        id="definition-quoted-then-cut-off",
    ),
    pytest.param(
        "This is similar to L2 or L3. Looking at the definitions, L3 says",
        None,
        None,
        AMBIGUOUS,
        RULE_HEDGE,
        id="hedge-then-definition-quoted-then-cut-off",
    ),
    pytest.param(
        "L4 refers to a perfect match; the colour differs.\nL3",
        "L3",
        None,
        OK,
        RULE_LONE_LINE,
        id="definition-referred-to",
    ),
    pytest.param("Output only the final level: L1, L3 or L4.", None, None, NO_LABEL, "", id="echo-only"),
    # Copies of the prompt, garbled in spacing, markdown or case, whole or cut off, are never answers (issue 26).
    pytest.param(build_system_prompt("en").upper(), None, None, NO_LABEL, "", id="echo-whole-prompt-upper-case"),
    pytest.param(
        build_system_prompt("en").replace(" ", "  ")[: build_system_prompt("en").index("Proximate") + 14],
        None,
        None,
        NO_LABEL,
        "",
        id="echo-garbled-cut-off-mid-definition",
    ),
    pytest.param(
        "Relevance Levels:\n- L1 (Irrelevant): Complete category mismatch with no association.\n- L2 (Partially",
        None,
        None,
        NO_LABEL,
        "",
        id="echo-definitions-cut-off",
    ),
    pytest.param(
        "- L1 (Irrelevant): Complete category mismatch with no association.",
        None,
        None,
        NO_LABEL,
        "",
        id="echo-one-definition-line",
    ),
    pytest.param(
        "相关性等级：\n- L1（不相关）：类目完全不符，且毫无关联。\n- L2（部分不相关）：类目不符但有关联",
        None,
        None,
        NO_LABEL,
        "",
        id="echo-chinese-definitions-cut-off",
    ),
    pytest.param(
        "**Final Answer:** After </think>, output only the final level: L1, L3 or L4",
        None,
        None,
        NO_LABEL,
        "",
        id="echo-final-answer-line-with-markdown",
    ),
    pytest.param(
        build_system_prompt("en").split("Instructions:")[1].lower()
        + "\nThe brand differs (Puma vs Nike).\n[L2-Brand Mismatch]",
        "L2",
        "Brand",
        OK,
        RULE_FORM,
        id="echo-lower-case-then-own-answer",
    ),
    pytest.param(
        "You are an expert in e-commerce relevance analysis. Your task is to assess the relevance between a user "
        "Query and an item based on provided information.\n\nL2 - Brand Mismatch",
        "L2",
        "Brand",
        OK,
        RULE_FORM,
        id="echo-role-then-own-answer",
    ),
    pytest.param(
        "Final answer: L4 (Perfectly Relevant): Completely satisfies the query intent.",
        "L4",
        None,
        OK,
        RULE_MARKER,
        id="answer-then-its-definition-copied",
    ),
    pytest.param(
        "Input:\nUser Query: burgundy dress\nItem Title: Red midi dress",
        None,
        None,
        NO_LABEL,
        "",
        id="echo-user-message",
    ),
    # --- rambling, and replies that stop mid-sentence ----------------------------------------------
    pytest.param(
        "Okay, so the user typed 'burgundy dress' and the item is a red midi dress from some shop. Red and burgundy "
        "are close but not the same, the category is the same, the brand is not specified. Hmm, so the relevance is "
        "L3, although someone might argue for L4 if they ignore the colour difference entirely, which I would not.",
        "L3",
        None,
        OK,
        RULE_MARKER,
        id="rambling-then-relevance-is",
    ),
    pytest.param(
        "The item matches the brand and category, but the colour is slightly off, so the level is",
        None,
        None,
        NO_LABEL,
        "",
        id="stops-before-the-level",
    ),
    pytest.param(
        "L3\n\nThe item matches the brand and category but the colo",
        "L3",
        None,
        OK,
        RULE_LONE_LINE,
        id="level-then-cut",
    ),
    pytest.param(
        "The query asks for a burgundy dress and the item is a red dress. Comparing with the levels, L4 would require",
        None,
        None,
        NO_LABEL,
        "",
        id="stops-inside-a-hypothetical",
    ),
    # --- no answer ----------------------------------------------------------------------------------
    pytest.param(
        "I'm sorry, but I can't determine the relevance without seeing the product image.",
        None,
        None,
        NO_LABEL,
        "",
        id="refusal",
    ),
    pytest.param("As an AI language model, I cannot rate this item.", None, None, NO_LABEL, "", id="refusal-ai"),
    pytest.param(
        "I can't say whether it's L3 or L4.", None, None, AMBIGUOUS, RULE_HEDGE, id="refusal-naming-two-levels"
    ),
    pytest.param("Hmm, L3? Or L4? Hard to say.", None, None, NO_LABEL, "", id="questions-only"),
    pytest.param("It is not L4.", None, None, NO_LABEL, "", id="only-a-negated-level"),
    pytest.param("relevant", None, None, NO_LABEL, "", id="no-level"),
    pytest.param("<think>it is L3</think>\nPartially relevant", None, None, NO_LABEL, "", id="level-only-in-reasoning"),
    pytest.param("L5", None, None, OUT_OF_RANGE, RULE_LONE_LINE, id="out-of-range"),
    pytest.param("<think>x</think>\nL0", None, None, OUT_OF_RANGE, RULE_LONE_LINE, id="out-of-range-zero"),
    # --- the prompt's placeholder, examples and definitions, and a small model's own versions of them -------
    pytest.param("<think>x</think>\n[L2-<attribute> Mismatch]", None, None, NO_LABEL, "", id="placeholder-copied"),
    pytest.param("L2-<attribute>", None, None, NO_LABEL, "", id="placeholder-unbracketed"),
    pytest.param("L2-<属性>", None, None, NO_LABEL, "", id="placeholder-chinese-cut-off"),
    pytest.param(
        "<think>Nike asked, Puma shown.</think>\n[L2-<Brand> Mismatch]",
        "L2",
        "Brand",
        OK,
        RULE_FORM,
        id="placeholder-filled-in-keeping-angle-brackets",
    ),
    pytest.param("【L2-<品牌>不匹配】", "L2", "Brand", OK, RULE_FORM, id="placeholder-filled-in-chinese"),
    pytest.param("L2 - <Color> Mismatch", "L2", "Color", OK, RULE_FORM, id="placeholder-filled-in-unbracketed"),
    pytest.param("L2 (Color)", "L2", "Color", OK, RULE_FORM, id="dimension-alone-in-parentheses"),
    pytest.param("L2（颜色）", "L2", "Color", OK, RULE_FORM, id="dimension-alone-in-full-width-parentheses"),
    pytest.param("L2 (colour differs)", "L2", None, OK, RULE_START, id="parentheses-without-a-dimension"),
    pytest.param("e.g. L3", None, None, NO_LABEL, "", id="example-only"),
    pytest.param(
        "The output is one level (e.g. L3).\n\n[L2-Brand Mismatch]",
        "L2",
        "Brand",
        OK,
        RULE_FORM,
        id="example-then-form",
    ),
    pytest.param(
        "L1: other category\nL2: related category\nL3: close\nL4: exact match\n\nThe query is a dress; so is the item.",
        None,
        None,
        NO_LABEL,
        "",
        id="own-level-definitions-no-answer",
    ),
    pytest.param(
        "L1 (Irrelevant): another category\nL3 (Closely Relevant): a near match\n\nL3",
        "L3",
        None,
        OK,
        RULE_LONE_LINE,
        id="own-level-definitions-then-answer",
    ),
    pytest.param("I would say it is quite L3", "L3", None, OK, RULE_START, id="six-filler-words-then-level"),
    # --- a checklist of levels with a verdict on each: "no" rules a level out -----------------------------
    pytest.param("L1: no. L2: no. L3: yes. L4: no.", "L3", None, OK, RULE_STATED, id="checklist-on-one-line"),
    pytest.param("- L1: ✗\n- L2: ✗\n- L3: ✓\n- L4: ✗", "L3", None, OK, RULE_STATED, id="checklist-marks"),
    pytest.param("L4: no, the colour differs. L3.", "L3", None, OK, RULE_STATED, id="verdict-no-then-level"),
    pytest.param("L1 ❌\nL2 ❌\nL3 ✅\nL4 ❌", "L3", None, OK, RULE_STATED, id="checklist-marks-without-separator"),
    pytest.param(
        "| Level | Fits? |\n|---|---|\n| L1 | No |\n| L2 | No |\n| L3 | Yes |\n| L4 | No |",
        "L3",
        None,
        OK,
        RULE_STATED,
        id="checklist-table",
    ),
    pytest.param("L2 - No brand match", "L2", None, OK, RULE_START, id="no-that-is-no-verdict"),
    # --- end-of-turn tokens left in the text: what follows is a turn the model made up ------------------
    pytest.param("L3<|im_end|>", "L3", None, OK, RULE_LONE_LINE, id="end-of-turn-token"),
    pytest.param("<think>ok</think>\n**L4**<end_of_turn>", "L4", None, OK, RULE_LONE_LINE, id="end-of-turn-gemma"),
    pytest.param(
        "L3<|im_end|>\n<|im_start|>user\nRate the next item.<|im_end|>\n<|im_start|>assistant\nL1",
        "L3",
        None,
        OK,
        RULE_LONE_LINE,
        id="end-of-turn-then-made-up-turn",
    ),
    pytest.param("", None, None, EMPTY, "", id="empty"),
    pytest.param(None, None, None, EMPTY, "", id="none"),
    pytest.param("<think>Final answer: L3</think>   \n", None, None, EMPTY, "", id="answer-only-in-reasoning"),
    pytest.param("<think>weighing L3 against L4", None, None, UNCLOSED_THINK, "", id="cut-off-in-reasoning"),
    # reasoning reopened after the answer: the answer stands unless a later one follows the reopened reasoning
    pytest.param("Answer: L3\n<think>hmm, maybe L4", "L3", None, OK, RULE_MARKER, id="answer-then-thought-cut-off"),
    pytest.param("L3\n<think>maybe L4</think>", "L3", None, OK, RULE_LONE_LINE, id="answer-then-closed-thought"),
    pytest.param(
        "Answer: L3\n<think>hmm, maybe L4</think>\nFinal answer: L4",
        "L4",
        None,
        OK,
        RULE_MARKER,
        id="answer-then-thought-then-new-answer",
    ),
    pytest.param("<think>x</think>\n<think>L3", None, None, UNCLOSED_THINK, "", id="second-thought-cut-off"),
    # a decimal level is none of L1-L4 (as "Relevance: 3.5" is no level): not its whole-number part
    pytest.param("L3.5", None, None, NO_LABEL, "", id="decimal-level-alone"),
    pytest.param("Final answer: L3.5", None, None, NO_LABEL, "", id="decimal-level-after-marker"),
    pytest.param("Level 2.5 - between the two.", None, None, NO_LABEL, "", id="decimal-level-in-words"),
    pytest.param(
        "L3.\n5 reasons: brand, colour, size, fit, price.", "L3", None, OK, RULE_LONE_LINE, id="level-then-number"
    ),
]


@pytest.mark.parametrize(("reply", "label", "dimension", "status", "rule"), REPLIES)
def test_the_level_a_reply_asserts(reply, label, dimension, status, rule):
    parsed = parse_reply(reply)
    assert (parsed.label, parsed.dimension, parsed.status, parsed.rule) == (label, dimension, status, rule), (
        parsed.detail
    )
    assert parsed.valid == (status == OK)
    assert (status in INVALID_STATUSES) == (status != OK)
    if status == OK:
        assert parsed.detail == rule  # the rule shows in the Inspect explanation
    else:
        assert parsed.detail and parsed.display == status


def test_the_table_is_large_and_holds_every_case_of_the_issue():
    assert len(REPLIES) >= 30
    table = {p.values[0]: p.values[1:4] for p in REPLIES}
    for reply, grade in ISSUE_CASES.items():
        assert table[reply] == grade, reply


def test_the_reasoning_is_stripped_by_the_shared_rule():
    # A level in the reasoning never counts; the one after the last </think> does.
    assert parse_reply("<think>Final answer: L1</think>\nL4").label == "L4"
    assert parse_reply("<think>a</think>Answer: L2<think>b</think>\nL3").label == "L3"
    assert parse_reply("<think>L1? L2?</think>\nFinal Answer - L4").label == "L4"


def test_the_answer_displays_in_the_prompts_output_form():
    # What the Inspect log shows as the answer: Fig. 9's form, whatever the reply's wording.
    assert parse_reply("Level 2 - brand mismatch").display == "[L2-Brand Mismatch]"
    assert parse_reply("Final answer: L2").display == "L2"
    assert parse_reply("Closely Relevant").display == "L3"


def test_full_width_characters_read_as_ascii():
    assert parse_reply("最终答案：Ｌ３").label == "L3"
    assert parse_reply("［Ｌ２－品牌不匹配］").dimension == "Brand"


@pytest.mark.parametrize("language", ["en", "zh"])
def test_rendered_answers_parse_back(language):
    for level in LEVELS:
        for dimension in DIMENSIONS if level == "L2" else [None]:
            parsed = parse_reply(render_answer(level, dimension, "some reasoning with L1 and L4", language))
            assert (parsed.label, parsed.dimension, parsed.status) == (level, dimension, OK)


def test_dimension_aliases():
    assert canonical_dimension("Set/Single") == "Bundle"
    assert canonical_dimension("Model ID mismatch") == "Specification"
    assert canonical_dimension("颜色不符") == "Color"
    assert canonical_dimension("尺码") == "Specification"
    assert canonical_dimension("IP image") == "IP"
    assert canonical_dimension("the brand") == "Brand"
    assert canonical_dimension("Vibes") is None


# --- invalid replies are counted, never dropped ----------------------------------------------------

FIELDS = {"label": "L2", "industry": "Automotive", "intent": "", "gold_dimension": "Brand"}


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_reply_is_scored_without_raising(reply):
    parsed, outcome = score_reply(FIELDS, reply)
    numbers = outcome.numbers
    assert numbers["pred_invalid"] == int(not parsed.valid)
    assert sum(numbers[f"pred_L{i}"] for i in range(1, 5)) + numbers["pred_invalid"] == 1
    assert numbers["acc4"] == int(parsed.label == "L2")


def test_the_outcome_holds_answer_numbers_and_the_items_groups_by_name():
    _, right = score_reply(FIELDS, "<think>x</think>[L2-Brand Mismatch]")
    _, wrong = score_reply(FIELDS, "<think>x</think>[L2-Color Mismatch]")
    _, other = score_reply(FIELDS, "<think>x</think>[L2-Vibes Mismatch]")
    assert right.numbers["dim_scored"] == right.numbers["dim_match"] == 1 and right.dimension == "Brand"
    assert wrong.numbers["dim_scored"] == 1 and wrong.numbers["dim_match"] == 0 and wrong.dimension == "Color"
    assert other.numbers["dim_match"] == 0 and other.dimension == OTHER_DIMENSION
    # The numbers are what epochs average: per-answer 0/1 values only, no group coded as a number.
    assert all(value in (0, 1) for key, value in right.numbers.items() if key != "gold")
    assert not {"industry", "intent", "gold_dim", "pred_dim", "dimension"} & set(right.numbers)
    assert (right.industry, right.intent, right.gold_dimension) == ("Automotive", None, "Brand")


@pytest.mark.parametrize("status", INVALID_STATUSES)
def test_every_invalid_status_is_a_counted_wrong_answer(status):
    replies = {
        EMPTY: "",
        UNCLOSED_THINK: "<think>L2",
        NO_LABEL: "relevant",
        AMBIGUOUS: "L1 or L2",
        OUT_OF_RANGE: "L5",
    }
    parsed, invalid = score_reply(FIELDS, replies[status])
    assert parsed.status == status and parsed.label is None
    assert invalid.numbers["pred_invalid"] == 1 and invalid.numbers["acc2"] == invalid.numbers["acc4"] == 0
    _, right = score_reply(FIELDS, "[L2-Brand Mismatch]")
    summary = summarize([invalid, right], select_metrics("labels"))
    assert summary["invalid_rate"] == 0.5 and summary["acc4"] == 0.5 and summary["n"] == 2
    assert summary["confusion/L2/invalid"] == 1 and summary["confusion/L2/L2"] == 1


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        ("Weighing L3 against L4, not L2. " * 2000 + "\n\nFinal answer: L3", "L3"),
        ("Final answer: L3 L4 " * 2000, None),  # a loop cut off by the token limit
        # Padding with blanks (was minutes: "L3" + 500 spaces took 24 s; a run of blanks is now squeezed first).
        ("L3" + " " * 100000 + "x", "L3"),
        ("L3" + "," * 100000 + "x L4", None),  # commas between two levels (was 30 s: a list gap backtracked)
        ("Final answer:" + " \n" * 50000 + "L3", "L3"),
        ("The item could be L4 at first sight, but on balance:\nL3\n" * 2000, "L3"),  # a concession, looping
        ("Final answer: 3. Or maybe L4. " * 3000, None),  # markers' reasons: the list items are found once
        ("1. " * 30000 + "Final answer: 3. The colour differs.", "L3"),
    ],
)
def test_a_long_reply_is_read(reply, label):
    # (How long it takes is benchmarks/reader_speed.py's question: a timer here failed on a loaded machine.)
    assert parse_reply(reply).label == label


def test_a_final_answer_offered_with_a_tentative_second_level_is_reported_as_a_hedge():
    """Not as a loop: the reply names two levels once each, the second tentatively."""
    parsed = parse_reply("Final answer: L2. L3 might also fit.")
    assert (parsed.status, parsed.rule) == (AMBIGUOUS, RULE_MARKER)
    assert parsed.detail == "the final answer hedges: L2, L3"
    assert parse_reply("Final answer: L3 L4 L3 L4").detail == "the final answer loops: L3, L4"
