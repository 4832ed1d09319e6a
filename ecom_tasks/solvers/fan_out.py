"""One Sample, many conversations: every run of a Sample generated concurrently inside it.

Inspect spends tens of milliseconds of its own on every Sample; a protocol asking one question many times
(MonBench: 24 orderings x 3 formats) is far cheaper as one Sample whose runs share Inspect's connection
limit, retries and cache, each call still a model event in the log. The runs live in the Sample's metadata
(:func:`fan_out_spec`), so ``inspect eval-retry`` rebuilds them; the replies go to the sample store under
``fan_out`` (run key -> ``{"completion", "stop_reason"}``), where scorers and ``inspect view`` read them.
"""

from __future__ import annotations

from typing import Any, TypedDict

import anyio
from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from ecom_tasks.scorers.inspect_scorers import context_exceeded_output

FAN_OUT = "fan_out"


def fan_out_spec(systems: dict[str, str], runs: list[tuple[str, str, str]]) -> dict[str, Any]:
    """The metadata entry for ``runs`` given as ``(key, system name, user text)``: ``{"systems": {name:
    system prompt} (each stored once), "runs": [{"key", "system", "user"}, ...]}``."""
    keys = [key for key, _, _ in runs]
    if len(set(keys)) != len(keys):
        raise ValueError("run keys must be unique within a sample")
    unknown = {system for _, system, _ in runs} - set(systems)
    if unknown:
        raise ValueError(f"runs name system prompts that are not given: {sorted(unknown)}")
    return {"systems": dict(systems), "runs": [{"key": k, "system": s, "user": u} for k, s, u in runs]}


def run_messages(spec: dict[str, Any], run: dict[str, str]) -> list[ChatMessage]:
    return [ChatMessageSystem(content=spec["systems"][run["system"]]), ChatMessageUser(content=run["user"])]


class _CacheArgument(TypedDict, total=False):
    cache: bool | CachePolicy


@solver
def fan_out_generate(cache: bool | CachePolicy | None = None) -> Solver:
    """Generate every run in the Sample's ``fan_out`` metadata with the task's model, concurrently.

    ``cache``: Inspect's per-call model cache, as for ``generate(cache=...)``; by default the
    eval's own setting (``eval(..., cache=True)``, ``inspect eval --cache``) applies.
    """
    # Passed only when given: generate()'s own default then applies the eval's cache setting.
    per_call: _CacheArgument = {} if cache is None else {"cache": cache}

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        spec = state.metadata[FAN_OUT]
        model = get_model()

        outputs: dict[str, ModelOutput] = {}

        async def one(run: dict[str, str]) -> None:
            try:
                output = await model.generate(run_messages(spec, run), **per_call)
            except Exception as exc:  # a prompt longer than the server's context: a counted reply, not a crash
                refused = context_exceeded_output(exc, str(model))
                if refused is None:
                    raise
                output = refused
            outputs[run["key"]] = output

        # A plain task group (not inspect_ai.util.collect): a span per run would add 2 events per call.
        async with anyio.create_task_group() as group:
            for run in spec["runs"]:
                group.start_soon(one, run)
        ordered = {run["key"]: outputs[run["key"]] for run in spec["runs"]}  # in run order, not finishing order
        state.store.set(
            FAN_OUT,
            {key: {"completion": o.completion, "stop_reason": str(o.stop_reason)} for key, o in ordered.items()},
        )
        # The Sample's own output: the first run's reply (its conversation is the Sample's input).
        first = next(iter(ordered.values()))
        state.output = ModelOutput.from_content(
            model=str(model), content=first.completion, stop_reason=first.stop_reason
        )
        return state

    return solve


def fan_out_replies(state: TaskState) -> dict[str, dict[str, str]]:
    """Run key -> ``{"completion", "stop_reason"}`` as the solver stored them."""
    replies = state.store.get(FAN_OUT)
    if replies is None:
        raise ValueError("no fan-out replies in the sample store: use the fan_out_generate() solver")
    return replies
