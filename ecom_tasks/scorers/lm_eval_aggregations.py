"""lm-eval aggregation wrappers around the framework-neutral metrics.

lm-eval's YAML names an aggregation as ``!function utils.<name>``, so each
metric key needs a module-level function. ``define_aggregations`` creates
them from one ``compute(items, key)``; per-document items are the outcome
dicts that ``process_results`` returns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, MutableMapping
from typing import Any


def aggregation_name(key: str) -> str:
    """``acc2/industry/automotive`` -> ``agg_acc2__industry__automotive`` (a Python identifier)."""
    return "agg_" + key.replace("/", "__")


def define_aggregations(
    namespace: MutableMapping[str, Any],
    keys: Iterable[str],
    compute: Callable[[list[Any], str], float],
) -> None:
    """Add ``agg_<key>`` functions for every key to ``namespace`` (a module's ``globals()``)."""
    for key in keys:

        def aggregate(items: list[Any], _key: str = key) -> float:
            return compute(items, _key)

        aggregate.__name__ = aggregation_name(key)
        namespace[aggregate.__name__] = aggregate
