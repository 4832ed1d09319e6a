"""pluggy hook specifications: what third-party plugins can add to ecom-tasks.

Plugins are modules or objects exposed under the ``ecom_tasks`` entry-point
group. Inspect already discovers third-party ``@task``/``@scorer``s through
its own ``inspect_ai`` entry points, so these hooks only cover what the
frameworks lack: shared metrics, RMIR retrievers, lm-eval task folders
(lm-eval 0.4 has no task plugin discovery), datasets with schemas, and
baseline responders.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pluggy

PROJECT = "ecom_tasks"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset a plugin contributes: ``load(data)`` returns validated records
    (raising ``ecom_tasks.data.DataValidationError`` with file:row:field problems)."""

    name: str
    description: str
    load: Callable[[Any], list[Any]]
    default_data: Callable[[], Any] | None = None


@hookspec
def ecom_tasks_metrics() -> dict[str, Callable[..., Any]]:
    """Metric functions by name (pure functions over gold/prediction values)."""


@hookspec
def ecom_tasks_retrievers() -> dict[str, Callable[..., Any]]:
    """Retriever factories by name, for retrieval benchmarks (RMIR)."""


@hookspec
def ecom_tasks_lm_eval_task_dirs() -> list[str]:
    """Folders of lm-eval task YAMLs to add to ``ecom-lm-eval`` and the TaskManager helper."""


@hookspec
def ecom_tasks_datasets() -> list[DatasetSpec]:
    """Datasets with their loader/validator, used by ``ecom-tasks validate``."""


@hookspec
def ecom_tasks_baseline_responders() -> list[Callable[..., str | None]]:
    """Responders for the offline baseline: ``f(messages) -> reply or None``."""
