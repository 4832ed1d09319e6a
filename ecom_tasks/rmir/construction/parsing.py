"""Reading the construction stages' replies: the generated pairs, the filter's yes/no, a judge's vote.

Each parser reads the answer region of the reply (after the last
``</think>``; a reply cut off inside ``<think>`` is ``truncated``) and takes
the *last* occurrence of a tag, so a model that first echoes the requested
format and then answers is read by its answer. A reply that cannot be read is
a counted failure with a status, never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from ecom_tasks.rmir.construction.prompts import ABSTAIN, CATEGORY_TAGS
from ecom_tasks.scorers.replies import answer_region

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


def _blocks(text: str, names: tuple[str, ...]) -> list[str]:
    """Contents of every ``<name>...</name>`` of any of ``names`` (case-insensitive), in order."""
    alternatives = "|".join(re.escape(n) for n in names)
    pattern = re.compile(rf"<\s*(?:{alternatives})\s*>(.*?)<\s*/\s*(?:{alternatives})\s*>", re.IGNORECASE | re.DOTALL)
    return [m.group(1) for m in pattern.finditer(text)]


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


def parse_generation(reply: str | None) -> GenerationParse:
    region = answer_region(reply or "")
    if region is None:
        return GenerationParse("truncated", missing=CATEGORY_TAGS)
    if not region.strip():
        return GenerationParse("empty", missing=CATEGORY_TAGS)
    pairs: dict[str, GeneratedPair] = {}
    abstained: list[str] = []
    missing: list[str] = []
    for category in CATEGORY_TAGS:
        found = _blocks(region, _CATEGORY_NAMES[category])
        if not found:
            missing.append(category)
            continue
        block = found[-1]
        query = _last(block, _FIELD_NAMES["query"])
        target = _last(block, _FIELD_NAMES["target"])
        reasoning = _last(block, _FIELD_NAMES["reasoning"]) or ""
        if (
            _is_abstain(block if query is None and target is None else None)
            or _is_abstain(query)
            or _is_abstain(target)
        ):
            abstained.append(category)
        elif query and target:
            pairs[category] = GeneratedPair(query, target, reasoning)
        else:
            missing.append(category)
    description = _last(region, ("image", "input_desc")) or ""
    if not pairs and not abstained:
        # A whole-image refusal in the requested words (or close to them) declines every category.
        if _is_abstain(region) and "SENSITIVE" in region.upper():
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
    """The single verdict word ``value`` holds ("**Yes.**" -> yes); None when it holds none or
    several different ones ("True or False")."""
    tokens = re.findall(r"[a-z]+|[是否]", value.lower())
    found = {words[t] for t in tokens if t in words}
    return found.pop() if len(found) == 1 else None


def _verdict(
    reply: str | None, tags: tuple[str, ...], words: Mapping[str, _Word], *, may_abstain: bool = False
) -> tuple[_Word | None, str]:
    """The verdict word of the last of ``tags``, else of a last ``Verdict: ...`` line, with the status
    (``ok``, ``no_verdict``, ``empty``, ``truncated``); an untagged reply declining in the content
    policy's words (``ABSTAIN ... sensitive``) is ABSTAIN when the reply ``may_abstain``."""
    region = answer_region(reply or "")
    if region is None:
        return None, "truncated"
    if not region.strip():
        return None, "empty"
    text = _last(region, tags)
    if text is None:
        lines = _VERDICT_LINE.findall(region)
        text = lines[-1].strip() if lines else None
    if text is None and may_abstain and _is_abstain(region):
        return ABSTAIN, "ok"  # type: ignore[return-value]
    value = _word(text, words) if text is not None else None
    return (value, "ok") if value is not None else (None, "no_verdict")


@dataclass(frozen=True)
class FilterParse:
    valid: bool | None
    status: str  # ok | no_verdict | empty | truncated

    @property
    def failed(self) -> bool:
        return self.valid is None


def parse_filter(reply: str | None) -> FilterParse:
    """The filter's verdict: the last ``<verdict>`` (or ``<is_valid>``) tag, else a last
    ``Verdict: ...`` line; yes or no."""
    return FilterParse(*_verdict(reply, ("verdict", "is_valid"), _FILTER_WORDS))


@dataclass(frozen=True)
class JudgeParse:
    verdict: str | None  # "True" | "False" | "ABSTAIN"
    status: str  # ok | no_verdict | empty | truncated

    @property
    def failed(self) -> bool:
        return self.verdict is None


def parse_judgement(reply: str | None) -> JudgeParse:
    """A judge's vote: the last ``<verdict>`` (or the paper's ``<consistent>``) tag, else a last
    ``Verdict: ...`` line; True, False or ABSTAIN. A bare refusal in the content policy's words
    ("ABSTAIN ... sensitive") is ABSTAIN."""
    return JudgeParse(*_verdict(reply, ("verdict", "consistent"), _JUDGE_WORDS, may_abstain=True))
