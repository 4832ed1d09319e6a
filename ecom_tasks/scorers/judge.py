"""The rubric judge any task reuses, framework-neutral: one grader call with its own output limit, a
strict parse, one retry (:func:`run_judge`). A benchmark supplies the grader prompt and parser; a framework
supplies the grader as an :data:`Ask` (``scorers.inspect_judge``, ``scorers.litellm_judge``, either wrapped
in ``scorers.judge_cache``); the caller decides what a failure means. Panels: ``scorers.panel``.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ecom_tasks.data import read_whole_number
from ecom_tasks.errors import ConfigurationError
from ecom_tasks.scorers.context_limit import ContextExceeded

ParsedT = TypeVar("ParsedT")
T = TypeVar("T")

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
#: Stop reason (ours, not Inspect's) and failure status of a request refused because the prompt does not
#: fit the grader's context window.
PROMPT_TOO_LONG = "prompt_too_long"
GRADER_PROMPT_TOO_LONG = "grader_prompt_too_long"
#: The grader's sampling temperature: a grade of the same text is the same grade (and cacheable).
GRADER_TEMPERATURE = 0.0
#: A panel member's role (``grader_1``, ``grader_2``, ...: graded in their numeric order).
PANEL_ROLE = re.compile(r"^grader_(\d+)$")
#: How Inspect spells the grader's output-limit option (the default of :func:`run_judge`).
INSPECT_LIMIT_OPTION = "-T grader_max_tokens=N"

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


class PromptTooLong(Exception):
    """Raised by an :data:`Ask` when the server refused the request because the prompt does not fit the
    grader's context window; ``exceeded`` holds the server's words and the token counts it gave
    (:mod:`ecom_tasks.scorers.context_limit` recognises the refusal, for every framework alike)."""

    def __init__(self, exceeded: ContextExceeded):
        super().__init__(exceeded.server_message)
        self.exceeded = exceeded


def server_message(error: BaseException) -> str:
    """The server's own words behind a client's exception: the ``message`` of the server's error object
    that the OpenAI client keeps (litellm and Inspect keep that client's error along the cause/context
    chain), else the exception's text without litellm's prefixes."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        body = getattr(current, "body", None)
        if isinstance(body, dict):
            error_object = body.get("error")
            inner = error_object if isinstance(error_object, dict) else body
            message = inner.get("message")
            if isinstance(message, str):
                return message
        current = current.__cause__ or current.__context__
    text = str(getattr(error, "message", None) or error)
    # litellm prefixes its class names: "litellm.BadRequestError: ...: OpenAIException - <server text>"
    return text.rsplit("Exception - ", 1)[-1]


def stop_reason(finish_reason: str | None) -> str:
    """An OpenAI-style ``finish_reason`` (``length``, ``stop``) in Inspect's names (``max_tokens``, ``stop``)."""
    reason = str(finish_reason or "stop")
    return "max_tokens" if reason == "length" else reason  # the other OpenAI names are Inspect's too


@dataclass
class JudgeResult(Generic[ParsedT]):
    """The last attempt's parse, every reply and its stop reason, the grader and the output limit sent."""

    parsed: ParsedT
    replies: list[str] = field(default_factory=list)
    stop_reasons: list[str] = field(default_factory=list)
    grader: str = ""
    max_tokens: int | None = None
    #: How the command that runs the judge spells the output-limit option (named in failure details).
    limit_option: str = INSPECT_LIMIT_OPTION
    #: The server's refusal when the prompt did not fit the grader's context (:class:`PromptTooLong`'s).
    refusal: ContextExceeded | None = None

    @property
    def attempts(self) -> int:
        return len(self.replies)

    @property
    def limited(self) -> bool:
        """Whether the last reply was stopped by a limit (the grader never finished)."""
        return bool(self.stop_reasons) and self.stop_reasons[-1] in LIMIT_STOP_REASONS

    @property
    def prompt_too_long(self) -> bool:
        """Whether the server refused the last request: the prompt does not fit the grader's context."""
        return bool(self.stop_reasons) and self.stop_reasons[-1] == PROMPT_TOO_LONG

    @property
    def failed(self) -> bool:
        return self.limited or self.prompt_too_long or bool(getattr(self.parsed, "failed", False))

    def limit_failure(self) -> tuple[str, str] | None:
        """(status, detail) when the grader failed on a limit, pointing at the cause; else None."""
        if self.prompt_too_long:
            return GRADER_PROMPT_TOO_LONG, self._refusal_detail()
        if not self.limited:
            return None
        stopped = (
            f"the grader's reply was stopped by {self.stop_reasons[-1]} (grader output limit {self.max_tokens} tokens)"
        )
        if self.stop_reasons[-1] == "model_length":
            return GRADER_LIMIT, (
                f"{stopped}: the prompt and the reply filled the grader's context window; use a grader with a "
                "larger context window, or shorter items"
            )
        return GRADER_LIMIT, f"{stopped}; raise it with {self.limit_option}"

    def _refusal_detail(self) -> str:
        prompt = self.refusal.prompt_tokens if self.refusal is not None else None
        context = self.refusal.context_tokens if self.refusal is not None else None
        said = f" (the server said: {self.refusal.server_message.strip()})" if self.refusal is not None else ""
        if prompt is not None and context is not None and prompt < context and self.max_tokens is not None:
            # vLLM refuses when the prompt fits but the prompt plus the output limit does not.
            return (
                f"the grader prompt ({prompt} tokens) fits the grader's {context}-token context window, but not with "
                f"{self.max_tokens} tokens for the reply: use a grader with a larger context window or shorter "
                f"items, or set {self.limit_option} with N below {context - prompt}{said}"
            )
        size = f" ({prompt} tokens)" if prompt is not None else ""
        window = f" of {context} tokens" if context is not None else ""
        return (
            f"the grader prompt{size} does not fit the grader's context window{window}: use a grader with a larger "
            f"context window, or shorter items (a longer output limit cannot help){said}"
        )


