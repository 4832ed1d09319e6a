"""Reading a relevance vote (the last ``Answer:`` line, else a reply that is only the word): ``relevant``,
``irrelevant`` (``not relevant`` too) or an abstention with why (a line naming both labels, or neither)."""

from __future__ import annotations

import re

from ecom_tasks.construction import (
    AMBIGUOUS,
    LINE_START,
    NO_ANSWER,
    Prompt,
    Vote,
    last_marked,
    offered_as_alternatives,
    reply_region,
)
from ecom_tasks.monbench.construction.prompts import IRRELEVANT, RELEVANT, VOTE_SYSTEM

_MARKER = re.compile(
    LINE_START + r"(?:final\s+answer|answer|verdict|label|答案)\s*\**\s*[:：]\s*(.+)$", re.IGNORECASE | re.MULTILINE
)
_WORDS = {
    IRRELEVANT: re.compile(
        r"\birrelevant\b|\bnot\s+(?:(?:at\s+all|really|very|particularly|that|quite)\s+)?relevant\b|\bunrelated\b"
        r"|不太?相关|无关",
        re.IGNORECASE,
    ),
    RELEVANT: re.compile(r"(?<!ir)\brelevant\b|相关", re.IGNORECASE),
}
_DOUBLE_NEGATION = re.compile(r"\bnot\s+irrelevant\b|并非不相关|不是不相关", re.IGNORECASE)


class RelevanceVote(Vote):
    """One reply read: ``label`` (relevant | irrelevant) or None (an abstention) with why."""

    @property
    def label(self) -> str | None:
        return self.vote  # type: ignore[return-value]


def _label_of(text: str) -> RelevanceVote:
    if _DOUBLE_NEGATION.search(text):
        return RelevanceVote(RELEVANT)
    stripped = _WORDS[IRRELEVANT].sub(" ", text)
    irrelevant = bool(_WORDS[IRRELEVANT].search(text))
    relevant = bool(_WORDS[RELEVANT].search(stripped))
    if irrelevant and relevant:
        return RelevanceVote(None, AMBIGUOUS)
    if irrelevant:
        return RelevanceVote(IRRELEVANT)
    if relevant:
        return RelevanceVote(RELEVANT)
    return RelevanceVote(None, NO_ANSWER)


def parse_relevance(reply: str | None, *, prompt: Prompt = None) -> RelevanceVote:
    """``relevant``, ``irrelevant`` or an abstention, with the reading's status. ``prompt``: the texts
    sent (default: the voting instructions)."""
    region, status = reply_region(reply, (VOTE_SYSTEM,) if prompt is None else prompt, _MARKER)
    if region is None:
        return RelevanceVote(None, status)
    found = list(_MARKER.finditer(region))
    # The format's two answer lines offered as alternatives: "Answer: relevant\nor\nAnswer: irrelevant".
    if offered_as_alternatives(region, found):
        if _label_of(found[-2].group(1)).label != _label_of(found[-1].group(1)).label:
            return RelevanceVote(None, AMBIGUOUS)
    answer = last_marked(region, _MARKER, 30)
    return _label_of(answer) if answer is not None else RelevanceVote(None, NO_ANSWER)
