"""Framework-neutral metric functions shared by every benchmark and both adapters.

Pure functions over plain Python values. Each is defined for empty input
(Inspect calls metrics on empty lists while a run is in progress): ratios of
nothing are ``nan`` rather than an exception.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np

NAN = float("nan")

#: The value an unparseable prediction takes: never equal to a gold label.
INVALID = "invalid"


def mean_ci(values: Iterable[float], confidence: float = 0.95) -> tuple[float, float]:
    """Mean and the half-width of its Student-t confidence interval.

    ``n`` is the number of values (for MonBench: the number of runs). The
    half-width is ``nan`` for fewer than two values, where no interval exists.
    """
    data = np.asarray(list(values), dtype=float)
    if data.size == 0:
        return NAN, NAN
    mean = float(data.mean())
    if data.size < 2:
        return mean, NAN
    from scipy.special import stdtrit  # Student-t quantile (what scipy.stats.t.ppf calls), cheap to import

    sem = float(data.std(ddof=1)) / math.sqrt(data.size)
    t = float(stdtrit(data.size - 1, (1 + confidence) / 2))
    return mean, t * sem


def accuracy(gold: Sequence[object], pred: Sequence[object], sample_weight: Sequence[float] | None = None) -> float:
    """Share of exact matches; an ``INVALID`` prediction is always wrong."""
    if len(gold) != len(pred):
        raise ValueError(f"gold has {len(gold)} items, predictions {len(pred)}")
    if not gold:
        return NAN
    # The (weighted) mean of exact matches, as sklearn's accuracy_score computes it (tests compare the two),
    # without its input validation: a comparison calls this for each of thousands of resamples.
    matches = np.fromiter((str(g) == str(p) for g, p in zip(gold, pred)), dtype=float, count=len(gold))
    return float(np.average(matches, weights=None if sample_weight is None else np.asarray(sample_weight, float)))


def macro_f1(
    gold: Sequence[str], pred: Sequence[str], labels: Sequence[str], sample_weight: Sequence[float] | None = None
) -> float:
    """Macro-F1 over the fixed label set ``labels`` (``zero_division=0``).

    Predictions outside ``labels`` (``INVALID``) count as wrong for the gold
    class's recall and are not themselves a class being averaged.
    """
    if len(gold) != len(pred):
        raise ValueError(f"gold has {len(gold)} items, predictions {len(pred)}")
    if not gold:
        return NAN
    # sklearn's f1_score (average="macro", zero_division=0) from the same weighted counts in the same order
    # (tests compare the two, bit for bit), without its input validation: 5 ms a call, and a comparison calls
    # this for each of thousands of resamples. Outside ``labels``: code len(labels), counted for no class.
    codes = {label: index for index, label in enumerate(labels)}
    size = len(labels)
    gold_codes = np.fromiter((codes.get(str(g), size) for g in gold), dtype=np.intp, count=len(gold))
    pred_codes = np.fromiter((codes.get(str(p), size) for p in pred), dtype=np.intp, count=len(pred))
    weights = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    hit = gold_codes == pred_codes
    true_sum, pred_sum, tp_sum = (
        np.bincount(codes_, weights=w, minlength=size + 1)[:size].astype(float)
        for codes_, w in (
            (gold_codes, weights),
            (pred_codes, weights),
            (gold_codes[hit], None if weights is None else weights[hit]),
        )
    )
    # as sklearn's confusion matrices hold them: tp, fn = true - tp, fp = pred - tp (the same roundings)
    denominator = (tp_sum + (true_sum - tp_sum)) + (tp_sum + (pred_sum - tp_sum))
    f1 = np.divide(2 * tp_sum, denominator, out=np.zeros(size), where=denominator != 0)
    return float(np.mean(f1))


def binarized_accuracy(
    gold: Sequence[str],
    pred: Sequence[str],
    positive: Iterable[str],
    negative: Iterable[str],
    sample_weight: Sequence[float] | None = None,
) -> float:
    """Accuracy after mapping labels onto two classes (e.g. RAIR's Acc@2).

    A prediction in neither group (``INVALID``) is wrong whatever the gold.
    """
    pos, neg = set(positive), set(negative)

    def side(label: str) -> str:
        return "pos" if label in pos else "neg" if label in neg else INVALID

    gold_sides = [side(g) for g in gold]
    if INVALID in gold_sides:
        raise ValueError("a gold label is in neither group")
    return accuracy(gold_sides, [side(p) for p in pred], sample_weight=sample_weight)


def confusion(
    gold: Sequence[str], pred: Sequence[str], labels: Sequence[str], sample_weight: Sequence[float] | None = None
) -> list[list[float]]:
    """Confusion matrix, rows = gold, columns = ``labels`` + ``INVALID`` (weighted counts with ``sample_weight``)."""
    columns = [*labels, INVALID]
    if not gold:
        return [[0.0] * len(columns) for _ in labels]
    from sklearn.metrics import confusion_matrix

    mapped = [p if p in labels else INVALID for p in pred]
    matrix = confusion_matrix(list(gold), mapped, labels=columns, sample_weight=sample_weight)
    return [[float(v) for v in row] for row in matrix[: len(labels)]]


def recall_at_k(
    ranked: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, float]], k: int
) -> dict[str, float]:
    """Per-query recall@k: relevant docs in the top ``k`` / all relevant docs.

    A query of ``qrels`` that has no ranking gets 0; a query with no relevant
    document (all ``rel <= 0``) has no recall and is left out of the result,
    so callers can count it.
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    return {
        qid: len(relevant & set(list(ranked.get(qid, ()))[:k])) / len(relevant) for qid, relevant in _relevant(qrels)
    }


def _relevant(qrels: Mapping[str, Mapping[str, float]]) -> Iterator[tuple[str, set[str]]]:
    """Each query that has relevant docs (``rel > 0``), and those docs."""
    for qid, judged in qrels.items():
        relevant = {doc for doc, rel in judged.items() if rel > 0}
        if relevant:
            yield qid, relevant


def mean_recall_at_k(ranked: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, float]], k: int) -> float:
    """Recall@k averaged over the queries that have relevant documents."""
    return mean_over_queries(recall_at_k(ranked, qrels, k))


