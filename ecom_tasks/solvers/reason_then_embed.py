"""Reason-then-embed: the model writes a description of the image that would answer a retrieval
query; a retrieval scorer then embeds that description instead of the query.

The Sample input carries what the model sees (the query image and the
instruction, built by the benchmark); this solver calls the model and keeps
the description it extracted in the sample store (so it is in the log, and
``inspect score`` can re-score the log without calling the model again).
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai.solver import Generate, Solver, TaskState, solver

from ecom_tasks.scorers.replies import answer_region

#: Store keys: the description (None when the reply had none) and how it was read.
DESCRIPTION_KEY = "reason_then_embed:description"
STATUS_KEY = "reason_then_embed:status"


def _visible_text(reply: str | None) -> tuple[str | None, str]:
    region = answer_region(reply)
    if region is None:
        return None, "truncated"
    text = " ".join(region.split())
    return (text, "ok") if text else (None, "empty")


@solver
def reason_then_embed(parse: Callable[[str | None], tuple[str | None, str]] | None = None) -> Solver:
    """Generate, then store ``parse(completion) -> (description or None, status)`` (default: the reply
    outside ``<think>`` blocks). The description is what the scorer embeds."""
    read = parse or _visible_text

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state = await generate(state)
        description, status = read(state.output.completion)
        state.store.set(DESCRIPTION_KEY, description)
        state.store.set(STATUS_KEY, status)
        return state

    return solve
