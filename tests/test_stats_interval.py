"""The expanded percentile interval of ``ecom_tasks.report.stats`` against scipy's percentile bootstrap and
the closed forms its widening comes from (Hesterberg's one-sample formula; per-stratum shares of a
stratified mean's variance with Satterthwaite's degrees of freedom)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from ecom_tasks.report import stats

# A fixed outcome table: 12 graded items on 0-3 (skewed: most items right).
GRADES = [3, 3, 2, 3, 0, 3, 1, 3, 3, 2, 3, 3]


def _units(values, strata=None):
    ids = tuple(f"u{i:02d}" for i in range(len(values)))
    outcomes = tuple(({"g": float(v), "s": None if strata is None else strata[i]},) for i, v in enumerate(values))
    return stats.Units(ids, outcomes, None if strata is None else tuple(strata))


def _mean():
    return stats.Measure(lambda outcomes: {"g": float(np.mean([o["g"] for o in outcomes]))})


def _macro_mean():
    def summarize(outcomes):
        groups: dict[str, list[float]] = {}
        for o in outcomes:
            groups.setdefault(o["s"], []).append(o["g"])
        return {"g": float(np.mean([np.mean(v) for v in groups.values()]))}

    return stats.Measure(summarize)


def test_one_sample_interval_is_scipys_percentile_interval_at_hesterbergs_expanded_level():
    n = len(GRADES)
    # Phi(-sqrt(n / (n - 1)) t_{0.975, n-1}) in each tail instead of 2.5%: 12 items -> about 1.1% a tail.
    tail = scipy_stats.norm.cdf(-math.sqrt(n / (n - 1)) * scipy_stats.t.ppf(0.975, n - 1))
    assert 0.010 < tail < 0.012
    expected = scipy_stats.bootstrap(
        (np.asarray(GRADES, dtype=float),),
        np.mean,
        n_resamples=999,
        confidence_level=1 - 2 * tail,
        method="percentile",
        rng=np.random.default_rng(stats.SEED),
    )
    got = stats.interval(_units(GRADES), _mean(), "g", n_resamples=999)
    assert got.estimate == pytest.approx(np.mean(GRADES))
    assert (got.ci_low, got.ci_high) == pytest.approx(tuple(expected.confidence_interval), abs=1e-12)
    assert got.se == pytest.approx(expected.standard_error)
    plain = scipy_stats.bootstrap(
        (np.asarray(GRADES, dtype=float),), np.mean, n_resamples=999, method="percentile", rng=stats.SEED
    ).confidence_interval
    assert got.ci_low <= plain.low + 1e-12 and got.ci_high >= plain.high - 1e-12  # wider than the plain interval


def test_stratified_level_follows_each_strata_share_of_the_variance():
    # A macro mean over strata of 8, 5 and 3 items. Its stratified jackknife variance is, per stratum,
    # s_c^2 / (k^2 n_c) exactly (k strata): the unbiased variance the plug-in bootstrap misses by (n_c-1)/n_c.
    strata_values = {"a": [3, 2, 3, 3, 1, 3, 2, 3], "b": [0, 1, 3, 1, 2], "c": [3, 0, 2]}
    values = [v for group in strata_values.values() for v in group]
    strata = [name for name, group in strata_values.items() for _ in group]
    k = len(strata_values)
    parts = [(np.var(g, ddof=1) / (k**2 * len(g)), len(g)) for g in strata_values.values()]
    total = sum(v for v, _ in parts)
    shortfall = total / sum(v * (m - 1) / m for v, m in parts)
    df = total**2 / sum(v**2 / (m - 1) for v, m in parts)
    tail = scipy_stats.norm.cdf(-math.sqrt(shortfall) * scipy_stats.t.ppf(0.975, df))

    expected = scipy_stats.bootstrap(
        tuple(np.asarray(g, dtype=float) for g in strata_values.values()),
        lambda *groups: float(np.mean([np.mean(g) for g in groups])),
        vectorized=False,
        n_resamples=600,
        confidence_level=1 - 2 * tail,
        method="percentile",
        rng=np.random.default_rng(stats.SEED),
    )
    got = stats.interval(_units(values, strata), _macro_mean(), "g", n_resamples=600)
    assert got.estimate == pytest.approx(np.mean([np.mean(g) for g in strata_values.values()]))
    assert (got.ci_low, got.ci_high) == pytest.approx(tuple(expected.confidence_interval), abs=1e-12)


def test_a_stratum_where_nothing_varies_adds_no_width():
    # A stratum of equal units has no share of the variance; units that never vary give the point itself.
    values, strata = [2, 2, 2, 2, 3, 1, 3], ["x"] * 4 + ["y"] * 3
    got = stats.interval(_units(values, strata), _macro_mean(), "g", n_resamples=300)
    assert got.estimate == pytest.approx((2 + 7 / 3) / 2)
    assert got.ci_low < got.estimate < got.ci_high
    flat = stats.interval(_units([2, 2, 2, 2], ["x"] * 4), _macro_mean(), "g", n_resamples=300)
    assert (flat.ci_low, flat.ci_high) == (2.0, 2.0)


def test_strata_of_one_unit_each_give_no_interval_not_a_point():
    # Five units, each its own stratum: a stratified bootstrap has nothing to resample (scipy refuses such
    # samples), so neither a model's value nor a difference gets an interval, nor a test.
    values, strata = [0, 3, 0, 3, 1], ["a", "b", "c", "d", "e"]
    with pytest.raises(ValueError, match="two or more observations"):
        scipy_stats.bootstrap(tuple(np.array([float(v)]) for v in values), np.mean, vectorized=False)
    alone = stats.interval(_units(values, strata), _macro_mean(), "g", n_resamples=100)
    assert alone.estimate == pytest.approx(np.mean(values))
    assert math.isnan(alone.ci_low) and math.isnan(alone.ci_high) and math.isnan(alone.se)
    diff = stats.compare(_units(values, strata), _units([3, 3, 3, 3, 1], strata), _macro_mean(), "g", n_resamples=100)
    assert diff.estimate == pytest.approx(1.2) and diff.test == "none"
    assert math.isnan(diff.ci_low) and math.isnan(diff.ci_high) and math.isnan(diff.p_value)


@pytest.mark.parametrize("right", [0, 30])
def test_a_share_right_of_none_or_all_gets_the_exact_binomial_interval(right):
    # 30 units all right (or all wrong): every bootstrap resample is too, so the bootstrap says [1, 1] (or [0, 0]).
    values = [1.0] * right + [0.0] * (30 - right)
    units, measure = _units(values), _mean()
    assert stats.interval(units, measure, "g").ci_low == stats.interval(units, measure, "g").ci_high == right / 30
    estimate = stats.interval(units, measure, "g", binary_key="g")
    # Clopper-Pearson by hand: all right -> [(alpha/2)^(1/n), 1]; none right -> [0, 1 - (alpha/2)^(1/n)].
    edge = 0.025 ** (1 / 30)
    expected = (edge, 1.0) if right else (0.0, 1 - edge)
    assert (estimate.ci_low, estimate.ci_high) == pytest.approx(expected)
    assert estimate.estimate == right / 30


def test_a_share_right_inside_zero_and_one_keeps_the_bootstrap_interval():
    units, measure = _units([1.0] * 20 + [0.0] * 10), _mean()
    assert stats.interval(units, measure, "g", binary_key="g") == stats.interval(units, measure, "g")
