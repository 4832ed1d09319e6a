"""RAIR's metric maths: graded relevance on L1-L4 with breakdowns and mismatch dimensions (README "Metrics")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.names import key_name
from ecom_tasks.rair.schema import DIMENSIONS, LEVELS
from ecom_tasks.scorers.context_limit import CONTEXT_EXCEEDED
from ecom_tasks.scorers.core import INVALID, NAN
from ecom_tasks.scorers.kinds import STRICT_SUFFIX, strict_keys
from ecom_tasks.scorers.labels import confusion_matrix, label_outcome, summarize_labels

RELEVANT = ("L3", "L4")
INVALID_CODE = len(LEVELS)  # the prediction index of an invalid answer
PRED_LABELS = (*LEVELS, INVALID)
#: Keys every summary has besides the selected label metrics.
COUNTS = ("invalid_rate", "truncated_rate", "n")
STRICT_PREFIX = "strict_"
NO_DIMENSION = "none"
#: An item's group fields, as named in its record's fields (Inspect's sample metadata, an lm-eval document).
GROUP_FIELDS = ("industry", "intent", "gold_dimension")

Numbers = Mapping[str, float]


@dataclass(frozen=True)
class Outcome:
    """One item's answer: the numbers epochs reduce (Inspect's ``Score.value``; :func:`item_outcome`) and its groups
    (None: none; a name outside the lists counts overall only)."""

    numbers: dict[str, float]
    industry: str | None = None
    intent: str | None = None
    gold_dimension: str | None = None  # that of the gold rules (rules.gold_dimension: one of DIMENSIONS)
    #: The dimension this L2 answer named (parsing's, ``other`` outside Table 8), for the Fig. 5 table: one
    #: answer's category, which epochs do not reduce (Inspect keeps it in each epoch's ``Score.metadata``).
    dimension: str | None = None


def groups_of(fields: Mapping[str, Any] | None) -> dict[str, Any]:
    """An item's group fields from its record's fields (missing or empty: None)."""
    return {name: (fields or {}).get(name) or None for name in GROUP_FIELDS}


def _prediction(gold: int, pred: int) -> dict[str, float]:
    same_side = pred != INVALID_CODE and (pred >= 2) == (gold >= 2)
    return {**label_outcome(LEVELS, gold, pred), "acc4": int(pred == gold), "acc2": int(same_side)}


def item_outcome(
    gold: int,
    pred: int,
    strict: int | None = None,
    *,
    dimension: str | None = None,
    truncated: bool = False,
    context_exceeded: bool = False,
    **groups: str | None,
) -> Outcome:
    """The outcome of one item; ``pred`` and ``strict`` (the strict reading's, None: not read) are 0..3 or
    ``INVALID_CODE``; ``dim_scored``: gold and prediction L2, the gold dimension known; ``dim_match``: and named."""
    dim_scored = int(gold == 1 and pred == 1 and groups.get("gold_dimension") in DIMENSIONS)
    numbers = _prediction(gold, pred)
    numbers.update(
        dim_scored=dim_scored,
        dim_match=int(dim_scored and dimension == groups["gold_dimension"]),
        truncated=int(truncated),
        **{CONTEXT_EXCEEDED: int(context_exceeded)},
    )
    if strict is not None:
        numbers.update({f"{STRICT_PREFIX}{k}": v for k, v in _prediction(gold, strict).items() if k != "gold"})
    return Outcome(numbers, dimension=dimension if pred == 1 else None, **groups)


def strict_view(numbers: Numbers) -> dict[str, float]:
    """The numbers with the strict prediction in the careful prediction's fields."""
    strict = {key[len(STRICT_PREFIX) :]: value for key, value in numbers.items() if key.startswith(STRICT_PREFIX)}
    return {**numbers, **strict}


def headline(outcomes: Sequence[Numbers], specs: Sequence[MetricSpec]) -> dict[str, float]:
    """The selected label metrics, invalid and truncated rates, item count, from the items' numbers; Macro-F1
    averages the levels present among the gold labels (README "Metrics")."""
    result = summarize_labels(outcomes, LEVELS, specs, RELEVANT)
    result["truncated_rate"] = _ratio(sum(float(o.get("truncated", 0)) for o in outcomes), len(outcomes))
    return {key: result[key] for key in (*(spec.name for spec in specs), *COUNTS)}


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else NAN


def mismatch_dimension_table(outcomes: Sequence[Outcome], dimensions: Sequence[str]) -> dict[str, dict[str, float]]:
    """Per gold dimension: items, Acc@4 errors, share of all errors, Acc@4, and which dimensions the
    model named when it answered L2 (``pred:<dimension>``, weighted by the answer's share of L2)."""
    rows: dict[str, dict[str, float]] = {}
    for o in outcomes:
        row = rows.setdefault(o.gold_dimension or NO_DIMENSION, {"n": 0.0, "errors": 0.0, "correct": 0.0})
        row["n"] += 1
        row["errors"] += 1.0 - float(o.numbers["acc4"])
        row["correct"] += float(o.numbers["acc4"])
        if float(o.numbers["pred_L2"]) > 0:
            named = f"pred:{o.dimension or NO_DIMENSION}"
            row[named] = row.get(named, 0.0) + float(o.numbers["pred_L2"])
    total_errors = sum(r["errors"] for r in rows.values())
    return {
        name: {
            "n": counts["n"],
            "errors": counts["errors"],
            "error_share": _ratio(counts["errors"], total_errors),
            "acc4": _ratio(counts["correct"], counts["n"]),
            **{k: v for k, v in sorted(counts.items()) if k.startswith("pred:")},
        }
        for name in (*dimensions, NO_DIMENSION)
        if (counts := rows.get(name))
    }


def group_key(field: str, name: str) -> str:
    return name if field == "intent" else key_name(name)


def group_metric_names(specs: Sequence[MetricSpec]) -> list[str]:
    return [*(spec.name for spec in specs), "n"]


def summarize(
    outcomes: Sequence[Outcome],
    specs: Sequence[MetricSpec],
    *,
    groups: Mapping[str, Sequence[str]] | None = None,
    dimensions: Sequence[str] = (),
) -> dict[str, float]:
    """Every metric of the README's "Metrics" table as a flat dict (group and dimension keys of those present);
    ``groups``: an outcome's group field (``industry``, ``intent``) -> its names."""
    numbers = [o.numbers for o in outcomes]
    result = headline(numbers, specs)
    # Old logs carry no strict reading: their strict keys are absent, not made up.
    if numbers and all(f"{STRICT_PREFIX}acc4" in n for n in numbers):
        strict = headline([strict_view(n) for n in numbers], specs)
        result.update({key: strict[key.removesuffix(STRICT_SUFFIX)] for key in strict_keys(specs)})
    # Among gold-L2 items predicted L2 with a known gold dimension: the share naming that dimension.
    result["l2_dim_acc"] = _ratio(
        sum(float(n["dim_match"]) for n in numbers), sum(float(n["dim_scored"]) for n in numbers)
    )
    for field, names in (groups or {}).items():
        for name in names:
            members = [o.numbers for o in outcomes if getattr(o, field) == name]
            if members:
                part = headline(members, specs)
                result.update({f"{m}/{field}/{group_key(field, name)}": part[m] for m in group_metric_names(specs)})
    for g, row in zip(LEVELS, confusion_matrix(numbers, LEVELS)):
        for p, count in zip(PRED_LABELS, row):
            result[f"confusion/{g}/{p}"] = count
    if dimensions:  # the share of all Acc@4 errors by the gold rules' dimension (Fig. 5), present ones only
        for name, dimension in mismatch_dimension_table(outcomes, dimensions).items():
            result[f"error_share/{key_name(name)}"] = dimension["error_share"]
    return result


def metric_keys(
    specs: Sequence[MetricSpec], groups: Mapping[str, Sequence[str]] | None = None, dimensions: Sequence[str] = ()
) -> list[str]:
    """Every key ``summarize`` can produce, in its order (for frameworks that need a fixed list)."""
    keys = [*(spec.name for spec in specs), *COUNTS, *strict_keys(specs), "l2_dim_acc"]
    for field, names in (groups or {}).items():
        keys += [f"{m}/{field}/{group_key(field, name)}" for name in names for m in group_metric_names(specs)]
    keys += [f"confusion/{g}/{p}" for g in LEVELS for p in PRED_LABELS]
    keys += [f"error_share/{key_name(name)}" for name in [*dimensions, NO_DIMENSION]]
    return keys
