"""RMIR metric maths: per-query outcomes against hand-made qrels, the category summary, and TSR."""

from __future__ import annotations

import math

import pytest

from ecom_tasks.data import ConfigurationError
from ecom_tasks.reference_results import reference_rows
from ecom_tasks.rmir.metrics import QueryOutcome, negative_fraction, negativeness, ranking_outcome, summarize, tsr
from ecom_tasks.rmir.scoring import rank_depth, ranking_specs

POOL = [f"p{i}" for i in range(60)]


def outcome(ranked, positives, category="functional", k="20,50", failed=False):
    return QueryOutcome(ranking_outcome(ranked, positives, ranking_specs(k), failed=failed), category)


def test_recall_is_positives_in_top_k_over_all_positives():
    positives = ["p3", "p25", "p55"]
    got = outcome(POOL, positives).values
    # p3 at rank 4, p25 at 26, p55 at 56: 1/3 in the top 20, 2/3 in the top 50
    assert got["recall@20"] == pytest.approx(1 / 3)
    assert got["recall@50"] == pytest.approx(2 / 3)
    assert got["mrr"] == pytest.approx(1 / 4)
    # nDCG@10: one hit at rank 4 of an ideal three hits at ranks 1-3
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert got["ndcg@10"] == pytest.approx((1 / math.log2(5)) / ideal)
    assert got["failed"] == 0 and "category" not in got  # the category is the sample's, not a number of the score


def test_positives_first_scores_one_and_reversed_the_exact_value():
    positives = ["p10", "p11", "p12"]
    first = positives + [p for p in POOL if p not in positives]
    best = outcome(first, positives).values
    assert best["recall@20"] == best["recall@50"] == best["mrr"] == best["ndcg@10"] == 1.0
    reversed_ranking = first[::-1]  # positives at ranks 58, 59, 60
    worst = outcome(reversed_ranking, positives).values
    assert worst["recall@20"] == worst["recall@50"] == worst["ndcg@10"] == 0.0
    assert worst["mrr"] == pytest.approx(1 / 58)
    assert outcome(first[::-1], positives, k="59").values["recall@59"] == pytest.approx(2 / 3)


def test_failed_query_scores_zero_and_is_counted():
    got = outcome([], ["p1"], category="causal", failed=True).values
    assert got == {"recall@20": 0.0, "recall@50": 0.0, "mrr": 0.0, "ndcg@10": 0.0, "failed": 1}


