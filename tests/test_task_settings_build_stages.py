"""The voting build stages' ``-T`` settings (RAIR's intent/visual/rules, MonBench's votes) reach the panel solver:
a seat count, temperature, max_tokens or seed that no panel can use is one ConfigurationError when the task is
built, not a raw ValueError, a pydantic error at the first call, or (``voters=1e30``) a list of 1e30 roles that
exhausts memory."""

from __future__ import annotations

import math

import pytest

from ecom_tasks.errors import ConfigurationError
from ecom_tasks.monbench.construction.pipeline import default_pairs
from ecom_tasks.monbench.construction.stages import monbench_build_votes
from ecom_tasks.rair.construction.pipeline import default_candidates
from ecom_tasks.rair.construction.stages import rair_build_intent, rair_build_rules, rair_build_visual

CANDIDATES, PAIRS = str(default_candidates()), str(default_pairs())


@pytest.mark.parametrize(
    ("build", "setting", "value", "message"),
    [
        (rair_build_intent, "voters", 10**30, "judges"),
        (rair_build_intent, "voters", "abc", "judges"),
        (rair_build_visual, "vlms", 0, "judges"),
        (rair_build_rules, "runs", -5, "judges"),
        (monbench_build_votes, "voters", ["a"], "judges"),
        (rair_build_intent, "temperature", "abc", "temperature"),
        (rair_build_visual, "temperature", math.nan, "temperature"),
        (monbench_build_votes, "temperature", -1.0, "temperature"),
        (rair_build_rules, "temperature", 10**30, "temperature"),
        (rair_build_intent, "max_tokens", -5, "max_tokens"),
        (monbench_build_votes, "max_tokens", math.inf, "max_tokens"),
        (rair_build_rules, "seed", 2.5, "seed"),
        (rair_build_rules, "seed", "9" * 5000, "seed"),
    ],
)
def test_a_panel_setting_no_panel_can_use_is_refused_by_name(build, setting, value, message):
    data = PAIRS if build is monbench_build_votes else CANDIDATES
    with pytest.raises(ConfigurationError, match=message):
        build(data=data, **{setting: value})


def test_usable_panel_settings_build_as_before():
    task = rair_build_rules(data=CANDIDATES, runs="3", temperature="0.7", max_tokens=256, seed=7)
    assert len(task.dataset) > 0
    assert len(monbench_build_votes(data=PAIRS, voters=1, temperature=0).dataset) > 0
