"""One summary for several metrics of the same items.

Both frameworks ask several metric functions about the very same list of
per-sample outcomes (lm-eval: one aggregation per metric key; Inspect: one
call per ``@metric`` of a scorer, with the same list), and each needs the
same summary. :func:`last_call_memo` computes it once.
"""

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
