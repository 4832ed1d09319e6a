"""The ``-T`` parameters of a thin ``@task``: its builder's, declared once in the builder."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from inspect_ai import Task

from ecom_tasks.scorers.settings import check_settings


def parameters_of(
    builder: Callable[..., Task], *fixed: str, **defaults: Any
) -> Callable[[Callable[..., Task]], Callable[..., Task]]:
    """Give a task that forwards ``**params`` to ``builder`` the builder's keyword parameters as its
    signature, less the ones the task ``fixed`` and with its own ``defaults``. Inspect reads it as it
    reads a written-out one: it passes only those ``-T`` values (warning about others, so one ``-T`` can
    serve an eval-set of tasks) and logs every default in ``task_args``; the task receives them all, each
    of the right kind (:func:`check_settings`)."""
    signature = inspect.Signature(
        [
            parameter.replace(default=defaults.get(parameter.name, parameter.default))
            for parameter in inspect.signature(builder).parameters.values()
            if parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.name not in fixed
        ],
        return_annotation=Task,
    )

    def declare(function: Callable[..., Task]) -> Callable[..., Task]:
        @functools.wraps(function)
        def with_defaults(**params: Any) -> Task:
            bound = signature.bind(**params)  # a name the task does not take fails here, as a TypeError
            bound.apply_defaults()
            check_settings(bound.arguments)
            return function(**bound.arguments)

        with_defaults.__signature__ = signature  # type: ignore[attr-defined]
        return with_defaults

    return declare
