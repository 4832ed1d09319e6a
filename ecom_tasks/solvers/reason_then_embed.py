"""Reason-then-embed: the model writes a description of the image that would answer a retrieval
query; a retrieval scorer then embeds that description instead of the query.

The solver keeps the description, how it was read and whether the image seems to have been dropped
in the sample store (so ``inspect score`` re-scores a log without calling the model). Why a dropped
image shows (too few prompt tokens, a reply saying no image came): the RMIR README, "Deviations".
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

from inspect_ai.model import ChatMessageUser, ContentImage
from inspect_ai.solver import Generate, Solver, TaskState, solver

from ecom_tasks.scorers.inspect_scorers import TRUNCATED_STOP_REASONS
from ecom_tasks.scorers.replies import find_echoes

logger = logging.getLogger(__name__)

#: Store keys: the description (None when the reply had none) and how it was read; why the image seems
#: not to have reached the model ("" when nothing shows it; None when no image was sent).
DESCRIPTION_KEY = "reason_then_embed:description"
STATUS_KEY = "reason_then_embed:status"
IMAGES_DROPPED_KEY = "reason_then_embed:images_dropped"

_IMAGE = r"(?:image|picture|photo(?:graph)?|attachment)s?"
#: A reply saying the model received no image.
_NO_IMAGE = re.compile(
    rf"\bI(?:'m| am)? (?:can ?not|can't|am unable to|am not able to|don't|do not|didn't|did not|have no way to) "
    rf"(?:see|view|access|open|process|load|find|receive|read|look at)\b[^.\n]{{0,40}}?\b{_IMAGE}\b"
    rf"|\bno {_IMAGE} (?:was |were |is |has been |have been )?(?:attached|provided|included|shared|uploaded|given|received)\b"
    rf"|\b(?:there is|there's|I see|I have) no {_IMAGE}\b"
    rf"|\b{_IMAGE} (?:was|were|is|are|has|have) not (?:been )?(?:attached|provided|included|shared|uploaded|received)\b",
    re.IGNORECASE,
)


def _user_message(state: TaskState) -> ChatMessageUser | None:
    try:
        return state.user_prompt
    except ValueError:  # no user message
        return None


def images_dropped(state: TaskState) -> str | None:
    """Why the image of this request seems not to have reached the model; "" when nothing shows it;
    None when the request held no image."""
    message = _user_message(state)
    if message is None:
        return None
    content = message.content if isinstance(message.content, list) else []
    if not any(isinstance(part, ContentImage) for part in content):
        return None
    usage = state.output.usage
    if usage is not None:
        counted = usage.input_tokens + (usage.input_tokens_cache_read or 0) + (usage.input_tokens_cache_write or 0)
        words = len(message.text.split())
        if 0 < counted < words:
            return f"the server counted {counted} prompt tokens for a request of {words} words and an image"
    region = find_echoes(state.output.completion or "", message.text).stripped()
    said = _NO_IMAGE.search(region)
    if said:
        return f"the reply says {said.group(0)!r}"
    return ""


def read_reply(state: TaskState, parse: Callable[..., tuple[str | None, str]]) -> tuple[str | None, str]:
    """``parse(completion, prompt=..., truncated=...)`` on the state's reply: (description or None, status)."""
    truncated = state.output.stop_reason in TRUNCATED_STOP_REASONS
    message = _user_message(state)
    return parse(state.output.completion, prompt=message.text if message else None, truncated=truncated)


@solver
def reason_then_embed(parse: Callable[..., tuple[str | None, str]]) -> Solver:
    """Generate, then store ``parse(completion, prompt=..., truncated=...) -> (description or None,
    status)``: the benchmark's reading of the reply. The description is what the scorer embeds."""
    warned = False

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        nonlocal warned
        state = await generate(state)
        description, status = read_reply(state, parse)
        dropped = images_dropped(state)
        if dropped and not warned:
            warned = True
            logger.warning(
                "reason-then-embed, sample %s: the image seems not to have reached the model (%s); the run counts "
                "such samples in images_dropped_rate",
                state.sample_id,
                dropped,
            )
        state.store.set(DESCRIPTION_KEY, description)
        state.store.set(STATUS_KEY, status)
        state.store.set(IMAGES_DROPPED_KEY, dropped)
        return state

    return solve
