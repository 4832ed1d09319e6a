"""The description in a reason-then-embed reply: the text after the last ``Description:`` marker, else the
whole reply outside ``<think>`` blocks; copies of the prompt and the line a token limit cut are never read
as one. The rules and the failure statuses (``empty``, ``echo``, ``truncated``) are in the README
("Deviations from the paper", reason-then-embed)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ecom_tasks.rmir.prompts import DESCRIPTION_MARKER, FIXED_PARTS, PLACEHOLDER, prompt_query
from ecom_tasks.scorers.replies import ECHO_MIN_CHARS, Echoes, answer_region, find_echoes, flag_runs

#: Statuses of a reply that yields no description: the query then scores 0 and is counted as failed.
FAILED_STATUSES = ("empty", "truncated", "echo")
#: An unmarked reply of which at least this share copies the prompt is an echo, not a description.
MOSTLY_ECHO = 0.5
#: A copy of the request is an echo when it holds this share of the request's letters and digits (at
#: least ``ECHO_MIN_CHARS``), or the whole request when it is shorter than that.
QUERY_ECHO_SHARE = 0.6
_WORD = re.escape(DESCRIPTION_MARKER.rstrip(":"))
# At a line's start, or after a sentence of reasoning on that line ("So it fell. Description: ..."); the colon
# may be full-width ("Description：...", as CJK models write it).
_MARKER = re.compile(
    rf"(?:^|(?<=[.!?。] ))[ \t>*_#]*{_WORD}[*_]*[ \t]*[:：][*_]*[ \t]*(.*)$", re.IGNORECASE | re.MULTILINE
)
#: The marker anywhere on a line (a copied line may run into it: "... of the form: Description: a cat").
_ANY_MARKER = re.compile(rf"{_WORD}[*_]*[ \t]*[:：][*_]*[ \t]*", re.IGNORECASE)


def _key(text: str) -> str:
    return "".join(c for c in text.casefold() if c.isalnum())


_PLACEHOLDER_KEY = _key(PLACEHOLDER)


@dataclass(frozen=True)
class ParsedDescription:
    text: str | None
    status: str  # ok | unmarked (no marker: the whole visible reply is used) | empty | echo | truncated

    @property
    def failed(self) -> bool:
        return self.status in FAILED_STATUSES


def _line_pieces(region: str, spans: list[tuple[int, int]]) -> list[bool]:
    """Which characters of ``region`` are echo: ``spans`` split at line breaks, without the short pieces that
    an echo only reached across a line break into a line of the model's own words (``... glass.`` then a
    copied line: the ``.`` is its own)."""
    echo = [False] * len(region)
    for start, end in spans:
        at = start
        while at < end:
            line_start = region.rfind("\n", 0, at) + 1
            line_end = region.find("\n", at)
            line_end = len(region) if line_end < 0 else line_end
            stop = min(end, line_end + 1)
            own = region[line_start:at] + region[min(stop, line_end) : line_end]
            crosses = start < line_start or end > line_end
            if not (crosses and len(_key(region[at:stop])) < ECHO_MIN_CHARS and any(c.isalnum() for c in own)):
                echo[at:stop] = [True] * (stop - at)
            at = stop
    return echo


def prompt_echoes(region: str, prompt: str | None = None) -> Echoes:
    """The stretches of ``region`` that copy the prompt: its instructions and format line, or most of its
    request; the ``Description:`` marker of a line whose text is not all copied stays the model's own."""
    query = prompt_query(prompt) if prompt is not None else None
    fixed = FIXED_PARTS if prompt is None or query is not None else (prompt,)
    spans = list(find_echoes(region, fixed, truncated=False).spans)
    if query:
        length = len(_key(query))
        least = min(length, max(ECHO_MIN_CHARS, math.ceil(QUERY_ECHO_SHARE * length)))
        spans += find_echoes(region, [query], min_chars=least, truncated=False).spans
    copied = [False] * len(region)
    for start, end in spans:
        copied[start:end] = [True] * (end - start)
    echo = _line_pieces(region, flag_runs(copied))
    echoes = Echoes(region, tuple(flag_runs(echo)))
    for match in _ANY_MARKER.finditer(region):
        line_end = region.find("\n", match.end())
        line_end = len(region) if line_end < 0 else line_end
        body = region[match.end() : line_end]
        if any(c.isalnum() for c in body) and not echoes.covers(match.end(), line_end):
            echo[match.start() : match.end()] = [False] * (match.end() - match.start())
    return Echoes(region, tuple(flag_runs(echo)))


def parse_reply(reply: str | None, *, prompt: str | None = None, truncated: bool | None = None) -> ParsedDescription:
    """The model's own description in ``reply``, or None with the failure status. ``prompt``: the text the model
    was sent (default: the instructions without the request); ``truncated``: a token limit stopped the reply
    (None: unknown, read as finished)."""
    region = answer_region(reply or "")
    if region is None:
        return ParsedDescription(None, "truncated")
    if truncated:
        region = region[: region.rfind("\n") + 1]  # the last line is where the limit cut
    echoes = prompt_echoes(region, prompt)
    kept = echoes.stripped()
    copied = bool(echoes.spans)
    matches = list(_MARKER.finditer(kept))
    if matches:
        last = matches[-1]
        text = " ".join((last.group(1) + kept[last.end() :]).split())
    elif truncated:
        return ParsedDescription(None, "truncated")
    else:
        text = " ".join(kept.split())
        visible = sum(not c.isspace() for c in region)
        echoed = sum(not c.isspace() for start, end in echoes.spans for c in region[start:end])
        if echoed and echoed >= MOSTLY_ECHO * visible:
            return ParsedDescription(None, "echo")
    if _key(text) == _PLACEHOLDER_KEY:
        return ParsedDescription(None, "echo")
    if not any(c.isalnum() for c in text):
        if truncated:  # the description was to follow on the line the limit cut
            return ParsedDescription(None, "truncated")
        return ParsedDescription(None, "echo" if copied else "empty")
    return ParsedDescription(text, "ok" if matches else "unmarked")
