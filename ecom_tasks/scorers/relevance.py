"""Graded-relevance metrics on a four-level scale (RAIR's L1-L4), framework-neutral.

Each scored item is an *outcome*: a flat mapping of numbers, usable as an
Inspect ``Score.value`` and as an lm-eval per-document item alike.

``gold``          gold level index, 0..3 (L1..L4)
``pred_L1`` .. ``pred_L4``, ``pred_invalid``
                  one-hot prediction (after Inspect's mean reduction over
                  epochs: the share of epochs that gave each answer)
``acc4`` / ``acc2`` per-item correctness on 4 levels / on {L1,L2} vs {L3,L4}
``industry``, ``intent``  1-based group indices (0: none)
``gold_dim``      1-based dimension of the gold rules (0: none)
``pred_dim``      1-based dimension named with a predicted L2 (0: none named,
                  ``len(dimensions) + 1``: a name outside the taxonomy)
``dim_scored``    1 when gold and prediction are both L2 and the gold dimension is known
``dim_match``     1 when, in addition, the predicted dimension is the gold one

An invalid prediction (``pred_invalid``) is wrong for every metric and is a
class of its own only in the confusion matrix (never averaged in Macro-F1).
With hard (0/1) predictions every metric is the scikit-learn value computed
through ``scorers.core``; with epoch-averaged shares each item counts once
per answer, weighted by its share (scikit-learn's ``sample_weight``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ecom_tasks.scorers.core import INVALID, NAN, accuracy, binarized_accuracy, confusion, macro_f1

LEVELS = ("L1", "L2", "L3", "L4")
RELEVANT = ("L3", "L4")
IRRELEVANT = ("L1", "L2")
INVALID_CODE = len(LEVELS)  # the prediction index of an invalid answer
PRED_FIELDS = ("pred_L1", "pred_L2", "pred_L3", "pred_L4", "pred_invalid")
PRED_LABELS = (*LEVELS, INVALID)
HEADLINE = ("acc2", "acc4", "macro_f1", "invalid_rate", "n")
GROUP_METRICS = ("acc2", "acc4", "macro_f1", "n")
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
) -> dict[str, int]:
    """The outcome of one item; ``pred`` is 0..3 or ``INVALID_CODE``."""
    if not 0 <= gold < len(LEVELS):
        raise ValueError(f"gold level index must be 0..3, got {gold}")
    if not 0 <= pred <= INVALID_CODE:
        raise ValueError(f"prediction index must be 0..{INVALID_CODE}, got {pred}")
    outcome = {"gold": gold}
    outcome.update({name: int(i == pred) for i, name in enumerate(PRED_FIELDS)})
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
    )
    return outcome


def _pairs(outcomes: Sequence[Outcome]) -> tuple[list[str], list[str], list[float] | None]:
    """Gold and predicted labels, one pair per (item, answer given); weights unless all are 1."""
    gold: list[str] = []
    pred: list[str] = []
    weights: list[float] = []
    for o in outcomes:
        g = int(o["gold"])
        if g != o["gold"] or not 0 <= g < len(LEVELS):
            raise ValueError(f"gold must be a level index 0..3, got {o['gold']!r}")
        for label, name in zip(PRED_LABELS, PRED_FIELDS):
            share = float(o[name])
            if share > 0:
                gold.append(LEVELS[g])
                pred.append(label)
                weights.append(share)
    hard = all(w == 1.0 for w in weights) and len(weights) == len(outcomes)
    return gold, pred, None if hard else weights


def _side(label: str) -> str:
    return "relevant" if label in RELEVANT else "irrelevant" if label in IRRELEVANT else INVALID


def headline(outcomes: Sequence[Outcome]) -> dict[str, float]:
    """Acc@2, Acc@4, Macro-F1 over L1-L4, invalid-prediction rate, item count."""
    n = float(len(outcomes))
    if not outcomes:
        return {"acc2": NAN, "acc4": NAN, "macro_f1": NAN, "invalid_rate": NAN, "n": 0.0}
    gold, pred, weights = _pairs(outcomes)
    invalid_rate = float(np.mean([float(o["pred_invalid"]) for o in outcomes]))
    if weights is None:
        return {
            "acc2": binarized_accuracy(gold, pred, positive=RELEVANT, negative=IRRELEVANT),
            "acc4": accuracy(gold, pred),
            "macro_f1": macro_f1(gold, pred, LEVELS),
            "invalid_rate": invalid_rate,
            "n": n,
        }
    from sklearn.metrics import accuracy_score, f1_score

    return {
        "acc2": float(accuracy_score([_side(g) for g in gold], [_side(p) for p in pred], sample_weight=weights)),
        "acc4": float(accuracy_score(gold, pred, sample_weight=weights)),
        "macro_f1": float(
            f1_score(gold, pred, labels=list(LEVELS), average="macro", zero_division=0, sample_weight=weights)
        ),
        "invalid_rate": invalid_rate,
        "n": n,
    }


def confusion_matrix(outcomes: Sequence[Outcome]) -> list[list[float]]:
    """Rows gold L1..L4, columns predicted L1..L4 then invalid."""
    gold, pred, weights = _pairs(outcomes)
    if weights is None:
        return [[float(v) for v in row] for row in confusion(gold, pred, LEVELS)]
    from sklearn.metrics import confusion_matrix as sk_confusion

    matrix = sk_confusion(gold, pred, labels=list(PRED_LABELS), sample_weight=weights)
    return [[float(v) for v in row] for row in matrix[: len(LEVELS)]]


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
        row = rows.setdefault(_dimension_name(int(o["gold_dim"]), dimensions), {"n": 0.0, "errors": 0.0, "correct": 0.0})
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


def summarize(
    outcomes: Sequence[Outcome],
    *,
    groups: Mapping[str, Sequence[str]] | None = None,
    dimensions: Sequence[str] = (),
) -> dict[str, float]:
    """Every metric as a flat dict; group and dimension keys only for those present.

    ``groups`` maps an outcome field (``industry``, ``intent``) to its names
    (1-based in the outcome). Keys: ``acc2 acc4 macro_f1 invalid_rate n
    l2_dim_acc``, ``<metric>/<field>/<name>``, ``confusion/<gold>/<pred>``,
    ``error_share/<dimension>``.
    """
    outcomes = list(outcomes)
    result = headline(outcomes)
    result["l2_dim_acc"] = mismatch_dimension_accuracy(outcomes)
    for kind, names in (groups or {}).items():
        for field, index, name in _group_keys(kind, names):
            members = [o for o in outcomes if int(o[field]) == index]
            if members:
                part = headline(members)
                result.update({f"{m}/{field}/{name}": part[m] for m in GROUP_METRICS})
    matrix = confusion_matrix(outcomes) if outcomes else [[0.0] * len(PRED_LABELS) for _ in LEVELS]
    for g, row in zip(LEVELS, matrix):
        for p, count in zip(PRED_LABELS, row):
            result[f"confusion/{g}/{p}"] = count
    if dimensions:
        for name, share in error_shares(outcomes, dimensions).items():
            result[f"error_share/{key_name(name)}"] = share
    return result


def metric_keys(groups: Mapping[str, Sequence[str]] | None = None, dimensions: Sequence[str] = ()) -> list[str]:
    """Every key ``summarize`` can produce, in its order (for frameworks that need a fixed list)."""
    keys = [*HEADLINE, "l2_dim_acc"]
    for kind, names in (groups or {}).items():
        keys += [f"{m}/{field}/{name}" for field, _, name in _group_keys(kind, names) for m in GROUP_METRICS]
    keys += [f"confusion/{g}/{p}" for g in LEVELS for p in PRED_LABELS]
    keys += [f"error_share/{key_name(name)}" for name in [*dimensions, NO_DIMENSION]]
    return keys
