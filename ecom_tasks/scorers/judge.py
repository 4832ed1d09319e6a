"""The rubric judge any task reuses, framework-neutral: one grader call with its own output limit, a
strict parse, one retry.

A benchmark supplies its grader prompt and its parser (``parse(reply)`` with
a ``failed`` attribute); a framework supplies the grader as an :data:`Ask`,
an async callable ``ask(messages, max_tokens) -> (text, stop_reason)`` that
sends a conversation (``[{"role": "user" | "assistant", "content": str}]``)
at temperature 0 with an output limit of its own (``max_tokens``, independent
of the evaluated model's budget: a rambling grader must not fill its whole
context window). Bindings: Inspect (``scorers.inspect_judge``: a ``Model``
with Inspect's cache) and litellm (``scorers.litellm_judge``: any provider
litellm reaches, with retries on 429/5xx), each wrapped in the persistent
cache of ``scorers.judge_cache`` when wanted.

:func:`run_judge` asks once; when the reply cannot be read, it asks once more:

- a reply that was **cut off by a limit** (stop reason ``max_tokens`` or
  ``model_length``) is never sent back: the retry is a fresh conversation,
  the prompt followed by a request to be brief, so it fits the context the
  first attempt had;
- any other unreadable reply is asked again in the same conversation, with a
  reminder of the required final line (its reply is bounded by the limit).

The result says why it failed: :attr:`JudgeResult.limited` when the last
reply was stopped by a limit (:data:`GRADER_LIMIT`, a failure whatever the
reply says, since the grader never finished), else the parser's status. The
caller decides what a failure means (EcomEval: excluded from every mean,
counted, never a zero). Several graders on one item: ``scorers.panel``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

ParsedT = TypeVar("ParsedT")

Message = dict[str, str]
#: A grader: ``await ask(messages, max_tokens)`` -> (reply text, stop reason). Stop reasons use
#: Inspect's names: ``stop``, ``max_tokens`` (the output limit), ``model_length`` (the context window).
Ask = Callable[[list[Message], int], Awaitable[tuple[str, str]]]

#: The grader's output limit unless the task sets another: room for a few sentences and the
#: final line, or a short reasoning trace; raise it for reasoning graders.
GRADER_MAX_TOKENS = 2048
#: Stop reasons of a reply cut off by a limit (its own output limit, or the context window).
LIMIT_STOP_REASONS = ("max_tokens", "model_length")
#: Failure status of a grader whose last reply was stopped by a limit.
GRADER_LIMIT = "grader_limit"
#: OpenAI-style finish reasons (litellm, lm-eval's API models) in Inspect's names.
FINISH_REASONS = {
    "length": "max_tokens",
    "stop": "stop",
    "content_filter": "content_filter",
    "tool_calls": "tool_calls",
}

#: What the grader is told when its reply had no readable grade.
RETRY_REMINDER = (
    "Your reply could not be read as a grade. Reply again: one or two sentences, then a last line of "
    "exactly the form 'Final Score: N' with N one of 0, 1, 2, 3."
)
#: Put after the prompt (in a fresh conversation) when the grader's reply was cut off by a limit.
LIMIT_REMINDER = (
    "Keep your reply short: your previous reply to this was cut off at its length limit before the "
    "final line. Write at most two sentences, then a last line of exactly the form 'Final Score: N' "
    "with N one of 0, 1, 2, 3."
)


def stop_reason(finish_reason: str | None) -> str:
    """An OpenAI-style ``finish_reason`` (``length``, ``stop``) in Inspect's names (``max_tokens``, ``stop``)."""
    reason = str(finish_reason or "stop")
    return FINISH_REASONS.get(reason, reason)


@dataclass
class JudgeResult(Generic[ParsedT]):
    """The last attempt's parse, every reply and its stop reason, the grader and the output limit sent."""

    parsed: ParsedT
    replies: list[str] = field(default_factory=list)
    stop_reasons: list[str] = field(default_factory=list)
    grader: str = ""
    max_tokens: int | None = None

    @property
    def attempts(self) -> int:
        return len(self.replies)

    @property
    def limited(self) -> bool:
        """Whether the last reply was stopped by a limit (the grader never finished)."""
        return bool(self.stop_reasons) and self.stop_reasons[-1] in LIMIT_STOP_REASONS

    @property
    def failed(self) -> bool:
        return self.limited or bool(getattr(self.parsed, "failed", False))


def grader_max_tokens(value: int | str | None) -> int:
    """A grader output limit (``-T grader_max_tokens=4096``, ``--grader-max-tokens``): a positive whole number."""
    if value is None or value == "":
        return GRADER_MAX_TOKENS
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if number <= 0 or str(number) != str(value).strip():
        raise ValueError(f"grader_max_tokens must be a positive whole number of tokens, got {value!r}")
    return number


async def run_judge(
    ask: Ask,
    prompt: str,
    parse: Callable[[str], ParsedT],
    *,
    grader: str = "",
    retries: int = 1,
    reminder: str = RETRY_REMINDER,
    limit_reminder: str = LIMIT_REMINDER,
    max_tokens: int = GRADER_MAX_TOKENS,
) -> JudgeResult[ParsedT]:
    """Ask ``ask`` to grade ``prompt`` (at most ``max_tokens`` output tokens); retry up to ``retries``
    times while the reply fails to parse or was cut off by a limit. ``grader`` names it in the result."""
    messages: list[Message] = [{"role": "user", "content": prompt}]
    result: JudgeResult[ParsedT] | None = None
    for _ in range(1 + max(0, retries)):
        reply, reason = await ask(messages, max_tokens)
        reply = reply or ""
        parsed = parse(reply)
        if result is None:
            result = JudgeResult(parsed=parsed, grader=grader, max_tokens=max_tokens)
        result.parsed = parsed
        result.replies.append(reply)
        result.stop_reasons.append(str(reason))
        if not result.failed:
            break
        if result.limited:
            # Never re-send a reply that hit a limit: it would fill the context the retry needs.
            messages = [{"role": "user", "content": f"{prompt}\n\n{limit_reminder}"}]
        else:
            messages = [
                *messages,
                {"role": "assistant", "content": reply or "(empty)"},
                {"role": "user", "content": reminder},
            ]
    assert result is not None
    return result
