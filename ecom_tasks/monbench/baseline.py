"""MonBench's offline baseline responder (``ecom/baseline``, ``ecom-baseline``): the option sharing the most words
with the question (ties go to the earlier option: a realistic first-position bias); for closed relation labels, the
overlap between the two related texts picks the label."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from ecom_tasks.monbench import schema
from ecom_tasks.monbench.prompts import (
    ANSWER_TAG,
    LABEL_TAG,
    OUTPUT_FORMAT_HEADER,
    VALID_EXAMPLES_HEADER,
    render_answer,
)

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_OPTION = re.compile(r"^([A-D])\.\s+(.*)$")
_STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it of on or that the to was what which with user query product options location market ad".split()
)
RELATION_LABELS = frozenset(label.casefold() for labels in schema.RELATION_LABELS.values() for label in labels)


def tokens(text: str) -> set[str]:
    return {t for t in (m.group(0).casefold() for m in _TOKEN.finditer(text)) if t not in _STOPWORDS}


def overlap(a: str, b: str) -> float:
    """Jaccard overlap of word-token sets."""
    ta, tb = tokens(a), tokens(b)
    return len(ta & tb) / len(ta | tb) if ta and tb else 0.0


def last_options_block(text: str) -> tuple[str, list[str]] | None:
    """The question and A-D options of the last multiple-choice block in ``text``."""
    lines = text.splitlines()
    for end in range(len(lines) - 1, 2, -1):
        window = [m for line in lines[end - 3 : end + 1] if (m := _OPTION.match(line.strip())) is not None]
        if len(window) == 4 and [m.group(1) for m in window] == ["A", "B", "C", "D"]:
            start = end - 3
            question_lines = list(itertools.takewhile(str.strip, reversed(lines[:start])))[::-1]
            question = "\n".join(line for line in question_lines if line.strip().rstrip(":") != "Options")
            return question, [m.group(2).strip() for m in window]
    return None


def requested_format(text: str) -> tuple[bool, bool]:
    """Whether the instructions ask for a <Label> tag and/or an <Answer> tag."""
    head = text.split(OUTPUT_FORMAT_HEADER, 1)
    spec = head[1].split(VALID_EXAMPLES_HEADER, 1)[0] if len(head) == 2 else text
    wants_label, wants_answer = f"<{LABEL_TAG}>" in spec, f"<{ANSWER_TAG}>" in spec
    return (wants_label or not wants_answer), wants_answer


def relation_choice(question: str, options: Sequence[str]) -> int:
    """Pick a relation label from how much the two related texts overlap."""
    lines = [line for line in question.splitlines() if line.strip()]
    first, rest = (lines[0], " ".join(lines[1:])) if len(lines) > 1 else (question, question)
    quoted = re.findall(r"['\"“](.+?)['\"”]", question)
    if len(quoted) >= 2:
        first, rest = quoted[0], quoted[1]
    ta, tb = tokens(first), tokens(rest)
    shared = len(ta & tb) / len(ta) if ta else 0.0
    if shared == 0:
        wanted = ["irrelevant"]
    elif shared == 1 and len(tb) > len(ta):
        wanted = ["narrowing", "exactmatch"]
    elif shared >= 0.5:
        wanted = ["exactmatch", "substitute", "narrowing"]
    else:
        wanted = ["substitute", "complement"]
    folded = [o.casefold().replace(" ", "") for o in options]
    for label in wanted:
        if label in folded:
            return folded.index(label)
    return 0


def choose(question: str, options: Sequence[str]) -> int:
    if {o.casefold().replace(" ", "") for o in options} <= RELATION_LABELS:
        return relation_choice(question, options)
    scores = [overlap(question, option) for option in options]
    return scores.index(max(scores))


def respond_multiple_choice(messages: Sequence[tuple[str, str]]) -> str | None:
    """Answer the last A-D question in the conversation in the requested tag format (and the
    construction stage's relevance vote)."""
    vote = respond_relevance_vote(messages)
    if vote is not None:
        return vote
    text = "\n\n".join(text for _, text in messages)
    user_texts = [text for role, text in messages if role == "user"]
    block = last_options_block(user_texts[-1]) if user_texts else None
    block = block or last_options_block(text)
    if block is None:
        return None
    question, options = block
    return reply_in_requested_format(text, options, choose(question, options))


def reply_in_requested_format(instructions: str, options: Sequence[str], position: int) -> str:
    """A reply choosing ``options[position]`` in the tag format ``instructions`` ask for."""
    wants_label, wants_answer = requested_format(instructions)  # at least one of them
    fmt = "label_content" if wants_label and wants_answer else "label" if wants_label else "content"
    return render_answer(fmt, position, options)


# --- the construction stage's relevance vote (ecom_tasks/monbench/construction) ------------------

_VOTE_FIELD = re.compile(r"^(Query|Ad):[ \t]*(.*)$", re.MULTILINE)
#: Share of the query's words an ad must repeat for the baseline to call it relevant.
VOTE_COVERAGE = 0.5


def relevance_vote(query: str, ad: str) -> str:
    """``relevant`` when the ad repeats at least half of the query's words, else ``irrelevant``: the
    word-overlap judgement that hard cases are made to defeat."""
    wanted = tokens(query)
    covered = len(wanted & tokens(ad)) / len(wanted) if wanted else 0.0
    return "relevant" if covered >= VOTE_COVERAGE else "irrelevant"


def respond_relevance_vote(messages: Sequence[tuple[str, str]]) -> str | None:
    """Answer the construction stage's vote prompt (``Answer: relevant|irrelevant``), else None."""
    from ecom_tasks.monbench.construction.prompts import VOTE_VERSION

    if not any(role == "system" and f"[{VOTE_VERSION}]" in text for role, text in messages):
        return None
    user = "\n".join(text for role, text in messages if role == "user")
    fields = dict(_VOTE_FIELD.findall(user))
    return f"Answer: {relevance_vote(fields.get('Query', ''), fields.get('Ad', ''))}"
