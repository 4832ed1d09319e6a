"""Reading the construction stages' replies: the generated pairs, the filter's yes/no, a judge's vote (the rules:
the RMIR README, "Prompts are ours")."""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from ecom_tasks.construction import Vote, offered_as_alternatives
from ecom_tasks.rmir.construction.prompts import (
    ABSTAIN,
    CATEGORY_TAGS,
    FILTER_INSTRUCTIONS,
    GENERATION_CLOSING,
    GENERATION_INSTRUCTIONS,
    JUDGE_CLOSING,
    JUDGE_INSTRUCTIONS,
    JUDGE_LIMIT_REMINDER,
    JUDGE_REMINDER,
    SENSITIVE_ABSTAIN,
)
from ecom_tasks.scorers.replies import answer_region, strip_echoes

#: Tag names accepted for each category (ours first; the paper's codes as a model may write them).
_CATEGORY_NAMES = {
    "functional": ("functional", "func", "example_func_1"),
    "temporal": ("temporal", "temp", "example_temp_1"),
    "causal": ("causal", "caus", "example_caus_1"),
}
_FIELD_NAMES = {
    "query": ("query",),
    "target": ("target", "target_desc", "target_description"),
    "reasoning": ("reasoning", "why"),
}


#: What each stage's reply is compared with (copies of them are not read): the stage's fixed texts.
_GENERATION_PROMPT = (GENERATION_INSTRUCTIONS, GENERATION_CLOSING)
_FILTER_PROMPT = (FILTER_INSTRUCTIONS,)
_JUDGE_PROMPT = (JUDGE_INSTRUCTIONS, JUDGE_CLOSING, JUDGE_REMINDER, JUDGE_LIMIT_REMINDER)


def _tag(names: tuple[str, ...]) -> str:
    alternatives = "|".join(re.escape(n) for n in names)
    return rf"<\s*(?:{alternatives})\s*>(.*?)<\s*/\s*(?:{alternatives})\s*>"


def _blocks(text: str, names: tuple[str, ...]) -> list[str]:
    """Contents of every ``<name>...</name>`` of any of ``names`` (case-insensitive), in order."""
    return [m.group(1) for m in re.finditer(_tag(names), text, re.IGNORECASE | re.DOTALL)]


def _own_text(reply: str | None, prompt: tuple[str, ...], answers: re.Pattern[str]) -> tuple[str | None, str]:
    """The reply after its reasoning without what it copies from ``prompt``, or None with
    ``truncated`` (a ``<think>`` never closed) or ``empty``."""
    region = answer_region(reply or "")
    if region is None:
        return None, "truncated"
    if not region.strip():
        return None, "empty"
    return strip_echoes(region, prompt, answers=answers), "ok"


def _words(text: str) -> str:
    return " ".join(text.split()).casefold()


def _copied(text: str, prompt: tuple[str, ...]) -> bool:
    """Whether ``text`` (a category block) occurs as it is in one of the prompt's texts: the format's
    own placeholders, which an answer on its own is never taken for (strip_echoes keeps answers)."""
    own = _words(text)
    return bool(own) and any(own in _words(part) for part in prompt)


def _last(text: str, names: tuple[str, ...]) -> str | None:
    found = _blocks(text, names)
    return " ".join(found[-1].split()) if found else None


def _is_abstain(value: str | None) -> bool:
    return value is not None and value.strip().strip("*_.`\"' ").upper().startswith(ABSTAIN)


# --- generation ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class GeneratedPair:
    query: str
    target: str
    reasoning: str = ""


@dataclass(frozen=True)
class GenerationParse:
    """``pairs``: category -> the generated pair; ``abstained``: categories the model declined;
    ``missing``: categories with neither (a counted failure of that category).
    ``status``: ``ok`` (every category read), ``partial``, ``sensitive`` (the image was declined
    as a whole), ``empty``, ``truncated`` or ``unreadable`` (no category could be read)."""

    status: str
    pairs: dict[str, GeneratedPair] = field(default_factory=dict)
    abstained: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    image_description: str = ""

    @property
    def failed(self) -> bool:
        return self.status in ("empty", "truncated", "unreadable")


#: What the generation stage reads as an answer: a category's block, or the whole-image refusal.
_GENERATION_ANSWERS = re.compile(
    "|".join([*(_tag(names) for names in _CATEGORY_NAMES.values()), re.escape(SENSITIVE_ABSTAIN)]),
    re.IGNORECASE | re.DOTALL,
)


_SENSITIVE_REFUSAL = re.compile(r"\bABSTAIN\b[\s*_`\"':.,\-–—]*SENSITIVE", re.IGNORECASE)


