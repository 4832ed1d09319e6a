"""MonBench answer extraction: only what stands inside the requested tags counts.

A reply is classified, never raised on: ``ok`` (a valid choice), or one of
the invalid statuses (format violations, counted in ``invalid_rate`` and always
wrong).

Reasoning is removed with the rule every benchmark shares
(``ecom_tasks.scorers.replies.answer_region``): only the text after the last
``</think>`` is read; a ``<think>`` that is never closed is ``unclosed_think``.

The Content tag is matched against the displayed options after normalising
both sides (NFKC, casefold, whitespace, surrounding quotes, trailing
punctuation, then spaces removed, so ``Exact Match`` is ``ExactMatch``); the
option's shown letter may precede it (``A. text``, ``(A) text``), but a letter
naming another option, or a value matching several options, is
``unknown_content``: never a guess.

Label+Content replies are graded by the ``<Label>`` tag (the format's primary
answer, cf. the paper's Table 15); when both tags parse and name different
options the parse is ``ok`` with ``disagreement=True``. With ``strict=True``
both tags must parse and agree: a disagreement is ``mismatch`` (wrong, not
invalid) and a content problem makes the reply invalid.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from ecom_tasks.monbench.prompts import ANSWER_TAG, LABEL_TAG
from ecom_tasks.monbench.schema import LETTERS
from ecom_tasks.scorers.replies import answer_region


def _tag_pattern(tag: str) -> re.Pattern[str]:
    return re.compile(rf"<\s*{tag}\s*>(.*?)<\s*/\s*{tag}\s*>", re.IGNORECASE | re.DOTALL)


_LABEL = _tag_pattern(LABEL_TAG)
_ANSWER = _tag_pattern(ANSWER_TAG)

OK = "ok"
MISMATCH = "mismatch"
NO_TAG = "no_tag"
CONFLICTING_TAGS = "conflicting_tags"
OUT_OF_RANGE = "out_of_range"
UNKNOWN_CONTENT = "unknown_content"
UNCLOSED_THINK = "unclosed_think"
INVALID_STATUSES = (NO_TAG, CONFLICTING_TAGS, OUT_OF_RANGE, UNKNOWN_CONTENT, UNCLOSED_THINK)


@dataclass(frozen=True)
class ParsedAnswer:
    position: int | None  # chosen displayed position (0 = A), None unless status is ok
    status: str
    detail: str = ""
    #: Label+Content only: both tags parsed and name different options.
    disagreement: bool = False

    @property
    def invalid(self) -> bool:
        return self.status in INVALID_STATUSES


_QUOTES = "\"'`\u201c\u201d\u2018\u2019\u00ab\u00bb"
_TRAILING = ".,;:!"
# A shown letter before the option text: "a. ", "a) ", "a: ", "(a) " (after casefolding).
_LETTER_PREFIX = re.compile(r"^(?:\(\s*([a-z])\s*\)[.:]?|([a-z])\s*[.):])\s*(\S.*)$", re.DOTALL)


def _normalize(text: str) -> str:
    """NFKC, casefold, single spaces, no surrounding quotes nor trailing ``.,;:!``."""
    text = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    previous = None
    while text != previous:
        previous = text
        text = text.strip().strip(_QUOTES).strip().rstrip(_TRAILING).strip()
    return text


@functools.lru_cache(maxsize=8192)  # option texts recur in every run of a question
def _key(text: str) -> str:
    """What two contents must share to name the same option: the normal form without spaces."""
    return _normalize(text).replace(" ", "")


def _one_value(pattern: re.Pattern[str], text: str, normalize) -> tuple[str | None, str]:
    values = {normalize(v) for v in pattern.findall(text)}
    if not values:
        return None, NO_TAG
    if len(values) > 1:
        return None, CONFLICTING_TAGS
    return values.pop(), OK


def _letter_position(text: str) -> tuple[int | None, str, str]:
    value, status = _one_value(_LABEL, text, lambda v: v.strip().strip("().").strip().upper())
    if value is None:
        return None, status, f"{status} <Label>"
    if value not in LETTERS:
        return None, OUT_OF_RANGE, f"label {value!r} is not one of A-D"
    return LETTERS.index(value), OK, ""


def _match(value: str, displayed: tuple[str, ...]) -> tuple[int | None, str, str]:
    """The one displayed option ``value`` names: its text, optionally after its own letter."""
    keys = [_key(choice) for choice in displayed]
    whole = [i for i, key in enumerate(keys) if key == _key(value)]
    if len(whole) == 1:
        return whole[0], OK, ""
    if len(whole) > 1:
        return None, UNKNOWN_CONTENT, f"answer {value[:80]!r} matches options {', '.join(LETTERS[i] for i in whole)}"
    prefixed = _LETTER_PREFIX.match(_normalize(value))
    if prefixed:
        letter = (prefixed.group(1) or prefixed.group(2)).upper()
        rest = [i for i, key in enumerate(keys) if key == _key(prefixed.group(3))]
        if len(rest) > 1:
            return None, UNKNOWN_CONTENT, f"answer {value[:80]!r} matches options {', '.join(LETTERS[i] for i in rest)}"
        if len(rest) == 1:
            if letter in LETTERS[: len(displayed)] and LETTERS.index(letter) == rest[0]:
                return rest[0], OK, ""
            return None, UNKNOWN_CONTENT, f"answer {value[:80]!r}: letter {letter} but the text is option {LETTERS[rest[0]]}"
    return None, UNKNOWN_CONTENT, f"answer {value[:80]!r} matches no option"


def _content_position(text: str, displayed: tuple[str, ...]) -> tuple[int | None, str, str]:
    values = {_key(v): v for v in _ANSWER.findall(text)}  # repeats of one answer count once
    if not values:
        return None, NO_TAG, f"{NO_TAG} <Answer>"
    resolved = [_match(v, displayed) for v in values.values()]
    if len(resolved) == 1:
        return resolved[0]
    positions = {position for position, status, _ in resolved if status == OK}
    if len(positions) == 1 and all(status == OK for _, status, _ in resolved):
        return positions.pop(), OK, ""  # e.g. "<Answer>B. Complement</Answer> ... <Answer>Complement</Answer>"
    return None, CONFLICTING_TAGS, f"{CONFLICTING_TAGS} <Answer>"


def parse_reply(
    completion: str | None,
    fmt: str,
    displayed: tuple[str, ...] | list[str],
    *,
    strict: bool = False,
) -> ParsedAnswer:
    """Classify a model reply for one item shown with options ``displayed``.

    ``strict`` only affects Label+Content: both tags must parse and agree (see the module docstring).
    """
    if fmt not in ("label", "content", "label_content"):
        raise ValueError(f"unknown format {fmt!r}")
    text = answer_region(completion)
    if text is None:
        return ParsedAnswer(None, UNCLOSED_THINK, "<think> is never closed (reply cut off while reasoning)")
    displayed = tuple(displayed)
    if fmt == "label":
        return ParsedAnswer(*_letter_position(text))
    if fmt == "content":
        return ParsedAnswer(*_content_position(text, displayed))
    by_label = _letter_position(text)
    if by_label[1] != OK:
        return ParsedAnswer(*by_label)
    by_content = _content_position(text, displayed)
    label_pos, content_pos = by_label[0], by_content[0]
    disagree = by_content[1] == OK and label_pos != content_pos
    detail = f"label names {LETTERS[label_pos]}, content names {LETTERS[content_pos]}" if disagree else ""  # type: ignore[index]
    if strict:
        if by_content[1] != OK:
            return ParsedAnswer(*by_content)
        if disagree:
            return ParsedAnswer(None, MISMATCH, detail, disagreement=True)
        return ParsedAnswer(label_pos, OK)
    return ParsedAnswer(label_pos, OK, detail, disagreement=disagree)
