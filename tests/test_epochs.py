"""Epochs repeat a sample; with the same reply every epoch, every number, per group too, equals one epoch's.

Group membership (RAIR's industry, intent and dimension; EcomEval's category, task and language) must
survive Inspect's reduction of the epochs' scores: a group field averaged or dropped by the reducer would
move a per-group number. The offline baseline answers the same prompt the same way every time.
"""

from __future__ import annotations

import math

import pytest
from inspect_ai import eval as inspect_eval

import ecom_tasks._registry  # noqa: F401  (the ecom/ model provider and the tasks)


def _metrics(task: str, epochs: int, tmp_path, **options) -> dict[str, float]:
    (log,) = inspect_eval(
        task,
        model="ecom/baseline",
        epochs=epochs,
        log_dir=str(tmp_path / f"epochs-{epochs}"),
        display="none",
        **options,
    )
    assert log.status == "success", log.error
    assert log.results is not None
    return {name: m.value for score in log.results.scores for name, m in score.metrics.items()}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("task", "options"),
    [
        ("ecom_tasks/rair_general", {}),
        ("ecom_tasks/ecomeval", {"model_roles": {"grader": "ecom/baseline"}}),
    ],
)
def test_three_identical_epochs_give_exactly_the_numbers_of_one(task, options, tmp_path):
    one = _metrics(task, 1, tmp_path, **options)
    three = _metrics(task, 3, tmp_path, **options)
    grouped = [name for name in one if "/" in name]
    assert len(grouped) >= 10, grouped  # the per-group numbers are there to compare
    assert set(three) == set(one)
    for name, value in one.items():
        other = three[name]
        assert (math.isnan(value) and math.isnan(other)) or other == pytest.approx(value, abs=1e-12), name