def parse_generation(reply: str | None) -> GenerationParse:
    region, status = _own_text(reply, _GENERATION_PROMPT, _GENERATION_ANSWERS)
    if region is None:
        return GenerationParse(status, missing=CATEGORY_TAGS)
    pairs: dict[str, GeneratedPair] = {}
    abstained: list[str] = []
    missing: list[str] = []
    for category in CATEGORY_TAGS:
        found = _blocks(region, _CATEGORY_NAMES[category])
        if not found or (_copied(found[-1], _GENERATION_PROMPT) and not _is_abstain(found[-1])):
            missing.append(category)
            continue
        block = found[-1]
        query, target, reasoning = (_last(block, names) for names in _FIELD_NAMES.values())
        whole = block if query is None and target is None else None  # a block that is only ABSTAIN
        if any(_is_abstain(text) for text in (whole, query, target)):
            abstained.append(category)
        elif query and target:
            pairs[category] = GeneratedPair(query, target, reasoning or "")
        else:
            missing.append(category)
    description = _last(region, ("image", "input_desc")) or ""
    if not pairs and not abstained:
        # A whole-image refusal in the requested words (or close to them), after an apology too, declines
        # every category.
        if _SENSITIVE_REFUSAL.search(region):
            return GenerationParse("sensitive", abstained=CATEGORY_TAGS)
        return GenerationParse("unreadable", missing=CATEGORY_TAGS)
    return GenerationParse("partial" if missing else "ok", pairs, tuple(abstained), tuple(missing), description)


# --- filter and judge: one verdict ---------------------------------------------------------------

_FILTER_WORDS = {"yes": True, "valid": True, "是": True, "no": False, "invalid": False, "否": False}
_JUDGE_WORDS = {
    "true": "True",
    "yes": "True",
    "accept": "True",
    "false": "False",
    "no": "False",
    "reject": "False",
    "abstain": ABSTAIN,
}
_VERDICT_LINE = re.compile(
    r"^[ \t>*_#-]*(?:final\s+)?(?:verdict|is_valid|consistent)[*_]*\s*[:：][*_]*[ \t]*(.+)$",
    re.IGNORECASE | re.MULTILINE,
)


_Word = TypeVar("_Word")


def _word(value: str, words: Mapping[str, _Word]) -> _Word | None:
    """The single verdict word ``value`` holds ("**Yes.**" -> yes); None when it holds none,
    several different ones ("True or False"), or a negated one ("not valid", "isn't true", "不是")."""
    tokens = re.findall(r"[a-z]+|[是否不]", value.lower())
    if any(before in ("not", "never", "t", "不") and word in words for before, word in itertools.pairwise(tokens)):
        return None
    found = {words[t] for t in tokens if t in words}
    return found.pop() if len(found) == 1 else None


def _verdict(
    reply: str | None,
    tags: tuple[str, ...],
    words: Mapping[str, _Word],
    prompt: tuple[str, ...],
    *,
    may_abstain: bool = False,
) -> tuple[_Word | None, str]:
    """The verdict word of the last of ``tags``, else of a last ``Verdict: ...`` line, with the status
    (``ok``, ``no_verdict``, ``empty``, ``truncated``); an untagged reply declining in the content
    policy's words (``ABSTAIN ... sensitive``) is ABSTAIN when the reply ``may_abstain``. Copies of
    ``prompt`` are not read, nor a verdict offered as an alternative to the one before it."""
    answers = re.compile(f"{_tag(tags)}|{_VERDICT_LINE.pattern}", re.IGNORECASE | re.DOTALL | re.MULTILINE)
    region, status = _own_text(reply, prompt, answers)
    if region is None:
        return None, status
    tagged = list(re.finditer(_tag(tags), region, re.IGNORECASE | re.DOTALL))
    if offered_as_alternatives(region, tagged):
        return None, "no_verdict"
    text = " ".join(tagged[-1].group(1).split()) if tagged else None
    if text is None:
        lines = _VERDICT_LINE.findall(region)
        text = lines[-1].strip() if lines else None
    if text is None and may_abstain and _is_abstain(region):
        return ABSTAIN, "ok"  # type: ignore[return-value]
    value = _word(text, words) if text is not None else None
    return (value, "ok") if value is not None else (None, "no_verdict")


class FilterParse(Vote):
    """The filter's verdict, ``valid`` (yes: True, no: False), or None with why (no_verdict, empty, truncated)."""

    @property
    def valid(self) -> bool | None:
        return self.vote  # type: ignore[return-value]


def parse_filter(reply: str | None) -> FilterParse:
    """The filter's verdict: the last ``<verdict>`` (or ``<is_valid>``) tag, else a last
    ``Verdict: ...`` line; yes or no."""
    return FilterParse(*_verdict(reply, ("verdict", "is_valid"), _FILTER_WORDS, _FILTER_PROMPT))


class JudgeParse(Vote):
    """A judge's ``verdict`` ("True", "False", "ABSTAIN") or None with why (no_verdict, empty, truncated)."""

    @property
    def verdict(self) -> str | None:
        return self.vote  # type: ignore[return-value]


def parse_judgement(reply: str | None) -> JudgeParse:
    """A judge's vote: the last ``<verdict>`` (or the paper's ``<consistent>``) tag, else a last
    ``Verdict: ...`` line; True, False or ABSTAIN. A bare refusal in the content policy's words
    ("ABSTAIN ... sensitive") is ABSTAIN."""
    return JudgeParse(*_verdict(reply, ("verdict", "consistent"), _JUDGE_WORDS, _JUDGE_PROMPT, may_abstain=True))