def reciprocal_rank(ranked: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Per-query reciprocal rank of the first relevant doc in the ranking (0 when none is ranked).

    Queries as in :func:`recall_at_k`: a query without relevant docs is left out.
    The ranking is as deep as given: a relevant doc below it counts as not found.
    """
    return {
        qid: next((1.0 / rank for rank, doc in enumerate(ranked.get(qid, ()), start=1) if doc in relevant), 0.0)
        for qid, relevant in _relevant(qrels)
    }


def ndcg_at_k(
    ranked: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, float]], k: int
) -> dict[str, float]:
    """Per-query nDCG@k with the graded relevance as gain and ``1 / log2(rank + 1)`` discount
    (trec_eval's ``ndcg_cut``); the ideal ranking is the judged docs by relevance."""
    if k < 1:
        raise ValueError("k must be >= 1")
    result: dict[str, float] = {}
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    for qid, judged in qrels.items():
        gains = sorted((float(rel) for rel in judged.values() if rel > 0), reverse=True)[:k]
        if not gains:
            continue
        ideal = float(np.dot(gains, discounts[: len(gains)]))
        top = list(ranked.get(qid, ()))[:k]
        got = [max(float(judged.get(doc, 0.0)), 0.0) for doc in top]
        result[qid] = float(np.dot(got, discounts[: len(got)])) / ideal
    return result


def mean_over_queries(per_query: Mapping[str, float]) -> float:
    """The mean of per-query values (``nan`` for none)."""
    return float(np.mean(list(per_query.values()))) if per_query else NAN


RUBRIC_MAX = 3


def rubric_to_100(score: float) -> float:
    """Linear map of a 0–3 judge rubric score onto 0–100 (EcomEval)."""
    if not 0 <= score <= RUBRIC_MAX:
        raise ValueError(f"rubric score {score!r} is outside 0..{RUBRIC_MAX}")
    return score / RUBRIC_MAX * 100.0
