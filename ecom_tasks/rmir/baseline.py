"""Baseline responder for the reason-then-embed prompt: restates the request's content words.

It cannot see the image, so its "description" is the query text without
question words: embedding it is close to embedding the query text itself, a
floor for what reasoning about the image adds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ecom_tasks.rmir.prompts import DESCRIPTION_MARKER

_REQUEST = re.compile(r"^Request:[ \t]*(.+)$", re.MULTILINE)
_WORD = re.compile(r"[A-Za-z0-9]+(?:'[a-z]+)?")
_QUESTION_WORDS = frozenset(
    "what which who whom whose when where why how would could should will can do does did is are was were be "
    "this these that those it its the a an of to in on at for by with you your i my me".split()
)


def respond_rmir(messages: Sequence[tuple[str, str]]) -> str | None:
    """Answer an RMIR reason-then-embed prompt, else None."""
    text = "\n".join(t for _, t in messages)
    if DESCRIPTION_MARKER not in text:
        return None
    found = _REQUEST.findall(text)
    if not found:
        return None
    words = [w for w in _WORD.findall(found[-1]) if w.lower() not in _QUESTION_WORDS]
    return f"The request names no object I can see; restating it.\n{DESCRIPTION_MARKER} {' '.join(words) or found[-1].strip()}"
