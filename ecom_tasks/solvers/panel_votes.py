"""A panel of judges, each a model role, answering a Sample's own (multimodal) input: the votes of
a dataset-construction stage (:func:`panel_generate`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai.model import (
    CachePolicy,
    ChatMessageUser,
    ContentText,
    GenerateConfig,
    Model,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from ecom_tasks.data import read_whole_number
from ecom_tasks.errors import ConfigurationError
from ecom_tasks.scorers.inspect_judge import chat_message
from ecom_tasks.scorers.judge import GRADER_MAX_TOKENS, LIMIT_REMINDER, RETRY_REMINDER, Ask, Message
from ecom_tasks.scorers.panel import run_panel
from ecom_tasks.scorers.settings import check_settings

#: Sample-store key of the panel's replies.
PANEL_KEY = "panel"
#: More judges than this is a typo (a role each: 1e30 of them would exhaust memory before any call).
MAX_JUDGES = 100


def _ask(
    model: Model, state: TaskState, config: GenerateConfig, cache: bool | CachePolicy, outputs: list[ModelOutput]
) -> Ask:
    """An :data:`~ecom_tasks.scorers.judge.Ask` whose first message is the Sample's own input (text
    that ``run_judge`` adds to it, a limit reminder, is appended as a text part)."""
    opening = list(state.messages)

    async def ask(messages: list[Message], max_tokens: int) -> tuple[str, str]:
        chat: list[Any] = list(opening)
        extra = messages[0]["content"].strip()
        if extra:
            last = chat[-1]
            parts = list(last.content) if isinstance(last.content, list) else [ContentText(text=last.content)]
            chat[-1] = ChatMessageUser(content=[*parts, ContentText(text=extra)])
        chat += [chat_message(message) for message in messages[1:]]
        output = await model.generate(chat, config=config.merge(GenerateConfig(max_tokens=max_tokens)), cache=cache)
        outputs.append(output)
        return output.completion, str(output.stop_reason)

    return ask


@solver
def panel_generate(
    parse: Callable[[str], Any],
    judges: int = 5,
    role_prefix: str = "judge",
    temperature: float | None = None,
    max_tokens: int = GRADER_MAX_TOKENS,
    retries: int = 1,
    reminder: str = RETRY_REMINDER,
    limit_reminder: str = LIMIT_REMINDER,
    seed: int | None = None,
    cache: bool | CachePolicy = False,
) -> Solver:
    """Ask every judge role (``<role_prefix>_1`` .. ``<role_prefix>_<judges>``; an unbound role is the
    evaluated model, so one ``--model`` is a panel of its samples) the Sample's input.

    ``parse(reply)`` (an object with a ``failed`` attribute) decides whether a reply is readable; an
    unreadable one is asked again as :func:`~ecom_tasks.scorers.judge.run_judge` does, up to ``retries``
    times with ``reminder`` (``limit_reminder`` after a cut-off reply). Judges sample independently (self-consistency): no Inspect cache by default, and with a
    ``seed`` judge ``i`` gets ``seed + i``. Replies go to the store under :data:`PANEL_KEY`, where the scorer
    parses them again (``inspect score`` needs no model call); the Sample's output is the first judge's.
    """
    count = read_whole_number(judges, 1, MAX_JUDGES)
    if count is None:  # the stage's voters, vlms, runs or judges setting
        raise ConfigurationError(f"a panel needs 1 to {MAX_JUDGES} judges (voters, runs), got {judges!r:.80}")
    check_settings({"temperature": temperature, "max_tokens": max_tokens, "seed": seed})  # sent at every call
    roles = [f"{role_prefix}_{i}" for i in range(1, count + 1)]

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        asks: dict[str, Ask] = {}
        names: dict[str, str] = {}
        outputs: dict[str, list[ModelOutput]] = {}
        for number, role in enumerate(roles, start=1):
            model = get_model(role=role)  # the evaluated model when the run does not bind the role
            config = GenerateConfig(temperature=temperature, seed=None if seed is None else int(seed) + number)
            outputs[role] = []
            asks[role] = _ask(model, state, config, cache, outputs[role])
            names[role] = str(model)
        result = await run_panel(
            asks,
            "",
            parse,
            names=names,
            grade_of=lambda r: None,
            retries=retries,
            reminder=reminder,
            limit_reminder=limit_reminder,
            max_tokens=max_tokens,
        )
        panel = {
            role: {
                "model": names[role],
                "reply": judged.replies[-1],  # run_judge asks every judge at least once
                "replies": list(judged.replies),
                "stop_reasons": list(judged.stop_reasons),
                "failed": bool(judged.failed),
            }
            for role, judged in result.results.items()
        }
        state.store.set(PANEL_KEY, panel)
        state.output = outputs[roles[0]][-1]
        return state

    return solve


def panel_replies(state: TaskState) -> dict[str, dict[str, Any]]:
    """The panel's replies stored by :func:`panel_generate` (role -> record), in judge order."""
    return dict(state.store.get(PANEL_KEY) or {})
