"""Graded-relevance metrics against scikit-learn, the majority baseline, epochs and empty input."""

from __future__ import annotations

import math
import random
from dataclasses import asdict, replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from inspect_ai.scorer import SampleScore, Score, mean_score
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score

from ecom_tasks.inspect_evals.rair import rair_breakdown, rair_summary
from ecom_tasks.plugins import select_metrics
from ecom_tasks.rair.metrics import INVALID_CODE, PRED_LABELS, item_outcome, key_name
from ecom_tasks.rair.metrics import summarize as summarize_outcomes
from ecom_tasks.rair.parsing import OTHER_DIMENSION
from ecom_tasks.rair.schema import INDUSTRIES, INTENTS, LEVELS
from ecom_tasks.rair.scoring import GROUPS, dimension_table, subset_metric_keys
from ecom_tasks.rair.scoring import summarize as rair_summarize
from ecom_tasks.scorers.core import macro_f1

LABEL_SPECS = select_metrics("labels")


def rair_metrics(outcomes):
    return rair_summarize(outcomes, LABEL_SPECS)


def summarize(outcomes, **kwargs):
    return summarize_outcomes(outcomes, LABEL_SPECS, **kwargs)


def outcome(gold, pred, industry=0, intent=0, strict=None, **kwargs):
    """An item's outcome, its industry and intent given as 1-based positions in their lists (0: none)."""
    names = {
        "industry": INDUSTRIES[industry - 1] if industry else None,
        "intent": INTENTS[intent - 1] if intent else None,
    }
    return item_outcome(gold, pred, strict, **names, **kwargs)


SIDE = {"L1": "irrelevant", "L2": "irrelevant", "L3": "relevant", "L4": "relevant", "invalid": "invalid"}


def sklearn_metrics(gold: list[str], pred: list[str], labels: tuple[str, ...] = tuple(LEVELS)) -> dict:
    return {
        "acc4": accuracy_score(gold, pred),
        "acc2": accuracy_score([SIDE[g] for g in gold], [SIDE[p] for p in pred]),
        "macro_f1": f1_score(gold, pred, labels=labels, average="macro", zero_division=0),
        "confusion": confusion_matrix(gold, pred, labels=list(PRED_LABELS))[:4].tolist(),
    }


