"""Bare Inspect tasks over recorded model calls (see ``fan_out.py``): no ecom-tasks scoring.

``calls`` is a JSONL file of ``{"question", "system", "user"}``, one line per model call.
"""

from __future__ import annotations

import json

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import Score, Target, match, mean, scorer
from inspect_ai.solver import TaskState, generate

from ecom_tasks.solvers.fan_out import FAN_OUT, fan_out_generate, fan_out_spec


def _calls(path: str) -> list[dict[str, str]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@task
def bare_per_call(calls: str) -> Task:
    """One Sample per model call, ``generate()`` and ``match()``: the old design's shape."""
    samples = [
        Sample(id=i, input=[ChatMessageSystem(content=c["system"]), ChatMessageUser(content=c["user"])], target="A")
        for i, c in enumerate(_calls(calls))
    ]
    return Task(dataset=MemoryDataset(samples), solver=generate(), scorer=match())


@scorer(metrics=[mean()])
def constant():
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=1)

    return score


@task
def bare_fan_out(calls: str) -> Task:
    """The same calls grouped per question and fanned out by ``fan_out_generate``, a constant scorer."""
    grouped: dict[str, list[dict[str, str]]] = {}
    for call in _calls(calls):
        grouped.setdefault(call["question"], []).append(call)
    samples = []
    for question, group in grouped.items():
        systems = {str(i): c["system"] for i, c in enumerate(group)}
        spec = fan_out_spec(systems, [(f"r{i}", str(i), c["user"]) for i, c in enumerate(group)])
        samples.append(Sample(id=question, input=group[0]["user"], metadata={FAN_OUT: spec}))
    return Task(dataset=MemoryDataset(samples), solver=fan_out_generate(), scorer=constant())
