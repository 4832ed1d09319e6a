"""The rubric judge any Inspect task reuses: one grader call, a strict parse, one retry, a cache.

A benchmark supplies its grader prompt and its parser (``parse(reply)`` with
a ``failed`` attribute); :func:`judge` asks the grader model at temperature
0, and when the reply cannot be read asks once more in the same conversation
with a reminder of the required final line (a new input, so it is a separate
cache entry). The caller decides what a failure after the retry means
(EcomEval: excluded from every mean, counted, never a zero).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from inspect_ai.model import (
    CachePolicy,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    Model,
)

ParsedT = TypeVar("ParsedT")

#: What the grader is told when its reply had no readable grade.
RETRY_REMINDER = (
    "Your reply could not be read as a grade. Reply again: one or two sentences, then a last line of "
    "exactly the form 'Final Score: N' with N one of 0, 1, 2, 3."
)


@dataclass
class JudgeResult(Generic[ParsedT]):
    parsed: ParsedT
    replies: list[str] = field(default_factory=list)
    grader: str = ""

    @property
    def attempts(self) -> int:
        return len(self.replies)


def judge_cache(cache: bool | str) -> CachePolicy | bool:
    """``True``: cache grader replies without expiry, shared across epochs (a temperature-0 grade of
    the same text is the same grade); a string: that expiry (``"1W"``); ``False``: no cache."""
    if isinstance(cache, str) and cache.strip().lower() not in ("true", "false", "1", "0", "yes", "no", "on", "off", ""):
        return CachePolicy(expiry=cache.strip(), per_epoch=False)
    if isinstance(cache, str):
        cache = cache.strip().lower() in ("true", "1", "yes", "on")
    return CachePolicy(expiry=None, per_epoch=False) if cache else False


async def judge(
    grader: Model,
    prompt: str,
    parse: Callable[[str], ParsedT],
    *,
    retries: int = 1,
    cache: CachePolicy | bool = False,
    reminder: str = RETRY_REMINDER,
    config: GenerateConfig | None = None,
) -> JudgeResult[ParsedT]:
    """Ask ``grader`` to grade ``prompt``; retry up to ``retries`` times while ``parse(reply).failed``."""
    settings = (config or GenerateConfig()).merge(GenerateConfig(temperature=0.0))
    messages: list[Any] = [ChatMessageUser(content=prompt)]
    result: JudgeResult[ParsedT] | None = None
    for attempt in range(1 + max(0, retries)):
        output = await grader.generate(messages, config=settings, cache=cache)
        reply = output.completion
        parsed = parse(reply)
        if result is None:
            result = JudgeResult(parsed=parsed, grader=str(grader))
        result.parsed = parsed
        result.replies.append(reply)
        if not getattr(parsed, "failed", False):
            break
        messages = [*messages, ChatMessageAssistant(content=reply or "(empty)"), ChatMessageUser(content=reminder)]
    assert result is not None
    return result
