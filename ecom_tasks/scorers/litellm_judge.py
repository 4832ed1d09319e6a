"""The rubric judge's litellm binding: any model litellm reaches (``anthropic/claude-sonnet-4-0``, or
``openai/<served name>`` with ``api_base=`` for an OpenAI-compatible server such as vLLM) as a
:data:`~ecom_tasks.scorers.judge.Ask`; keys come from the provider's usual variable."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ecom_tasks.scorers import context_limit
from ecom_tasks.scorers.judge import GRADER_TEMPERATURE, Ask, Message, PromptTooLong, stop_reason

#: Grader calls in flight at once, per grader.
MAX_CONCURRENCY = 8
#: Attempts per grader call on 429 / 5xx / connection errors (the first one included).
MAX_ATTEMPTS = 6
#: Seconds of the first backoff (doubled each time, with jitter, at most ``MAX_BACKOFF``).
INITIAL_BACKOFF = 1.0
MAX_BACKOFF = 60.0
#: Seconds one request may take.
TIMEOUT = 600.0


def retryable(error: BaseException) -> bool:
    """Rate limits, server errors, timeouts and dropped connections; never a bad request."""
    import litellm

    if isinstance(error, litellm.ContextWindowExceededError):
        return False
    if isinstance(error, (litellm.Timeout, litellm.APIConnectionError, litellm.RateLimitError)):
        return True
    status = getattr(error, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


def litellm_ask(
    model: str,
    *,
    api_base: str | None = None,
    api_key: str | None = None,
    max_concurrency: int = MAX_CONCURRENCY,
    max_attempts: int = MAX_ATTEMPTS,
    initial_backoff: float = INITIAL_BACKOFF,
    timeout: float = TIMEOUT,
) -> Ask:
    """``model`` (a litellm model name) as an :data:`Ask` at temperature 0, ``max_concurrency`` calls at a time;
    a :func:`retryable` error is retried with backoff and jitter, a prompt longer than the grader's context
    (:mod:`~ecom_tasks.scorers.context_limit`) never: it raises :class:`~ecom_tasks.scorers.judge.PromptTooLong`."""
    from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download of litellm's price list
    import litellm

    litellm.suppress_debug_info = True  # no help banner with every error: ours says what failed
    gate = asyncio.Semaphore(max(1, int(max_concurrency)))
    options: dict[str, Any] = {"temperature": GRADER_TEMPERATURE, "timeout": timeout, "num_retries": 0}
    if api_base:
        options["api_base"] = api_base
        # An OpenAI-compatible server that checks no key still needs one in the client.
        options["api_key"] = api_key or os.environ.get("OPENAI_API_KEY") or "none"
    elif api_key:
        options["api_key"] = api_key

    async def ask(messages: list[Message], max_tokens: int) -> tuple[str, str]:
        async with gate:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception(retryable),
                stop=stop_after_attempt(max(1, int(max_attempts))),
                wait=wait_exponential_jitter(initial=initial_backoff, max=MAX_BACKOFF),
                reraise=True,
            ):
                with attempt:
                    try:
                        response = await litellm.acompletion(
                            model=model, messages=messages, max_tokens=max_tokens, **options
                        )
                    except Exception as error:
                        exceeded = context_limit.from_exception(error)
                        if exceeded is not None:  # not retried: the same prompt cannot fit next time
                            raise PromptTooLong(exceeded) from None
                        raise
        choice = response.choices[0]
        return choice.message.content or "", stop_reason(choice.finish_reason)

    return ask
