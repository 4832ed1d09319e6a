"""Intervals and paired comparisons over *units*, a run's independent pieces (an item with its epochs, a MonBench
question with its runs), each resample scored by the benchmark's own ``summarize``; methods: docs/comparisons.md."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: A benchmark's summarize: the outcomes of the chosen units -> every metric by name.
Summarize = Callable[[list[Mapping[str, Any]]], Mapping[str, float]]

N_RESAMPLES = 2000
#: The fewest resamples the commands accept: a 95% interval reads its ends near the 2.3% and 97.7% points,
#: which fewer than 99 resamples put on the first or second value from each end (docs/comparisons.md).
MIN_RESAMPLES = 99
SEED = 20261126
CONFIDENCE = 0.95
ALPHA = 0.05
POWER = 0.80


@dataclass(frozen=True, eq=False)  # compared by identity: a Units is a key of Measure's cache
class Units:
    """One model's run as independent units: ``ids[i]`` holds the outcome dicts ``outcomes[i]`` (its
    epochs, or a MonBench question's runs); ``strata[i]`` its stratum (EcomEval: the category) or None."""

    ids: tuple[str, ...]
    outcomes: tuple[tuple[Mapping[str, Any], ...], ...]
    strata: tuple[str, ...] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def flatten(self, chosen: Sequence[int] | np.ndarray) -> list[Mapping[str, Any]]:
        return [outcome for i in chosen for outcome in self.outcomes[int(i)]]

    def aligned(self, ids: Sequence[str]) -> Units:
        """These units in the order of ``ids`` (every id must be present)."""
        where = {unit_id: i for i, unit_id in enumerate(self.ids)}
        order = [where[unit_id] for unit_id in ids]
        return Units(
            tuple(ids),
            tuple(self.outcomes[i] for i in order),
            None if self.strata is None else tuple(self.strata[i] for i in order),
        )


class Measure:
    """The metrics of chosen units by the benchmark's summarize, each distinct choice (a resample, drawn again
    for another metric) summarized once."""

    def __init__(self, summarize: Summarize) -> None:
        self.summarize = summarize
        self._cache: dict[tuple[Units, bytes], Mapping[str, float]] = {}
        self._pools: dict[tuple[Units, Units], Units] = {}

    def __call__(self, units: Units, chosen: Sequence[int] | np.ndarray, metric: str) -> float:
        indices = np.asarray(chosen, dtype=np.int64)
        key = (units, indices.tobytes())
        if key not in self._cache:
            self._cache[key] = self.summarize(units.flatten(indices))
        return float(self._cache[key].get(metric, math.nan))

    def all(self, units: Units, metric: str) -> float:
        return self(units, np.arange(len(units)), metric)

    def pool(self, a: Units, b: Units) -> Units:
        """``a``'s units then ``b``'s, as one Units (the same object for every metric of the pair)."""
        if (a, b) not in self._pools:
            self._pools[(a, b)] = Units(a.ids + b.ids, a.outcomes + b.outcomes)
        return self._pools[(a, b)]


@dataclass(frozen=True)
class Estimate:
    """A model's value of a metric with its interval (``se``: the bootstrap standard error)."""

    estimate: float
    ci_low: float
    ci_high: float
    n: int
    se: float


@dataclass(frozen=True)
class Difference(Estimate):
    """``b - a`` on the same units, its interval, its test, and what the run could have detected."""

    p_value: float
    test: str
    min_detectable: float
    unit_sd: float


def _strata_samples(units: Units) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """The unit indices, one array per stratum (scipy resamples each sample apart: a stratified bootstrap),
    and the units of one-unit strata, which every resample holds as they are (resampling one unit gives it)."""
    index = np.arange(len(units))
    if units.strata is None:
        return (index,), index[:0]
    strata = np.asarray(units.strata, dtype=object)
    groups = [index[strata == name] for name in sorted(set(units.strata))]
    fixed = [g for g in groups if g.size < 2]
    return tuple(g for g in groups if g.size >= 2), np.concatenate(fixed) if fixed else index[:0]


def _expanded_confidence(samples: tuple[np.ndarray, ...], statistic: Callable[..., float]) -> float:
    """The confidence level whose percentile interval is the *expanded* percentile interval (docs/comparisons.md)."""
    from scipy import stats

    if len(samples) == 1:
        n = samples[0].size
        shortfall, df = n / (n - 1), float(n - 1)
    else:
        variances, sizes = [], []
        for j, sample in enumerate(samples):
            left_out = np.array(
                [statistic(*samples[:j], np.delete(sample, i), *samples[j + 1 :]) for i in range(sample.size)]
            )
            variances.append((sample.size - 1) / sample.size * float(np.sum((left_out - left_out.mean()) ** 2)))
            sizes.append(sample.size)
        total = sum(variances)
        if not math.isfinite(total) or total <= 0:
            return CONFIDENCE  # nothing varies within a stratum: no shortfall to correct
        shortfall = total / sum(v * (m - 1) / m for v, m in zip(variances, sizes))
        df = total**2 / sum(v**2 / (m - 1) for v, m in zip(variances, sizes))
    z = math.sqrt(shortfall) * float(stats.t.ppf(1 - (1 - CONFIDENCE) / 2, df))
    return 1 - 2 * float(stats.norm.sf(z))


