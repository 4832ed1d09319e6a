"""RMIR's metric maths: per-query ranking outcomes, their summary by category, and TSR (README: "Metrics").

An outcome holds every selected ``ranking`` spec on the query's own ranking, ``failed`` (1 when the query
could not be embedded: every metric is then 0) and, in reason-then-embed runs, ``images_dropped``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.rmir.schema import CATEGORIES
from ecom_tasks.scorers.core import NAN
from ecom_tasks.scorers.kinds import Rankings


@dataclass(frozen=True)
class QueryOutcome:
    """One query's outcome: its numbers (Inspect's ``Score.value``, reduced over epochs) and its category
    (the sample's metadata)."""

    values: Mapping[str, float]
    category: str


def ranking_outcome(
    ranked: Sequence[str], positives: Sequence[str], specs: Sequence[MetricSpec], *, failed: bool = False
) -> dict[str, float]:
    """Every spec on this one query's ranking (binary relevance: the positives), or 0s when it failed."""
    data = Rankings({"q": list(ranked)}, {"q": dict.fromkeys(positives, 1.0)})
    outcome = {spec.name: 0.0 if failed else float(spec.compute(data)) for spec in specs}
    outcome["failed"] = int(failed)
    return outcome


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if len(values) else NAN


def summarize(outcomes: Sequence[QueryOutcome], names: Sequence[str]) -> dict[str, float]:
    """``<metric>``, ``failure_rate``, ``n``, then ``<category>/<metric>`` and ``<category>/n`` for the
    categories present, and ``category_mean/<metric>`` over them."""
    values = [o.values for o in outcomes]
    result = {name: _mean([float(v[name]) for v in values]) for name in names}
    result["failure_rate"] = _mean([float(v["failed"]) for v in values])
    flagged = [float(v["images_dropped"]) for v in values if "images_dropped" in v]
    if flagged:  # reason-then-embed: requests whose image seems not to have reached the model
        result["images_dropped_rate"] = _mean(flagged)
    result["n"] = float(len(values))
    per_category: dict[str, dict[str, float]] = {}
    for category in CATEGORIES:
        members = [o.values for o in outcomes if o.category == category]
        if members:
            per_category[category] = {name: _mean([float(o[name]) for o in members]) for name in names}
            result.update({f"{category}/{name}": value for name, value in per_category[category].items()})
            result[f"{category}/n"] = float(len(members))
    for name in names:
        result[f"category_mean/{name}"] = _mean([values[name] for values in per_category.values()])
    return result


# --- Test Set Reliability (Sec. 3.1.7) -----------------------------------------------------------


def negativeness(negative_fraction: float) -> float:
    """An element's negativeness: the fraction of judges calling it negative, or 0 when less than half did."""
    if not 0.0 <= negative_fraction <= 1.0:
        raise ValueError(f"a fraction of judges must be in [0, 1], got {negative_fraction!r}")
    return float(negative_fraction) if negative_fraction >= 0.5 else 0.0


def negative_fraction(votes: Sequence[str | bool | None]) -> float:
    """Share of a panel's votes that say negative (``False`` / ``"False"``); abstentions count as judges
    who did not say negative."""
    if not votes:
        raise ValueError("no votes")
    return sum(v is False or (isinstance(v, str) and v.strip().lower() == "false") for v in votes) / len(votes)


def tsr(negative_fractions: Sequence[float], k: int = 16) -> float:
    """Test Set Reliability of one query's ranked candidates, best first (README: "Test Set Reliability");
    a list shorter than ``k`` is padded with artificial negatives, a longer one is an error."""
    if k < 1:
        raise ValueError("k must be >= 1")
    values = [negativeness(f) for f in negative_fractions]
    if len(values) > k:
        raise ValueError(f"{len(values)} candidates for K = {k}")
    values += [1.0] * (k - len(values))
    tails = np.cumsum(values[::-1])[::-1] / np.arange(k, 0, -1)
    return float(tails.mean())