items = st.lists(
    st.tuples(
        st.integers(0, 3),  # gold
        st.integers(0, INVALID_CODE),  # prediction (4 = invalid)
        st.integers(1, len(INDUSTRIES)),
        st.integers(0, len(INTENTS)),
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=50, deadline=None)
@given(items)
def test_random_sets_match_sklearn_exactly(rows):
    outcomes = [outcome(g, p, industry=i, intent=t) for g, p, i, t in rows]
    gold = [LEVELS[g] for g, _, _, _ in rows]
    pred = [PRED_LABELS[p] for _, p, _, _ in rows]
    # Macro-F1 averages the levels present among the gold labels, overall as in every breakdown group.
    expected = sklearn_metrics(gold, pred, tuple(level for level in LEVELS if level in gold))
    result = rair_metrics(outcomes)
    assert result["acc4"] == expected["acc4"]
    assert result["acc2"] == expected["acc2"]
    assert result["macro_f1"] == expected["macro_f1"]
    assert result["invalid_rate"] == sum(p == INVALID_CODE for _, p, _, _ in rows) / len(rows)
    assert [[result[f"confusion/{g}/{p}"] for p in PRED_LABELS] for g in LEVELS] == expected["confusion"]
    for field, names in GROUPS.items():
        index = 2 if field == "industry" else 3
        for number, name in enumerate(names, start=1):
            members = [k for k, row in enumerate(rows) if row[index] == number]
            part = f"{field}/{key_name(name) if field == 'industry' else name}"
            if not members:
                assert f"acc4/{part}" not in result
                continue
            present = [level for level in LEVELS if level in {gold[k] for k in members}]
            sub = sklearn_metrics([gold[k] for k in members], [pred[k] for k in members], present)
            assert result[f"acc4/{part}"] == sub["acc4"]
            assert result[f"acc2/{part}"] == sub["acc2"]
            assert result[f"macro_f1/{part}"] == sub["macro_f1"]
            assert result[f"n/{part}"] == len(members)


def test_a_level_the_data_never_holds_is_not_a_class_every_model_fails():
    # RAIR Hard holds no L1 (hard mining drops it): a model right on every item has Macro-F1 1, not 3/4.
    gold = [1, 1, 2, 3, 3, 3]
    assert rair_metrics([outcome(g, g) for g in gold])["macro_f1"] == 1.0
    # By hand, over L2 / L3 / L4: L2 P=1 R=1/2 F=2/3; L3 P=R=0 F=0; L4 P=3/4 R=1 F=6/7.
    pred = [1, 2, 3, 3, 3, 3]
    result = rair_metrics([outcome(g, p) for g, p in zip(gold, pred)])
    assert result["macro_f1"] == pytest.approx((2 / 3 + 0 + 6 / 7) / 3)


def _random_rows(rng: random.Random, n: int) -> list[tuple[int, int, int, int]]:
    return [(rng.randrange(4), rng.randrange(5), rng.randrange(1, 15), rng.randrange(0, 7)) for _ in range(n)]


def test_seeded_large_sets_match_sklearn():
    rng = random.Random(20251122)
    for _ in range(40):
        rows = _random_rows(rng, rng.randrange(1, 2000))
        expected = sklearn_metrics([LEVELS[r[0]] for r in rows], [PRED_LABELS[r[1]] for r in rows])
        result = summarize([outcome(g, p) for g, p, _, _ in rows])
        assert (result["acc4"], result["acc2"], result["macro_f1"]) == (
            expected["acc4"],
            expected["acc2"],
            expected["macro_f1"],
        )
        assert [[result[f"confusion/{g}/{p}"] for p in PRED_LABELS] for g in LEVELS] == expected["confusion"]


def test_weighted_macro_f1_equals_sklearns_bit_for_bit():
    # Answers weighted by their share of a sample's epochs, and any label subset in any order.
    rng = random.Random(20261203)
    for _ in range(300):
        n = rng.randrange(1, 80)
        gold = [rng.choice([*LEVELS, "X"]) for _ in range(n)]
        pred = [rng.choice([*PRED_LABELS]) for _ in range(n)]
        labels = rng.sample(list(LEVELS), rng.randrange(1, 5))
        weights = [rng.random() * rng.randrange(1, 50) for _ in range(n)] if rng.random() < 0.7 else None
        expected = f1_score(gold, pred, labels=labels, average="macro", zero_division=0, sample_weight=weights)
        assert macro_f1(gold, pred, labels, sample_weight=weights) == expected


def test_lm_eval_aggregations_equal_the_summary():
    from ecom_tasks.lm_eval_tasks import task_manager

    tasks = task_manager(include_defaults=False).load(["rair_general", "rair_hard"])["tasks"]
    rng = random.Random(5)
    for n in (0, 3, 300):
        outcomes = [outcome(g, p, i, t, strict=rng.randrange(5)) for g, p, i, t in _random_rows(rng, n)]
        documents = [asdict(o) for o in outcomes]  # lm-eval's per-document objects, as --log_samples writes them
        result = rair_metrics(outcomes)
        for subset in ("general", "hard"):
            task = tasks[f"rair_{subset}"]
            aggregations = task.aggregation()
            keys = task.metric_keys(task.config.to_dict(), LABEL_SPECS)
            # lm-eval's list: no truncated_rate (it passes no stop reason), the context-limit share added
            assert set(keys) == {*subset_metric_keys(subset, LABEL_SPECS), "context_exceeded_rate"} - {"truncated_rate"}
            assert list(aggregations) == keys and {"acc2_strict", "macro_f1_strict"} <= set(keys)
            for key in keys:
                if key == "context_exceeded_rate":
                    continue
                # A fresh list each time, as lm-eval passes one list per metric.
                value = aggregations[key](list(documents))
                if key in result:
                    assert value == result[key] or (math.isnan(value) and math.isnan(result[key])), key
                else:  # a group or dimension absent from the data
                    assert math.isnan(value) or (key.startswith("n/") and value == 0), key


def test_majority_class_on_table1_distribution():
    # Table 1: L1 2008, L2 10911, L3 2382, L4 33648 (48,949 pairs).
    counts = {0: 2008, 1: 10911, 2: 2382, 3: 33648}
    outcomes = [outcome(g, 3) for g, n in counts.items() for _ in range(n)]
    result = summarize(outcomes)
    total = sum(counts.values())
    assert result["acc4"] == pytest.approx(33648 / total, abs=1e-12)
    assert result["acc4"] == pytest.approx(0.687, abs=5e-4)
    assert result["acc2"] == pytest.approx((2382 + 33648) / total, abs=1e-12)
    gold = [LEVELS[g] for g, n in counts.items() for _ in range(n)]
    assert result["macro_f1"] == f1_score(gold, ["L4"] * total, labels=list(LEVELS), average="macro", zero_division=0)
    assert result["macro_f1"] == pytest.approx(0.2037, abs=1e-4)


def _reduce(epochs):
    """Inspect's own mean reducer over the numbers of every sample's epochs; its groups are the item's."""
    reducer = mean_score()
    return [
        replace(epochs[0][i], numbers=reducer([Score(value=e[i].numbers) for e in epochs]).value)
        for i in range(len(epochs[0]))
    ]


def test_epoch_mean_reduction_of_identical_epochs_changes_nothing():
    rng = random.Random(7)
    outcomes = [outcome(rng.randrange(4), rng.randrange(5), industry=rng.randrange(1, 15)) for _ in range(80)]
    reduced = _reduce([outcomes, outcomes, outcomes])
    assert rair_metrics(reduced) == pytest.approx(rair_metrics(outcomes), nan_ok=True)


def test_epoch_mean_reduction_weights_each_answer_by_its_share():
    rng = random.Random(11)
    gold = [rng.randrange(4) for _ in range(120)]
    epoch_a = [outcome(g, rng.randrange(5)) for g in gold]
    epoch_b = [outcome(g, rng.randrange(5)) for g in gold]
    reduced = rair_metrics(_reduce([epoch_a, epoch_b]))
    pooled = rair_metrics(epoch_a + epoch_b)  # every answer once: the same weights up to a factor 2
    for key in ("acc2", "acc4", "macro_f1", "invalid_rate"):
        assert reduced[key] == pytest.approx(pooled[key])
    for g in LEVELS:
        for p in PRED_LABELS:
            assert reduced[f"confusion/{g}/{p}"] == pytest.approx(pooled[f"confusion/{g}/{p}"] / 2)


def test_empty_input_gives_nan_not_an_exception():
    result = rair_metrics([])
    assert math.isnan(result["acc4"]) and math.isnan(result["macro_f1"]) and result["n"] == 0
    assert result["confusion/L2/L3"] == 0
    assert "acc2/intent/DJ" not in result  # groups absent from the data have no keys
    summary, breakdown = rair_summary()([]), rair_breakdown()([])
    assert math.isnan(summary["acc2"]) and "confusion/L1/L1" in breakdown


def test_inspect_metrics_read_numbers_from_the_score_and_groups_from_the_sample_metadata():
    brand = {"industry": "Daily Consumer Goods", "gold_dimension": "Brand"}
    metadata = [brand, {"industry": "Daily Consumer Goods", "intent": "NC", "gold_dimension": ""}]
    numbers = [item_outcome(1, 1, **brand, dimension="Brand").numbers, item_outcome(3, 4).numbers]
    scores = [
        SampleScore(score=Score(value=v), sample_id=i, sample_metadata=m)
        for i, (v, m) in enumerate(zip(numbers, metadata))
    ]
    summary = rair_summary()(scores)
    assert summary["acc4"] == 0.5 and summary["invalid_rate"] == 0.5 and summary["l2_dim_acc"] == 1.0
    breakdown = rair_breakdown()(scores)
    assert breakdown["n/industry/daily_consumer_goods"] == 2 and breakdown["n/intent/NC"] == 1
    assert breakdown["error_share/none"] == 1.0  # the one error: the item without a gold rule


def test_mismatch_dimension_metrics_and_fig5_table():
    outcomes = [
        outcome(1, 1, gold_dimension="Brand", dimension="Brand"),  # right level, right dimension
        outcome(1, 1, gold_dimension="Brand", dimension="Color"),  # right level, wrong dimension
        outcome(1, 3, gold_dimension="Brand"),  # missed mismatch
        outcome(3, 1, dimension="Color"),  # false mismatch claim
        outcome(2, 4, gold_dimension="Color"),  # invalid answer
        outcome(1, 1, gold_dimension="Brand", dimension=OTHER_DIMENSION),  # a dimension outside Table 8
    ]
    result = rair_metrics(outcomes)
    assert result["l2_dim_acc"] == 1 / 3
    assert result["error_share/brand"] == pytest.approx(1 / 3)
    assert result["error_share/color"] == pytest.approx(1 / 3)
    assert result["error_share/none"] == pytest.approx(1 / 3)
    table = dimension_table(outcomes)
    assert list(table) == ["Color", "Brand", "none"]
    assert table["Brand"]["n"] == 4 and table["Brand"]["errors"] == 1 and table["Brand"]["acc4"] == pytest.approx(3 / 4)
    assert table["Brand"]["pred:Brand"] == 1 and table["Brand"]["pred:Color"] == 1 and table["Brand"]["pred:other"] == 1
    assert table["none"]["pred:Color"] == 1
    assert sum(row["error_share"] for row in table.values()) == pytest.approx(1)


def test_outcome_encoding_rejects_bad_indices():
    with pytest.raises(ValueError):
        outcome(4, 0)
    with pytest.raises(ValueError):
        outcome(0, 5)
    assert outcome(3, 4).numbers["pred_invalid"] == 1


def test_breakdown_macro_f1_averages_the_levels_present_in_the_group():
    # Industry 1 has no L1 and is answered perfectly: 1.0, not 0.75 (an absent level's F1 of 0).
    group = [outcome(g, g, industry=1) for g in (1, 2, 3, 3)]
    # Industry 2: gold L1, L4; predictions L1 (right), L3 (wrong).
    other = [outcome(0, 0, industry=2), outcome(3, 2, industry=2)]
    result = rair_metrics(group + other)
    assert result["macro_f1/industry/fashion_apparel"] == 1.0
    # Present gold levels L1 and L4: F1(L1) = 1, F1(L4) = 0 (L3 is predicted but absent from gold).
    expected = f1_score(["L1", "L4"], ["L1", "L3"], labels=["L1", "L4"], average="macro", zero_division=0)
    assert result["macro_f1/industry/home_furnishing"] == expected == 0.5
    # The overall figure keeps Eq. 7's C = 4 over all levels.
    gold = ["L2", "L3", "L4", "L4", "L1", "L4"]
    pred = ["L2", "L3", "L4", "L4", "L1", "L3"]
    assert result["macro_f1"] == f1_score(gold, pred, labels=list(LEVELS), average="macro", zero_division=0)


def test_truncated_replies_are_counted():
    outcomes = [outcome(3, 3), outcome(3, INVALID_CODE, truncated=True), outcome(1, 1)]
    assert rair_metrics(outcomes)["truncated_rate"] == pytest.approx(1 / 3)
    assert rair_metrics(outcomes)["invalid_rate"] == pytest.approx(1 / 3)
