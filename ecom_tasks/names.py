"""Names as a user types them: the name meant by a typo, or by the other framework's spelling (Inspect's
``ecom_tasks/rair_hard`` is lm-eval's ``rair_hard``)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

PREFIX = "ecom_tasks/"
#: How alike a known name must be to be suggested (``difflib``'s ratio; 0.6 is its default).
CUTOFF = 0.6


def nearest(name: str, known: Iterable[str], n: int = 1) -> list[str]:
    """The ``n`` known names ``name`` most likely meant, best first: the one it differs from by the ``ecom_tasks/``
    prefix alone, else the closest (``difflib``, case ignored); none when nothing is close."""
    by_lower: dict[str, str] = {}
    for candidate in known:
        by_lower.setdefault(candidate.lower(), candidate)
    typed = name.strip().lower()
    for spelling in (typed, typed.removeprefix(PREFIX), PREFIX + typed):
        if spelling in by_lower:
            return [by_lower[spelling]]
    close = difflib.get_close_matches(typed, list(by_lower), n=n, cutoff=CUTOFF)
    if not close and typed.startswith(PREFIX):
        close = difflib.get_close_matches(typed.removeprefix(PREFIX), list(by_lower), n=n, cutoff=CUTOFF)
    return [by_lower[c] for c in close]


def unknown_name(kind: str, name: str, known: Iterable[str], listing: str = "") -> str:
    """``unknown <kind> 'rair_hrd'; did you mean rair_hard? (<listing>)``; ``listing`` says where every name is shown."""
    text = f"unknown {kind} {name!r}"
    meant = nearest(name, known)
    if meant:
        text += f"; did you mean {meant[0]}?"
        typed_prefix, meant_prefix = name.strip().lower().startswith(PREFIX), meant[0].lower().startswith(PREFIX)
        if typed_prefix and not meant_prefix:
            text += f" {kind} names have no {PREFIX} prefix"
        elif meant_prefix and not typed_prefix:
            text += f" {kind} names start with {PREFIX}"
    return f"{text} ({listing})" if listing else text


def key_name(name: str) -> str:
    """``"Fashion & Apparel"`` -> ``"fashion_apparel"``: a free-text name as a metric-key part (case-folded,
    each run of other characters one ``_``; ``_`` when nothing is left)."""
    out = "".join(c.casefold() if c.isalnum() else "_" for c in name)
    return "_".join(part for part in out.split("_") if part) or "_"
