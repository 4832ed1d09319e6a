"""The rubric judge's Inspect binding: an Inspect ``Model`` as a :data:`~ecom_tasks.scorers.judge.Ask`,
with Inspect's own cache.

``await judge(get_model(role="grader"), prompt, parse)`` grades one prompt
with the retry rules of :func:`ecom_tasks.scorers.judge.run_judge`. Each
retry is a new input, so a separate cache entry. A prompt the grader's server
refuses as longer than its context window (Inspect turns OpenAI's
``context_length_exceeded`` into a reply holding the error text with stop
reason ``model_length``; other servers' refusals it raises) raises
:class:`~ecom_tasks.scorers.judge.PromptTooLong`, so it is counted as that
failure instead of being read as the grader's reply.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai.model import CachePolicy, ChatMessageAssistant, ChatMessageUser, GenerateConfig, Model

from ecom_tasks.scorers import context_limit
from ecom_tasks.scorers.judge import (
    GRADER_MAX_TOKENS,
    GRADER_TEMPERATURE,
    INSPECT_LIMIT_OPTION,
    LIMIT_REMINDER,
    RETRY_REMINDER,
    Ask,
    JudgeResult,
    Message,
    ParsedT,
    PromptTooLong,
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
        settings = base.merge(GenerateConfig(temperature=GRADER_TEMPERATURE, max_tokens=max_tokens))
        try:
            output = await grader.generate(chat, config=settings, cache=cache)
        except Exception as error:
            exceeded = context_limit.from_exception(error)
            if exceeded is not None:
                raise PromptTooLong(exceeded) from None
            raise
        if output.stop_reason == "model_length" and not (output.usage and output.usage.output_tokens):
            exceeded = context_limit.context_exceeded(output.completion)  # a refusal Inspect made a reply
            if exceeded is not None:
                raise PromptTooLong(exceeded)
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
    limit_option: str = INSPECT_LIMIT_OPTION,
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
        limit_option=limit_option,
    )
