"""lm-eval aggregation wrappers around the framework-neutral metrics.

lm-eval's YAML names an aggregation as ``!function utils.<name>``, so each
metric key needs a module-level function. ``define_aggregations`` creates
them from one ``summarize(items) -> {key: value}``; per-document items are the
outcome dicts that ``process_results`` returns.

``process_results`` hands the same outcome object to every metric of a
document, so lm-eval calls each of a task's aggregations with lists of the
same objects: the summary is computed once per task and reused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, MutableMapping
from typing import Any


def aggregation_name(key: str) -> str:
    """``acc2/industry/automotive`` -> ``agg_acc2__industry__automotive`` (a Python identifier)."""
    return "agg_" + key.replace("/", "__")


def define_aggregations(
    namespace: MutableMapping[str, Any],
    keys: Iterable[str],
    summarize: Callable[[list[Any]], Mapping[str, float]],
) -> None:
    """Add ``agg_<key>`` functions for every key to ``namespace`` (a module's ``globals()``).

    A key the summary lacks (a group absent from the data) aggregates to ``nan``.
    """
    last: dict[str, Any] = {"items": None, "summary": None}

    def summary_of(items: list[Any]) -> Mapping[str, float]:
        seen = last["items"]
        # Identity, not equality: the kept list holds the objects alive, so ids cannot be reused.
        if seen is None or len(seen) != len(items) or any(a is not b for a, b in zip(seen, items)):
            last["items"], last["summary"] = list(items), summarize(items)
        return last["summary"]

    for key in keys:

        def aggregate(items: list[Any], _key: str = key) -> float:
            return float(summary_of(items).get(_key, float("nan")))

        aggregate.__name__ = aggregation_name(key)
        namespace[aggregate.__name__] = aggregate
