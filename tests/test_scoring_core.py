"""The shared scoring core against scikit-learn / scipy and hand-computed values."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score

from ecom_tasks.scorers.core import (
    INVALID,
    accuracy,
    binarized_accuracy,
    confusion,
    macro_f1,
    mean_ci,
    mean_recall_at_k,
    recall_at_k,
    rubric_to_100,
)

LABELS = ["L1", "L2", "L3", "L4"]
gold_labels = st.sampled_from(LABELS)
predicted_labels = st.sampled_from([*LABELS, INVALID])
pairs = st.lists(st.tuples(gold_labels, predicted_labels), min_size=1, max_size=60)


@settings(max_examples=200, deadline=None)
@given(pairs)
def test_accuracy_and_macro_f1_match_sklearn(data):
    gold, pred = [g for g, _ in data], [p for _, p in data]
    assert accuracy(gold, pred) == pytest.approx(accuracy_score(gold, pred))
    expected = f1_score(gold, pred, labels=LABELS, average="macro", zero_division=0)
    assert macro_f1(gold, pred, LABELS) == pytest.approx(expected)
    # Weighted (a MonBench/RAIR answer split over labels): the same as sklearn's sample_weight.
    weights = [0.25 + (i % 4) / 4 for i in range(len(gold))]
    assert accuracy(gold, pred, sample_weight=weights) == pytest.approx(
        accuracy_score(gold, pred, sample_weight=weights)
    )


@settings(max_examples=200, deadline=None)
@given(pairs)
def test_binarized_accuracy_treats_invalid_as_wrong(data):
    gold, pred = [g for g, _ in data], [p for _, p in data]
    side = {"L1": 0, "L2": 0, "L3": 1, "L4": 1}
    expected = sum(p != INVALID and side[g] == side[p] for g, p in data) / len(data)
    assert binarized_accuracy(gold, pred, positive=["L3", "L4"], negative=["L1", "L2"]) == pytest.approx(expected)


@settings(max_examples=100, deadline=None)
@given(pairs)
def test_confusion_matches_sklearn_with_invalid_column(data):
    gold, pred = [g for g, _ in data], [p for _, p in data]
    expected = confusion_matrix(gold, pred, labels=[*LABELS, INVALID])[:4].tolist()
    assert confusion(gold, pred, LABELS) == expected
    assert sum(map(sum, confusion(gold, pred, LABELS))) == len(data)


def test_all_invalid_predictions_score_zero():
    gold = ["L1", "L2", "L3", "L4", "L4"]
    pred = [INVALID] * 5
    assert accuracy(gold, pred) == 0.0
    assert macro_f1(gold, pred, LABELS) == 0.0
    assert binarized_accuracy(gold, pred, ["L3", "L4"], ["L1", "L2"]) == 0.0
    assert [row[-1] for row in confusion(gold, pred, LABELS)] == [1, 1, 1, 2]


def test_empty_inputs_are_defined_not_raising():
    assert math.isnan(accuracy([], []))
    assert math.isnan(macro_f1([], [], LABELS))
    assert confusion([], [], LABELS) == [[0] * 5 for _ in LABELS]
    mean, half = mean_ci([])
    assert math.isnan(mean) and math.isnan(half)
    assert math.isnan(mean_recall_at_k({}, {}, 5))


def test_length_mismatch_is_an_error():
    with pytest.raises(ValueError, match="2 items"):
        accuracy(["L1", "L2"], ["L1"])


def test_macro_f1_by_hand():
    # L1: P=1/1 R=1/2 F=2/3; L2: P=1/2 R=1/1 F=2/3; L3: no gold, no pred -> 0; L4: R=0 -> 0.
    gold = ["L1", "L1", "L2", "L4"]
    pred = ["L1", "L2", "L2", INVALID]
    assert macro_f1(gold, pred, LABELS) == pytest.approx((2 / 3 + 2 / 3 + 0 + 0) / 4)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=1, allow_nan=False), min_size=2, max_size=80))
def test_mean_ci_is_the_student_t_interval(values):
    mean, half = mean_ci(values)
    assert mean == pytest.approx(np.mean(values))
    sem = stats.sem(values)
    if sem == 0:
        assert half == pytest.approx(0.0, abs=1e-12)
    else:
        low, high = stats.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=sem)
        assert half == pytest.approx((high - low) / 2)


def test_mean_ci_by_hand_and_single_value():
    # n=3, mean 0.5, sd 0.1, t(0.975, 2) = 4.302652729...
    mean, half = mean_ci([0.4, 0.5, 0.6])
    assert mean == pytest.approx(0.5)
    assert half == pytest.approx(4.302652729749464 * 0.1 / math.sqrt(3))
    mean, half = mean_ci([0.7])
    assert mean == 0.7 and math.isnan(half)


def test_recall_at_k_by_hand():
    ranked = {"q1": ["d1", "d2", "d3", "d4"], "q2": ["d9", "d8"], "q4": ["d1"]}
    qrels = {
        "q1": {"d2": 1, "d4": 2, "d7": 1},  # 3 relevant: top-2 has d2 -> 1/3; top-4 has d2, d4 -> 2/3
        "q2": {"d5": 1},  # relevant doc never retrieved -> 0
        "q3": {"d1": 1},  # no ranking at all -> 0
        "q4": {"d1": 0},  # nothing relevant -> excluded
    }
    assert recall_at_k(ranked, qrels, 2) == {"q1": pytest.approx(1 / 3), "q2": 0.0, "q3": 0.0}
    assert recall_at_k(ranked, qrels, 4)["q1"] == pytest.approx(2 / 3)
    assert mean_recall_at_k(ranked, qrels, 4) == pytest.approx((2 / 3) / 3)
    with pytest.raises(ValueError):
        recall_at_k(ranked, qrels, 0)


def test_recall_at_k_random_against_brute_force():
    rng = random.Random(7)
    docs = [f"d{i}" for i in range(40)]
    for _ in range(50):
        ranked = {f"q{i}": rng.sample(docs, 25) for i in range(5)}
        qrels = {f"q{i}": {d: 1 for d in rng.sample(docs, rng.randint(1, 8))} for i in range(5)}
        k = rng.randint(1, 30)
        for qid, value in recall_at_k(ranked, qrels, k).items():
            hits = sum(1 for d in ranked[qid][:k] if d in qrels[qid])
            assert value == pytest.approx(hits / len(qrels[qid]))


@pytest.mark.parametrize(("score", "expected"), [(0, 0.0), (1, 100 / 3), (2, 200 / 3), (3, 100.0), (1.5, 50.0)])
def test_rubric_to_100(score, expected):
    assert rubric_to_100(score) == pytest.approx(expected)


@pytest.mark.parametrize("score", [-1, 3.5, 4])
def test_rubric_out_of_range_raises(score):
    with pytest.raises(ValueError, match="outside 0..3"):
        rubric_to_100(score)


def test_one_summary_serves_every_metric_of_the_same_items():
    from ecom_tasks.scorers.memo import last_call_memo

    calls = []
    summary = last_call_memo(lambda items, name: calls.append((len(items), name)) or {"n": len(items), "name": name})
    items = [{"a": 1}, {"a": 2}]
    assert summary(items, "x") == summary(list(items), "x") == {"n": 2, "name": "x"}
    assert calls == [(2, "x")]  # a copy of the same objects is the same items
    summary(items, "y")  # other arguments
    summary([{"a": 1}, {"a": 2}], "y")  # equal but other objects: computed again
    assert calls == [(2, "x"), (2, "y"), (2, "y")]


# --- ranking metrics: hand-computed values and pytrec_eval (trec_eval) -------------------------


def test_reciprocal_rank_and_ndcg_by_hand():
    from ecom_tasks.scorers.core import ndcg_at_k, reciprocal_rank

    ranked = {"q1": ["d3", "d1", "d2"], "q2": ["d9"], "q3": ["d1"]}
    qrels = {"q1": {"d1": 1, "d2": 1}, "q2": {"d1": 1}, "q3": {"d1": 0}}
    assert reciprocal_rank(ranked, qrels) == {"q1": 0.5, "q2": 0.0}  # q3 has no relevant doc: left out
    # q1: DCG = 1/log2(3) + 1/log2(4); ideal = 1 + 1/log2(3)
    expected = (1 / math.log2(3) + 0.5) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(ranked, qrels, 10)["q1"] == pytest.approx(expected)
    assert ndcg_at_k(ranked, qrels, 1)["q1"] == 0.0
    assert ndcg_at_k({"q": ["b", "a"]}, {"q": {"a": 2, "b": 1}}, 2)["q"] == pytest.approx(
        (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    )


def test_ranking_metrics_match_pytrec_eval():
    import pytrec_eval

    from ecom_tasks.scorers.core import ndcg_at_k, reciprocal_rank

    rng = random.Random(7)
    docs = [f"d{i}" for i in range(60)]
    for _ in range(30):
        ranked, qrels = {}, {}
        for q in range(8):
            qid = f"q{q}"
            ranked[qid] = rng.sample(docs, rng.randint(1, 60))
            qrels[qid] = {d: rng.choice([1, 1, 2, 3]) for d in rng.sample(docs, rng.randint(1, 20))}
        # trec_eval orders a run by score: give strictly decreasing scores in our order.
        run = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in ranked.items()}
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"recall.20", "recall.50", "recip_rank", "ndcg_cut.10"})
        trec = evaluator.evaluate(run)
        for k in (20, 50):
            ours = recall_at_k(ranked, qrels, k)
            assert ours == pytest.approx({q: trec[q][f"recall_{k}"] for q in ours})
        assert reciprocal_rank(ranked, qrels) == pytest.approx({q: trec[q]["recip_rank"] for q in ranked})
        assert ndcg_at_k(ranked, qrels, 10) == pytest.approx({q: trec[q]["ndcg_cut_10"] for q in ranked})


def test_builtin_ranking_specs_are_means_over_queries():
    from ecom_tasks.plugins import select_metrics
    from ecom_tasks.scorers.kinds import Rankings

    specs = {s.name: s for s in select_metrics("ranking")}
    assert list(specs) == ["recall@20", "recall@50", "mrr", "ndcg@10"]
    data = Rankings({"a": ["x", "p"], "b": ["p"]}, {"a": {"p": 1}, "b": {"p": 1}})
    assert specs["mrr"].compute(data) == pytest.approx((0.5 + 1) / 2)
    assert specs["ndcg@10"].compute(data) == pytest.approx((1 / math.log2(3) + 1) / 2)
    assert specs["recall@20"].compute(data) == 1.0
