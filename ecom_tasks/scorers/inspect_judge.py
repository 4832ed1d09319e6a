"""The rubric judge's Inspect binding: an Inspect ``Model`` as a :data:`~ecom_tasks.scorers.judge.Ask`,
with Inspect's own cache.

``await judge(get_model(role="grader"), prompt, parse)`` grades one prompt
with the retry rules of :func:`ecom_tasks.scorers.judge.run_judge`. Each
retry is a new input, so a separate cache entry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai.model import CachePolicy, ChatMessageAssistant, ChatMessageUser, GenerateConfig, Model

from ecom_tasks.scorers.judge import (
    GRADER_MAX_TOKENS,
    LIMIT_REMINDER,
    RETRY_REMINDER,
    Ask,
    JudgeResult,
    Message,
    ParsedT,
    run_judge,
)


def judge_cache(cache: bool | str) -> CachePolicy | bool:
    """``True``: cache grader replies without expiry, shared across epochs (a temperature-0 grade of
    the same text is the same grade); a string: that expiry (``"1W"``); ``False``: no cache."""
    if isinstance(cache, str) and cache.strip().lower() not in (
        "true",
        "false",
        "1",
        "0",
        "yes",
        "no",
        "on",
        "off",
        "",
    ):
        return CachePolicy(expiry=cache.strip(), per_epoch=False)
    if isinstance(cache, str):
        cache = cache.strip().lower() in ("true", "1", "yes", "on")
    return CachePolicy(expiry=None, per_epoch=False) if cache else False


def inspect_ask(grader: Model, *, cache: CachePolicy | bool = False, config: GenerateConfig | None = None) -> Ask:
    """``grader`` as an :data:`Ask`: temperature 0, the given output limit, Inspect's cache."""
    base = config or GenerateConfig()

    async def ask(messages: list[Message], max_tokens: int) -> tuple[str, str]:
        chat: list[Any] = [
            ChatMessageAssistant(content=m["content"])
            if m["role"] == "assistant"
            else ChatMessageUser(content=m["content"])
            for m in messages
        ]
        settings = base.merge(GenerateConfig(temperature=0.0, max_tokens=max_tokens))
        output = await grader.generate(chat, config=settings, cache=cache)
        return output.completion, str(output.stop_reason)

    return ask


async def judge(
    grader: Model,
    prompt: str,
    parse: Callable[[str], ParsedT],
    *,
    retries: int = 1,
    cache: CachePolicy | bool = False,
    reminder: str = RETRY_REMINDER,
    limit_reminder: str = LIMIT_REMINDER,
    max_tokens: int = GRADER_MAX_TOKENS,
    config: GenerateConfig | None = None,
) -> JudgeResult[ParsedT]:
    """Ask the Inspect model ``grader`` to grade ``prompt`` (see :func:`~ecom_tasks.scorers.judge.run_judge`)."""
    return await run_judge(
        inspect_ask(grader, cache=cache, config=config),
        prompt,
        parse,
        grader=str(grader),
        retries=retries,
        reminder=reminder,
        limit_reminder=limit_reminder,
        max_tokens=max_tokens,
    )
