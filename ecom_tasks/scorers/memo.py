"""One summary for several metrics of the same items: both frameworks ask several metric functions about the
very same list of outcomes (lm-eval: an aggregation per metric key; Inspect: each ``@metric`` of a scorer)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def last_call_memo(compute: Callable[..., T]) -> Callable[..., T]:
    """``compute(items, *args)``, reusing the last result while called with the very same
    items (by identity, in order) and equal ``args``."""
    last: dict[str, Any] = {"items": None, "args": None, "result": None}

    def cached(items: Sequence[Any], *args: Hashable) -> T:
        seen = last["items"]
        # Identity, not equality: the kept list holds the objects alive, so ids cannot be reused.
        same = seen is not None and last["args"] == args and len(seen) == len(items)
        if not same or any(a is not b for a, b in zip(seen, items)):
            last["items"], last["args"], last["result"] = list(items), args, compute(items, *args)
        return last["result"]

    return cached
