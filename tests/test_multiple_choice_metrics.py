"""Permutation-robust MC metrics against hand-computed values."""

from __future__ import annotations

import math

import pytest

from ecom_tasks.monbench.metrics import reweighted_accuracy, run_accuracies, summarize
from ecom_tasks.plugins import select_metrics
from ecom_tasks.scorers.core import mean_ci

SPECS = select_metrics("choice_runs")

TASKS = ("t0", "t1")
FORMATS = ("label", "content")


def outcome(
    task=0, question=0, ordering=0, fmt=0, position=0, correct=1, invalid=0, mismatch=0, category=0, truncated=0
):
    return {
        "task": task,
        "question": question,
        "ordering": ordering,
        "format": fmt,
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
    assert run_accuracies(outcomes) == {(0, 0): 0.5, (1, 0): 1.0}
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
        outcome(category=1, correct=1),
        outcome(category=1, correct=0),
        outcome(category=2, correct=1),
        outcome(category=0, correct=0),  # no category: ignored
    ]
    # category 1 acc 0.5 weight 3, category 2 acc 1.0 weight 1, category 5 absent -> dropped.
    assert reweighted_accuracy(outcomes, {1: 3, 2: 1, 5: 10}) == pytest.approx((3 * 0.5 + 1 * 1.0) / 4)
    assert math.isnan(reweighted_accuracy(outcomes, {7: 1}))
    assert summarize(outcomes, SPECS, TASKS, FORMATS, category_weights={1: 1, 2: 1})["acc_reweighted"] == pytest.approx(
        0.75
    )


def test_one_question_packs_all_its_runs_into_one_reducible_score():
    from ecom_tasks.monbench.scoring import pack_question, unpack_question

    runs = {
        "p0_label": outcome(task=1, question=3, ordering=0, fmt=0, position=2, correct=1, category=5),
        "p7_content": outcome(task=1, question=3, ordering=7, fmt=1, position=0, correct=0, invalid=1, category=5),
        "p23_label_content": outcome(
            task=1, question=3, ordering=23, fmt=2, position=3, correct=0, mismatch=1, category=5
        ),
    }
    packed = pack_question(runs)
    assert packed["p7_content/invalid"] == 1 and packed["task"] == 1 and packed["category"] == 5
    assert all(isinstance(v, int) for v in packed.values())  # flat numbers: Inspect's mean reduces them
    back = sorted(unpack_question(packed), key=lambda o: o["ordering"])
    assert back == sorted(runs.values(), key=lambda o: o["ordering"])