class OptionValueError(ConfigurationError, argparse.ArgumentTypeError):
    """A command-line option's value is out of range: argparse prints it as a one-line usage error,
    a caller of the Python API gets a :class:`ConfigurationError`."""


def number_option(
    kind: type[int] | type[float], low: int, *, above: bool = False, high: int | None = None, what: str = ""
) -> Callable[[Any], Any]:
    """The one reader of a numeric option (an argparse type, and the Python API's check): a whole number
    (``int``: :func:`read_whole_number`) or a finite number (``float``, not a bool) from ``low`` (excluded when
    ``above``) to ``high`` (None: no bound), else an :class:`OptionValueError` naming ``what`` it must be and
    the range."""
    what = what or ("a whole number" if kind is int else "a finite number")
    if high is None:
        span = f"above {low:,}" if above else f"of {low:,} or more"
    else:
        span = f"above {low:,} and at most {high:,}" if above else f"from {low:,} to {high:,}"

    def read(value: Any) -> Any:
        number: float | None
        if kind is int:
            number = read_whole_number(value, low + above, high)
        else:
            try:
                number = None if isinstance(value, bool) else float(value)
            except (TypeError, ValueError):
                number = None
            if number is not None and not (
                math.isfinite(number)
                and (low < number if above else low <= number)
                and (high is None or number <= high)
            ):
                number = None
        if number is None:
            raise OptionValueError(f"must be {what} {span}, got {value!r}")
        return number

    return read


#: Counts of the judge (``--concurrency``, ``--max-attempts``, ``--grader-max-tokens``, embed-pool's).
positive_whole_number = number_option(int, 0, above=True, high=999_999_999)
#: A share of items (``--judge-failure-threshold``, ``--max-abstention-share``, rmir's ``--tsr-threshold``).
failure_share = number_option(float, 0, high=1, what="a share")


def option_value(option: str, check: Callable[[Any], T], value: Any) -> T:
    """``check(value)`` (:func:`positive_whole_number`, :func:`failure_share`), its error naming ``option``
    as the command spells it (``--concurrency must be ...``, ``grader_max_tokens must be ...``)."""
    try:
        return check(value)
    except OptionValueError as exc:
        raise ConfigurationError(f"{option} {exc}") from None


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
    limit_option: str = INSPECT_LIMIT_OPTION,
) -> JudgeResult[ParsedT]:
    """Ask ``ask`` to grade ``prompt`` (at most ``max_tokens`` output tokens); retry up to ``retries``
    times while the reply fails to parse (in the same conversation, with ``reminder``) or was cut off by a
    limit (the prompt and ``limit_reminder`` in a fresh one), never when the prompt does not fit
    (:class:`PromptTooLong`). ``grader`` names it in the result; ``limit_option`` is how the command spells
    the output limit (named in :meth:`JudgeResult.limit_failure`)."""
    messages: list[Message] = [{"role": "user", "content": prompt}]
    replies: list[str] = []
    stop_reasons: list[str] = []
    for _ in range(1 + max(0, retries)):
        refusal = None
        try:
            reply, reason = await ask(messages, max_tokens)
        except PromptTooLong as exc:
            reply, reason, refusal = "", PROMPT_TOO_LONG, exc.exceeded
        reply = reply or ""
        replies.append(reply)
        stop_reasons.append(str(reason))
        result = JudgeResult(parse(reply), replies, stop_reasons, grader, max_tokens, limit_option, refusal)
        if not result.failed or refusal is not None:
            break  # graded, or a prompt that does not fit: any retry is at least as long
        if result.limited:
            # Never re-send a reply that hit a limit: it would fill the context the retry needs.
            messages = [{"role": "user", "content": f"{prompt}\n\n{limit_reminder}"}]
        else:
            messages = [
                *messages,
                {"role": "assistant", "content": reply or "(empty)"},
                {"role": "user", "content": reminder},
            ]
    return result
