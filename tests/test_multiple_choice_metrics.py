"""Permutation-robust MC metrics against hand-computed values."""

from __future__ import annotations

import math

import pytest

from ecom_tasks.monbench.metrics import reweighted_accuracy, summarize
from ecom_tasks.plugins import select_metrics
from ecom_tasks.scorers.core import mean_ci

SPECS = select_metrics("choice_runs")

TASKS = ("t0", "t1")
FORMATS = ("label", "content")


def outcome(
    task=0, question=0, ordering=0, fmt=0, position=0, correct=1, invalid=0, mismatch=0, category="", truncated=0
):
    return {
        "task": TASKS[task],
        "question": f"q{question}",
        "ordering": ordering,
        "format": FORMATS[fmt],
        "position": position,
        "category": category,
        "correct": correct,
        "invalid": invalid,
        "mismatch": mismatch,
        "truncated": truncated,
    }


def test_single_task_summary_by_hand():
    # Two questions x two runs (ordering 0 / 1, label format).
    outcomes = [
        outcome(question=0, ordering=0, position=0, correct=1),
        outcome(question=1, ordering=0, position=2, correct=0, invalid=1),
        outcome(question=0, ordering=1, position=1, correct=1),
        outcome(question=1, ordering=1, position=3, correct=1),
    ]
    summary = summarize(outcomes, SPECS, TASKS, FORMATS)
    mean, half = mean_ci([0.5, 1.0])
    assert summary["acc"] == pytest.approx(0.75) == pytest.approx(mean)
    assert summary["acc_ci"] == pytest.approx(half)
    assert summary["acc_pos_A"] == 1.0 and summary["acc_pos_B"] == 1.0
    assert summary["acc_pos_C"] == 0.0 and summary["acc_pos_D"] == 1.0
    assert summary["acc_fmt_label"] == 0.75 and math.isnan(summary["acc_fmt_content"])
    assert summary["consistency"] == 0.5  # question 0 right in both runs, question 1 not
    assert summary["invalid_rate"] == 0.25
    assert summary["mismatch_rate"] == 0.0
    assert summary["n_runs"] == 2


def test_overall_is_unweighted_task_mean_with_ci_over_runs():
    # task 0: 1 question, runs r0 right, r1 wrong; task 1: 3 questions, r0 all right, r1 2/3.
    outcomes = [
        outcome(task=0, question=0, ordering=0, correct=1),
        outcome(task=0, question=0, ordering=1, correct=0),
        *[outcome(task=1, question=q, ordering=0, correct=1) for q in (1, 2, 3)],
        *[outcome(task=1, question=q, ordering=1, correct=int(q != 3)) for q in (1, 2, 3)],
    ]
    summary = summarize(outcomes, SPECS, TASKS, FORMATS)
    assert summary["t0/acc"] == 0.5
    assert summary["t1/acc"] == pytest.approx((1 + 2 / 3) / 2)
    run_means = [(1 + 1) / 2, (0 + 2 / 3) / 2]
    mean, half = mean_ci(run_means)
    assert summary["acc"] == pytest.approx(mean) == pytest.approx((summary["t0/acc"] + summary["t1/acc"]) / 2)
    assert summary["acc_ci"] == pytest.approx(half)
    assert summary["consistency"] == pytest.approx((0 + 2 / 3) / 2)
    assert summary["n_items"] == 8


def test_empty_outcomes_are_nan():
    summary = summarize([], SPECS, TASKS, FORMATS)
    assert math.isnan(summary["acc"]) and math.isnan(summary["acc_ci"])
    assert math.isnan(summary["consistency"])


def test_reweighted_accuracy_by_hand():
    outcomes = [
        outcome(category="Books", correct=1),
        outcome(category="Books", correct=0),
        outcome(category="Toys", correct=1),
        outcome(correct=0),  # no category: ignored
    ]
    # Books acc 0.5 weight 3, Toys acc 1.0 weight 1, Garden absent -> dropped.
    assert reweighted_accuracy(outcomes, {"Books": 3, "Toys": 1, "Garden": 10}) == pytest.approx((3 * 0.5 + 1.0) / 4)
    assert math.isnan(reweighted_accuracy(outcomes, {"Garden": 1}))
    weights = {"Books": 1, "Toys": 1}
    assert summarize(outcomes, SPECS, TASKS, FORMATS, category_weights=weights)["acc_reweighted"] == pytest.approx(0.75)


def test_one_question_packs_the_numbers_of_its_runs_into_one_reducible_score():
    from ecom_tasks.monbench.scoring import pack_question, unpack_question

    def run(ordering, fmt, **numbers):
        fields = {"task": "query_query_intent", "question": "q3", "category": "Books", "ordering": ordering}
        return {**outcome(**numbers), **fields, "format": fmt}

    runs = {
        "p0_label": run(0, "label", position=2, correct=1),
        "p7_content": run(7, "content", position=0, correct=0, invalid=1),
        "p23_label_content": run(23, "label_content", position=3, correct=0, mismatch=1),
    }
    packed = pack_question(runs)
    assert packed["p7_content/invalid"] == 1 and packed["p23_label_content/position"] == 3
    # Only the runs' numbers (Inspect's epoch mean reduces them); the groups come from the sample's metadata.
    assert {key.partition("/")[2] for key in packed} == {"position", "correct", "invalid", "mismatch", "truncated"}
    metadata = {"record_id": "q3", "task": "query_query_intent", "category": "Books", "question_index": 0}
    back = sorted(unpack_question(packed, metadata), key=lambda o: o["ordering"])
    assert back == sorted(runs.values(), key=lambda o: o["ordering"])