def test_summary_by_category_and_category_mean():
    rows = [
        outcome(["p1"] + POOL, ["p1"], "functional"),  # recall 1
        outcome(POOL, ["p59"], "functional"),  # recall@20 0, @50 0
        outcome(POOL, ["p0", "p30"], "temporal"),  # @20 1/2, @50 1
        outcome([], ["p0"], "causal", failed=True),  # 0
    ]
    names = [s.name for s in ranking_specs()]
    summary = summarize(rows, names)
    assert summary["recall@20"] == pytest.approx((1 + 0 + 0.5 + 0) / 4)
    assert summary["functional/recall@20"] == pytest.approx(0.5)
    assert summary["temporal/recall@50"] == 1.0
    assert summary["causal/recall@20"] == 0.0
    assert summary["category_mean/recall@20"] == pytest.approx((0.5 + 0.5 + 0) / 3)
    assert summary["category_mean/recall@50"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert summary["failure_rate"] == 0.25 and summary["n"] == 4
    assert summary["functional/n"] == 2
    # The mean over all queries and the mean of the category means differ (the paper's Average is the former).
    assert summary["recall@20"] == pytest.approx(0.375) and summary["category_mean/recall@20"] == pytest.approx(1 / 3)
    only_temporal = summarize(rows[2:3], names)
    assert "functional/recall@20" not in only_temporal
    assert only_temporal["category_mean/recall@20"] == only_temporal["recall@20"] == 0.5
    empty = summarize([], names)
    assert math.isnan(empty["recall@20"]) and empty["n"] == 0


def test_paper_average_is_the_mean_over_all_queries_with_432_temporal_and_656_causal():
    # Table 2's Average from its category columns: each query of a category scores the category's value, and
    # our overall recall@K (the mean over queries) gives the Average, within the table's rounding (0.01 points),
    # for Sec. 3.2's 546 functional queries and its temporal / causal counts exchanged, not as it prints them.
    rows = reference_rows("rmir", "table2", "fraction")
    names = ["recall@20", "recall@50"]

    def overall(row, counts):
        outcomes = [
            QueryOutcome({**{name: row.values[f"{category}/{name}"] for name in names}, "failed": 0}, category)
            for category, n in counts.items()
            for _ in range(n)
        ]
        return summarize(outcomes, names)

    assert len(rows) == 11
    for row in rows:
        ours = overall(row, {"functional": 546, "temporal": 432, "causal": 656})
        assert ours["n"] == 1634
        for name in ("recall@20", "recall@50"):
            assert ours[name] == pytest.approx(row.values[name], abs=1e-4), (row.model, name)
    printed = [overall(row, {"functional": 546, "temporal": 656, "causal": 432}) for row in rows]
    assert max(abs(p["recall@20"] - row.values["recall@20"]) for p, row in zip(printed, rows)) > 3e-3


def test_k_parameter_yields_recall_specs_and_depth():
    assert [s.name for s in ranking_specs("5,200")] == ["recall@5", "recall@200", "mrr", "ndcg@10"]
    assert rank_depth(ranking_specs("5,200")) == 200 and rank_depth(ranking_specs()) == 100
    with pytest.raises(ConfigurationError, match="positive integers"):
        ranking_specs("0")


@pytest.mark.parametrize(
    ("k", "metrics", "expected"),
    [
        # k sets the cut-offs, metrics selects among the rest: the union, nothing dropped.
        ("10,20,50", "recall@20,mrr", ["recall@10", "recall@20", "recall@50", "mrr"]),
        ("10,20,50", "mrr", ["recall@10", "recall@20", "recall@50", "mrr"]),
        (None, "ndcg@10", ["recall@20", "recall@50", "ndcg@10"]),
        (None, "recall@50,recall@20", ["recall@20", "recall@50"]),
        ("20", "ndcg@10,mrr,mrr", ["recall@20", "ndcg@10", "mrr"]),
        ([5, 20], "all", ["recall@5", "recall@20", "mrr", "ndcg@10"]),
        ("20,50", "", ["recall@20", "recall@50", "mrr", "ndcg@10"]),
    ],
)
def test_k_and_metrics_give_their_union(k, metrics, expected):
    assert [s.name for s in ranking_specs(k, metrics)] == expected


@pytest.mark.parametrize(
    ("k", "metrics", "message"),
    [
        (
            "10,20,50",
            "recall@30",
            r"metrics names recall@30, but the recall cut-offs are k=10,20,50: .*-T k=10,20,50,30",
        ),
        (None, "recall@7,mrr", r"metrics names recall@7, but the recall cut-offs are k=20,50"),
        (None, "map", r"unknown ranking metric 'map'; metrics selects among mrr, ndcg@10"),
        ("20", "recall@0", r"unknown ranking metric 'recall@0'"),
        ("20", "recall@x", r"unknown ranking metric 'recall@x'"),
        ("20,abc", None, r"k must be positive integers like 20,50; got '20,abc'"),
    ],
)
def test_unknown_or_conflicting_selection_is_a_configuration_error(k, metrics, message):
    with pytest.raises(ConfigurationError, match=message):
        ranking_specs(k, metrics)


# --- TSR (Sec. 3.1.7) ------------------------------------------------------------------------


def test_negativeness_is_the_negative_share_or_zero_below_half():
    assert negativeness(0.8) == 0.8 and negativeness(0.5) == 0.5 and negativeness(0.4) == 0.0
    assert negative_fraction([True, False, False, "False", "ABSTAIN"]) == pytest.approx(3 / 5)
    with pytest.raises(ValueError):
        negativeness(1.2)


def test_tsr_by_hand_and_with_padding():
    # K = 4; 0.2 of judges is less than half, so negativeness [0, 1, 0, 1]; tail means 1/2, 2/3, 1/2, 1.
    assert tsr([0.0, 1.0, 0.2, 1.0], k=4) == pytest.approx((2 / 4 + 2 / 3 + 1 / 2 + 1) / 4)
    # all positives: 0; all negatives: 1
    assert tsr([0.0] * 16) == 0.0 and tsr([1.0] * 16) == 1.0
    # Two candidates, both positive, padded with 14 artificial negatives (K = 16):
    values = [0.0, 0.0] + [1.0] * 14
    expected = sum(sum(values[i:]) / (16 - i) for i in range(16)) / 16
    assert tsr([0.0, 0.0]) == pytest.approx(expected)
    # Negatives towards the tail raise TSR more than the same negatives at the head.
    assert tsr([0, 0, 1, 1], k=4) > tsr([1, 1, 0, 0], k=4)
    with pytest.raises(ValueError, match="17 candidates for K = 16"):
        tsr([0.0] * 17)
