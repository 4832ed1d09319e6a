"""The rubric judge's Inspect binding: the run's graders (roles or model names) resolved and checked, an
Inspect ``Model`` as a :data:`~ecom_tasks.scorers.judge.Ask` with Inspect's own cache (each retry is a new
input, so a separate cache entry), and the meta-eval's solver that hands the grader a fixed response.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

from inspect_ai.model import (
    CachePolicy,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
    get_model,
    model_roles,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from ecom_tasks.data import parse_flag
from ecom_tasks.errors import ConfigurationError
from ecom_tasks.scorers import context_limit
from ecom_tasks.scorers.judge import GRADER_TEMPERATURE, PANEL_ROLE, Ask, Message, PromptTooLong

#: The role of a task's one grader.
GRADER_ROLE = "grader"


def grader_names(graders: str | Sequence[str] | None) -> list[str]:
    """The graders a task's ``graders`` option names (a comma list or a list; blanks dropped)."""
    values = graders.split(",") if isinstance(graders, str) else list(graders or [])
    return [str(v).strip() for v in values if str(v).strip()]


#: The last resolution of :func:`panel_models`: the run's model roles it was for, its options, the graders.
_resolved: dict[str, Any] = {}


def _grader_plan(
    roles: Sequence[str], names: list[str], task: str, default: str
) -> list[tuple[str, str | None, str | None]]:
    """(label, role, model name) of each grader, as :func:`panel_models` chooses them."""
    if names:
        plan: list[tuple[str, str | None, str | None]] = []
        for index, name in enumerate(names, 1):
            if name not in roles and "/" not in name:
                raise ConfigurationError(
                    f"graders: {name!r} is neither a model role of this run ({', '.join(sorted(roles)) or 'none'}) nor a model name"
                )
            plan.append((name, name, None) if name in roles else (f"grader_{index}", None, name))
        if len({label for label, _, _ in plan}) != len(plan):
            raise ConfigurationError(f"graders: a grader is named twice in {names}")
        return plan
    numbered = sorted((m for m in map(PANEL_ROLE.match, roles) if m is not None), key=lambda m: int(m.group(1)))
    if numbered:
        return [(m.string, m.string, None) for m in numbered]
    if GRADER_ROLE not in roles and not os.environ.get("OPENAI_API_KEY"):
        raise ConfigurationError(
            f"{task} needs a grader model: pass --model-role grader=<model> (e.g. grader=openai/gpt-4.1, or "
            f"grader=openai-api/<service>/<model> for a served model); the default grader {default} needs "
            "OPENAI_API_KEY, which is not set"
        )
    return [(GRADER_ROLE, GRADER_ROLE, None)]


def panel_models(graders: str | Sequence[str] | None, *, task: str, default: str) -> list[tuple[str, Model]]:
    """(label, Inspect model) of each grader of the run: the ``graders`` named (a role, or a model name
    such as ``openai/gpt-4.1``, labelled ``grader_<i>``); else the ``grader_<n>`` roles in numeric order;
    else the ``grader`` role, or ``default`` when ``OPENAI_API_KEY`` is set. Without any it is a
    :class:`ConfigurationError` naming ``--model-role grader=``, never the provider's error about a
    missing key. Call it where the run's model roles are known (a solver, a scorer): it resolves once per
    run (Inspect's dict of the run's roles and the same options give the graders resolved before)."""
    roles = model_roles()
    key = (tuple(grader_names(graders)), task, default, bool(os.environ.get("OPENAI_API_KEY")))
    if _resolved.get("roles") is not roles or _resolved.get("key") != key:
        plan = _grader_plan(list(roles), list(key[0]), task, default)
        models = [(label, get_model(model, role=role, default=default)) for label, role, model in plan]
        _resolved.update(roles=roles, key=key, models=models)  # kept alive here, so its identity is not reused
    return list(_resolved["models"])


@solver
def require_grader(graders: str | list[str] | None = None, *, task: str, default: str) -> Solver:
    """Setup step of a judge-graded task: the run's graders are resolved and checked (:func:`panel_models`,
    once per run) before the sample's first model call, so a run without a usable grader stops before
    the evaluated model is paid for."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        panel_models(graders, task=task, default=default)
        return state

    return solve


def inspect_panel(members: Sequence[tuple[str, Model]], cache: bool | str) -> tuple[dict[str, Ask], dict[str, str]]:
    """The graders of :func:`panel_models` as :data:`Ask` callables (with :func:`judge_cache`) and names, by label."""
    policy = judge_cache(cache)
    asks = {label: inspect_ask(model, cache=policy) for label, model in members}
    return asks, {label: str(model) for label, model in members}


def judge_cache(cache: bool | str) -> CachePolicy | bool:
    """``True``: cache grader replies without expiry, shared across epochs (a temperature-0 grade of
    the same text is the same grade); a string: that expiry (``"1W"``); ``False``: no cache. Anything else
    is refused here: Inspect reads the expiry only when it first caches a grade, after the model's calls."""
    expiry = cache.strip() if isinstance(cache, str) else ""
    if re.fullmatch(r"[0-9]{1,9}[smhDWMY]", expiry):  # a count and one of Inspect's units
        return CachePolicy(expiry=expiry, per_epoch=False)
    try:
        cached = parse_flag(cache, "cache")  # refuses what is no flag: a list, a number but 0 or 1
    except ValueError:
        cached = None
    if cached is None:
        raise ConfigurationError(f"cache must be true, false or an expiry such as 1W or 12h, got {cache!r:.80}")
    return CachePolicy(expiry=None, per_epoch=False) if cached else False


def chat_message(message: Message) -> ChatMessageAssistant | ChatMessageUser:
    """A judge conversation's message (``assistant`` or ``user``) as Inspect's."""
    if message["role"] == "assistant":
        return ChatMessageAssistant(content=message["content"])
    return ChatMessageUser(content=message["content"])


def inspect_ask(grader: Model, *, cache: CachePolicy | bool = False, config: GenerateConfig | None = None) -> Ask:
    """``grader`` as an :data:`Ask`: temperature 0, the given output limit, Inspect's cache. A prompt refused
    as longer than the grader's context raises :class:`PromptTooLong` (a counted failure, never read as a
    reply), whether Inspect raised the refusal or made it a ``model_length`` reply (OpenAI's)."""
    base = config or GenerateConfig()

    async def ask(messages: list[Message], max_tokens: int) -> tuple[str, str]:
        chat: list[Any] = [chat_message(m) for m in messages]
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


@solver
def gold_response() -> Solver:
    """The sample's fixed response (``metadata["response"]``) becomes the output: the evaluated model is
    never called (a judge meta-eval grades the grader)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.output = ModelOutput.from_content(model="gold", content=state.metadata["response"])
        state.completed = True
        return state

    return solve
