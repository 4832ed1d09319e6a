"""The description in a reason-then-embed reply."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ecom_tasks.rmir.prompts import DESCRIPTION_MARKER
from ecom_tasks.scorers.replies import answer_region

#: Statuses of a reply that yields no description: the query then scores 0 and is counted as failed.
FAILED_STATUSES = ("empty", "truncated")
_MARKER = re.compile(
    rf"^[ \t>*_#]*{re.escape(DESCRIPTION_MARKER.rstrip(':'))}[*_]*\s*:[*_]*[ \t]*(.*)$", re.IGNORECASE | re.MULTILINE
)


@dataclass(frozen=True)
class ParsedDescription:
    text: str | None
    status: str  # ok | unmarked (no marker: the whole visible reply is used) | empty | truncated

    @property
    def failed(self) -> bool:
        return self.status in FAILED_STATUSES


def parse_reply(reply: str | None) -> ParsedDescription:
    """The text after the last ``Description:`` line (to the end of the reply), else the whole
    reply outside ``<think>`` blocks; nothing left is a failure."""
    region = answer_region(reply or "")
    if region is None:
        return ParsedDescription(None, "truncated")
    matches = list(_MARKER.finditer(region))
    if matches:
        last = matches[-1]
        text = " ".join((last.group(1) + region[last.end() :]).split())
        return ParsedDescription(text or None, "ok" if text else "empty")
    text = " ".join(region.split())
    return ParsedDescription(text or None, "unmarked" if text else "empty")
