# Hook specifications are signatures only (pluggy never runs their bodies), so their bodies are empty.
# mypy: disable-error-code="empty-body"
"""pluggy hook specifications: what plugins (entry-point group ``ecom_tasks``, docs/plugins.md) add that the frameworks
lack (Inspect finds a plugin's ``@task``/``@scorer`` itself; lm-eval 0.4 has no task plugin discovery)."""

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
    """A dataset a plugin contributes: ``load(data)`` returns validated records (or raises
    ``DataValidationError``); one with images may take ``image_access`` (an ``ImageAccess``), which
    ``ecom-tasks validate --allow-outside-images / --allow-url-images`` passes, and only then."""

    name: str
    description: str
    load: Callable[..., list[Any]]  # load(data), or load(data, image_access=...)
    default_data: Callable[[], Any] | None = None


#: Kinds of outcome a metric consumes; the input each kind's ``compute`` receives: docs/plugins.md, ``scorers.kinds``.
METRIC_KINDS = ("labels", "choice_runs", "ranking", "rubric")


@dataclass(frozen=True)
class MetricSpec:
    """A metric every benchmark of ``kind`` computes (unless a run selects a subset): ``compute(data) -> float``
    receives the kind's input (``METRIC_KINDS``); the value appears under ``name`` in both frameworks' results."""

    name: str
    kind: str
    compute: Callable[[Any], float]
    higher_is_better: bool = True
    description: str = ""

    def __post_init__(self) -> None:
        if self.kind not in METRIC_KINDS:
            raise ValueError(
                f"metric {self.name!r}: unknown kind {self.kind!r}; expected one of {', '.join(METRIC_KINDS)}"
            )
        if not self.name or "/" in self.name or "," in self.name:
            raise ValueError(f"metric name {self.name!r} must be non-empty without '/' or ','")


@hookspec
def ecom_tasks_metrics() -> list[MetricSpec]:
    """Metrics (``MetricSpec``) that every benchmark consuming their kind computes."""


@hookspec
def ecom_tasks_retrievers() -> dict[str, Callable[..., Any]]:
    """Embedder factories by name, for retrieval benchmarks (RMIR): ``-T retriever=<name>`` calls
    ``factory(**retriever_args)``, which returns an embedder (a str ``id`` naming the model and every
    setting that changes its vectors, used as the cache key, and ``embed(inputs, role) -> (n, d)
    array``; see ``ecom_tasks.rmir.embedders``). A name registered twice is an error."""


@hookspec
def ecom_tasks_lm_eval_task_dirs() -> list[str]:
    """Folders of lm-eval task YAMLs to add to ``ecom-lm-eval`` and the TaskManager helper."""


@hookspec
def ecom_tasks_datasets() -> list[DatasetSpec]:
    """Datasets with their loader/validator, used by ``ecom-tasks validate``."""


@hookspec
def ecom_tasks_baseline_responders() -> list[Callable[..., str | None]]:
    """Responders for the offline baseline: ``f(messages) -> reply or None``."""
