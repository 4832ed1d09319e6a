"""The plugin manager: our built-ins plus everything under the ``ecom_tasks`` entry points."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pluggy

from ecom_tasks import builtin_plugin, hookspecs


@functools.cache
def plugin_manager() -> pluggy.PluginManager:
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    # Registered under its entry-point name so an installed copy is not loaded twice.
    manager.register(builtin_plugin, name="builtin")
    manager.load_setuptools_entrypoints(hookspecs.PROJECT)
    return manager


def contributions(hook_name: str) -> list[tuple[str, Any]]:
    """Each plugin's result for a hook, with the plugin's registered name."""
    manager = plugin_manager()
    caller = getattr(manager.hook, hook_name)
    out = []
    for impl in caller.get_hookimpls():
        result = impl.function()
        if result:
            out.append((impl.plugin_name, result))
    return out


def _merged(hook_name: str) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for plugin, mapping in contributions(hook_name):
        for name, value in mapping.items():
            if name in merged:
                raise ValueError(f"{hook_name}: {name!r} from plugin {plugin!r} is already registered")
            merged[name] = value
    return merged


def metrics() -> dict[str, Callable[..., Any]]:
    return _merged("ecom_tasks_metrics")


def retrievers() -> dict[str, Callable[..., Any]]:
    return _merged("ecom_tasks_retrievers")


def datasets() -> dict[str, hookspecs.DatasetSpec]:
    return {spec.name: spec for _, specs in contributions("ecom_tasks_datasets") for spec in specs}


def lm_eval_task_dirs() -> list[str]:
    dirs: list[str] = []
    for _, found in contributions("ecom_tasks_lm_eval_task_dirs"):
        dirs.extend(str(d) for d in found if str(d) not in dirs)
    return dirs
