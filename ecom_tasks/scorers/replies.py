"""Where a model's answer is in its reply: one reasoning-stripping rule for every benchmark.

Reasoning models write ``<think>…</think>`` before answering; some servers
drop the opening tag (a chat template already put it in the prompt), others
split the reasoning into a separate field and return only the answer.
"""

from __future__ import annotations

import re

_THINK_OPEN = re.compile(r"<\s*think\s*>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"<\s*/\s*think\s*>", re.IGNORECASE)


def answer_region(completion: str | None) -> str | None:
    """The text after the last ``</think>`` (opening tag or not); the whole reply when it has no
    think tags; ``None`` when a ``<think>`` is never closed (the reply was cut off mid-reasoning)."""
    text = completion or ""
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        return text[closes[-1].end() :]
    if _THINK_OPEN.search(text):
        return None
    return text
