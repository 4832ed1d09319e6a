"""The offline baseline model (``ecom/baseline`` in Inspect, ``ecom-baseline`` in lm-eval).

A deterministic lexical-overlap heuristic, the kind of trivial baseline a
benchmark report lists beside real models. It reads the prompt only (no
weights, no network). Each benchmark contributes a *responder*: a function
that returns a reply for prompts it recognises, or ``None``. The generic
multiple-choice responder is the fallback, so any A-D prompt gets an answer
in the format its instructions ask for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ecom_tasks.baselines.lexical import respond_multiple_choice

#: (role, text) pairs, oldest first.
Messages = Sequence[tuple[str, str]]
Responder = Callable[[Messages], "str | None"]

FALLBACK_REPLY = "I cannot answer this prompt."


def responders() -> list[Responder]:
    """Benchmark responders from the plugin manager, then the generic MC one."""
    from ecom_tasks.plugins import plugin_manager

    found: list[Responder] = []
    for group in plugin_manager().hook.ecom_tasks_baseline_responders():
        found.extend(group)
    return [*found, respond_multiple_choice]


def respond(messages: Messages) -> str:
    """The baseline's reply to a conversation."""
    for responder in responders():
        reply = responder(messages)
        if reply is not None:
            return reply
    return FALLBACK_REPLY
