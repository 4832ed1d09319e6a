"""Labelled classification over a fixed label set, as per-item outcomes any task can reuse.

An outcome is a flat mapping of numbers, usable as an Inspect ``Score.value``
(reducible across epochs) and as an lm-eval per-document item alike:

``gold``                  gold label index into the label set
``pred_<label>``, ``pred_invalid``
                          one-hot prediction; after Inspect's mean reduction over
                          epochs, the share of epochs that gave each answer

An invalid prediction is wrong for every metric and a class of its own only in
the confusion matrix (never averaged in Macro-F1). With hard (0/1) predictions
every metric is the scikit-learn value; with epoch-averaged shares each item
counts once per answer, weighted by its share (scikit-learn's ``sample_weight``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.scorers.core import INVALID, NAN, confusion
from ecom_tasks.scorers.kinds import LabelPairs, compute_metrics

Outcome = Mapping[str, float]


def pred_fields(labels: Sequence[str]) -> tuple[str, ...]:
    return (*(f"pred_{label}" for label in labels), f"pred_{INVALID}")


def label_outcome(labels: Sequence[str], gold: int, pred: int) -> dict[str, int]:
    """The outcome of one item; ``pred`` is a label index or ``len(labels)`` (invalid)."""
    if not 0 <= gold < len(labels):
        raise ValueError(f"gold label index must be 0..{len(labels) - 1}, got {gold}")
    if not 0 <= pred <= len(labels):
        raise ValueError(f"prediction index must be 0..{len(labels)}, got {pred}")
    return {"gold": gold, **{name: int(i == pred) for i, name in enumerate(pred_fields(labels))}}


def labels_of(outcome: Outcome) -> tuple[str, ...]:
    """The label set an outcome was encoded with (its ``pred_<label>`` fields, in order)."""
    invalid = f"pred_{INVALID}"
    return tuple(key[5:] for key in outcome if key.startswith("pred_") and key != invalid)


def label_pairs(
    outcomes: Sequence[Outcome],
    labels: Sequence[str],
    positive: Sequence[str] = (),
) -> LabelPairs:
    """The ``labels``-kind metric input: one (gold, predicted) pair per (item, answer given).

    A macro average runs over the labels that occur among the gold labels: a level the data never holds
    (RAIR Hard has no L1) would otherwise count as a class every model scores 0 on, capping a perfect model.
    """
    gold: list[str] = []
    pred: list[str] = []
    weights: list[float] = []
    names = pred_fields(labels)
    answers = (*labels, INVALID)
    for o in outcomes:
        g = int(o["gold"])
        if g != o["gold"] or not 0 <= g < len(labels):
            raise ValueError(f"gold must be a label index 0..{len(labels) - 1}, got {o['gold']!r}")
        for answer, name in zip(answers, names):
            share = float(o[name])
            if share > 0:
                gold.append(labels[g])
                pred.append(answer)
                weights.append(share)
    hard = all(w == 1.0 for w in weights) and len(weights) == len(outcomes)
    averaged = tuple(label for label in labels if label in set(gold))
    negative = tuple(label for label in labels if label not in positive) if positive else ()
    return LabelPairs(gold, pred, averaged, tuple(positive), negative, None if hard else weights)


def summarize_labels(
    outcomes: Sequence[Outcome],
    labels: Sequence[str],
    specs: Sequence[MetricSpec],
    positive: Sequence[str] = (),
) -> dict[str, float]:
    """Every selected ``labels``-kind metric, plus ``invalid_rate`` and the item count ``n``."""
    result = compute_metrics(specs, label_pairs(outcomes, labels, positive))
    result["invalid_rate"] = float(np.mean([float(o[f"pred_{INVALID}"]) for o in outcomes])) if outcomes else NAN
    result["n"] = float(len(outcomes))
    return result


def confusion_matrix(outcomes: Sequence[Outcome], labels: Sequence[str]) -> list[list[float]]:
    """Rows gold labels, columns predicted labels then ``invalid`` (weighted by answer shares)."""
    pairs = label_pairs(outcomes, labels)  # none: core.confusion's matrix of zeros
    return confusion(pairs.gold, pairs.pred, labels, sample_weight=pairs.weights)