def _bootstrap(
    samples: tuple[np.ndarray, ...], statistic: Callable[..., float], n_resamples: int, seed: int
) -> tuple[float, float, float]:
    """The expanded percentile interval (low, high) and the standard error of ``statistic`` over ``samples``."""
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a degenerate distribution (identical models) is an answer: [0, 0]
        result = stats.bootstrap(
            samples,
            statistic,
            vectorized=False,
            paired=False,
            n_resamples=n_resamples,
            confidence_level=_expanded_confidence(samples, statistic),
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    low, high = result.confidence_interval
    return float(low), float(high), float(result.standard_error)


def _estimate(
    units: Units, statistic: Callable[[np.ndarray], float], n_resamples: int, seed: int
) -> tuple[Estimate, bool]:
    """``statistic`` of all units, its bootstrap interval over units (by stratum), and whether it was resampled."""
    value, n = statistic(np.arange(len(units))), len(units)
    if n < 2 or not math.isfinite(value):
        return Estimate(value, math.nan, math.nan, n, math.nan), False
    samples, fixed = _strata_samples(units)
    if not samples:  # every stratum a single unit: nothing varies within one, so no interval (scipy refuses too)
        return Estimate(value, math.nan, math.nan, n, math.nan), False
    low, high, se = _bootstrap(samples, lambda *chosen: statistic(np.concatenate([*chosen, fixed])), n_resamples, seed)
    return Estimate(value, low, high, n, se), True


def interval(
    units: Units,
    measure: Measure,
    metric: str,
    *,
    binary_key: str | None = None,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> Estimate:
    """The metric on all units and its expanded percentile bootstrap interval over units (by stratum).

    A share of right units (``binary_key``, as for :func:`compare`) that is 0 or 1 gets the exact
    (Clopper-Pearson) interval instead: every resample of all-right units is all right, so the bootstrap's
    [1, 1] would claim a certainty that n units cannot give."""
    right = binary_outcomes(units, binary_key, measure, metric) if binary_key else None
    if right is None or 0 < right.sum() < right.size:
        return _estimate(units, lambda chosen: measure(units, chosen, metric), n_resamples, seed)[0]
    from statsmodels.stats.proportion import proportion_confint

    # No bootstrap: its resamples would all equal the estimate (standard error 0).
    low, high = proportion_confint(int(right.sum()), right.size, alpha=1 - CONFIDENCE, method="beta")
    return Estimate(float(right.mean()), float(low), float(high), right.size, 0.0)


class NotComparable(ValueError):
    """Two runs that cannot be paired (different items, data or protocol); the message says why."""


def common_units(a: Units, b: Units) -> tuple[Units, Units]:
    """``a`` and ``b`` on the same units in one order; refused unless they hold the same unit ids and strata."""
    if set(a.ids) != set(b.ids):
        only_a, only_b = sorted(set(a.ids) - set(b.ids)), sorted(set(b.ids) - set(a.ids))
        raise NotComparable(
            f"different items: {len(only_a)} only in the first run ({', '.join(only_a[:3])}{'...' if len(only_a) > 3 else ''}), "
            f"{len(only_b)} only in the second ({', '.join(only_b[:3])}{'...' if len(only_b) > 3 else ''})"
        )
    b = b.aligned(a.ids)
    if (a.strata is None) != (b.strata is None) or (a.strata is not None and a.strata != b.strata):
        raise NotComparable("the same items carry different categories in the two runs")
    return a, b


def binary_outcomes(units: Units, key: str, measure: Measure, metric: str) -> np.ndarray | None:
    """Per-unit 0/1 of ``key`` when the metric is exactly their mean (one answer a unit, values 0 or 1,
    and the mean equals the statistic on all units); None otherwise (then no McNemar test)."""
    if any(len(outcomes) != 1 for outcomes in units.outcomes):
        return None
    values = [outcome.get(key) for (outcome,) in units.outcomes]
    if not all(isinstance(value, (int, float)) and value in (0, 1) for value in values):
        return None
    array = np.asarray(values, dtype=int)
    whole = measure.all(units, metric)
    return array if array.size and math.isclose(float(array.mean()), float(whole), abs_tol=1e-12) else None


def mcnemar_exact(correct_a: np.ndarray, correct_b: np.ndarray) -> float:
    """Exact McNemar p-value (two-sided binomial test on the discordant pairs)."""
    from statsmodels.stats.contingency_tables import mcnemar

    # Rows: a right, a wrong; columns: b right, b wrong.
    table = [[int(np.sum((correct_a == x) & (correct_b == y))) for y in (1, 0)] for x in (1, 0)]
    return float(mcnemar(table, exact=True).pvalue)


def _permutation_p(a: Units, b: Units, measure: Measure, metric: str, n_resamples: int, seed: int) -> float:
    """Two-sided paired permutation test of ``S(b) - S(a)``: under no difference, which model gave a
    unit's outcomes is exchangeable, so the two are swapped within each unit."""
    from scipy import stats

    n = len(a)
    pool = measure.pool(a, b)

    def difference(x: np.ndarray, y: np.ndarray) -> float:
        return measure(pool, y, metric) - measure(pool, x, metric)

    result = stats.permutation_test(
        (np.arange(n), np.arange(n) + n),
        difference,
        permutation_type="samples",
        vectorized=False,
        n_resamples=n_resamples,
        alternative="two-sided",
        rng=np.random.default_rng(seed),
    )
    return float(result.pvalue)


def _fewest_units(alpha: float = ALPHA) -> int:
    """The fewest units on which the paired tests here can reach ``alpha``: the smallest two-sided p-value of
    an exact McNemar or sign-flip permutation test on ``n`` units (all differing one way) is ``2 ** (1 - n)``."""
    return math.ceil(1 + math.log2(1 / alpha))


def min_detectable(unit_sd: float, n: int, *, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest true difference a paired test on ``n`` units detects with ``power`` at ``alpha``
    (two-sided), given the per-unit standard deviation of the difference; nan on too few units for any."""
    from statsmodels.stats.power import TTestPower

    if n < _fewest_units(alpha) or not math.isfinite(unit_sd):
        return math.nan
    if unit_sd == 0:
        return 0.0
    effect = TTestPower().solve_power(effect_size=None, nobs=n, alpha=alpha, power=power, alternative="two-sided")
    return float(effect) * unit_sd


def units_needed(difference: float, unit_sd: float, *, alpha: float = ALPHA, power: float = POWER) -> int:
    """How many units (items, or MonBench questions) a paired comparison needs to detect ``difference``."""
    from statsmodels.stats.power import TTestPower

    if difference <= 0 or not math.isfinite(unit_sd) or unit_sd <= 0:
        raise ValueError("the difference and the per-unit standard deviation must be positive")
    n = TTestPower().solve_power(
        effect_size=difference / unit_sd, nobs=None, alpha=alpha, power=power, alternative="two-sided"
    )
    return max(_fewest_units(alpha), math.ceil(float(n)))


def compare(
    a: Units,
    b: Units,
    measure: Measure,
    metric: str,
    *,
    binary_key: str | None = None,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> Difference:
    """``S(b) - S(a)`` on the units both ran, with its bootstrap interval (units resampled jointly,
    stratified), a p-value (exact McNemar when ``binary_key`` holds per-unit right/wrong whose mean is the
    metric, else a paired permutation test) and the smallest difference this many units detect."""
    a, b = common_units(a, b)
    estimate, resampled = _estimate(
        a, lambda chosen: measure(b, chosen, metric) - measure(a, chosen, metric), n_resamples, seed
    )
    if not resampled:
        return Difference(**vars(estimate), p_value=math.nan, test="none", min_detectable=math.nan, unit_sd=math.nan)
    binary_a = binary_outcomes(a, binary_key, measure, metric) if binary_key else None
    binary_b = binary_outcomes(b, binary_key, measure, metric) if binary_key else None
    if binary_a is not None and binary_b is not None:
        p_value, test = mcnemar_exact(binary_a, binary_b), "mcnemar_exact"
    else:
        p_value, test = _permutation_p(a, b, measure, metric, n_resamples, seed), "paired_permutation"
    unit_sd = estimate.se * math.sqrt(estimate.n)
    detectable = min_detectable(unit_sd, estimate.n)
    return Difference(**vars(estimate), p_value=p_value, test=test, min_detectable=detectable, unit_sd=unit_sd)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values (nan stays nan and is left out of the family)."""
    from statsmodels.stats.multitest import multipletests

    finite = [i for i, p in enumerate(p_values) if math.isfinite(p)]
    adjusted = [math.nan] * len(p_values)
    if finite:
        corrected = multipletests([p_values[i] for i in finite], alpha=ALPHA, method="holm")[1]
        for i, p in zip(finite, corrected):
            adjusted[i] = float(p)
    return adjusted
