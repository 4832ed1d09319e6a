"""The plugin manager: every plugin under the ``ecom_tasks`` entry points, our own first (``builtin``), so our
metrics, datasets, lm-eval folders and baseline responders arrive through the same hooks as a third party's."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import pluggy

from ecom_tasks import hookspecs
from ecom_tasks.data import ConfigurationError

BUILTIN = "builtin"
BUILTIN_MODULE = "ecom_tasks.builtin_plugin"

#: (role, text) pairs, oldest first.
Messages = Sequence[tuple[str, str]]
FALLBACK_REPLY = "I cannot answer this prompt."


@functools.cache
def plugin_manager() -> pluggy.PluginManager:
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    manager.load_setuptools_entrypoints(hookspecs.PROJECT)
    if manager.get_plugin(BUILTIN) is None:
        # Running from a source tree that was never pip-installed: no entry points to find.
        manager.register(importlib.import_module(BUILTIN_MODULE), name=BUILTIN)
    return manager


def contributions(hook_name: str) -> list[tuple[str, Any]]:
    """Each plugin's result for a hook, with the plugin's registered name (built-ins first)."""
    implementations = getattr(plugin_manager().hook, hook_name).get_hookimpls()
    found = [(impl.plugin_name, result) for impl in implementations if (result := impl.function())]
    return sorted(found, key=lambda pair: pair[0] != BUILTIN)


def _registered(hook: str, entries: Callable[[str, Any], Iterable[tuple[str, Any]]]) -> dict[str, Any]:
    """``{name: thing}`` over every plugin's contribution to ``hook``: ``entries(plugin, contribution)``
    checks it and gives its ``(name, thing)`` pairs. A name registered twice is an error naming both
    plugins (a plugin's ``rair`` dataset or ``lexical`` retriever never silently replaces ours)."""
    merged: dict[str, Any] = {}
    owner: dict[str, str] = {}
    for plugin, contribution in contributions(hook):
        for name, thing in entries(plugin, contribution):
            if name in merged:
                raise ConfigurationError(
                    f"{hook}: {name!r} from plugin {plugin!r} is already registered by {owner[name]!r}"
                )
            merged[name], owner[name] = thing, plugin
    return merged


def _specs(hook: str, spec_type: type[hookspecs.MetricSpec] | type[hookspecs.DatasetSpec]) -> dict[str, Any]:
    def entries(plugin: str, specs: Any) -> Iterator[tuple[str, Any]]:
        for spec in specs:
            if not isinstance(spec, spec_type):
                raise TypeError(f"{hook}: plugin {plugin!r} returned {spec!r}, not a {spec_type.__name__}")
            yield spec.name, spec

    return _registered(hook, entries)


def metric_specs() -> dict[str, hookspecs.MetricSpec]:
    """Every registered metric by name; a name registered twice is an error naming both plugins."""
    return _specs("ecom_tasks_metrics", hookspecs.MetricSpec)


def parse_metric_names(names: str | Sequence[str] | None) -> list[str] | None:
    """``"acc2, macro_f1"`` or a list -> names; None, ``""`` or ``"all"`` -> None (every metric)."""
    if names is None:
        return None
    if not isinstance(names, str | list | tuple):  # a number or a mapping: not names
        raise ConfigurationError(f"metrics must be a metric name or a comma list of names, got {names!r:.80}")
    if isinstance(names, str):
        if names.strip().lower() in ("", "all"):
            return None
        names = names.split(",")
    return [str(name).strip() for name in names if str(name).strip()]


def select_metrics(kind: str, names: str | Sequence[str] | None = None) -> list[hookspecs.MetricSpec]:
    """The registered metrics of ``kind``: all of them, or those ``names`` selects (in that order)."""
    of_kind = {name: spec for name, spec in metric_specs().items() if spec.kind == kind}
    chosen = parse_metric_names(names)
    if chosen is None:
        return list(of_kind.values())
    unknown = [name for name in chosen if name not in of_kind]
    if unknown:
        raise ConfigurationError(
            f"metrics: unknown {kind} metric(s) {', '.join(unknown)}; registered for this kind: {', '.join(of_kind) or 'none'}"
        )
    return [of_kind[name] for name in dict.fromkeys(chosen)]


def retrievers() -> dict[str, Callable[..., Any]]:
    """Every registered retriever (embedder) factory by name; a name registered twice is an error naming both plugins."""

    def entries(plugin: str, mapping: Any) -> Iterator[tuple[str, Any]]:
        if not isinstance(mapping, dict):
            raise TypeError(
                f"ecom_tasks_retrievers: plugin {plugin!r} returned {mapping!r}, not a dict of name -> factory"
            )
        for name, factory in mapping.items():
            if not callable(factory):
                raise TypeError(f"ecom_tasks_retrievers: {name!r} from plugin {plugin!r} is not callable")
            yield name, factory

    return _registered("ecom_tasks_retrievers", entries)


def datasets() -> dict[str, hookspecs.DatasetSpec]:
    """Every registered dataset by name; a name registered twice (a plugin's ``rair`` over ours too) is an
    error naming both plugins, never a silent replacement of a validator."""
    return _specs("ecom_tasks_datasets", hookspecs.DatasetSpec)


def lm_eval_task_dirs() -> list[str]:
    return list(dict.fromkeys(str(d) for _, found in contributions("ecom_tasks_lm_eval_task_dirs") for d in found))


def baseline_reply(messages: Messages) -> str:
    """The offline baseline's reply: the first responder that recognises the prompt answers it, plugins'
    responders first (ours end with MonBench's, which answers any A-D question)."""
    ordered = sorted(contributions("ecom_tasks_baseline_responders"), key=lambda pair: pair[0] == BUILTIN)
    replies = (responder(messages) for _, group in ordered for responder in group)
    return next((reply for reply in replies if reply is not None), FALLBACK_REPLY)
