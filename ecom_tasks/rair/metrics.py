"""RAIR's metric maths: graded relevance on L1-L4 with breakdowns and mismatch dimensions.

Builds on the reusable label outcomes of ``ecom_tasks.scorers.labels``; an
outcome here has, besides ``gold`` and ``pred_L1`` .. ``pred_L4``,
``pred_invalid``:

``acc4`` / ``acc2`` per-item correctness on 4 levels / on {L1,L2} vs {L3,L4}
``industry``, ``intent``  1-based group indices (0: none)
``gold_dim``      1-based dimension of the gold rules (0: none)
``pred_dim``      1-based dimension named with a predicted L2 (0: none named,
                  ``len(dimensions) + 1``: a name outside the taxonomy)
``dim_scored``    1 when gold and prediction are both L2 and the gold dimension is known
``dim_match``     1 when, in addition, the predicted dimension is the gold one
``truncated``     1 when the reply stopped on the token limit
``strict_pred_L1`` .. ``strict_pred_invalid``, ``strict_acc4``, ``strict_acc2``: the same for the
                  strict reading of the reply (exactly the requested output); absent in old logs

The headline metrics (Acc@2, Acc@4, Macro-F1 and any plugin metric of the
``labels`` kind) are the registered metric specs, computed by
``scorers.labels.summarize_labels``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.rair.schema import LEVELS
from ecom_tasks.scorers.core import INVALID, NAN
from ecom_tasks.scorers.labels import confusion_matrix, label_outcome, summarize_labels

RELEVANT = ("L3", "L4")
INVALID_CODE = len(LEVELS)  # the prediction index of an invalid answer
PRED_LABELS = (*LEVELS, INVALID)
#: Keys every summary has besides the selected label metrics.
COUNTS = ("invalid_rate", "truncated_rate", "n")
#: Suffix of the strict reading's metrics (``acc2_strict``): the same metric code on the strict prediction.
STRICT_SUFFIX = "_strict"
STRICT_PREFIX = "strict_"
NO_DIMENSION = "none"
OTHER_DIMENSION = "other"

Outcome = Mapping[str, float]


def key_name(name: str) -> str:
    """``"Fashion & Apparel"`` -> ``"fashion_apparel"``: names as metric-key parts."""
    out = "".join(c.lower() if c.isalnum() else "_" for c in name)
    return "_".join(part for part in out.split("_") if part)


def encode_outcome(
    gold: int,
    pred: int,
    *,
    industry: int = 0,
    intent: int = 0,
    gold_dim: int = 0,
    pred_dim: int = 0,
    truncated: bool = False,
) -> dict[str, int]:
    """The outcome of one item; ``pred`` is 0..3 or ``INVALID_CODE``."""
    outcome = label_outcome(LEVELS, gold, pred)
    same_side = pred != INVALID_CODE and (pred >= 2) == (gold >= 2)
    dim_scored = int(gold == 1 and pred == 1 and gold_dim > 0)
    outcome.update(
        acc4=int(pred == gold),
        acc2=int(same_side),
        industry=industry,
        intent=intent,
        gold_dim=gold_dim,
        pred_dim=pred_dim if pred == 1 else 0,
        dim_scored=dim_scored,
        dim_match=int(dim_scored and pred_dim == gold_dim),
        truncated=int(truncated),
    )
    return outcome


def strict_fields(gold: int, pred: int) -> dict[str, int]:
    """The strict reading's prediction fields of one item (``pred``: 0..3 or ``INVALID_CODE``)."""
    labels = label_outcome(LEVELS, gold, pred)
    del labels["gold"]
    same_side = pred != INVALID_CODE and (pred >= 2) == (gold >= 2)
    fields = {**labels, "acc4": int(pred == gold), "acc2": int(same_side)}
    return {f"{STRICT_PREFIX}{name}": value for name, value in fields.items()}


def strict_view(outcome: Outcome) -> dict[str, float]:
    """The outcome with its strict prediction in the careful prediction's fields."""
    strict = {key[len(STRICT_PREFIX) :]: value for key, value in outcome.items() if key.startswith(STRICT_PREFIX)}
    return {**outcome, **strict}


def strict_keys(specs: Sequence[MetricSpec]) -> list[str]:
    """The strict reading's headline keys: each selected metric's and the invalid rate, suffixed."""
    return [f"{name}{STRICT_SUFFIX}" for name in (*(spec.name for spec in specs), "invalid_rate")]


def headline(outcomes: Sequence[Outcome], specs: Sequence[MetricSpec], *, group: bool = False) -> dict[str, float]:
    """The selected label metrics, invalid and truncated rates, item count.

    Overall, Macro-F1 averages all four levels (Eq. 7, C = 4). In a breakdown
    ``group`` it averages the levels present among the group's gold labels: a
    group where a level never occurs would otherwise lose that level's F1 of 0
    (a perfect group would score 0.75).
    """
    result = summarize_labels(outcomes, LEVELS, specs, RELEVANT, present_only=group)
    truncated = [float(o.get("truncated", 0)) for o in outcomes]
    result["truncated_rate"] = sum(truncated) / len(truncated) if truncated else NAN
    return {key: result[key] for key in (*(spec.name for spec in specs), *COUNTS)}


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else NAN


def mismatch_dimension_accuracy(outcomes: Sequence[Outcome]) -> float:
    """Among gold-L2 items predicted L2 with a known gold dimension: share naming that dimension."""
    return _ratio(sum(float(o["dim_match"]) for o in outcomes), sum(float(o["dim_scored"]) for o in outcomes))


