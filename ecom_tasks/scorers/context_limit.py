"""A prompt longer than the server's context: recognised in any framework, counted as its own failure.

A server refuses such a request with HTTP 400 (or 413), each in its own words:

- OpenAI: code ``context_length_exceeded``, "This model's maximum context length is 8192 tokens.
  However, your messages resulted in 9000 tokens...";
- vLLM and llama-cpp-python's server: "...maximum context length is 8192 tokens. However, you
  requested 9000 tokens (1000 in the messages, 8000 in the completion)...";
- llama.cpp's server: type ``exceed_context_size_error``, "the request exceeds the available context
  size, try increasing it", with ``n_prompt_tokens`` and ``n_ctx`` beside it;
- SGLang: "The input (9000 tokens) is longer than the model's context length (8192 tokens)".

Inspect turns OpenAI's code into a reply (stop reason ``model_length``) and raises on the others;
lm-eval's API models retry any 400 and then abort the run. The adapters give such an item the status
:data:`CONTEXT_EXCEEDED` (wrong, never the model's invalid answer), counted in :data:`RATE`. lm-eval
hands a task only the reply's text, so our lm-eval model's reply starts with :data:`REPLY_MARKER`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: The status and outcome field of an item whose prompt did not fit the server's context.
CONTEXT_EXCEEDED = "context_exceeded"
#: The share of such items (a metric of every benchmark's tasks).
RATE = "context_exceeded_rate"
#: How our lm-eval model's reply to a refused request starts (no model writes this).
REPLY_MARKER = "[ecom-tasks: context_exceeded] "

_RECOGNISED = re.compile(
    r"context_length_exceeded|exceed_context_size_error|maximum context length|context window of \d+"
    r"|exceeds? the (?:available )?context(?: size| window| length)?|longer than the model'?s context length"
    r"|prompt is too long|input length|too many tokens in the (?:prompt|input)",
    re.IGNORECASE,
)
_CONTEXT = (
    r"maximum context length (?:is|of) (\d+)",
    r"context window of (\d+)",
    r"\bn_ctx\b\W{1,4}(\d+)",
    r"model'?s context length \((\d+)",
    r"tokens? > (\d+) maximum",
)
_PROMPT = (
    r"\((\d+) in the messages",
    r"\((\d+) in the prompt",
    r"your messages resulted in (\d+) tokens",
    r"requested tokens \((\d+)\)",
    r"\bn_prompt_tokens\b\W{1,4}(\d+)",
    r"the input \((\d+) tokens\)",
    r"prompt is too long: (\d+) tokens",
)
_COMPLETION = (r"(\d+) in the completion",)


def _first(text: str, patterns: Sequence[str]) -> int | None:
    for pattern in patterns:
        found = re.search(pattern, text, re.IGNORECASE)
        if found:
            return int(found.group(1))
    return None


@dataclass(frozen=True)
class ContextExceeded:
    """A request the server refused because its prompt (with the reply's room) exceeds its context."""

    server_message: str
    prompt_tokens: int | None = None
    context_tokens: int | None = None
    completion_tokens: int | None = None

    def describe(self) -> str:
        """One line naming the prompt length and the context, as far as the server said them."""
        prompt = f"a prompt of {self.prompt_tokens} tokens" if self.prompt_tokens is not None else "the prompt"
        room = f" with {self.completion_tokens} reserved for the reply" if self.completion_tokens else ""
        size = f"of {self.context_tokens} tokens" if self.context_tokens is not None else "(size not stated)"
        context = f"the server's context {size}"
        fix = " (lower the output limit, shorten the items or use a longer context)" if room else ""
        return f"{prompt}{room} does not fit {context}{fix}; the server said: {self.server_message}"


def _text(error: str | Mapping[str, Any]) -> str:
    """An error as one line: a JSON body's message, then its other members (llama.cpp's token counts)."""
    if isinstance(error, Mapping):
        body = error.get("error", error)
        if isinstance(body, Mapping):
            others = "; ".join(f"{key}: {value}" for key, value in body.items() if key != "message")
            return f"{body.get('message', '')} ({others})" if others else str(body.get("message", ""))
        return str(body)
    return str(error)


def context_exceeded(error: str | Mapping[str, Any] | None) -> ContextExceeded | None:
    """The refusal described by a server's error text or JSON body, or None when it is another error."""
    if not error:
        return None
    text = _text(error)
    if not _RECOGNISED.search(text):
        return None
    message = text.strip().splitlines()[0][:500] if text.strip() else text
    return ContextExceeded(message, _first(text, _PROMPT), _first(text, _CONTEXT), _first(text, _COMPLETION))


def from_exception(exc: BaseException) -> ContextExceeded | None:
    """The refusal behind a client error (a 400 or 413 from an OpenAI-compatible server, as the openai
    SDK, Inspect's ``ModelGenerateError`` or an HTTP library raises it), else None."""
    seen: set[int] = set()
    candidates: list[ContextExceeded] = []
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        status = getattr(current, "status_code", None) or getattr(current, "status", None)
        body = getattr(current, "body", None)
        if status in (400, 413) or (status is None and isinstance(body, Mapping)):
            errors = (body if isinstance(body, Mapping) else None, getattr(current, "provider_message", None))
            candidates += filter(None, (context_exceeded(error) for error in (*errors, str(current))))
        current = current.__cause__ or current.__context__
    # The SDK's error keeps the JSON body (llama.cpp's token counts); wrappers keep only its message.
    return max(
        candidates,
        key=lambda found: sum(
            n is not None for n in (found.prompt_tokens, found.context_tokens, found.completion_tokens)
        ),
        default=None,
    )


def as_reply(exceeded: ContextExceeded) -> str:
    """The reply text our lm-eval model gives in place of a refused request's answer."""
    return REPLY_MARKER + exceeded.describe()


def from_reply(reply: str | None) -> str | None:
    """The description a reply made by :func:`as_reply` carries, else None."""
    return reply.removeprefix(REPLY_MARKER) if reply and reply.startswith(REPLY_MARKER) else None


def rate(outcomes: Sequence[Mapping[str, float]]) -> float:
    """The share of outcomes whose prompt did not fit (nan for none)."""
    return sum(float(o.get(CONTEXT_EXCEEDED, 0.0)) for o in outcomes) / len(outcomes) if outcomes else float("nan")


def with_rate(
    summary: Mapping[str, float], outcomes: Sequence[Mapping[str, float]], failure_key: str = "invalid_rate"
) -> dict[str, float]:
    """``summary`` with :data:`RATE`, and ``failure_key`` (when present) without those items: an
    outcome whose prompt did not fit is encoded as an invalid prediction or a failed query (wrong in
    every metric), but the share of the model's own invalid answers or failures must not count it."""
    result = dict(summary)
    share = rate(outcomes)
    result[RATE] = share
    if failure_key in result and share == share:
        result[failure_key] = max(0.0, float(result[failure_key]) - share)
    return result
