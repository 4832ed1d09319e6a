"""MonBench answer extraction: only what stands inside the requested tags counts.

A reply is classified, never raised on: ``ok`` (a valid choice), or one of
the invalid statuses (format violations, counted in ``invalid_rate`` and always
wrong), or ``mismatch`` for Label+Content replies whose label and content name
different options (wrong, counted apart as in the paper's Table 15).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ecom_tasks.monbench.prompts import ANSWER_TAG, LABEL_TAG
from ecom_tasks.monbench.schema import LETTERS

_THINK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)


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
INVALID_STATUSES = (NO_TAG, CONFLICTING_TAGS, OUT_OF_RANGE, UNKNOWN_CONTENT)


@dataclass(frozen=True)
class ParsedAnswer:
    position: int | None  # chosen displayed position (0 = A), None unless status is ok
    status: str
    detail: str = ""

    @property
    def invalid(self) -> bool:
        return self.status in INVALID_STATUSES


def _normalize(text: str) -> str:
    text = " ".join(text.split()).casefold()
    return text.strip().strip("\"'").strip().rstrip(".").strip()


def strip_reasoning(completion: str) -> str:
    """Drop ``<think>`` blocks so tags quoted while reasoning are not read as the answer."""
    text = _THINK.sub("", completion)
    # An unclosed think block (reply cut off mid-reasoning) holds no answer.
    return re.split(r"<think>", text, flags=re.IGNORECASE)[0]


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


def _content_position(text: str, displayed: tuple[str, ...]) -> tuple[int | None, str, str]:
    value, status = _one_value(_ANSWER, text, _normalize)
    if value is None:
        return None, status, f"{status} <Answer>"
    matches = [i for i, choice in enumerate(displayed) if _normalize(choice) == value]
    if len(matches) != 1:
        return None, UNKNOWN_CONTENT, f"answer {value[:80]!r} matches no option"
    return matches[0], OK, ""


def parse_reply(completion: str, fmt: str, displayed: tuple[str, ...] | list[str]) -> ParsedAnswer:
    """Classify a model reply for one item shown with options ``displayed``."""
    text = strip_reasoning(completion or "")
    displayed = tuple(displayed)
    if fmt == "label":
        return ParsedAnswer(*_letter_position(text))
    if fmt == "content":
        return ParsedAnswer(*_content_position(text, displayed))
    if fmt == "label_content":
        by_label = _letter_position(text)
        if by_label[1] != OK:
            return ParsedAnswer(*by_label)
        by_content = _content_position(text, displayed)
        if by_content[1] != OK:
            return ParsedAnswer(*by_content)
        if by_label[0] != by_content[0]:
            return ParsedAnswer(
                None, MISMATCH, f"label {LETTERS[by_label[0]]} names option {LETTERS[by_label[0]]}, content names {LETTERS[by_content[0]]}"  # type: ignore[index]
            )
        return ParsedAnswer(by_label[0], OK)
    raise ValueError(f"unknown format {fmt!r}")