def _dimension_name(index: int, dimensions: Sequence[str]) -> str:
    if index == 0:
        return NO_DIMENSION
    return dimensions[index - 1] if index <= len(dimensions) else OTHER_DIMENSION


def error_shares(outcomes: Sequence[Outcome], dimensions: Sequence[str]) -> dict[str, float]:
    """Share of all Acc@4 errors by the gold rules' dimension (the paper's Fig. 5), present dimensions only."""
    errors: dict[str, float] = {}
    for o in outcomes:
        name = _dimension_name(int(o["gold_dim"]), dimensions)
        errors[name] = errors.get(name, 0.0) + (1.0 - float(o["acc4"]))
    total = sum(errors.values())
    order = [*dimensions, NO_DIMENSION]
    return {name: _ratio(errors[name], total) for name in order if name in errors}


def mismatch_dimension_table(outcomes: Sequence[Outcome], dimensions: Sequence[str]) -> dict[str, dict[str, float]]:
    """Per gold dimension: items, Acc@4 errors, share of all errors, Acc@4, and which
    dimensions the model named when it answered L2 (``pred:<dimension>`` counts;
    ``pred:varied`` for epoch-averaged items whose named dimension differed between epochs)."""
    rows: dict[str, dict[str, float]] = {}
    for o in outcomes:
        row = rows.setdefault(
            _dimension_name(int(o["gold_dim"]), dimensions), {"n": 0.0, "errors": 0.0, "correct": 0.0}
        )
        row["n"] += 1
        row["errors"] += 1.0 - float(o["acc4"])
        row["correct"] += float(o["acc4"])
        share_l2 = float(o["pred_L2"])
        if share_l2 > 0:
            value = float(o["pred_dim"])
            named = _dimension_name(int(value), dimensions) if value.is_integer() else "varied"
            row[f"pred:{named}"] = row.get(f"pred:{named}", 0.0) + share_l2
    total_errors = sum(r["errors"] for r in rows.values())
    order = [*dimensions, NO_DIMENSION]
    table = {}
    for name in order:
        if name in rows:
            row = rows[name]
            correct = row.pop("correct")
            table[name] = {
                "n": row["n"],
                "errors": row["errors"],
                "error_share": _ratio(row["errors"], total_errors),
                "acc4": _ratio(correct, row["n"]),
                **{k: v for k, v in sorted(row.items()) if k.startswith("pred:")},
            }
    return table


def _group_keys(kind: str, names: Sequence[str]) -> list[tuple[str, int, str]]:
    return [(kind, i, key_name(name) if kind != "intent" else name) for i, name in enumerate(names, start=1)]


def group_metric_names(specs: Sequence[MetricSpec]) -> list[str]:
    return [*(spec.name for spec in specs), "n"]


def summarize(
    outcomes: Sequence[Outcome],
    specs: Sequence[MetricSpec],
    *,
    groups: Mapping[str, Sequence[str]] | None = None,
    dimensions: Sequence[str] = (),
) -> dict[str, float]:
    """Every metric as a flat dict; group and dimension keys only for those present.

    ``specs`` are the selected ``labels``-kind metrics. ``groups`` maps an
    outcome field (``industry``, ``intent``) to its names (1-based in the
    outcome). Keys: each spec's name, ``invalid_rate n l2_dim_acc``, ``<name>_strict`` and
    ``invalid_rate_strict`` (the strict reading, when the outcomes carry it),
    ``<metric>/<field>/<name>``, ``confusion/<gold>/<pred>``,
    ``error_share/<dimension>``.
    """
    outcomes = list(outcomes)
    result = headline(outcomes, specs)
    # Old logs carry no strict reading: their strict keys are absent, not made up.
    if outcomes and all(f"{STRICT_PREFIX}acc4" in o for o in outcomes):
        strict = headline([strict_view(o) for o in outcomes], specs)
        result.update(
            {f"{name}{STRICT_SUFFIX}": strict[name] for name in (*(spec.name for spec in specs), "invalid_rate")}
        )
    result["l2_dim_acc"] = mismatch_dimension_accuracy(outcomes)
    for kind, names in (groups or {}).items():
        for field, index, name in _group_keys(kind, names):
            members = [o for o in outcomes if int(o[field]) == index]
            if members:
                part = headline(members, specs, group=True)
                result.update({f"{m}/{field}/{name}": part[m] for m in group_metric_names(specs)})
    for g, row in zip(LEVELS, confusion_matrix(outcomes, LEVELS)):
        for p, count in zip(PRED_LABELS, row):
            result[f"confusion/{g}/{p}"] = count
    if dimensions:
        for name, share in error_shares(outcomes, dimensions).items():
            result[f"error_share/{key_name(name)}"] = share
    return result


def metric_keys(
    specs: Sequence[MetricSpec], groups: Mapping[str, Sequence[str]] | None = None, dimensions: Sequence[str] = ()
) -> list[str]:
    """Every key ``summarize`` can produce, in its order (for frameworks that need a fixed list)."""
    keys = [*(spec.name for spec in specs), *COUNTS, *strict_keys(specs), "l2_dim_acc"]
    for kind, names in (groups or {}).items():
        keys += [
            f"{m}/{field}/{name}" for field, _, name in _group_keys(kind, names) for m in group_metric_names(specs)
        ]
    keys += [f"confusion/{g}/{p}" for g in LEVELS for p in PRED_LABELS]
    keys += [f"error_share/{key_name(name)}" for name in [*dimensions, NO_DIMENSION]]
    return keys
