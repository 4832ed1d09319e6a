"""Calibration of ``ecom-tasks compare``'s statistics by simulation (not a test: its table is in README.md).

For each benchmark's design, pairs of simulated models are compared with the
functions ``ecom-tasks compare`` uses (``ecom_tasks.report.stats.compare``),
``--reps`` times (default 1,000):

- with no true difference (both models draw every unit's outcomes from the same
  distribution), the share of pairs whose test says p < 0.05 (the target: 3-7%);
- with a true difference, the share of 95% intervals of the difference that
  hold the true (population) difference (the target: 93-97%);

and, beside, the same figures for a naive analysis that ignores the design
(MonBench: every run an independent unit; EcomEval: the pool resampled without
the categories), to show why the design matters.

The metrics are computed by small numpy functions with the benchmarks' own
definitions (Acc@4, Macro-F1 over the levels present, MonBench's mean run accuracy,
EcomEval's macro mean over categories on 0-100, recall@20); the statistics are
the package's. Run: ``python benchmarks/compare_calibration.py [--reps 1000]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ecom_tasks.report import stats

LEVELS = 4


def macro_f1(gold: np.ndarray, pred: np.ndarray) -> float:
    scores = []
    for level in range(LEVELS):
        if not np.any(gold == level):
            continue  # as RAIR's metric: a level absent from the gold labels is not averaged
        tp = np.sum((gold == level) & (pred == level))
        fp = np.sum((gold != level) & (pred == level))
        fn = np.sum((gold == level) & (pred != level))
        scores.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return float(np.mean(scores))


@dataclass
class Scenario:
    name: str
    #: rng, effect -> (units of model a, units of model b)
    simulate: Callable[[np.random.Generator, float], tuple[stats.Units, stats.Units]]
    measure: Callable[[], stats.Measure]
    metric: str
    binary_key: str | None
    #: the population difference b - a at a given effect (computed once from a very large sample)
    truth: Callable[[float], float]
    effect: float
    naive: Callable[[stats.Units], stats.Units] | None = None


# --- RAIR: items, 4 levels -------------------------------------------------------------------------


def _rair_items(rng: np.random.Generator, n: int, accuracy: float, gold: np.ndarray, shared: np.ndarray) -> np.ndarray:
    # Items have a difficulty both models feel (shared), so their errors are correlated as real models' are.
    right = rng.random(n) < np.clip(accuracy + shared, 0, 1)
    wrong = (gold + rng.integers(1, LEVELS, n)) % LEVELS
    return np.where(right, gold, wrong)


def rair(n: int) -> Callable[[np.random.Generator, float], tuple[stats.Units, stats.Units]]:
    def simulate(rng: np.random.Generator, effect: float) -> tuple[stats.Units, stats.Units]:
        gold = rng.choice(LEVELS, n, p=[0.2, 0.3, 0.2, 0.3])
        shared = rng.normal(0, 0.15, n)
        a = _rair_items(rng, n, 0.55, gold, shared)
        b = _rair_items(rng, n, 0.55 + effect, gold, shared)
        ids = tuple(str(i) for i in range(n))

        def units(pred: np.ndarray) -> stats.Units:
            return stats.Units(
                ids, tuple(({"gold": int(g), "pred": int(p), "acc4": int(g == p)},) for g, p in zip(gold, pred))
            )

        return units(a), units(b)

    return simulate


def rair_measure() -> stats.Measure:
    def summarize(outcomes: list) -> dict[str, float]:
        gold = np.fromiter((o["gold"] for o in outcomes), int, len(outcomes))
        pred = np.fromiter((o["pred"] for o in outcomes), int, len(outcomes))
        return {"acc4": float(np.mean(gold == pred)), "macro_f1": macro_f1(gold, pred)}

    return stats.Measure(summarize)


def rair_truth(metric: str) -> Callable[[float], float]:
    def truth(effect: float) -> float:
        a, b = rair(400_000)(np.random.default_rng(0), effect)
        measure = rair_measure()
        return measure.all(b, metric) - measure.all(a, metric)

    return truth


# --- MonBench: questions x runs, correlated within a question ---------------------------------------


def monbench(questions: int, runs: int) -> Callable[[np.random.Generator, float], tuple[stats.Units, stats.Units]]:
    def simulate(rng: np.random.Generator, effect: float) -> tuple[stats.Units, stats.Units]:
        # A question's runs share its difficulty: one model answers it right in most orderings or in few.
        logit = rng.normal(0, 2.0, questions)
        ids = tuple(str(q) for q in range(questions))

        def units(shift: float) -> stats.Units:
            p = 1 / (1 + np.exp(-(logit + shift + rng.normal(0, 0.5, questions))))
            correct = rng.random((questions, runs)) < p[:, None]
            return stats.Units(ids, tuple(({"correct": row.astype(float)},) for row in correct))

        return units(0.0), units(effect)

    return simulate


def monbench_measure() -> stats.Measure:
    def summarize(outcomes: list) -> dict[str, float]:
        table = np.stack([o["correct"] for o in outcomes])  # questions x runs
        return {"acc": float(table.mean(axis=0).mean())}  # the mean over runs of each run's accuracy

    return stats.Measure(summarize)


def monbench_naive(units: stats.Units) -> stats.Units:
    """Every run its own unit (the design ignored)."""
    rows = [
        (f"{i}/{r}", value)
        for i, (outcome,) in zip(units.ids, units.outcomes)
        for r, value in enumerate(outcome["correct"])
    ]
    return stats.Units(tuple(i for i, _ in rows), tuple(({"correct": np.array([v])},) for _, v in rows))


def monbench_truth(effect: float) -> float:
    rng = np.random.default_rng(0)
    logit = rng.normal(0, 2.0, 2_000_000)
    noise_a, noise_b = rng.normal(0, 0.5, (2, logit.size))
    return float(np.mean(1 / (1 + np.exp(-(logit + effect + noise_b)))) - np.mean(1 / (1 + np.exp(-(logit + noise_a)))))


# --- EcomEval: grades 0-3 within categories, macro mean over categories -----------------------------

CATEGORY_SIZES = (60, 40, 25, 15, 10)  # unequal, as the released categories are


def ecomeval(rng: np.random.Generator, effect: float) -> tuple[stats.Units, stats.Units]:
    categories = [f"c{i}" for i, size in enumerate(CATEGORY_SIZES) for _ in range(size)]
    base = np.array([0.9, 1.3, 1.6, 1.9, 2.2])[[int(c[1:]) for c in categories]]
    shared = rng.normal(0, 0.5, len(categories))
    ids = tuple(str(i) for i in range(len(categories)))

    def units(shift: float) -> stats.Units:
        grades = np.clip(np.rint(base + shared + shift + rng.normal(0, 0.7, len(categories))), 0, 3)
        return stats.Units(
            ids, tuple(({"grade": g, "category": c},) for g, c in zip(grades, categories)), tuple(categories)
        )

    return units(0.0), units(effect)


def ecomeval_measure() -> stats.Measure:
    def summarize(outcomes: list) -> dict[str, float]:
        by: dict[str, list[float]] = {}
        for o in outcomes:
            by.setdefault(o["category"], []).append(o["grade"] * 100 / 3)
        return {"score": float(np.mean([np.mean(v) for v in by.values()]))}

    return stats.Measure(summarize)


def ecomeval_naive(units: stats.Units) -> stats.Units:
    return stats.Units(units.ids, units.outcomes, None)


def ecomeval_truth(effect: float) -> float:
    rng = np.random.default_rng(1)  # grades are drawn per item: the population difference is a mean over draws
    diffs = []
    measure = ecomeval_measure()
    for _ in range(2000):
        a, b = ecomeval(rng, effect)
        diffs.append(measure.all(b, "score") - measure.all(a, "score"))
    return float(np.mean(diffs))


# --- RMIR: queries with one positive; recall@20 is 0 or 1 per query -----------------------------------


def rmir(n: int) -> Callable[[np.random.Generator, float], tuple[stats.Units, stats.Units]]:
    def simulate(rng: np.random.Generator, effect: float) -> tuple[stats.Units, stats.Units]:
        ease = rng.normal(0, 1.0, n)
        ids = tuple(str(i) for i in range(n))

        def units(shift: float) -> stats.Units:
            hit = rng.random(n) < 1 / (1 + np.exp(-(ease + shift)))
            return stats.Units(ids, tuple(({"recall@20": float(h)},) for h in hit))

        return units(0.0), units(effect)

    return simulate


def rmir_measure() -> stats.Measure:
    return stats.Measure(lambda outcomes: {"recall@20": float(np.mean([o["recall@20"] for o in outcomes]))})


def rmir_truth(effect: float) -> float:
    ease = np.random.default_rng(0).normal(0, 1.0, 2_000_000)
    return float(np.mean(1 / (1 + np.exp(-(ease + effect)))) - np.mean(1 / (1 + np.exp(-ease))))


SCENARIOS = [
    Scenario("RAIR Acc@4 (300 items; McNemar)", rair(300), rair_measure, "acc4", "acc4", rair_truth("acc4"), 0.08),
    Scenario(
        "RAIR Macro-F1 (300 items; permutation)",
        rair(300),
        rair_measure,
        "macro_f1",
        None,
        rair_truth("macro_f1"),
        0.08,
    ),
    Scenario(
        "MonBench acc (40 questions x 24 runs; clusters)",
        monbench(40, 24),
        monbench_measure,
        "acc",
        None,
        monbench_truth,
        0.6,
        naive=monbench_naive,
    ),
    Scenario(
        "EcomEval score (5 categories, 150 items; stratified)",
        ecomeval,
        ecomeval_measure,
        "score",
        None,
        ecomeval_truth,
        0.25,
        naive=ecomeval_naive,
    ),
    Scenario("RMIR recall@20 (100 queries)", rmir(100), rmir_measure, "recall@20", None, rmir_truth, 0.5),
]


def run(
    scenario: Scenario, reps: int, resamples: int, seed: int, progress: int = 0, first: int = 0
) -> dict[str, float]:
    """The shares over repetitions ``first`` to ``reps - 1``; the repetitions before ``first`` are drawn and
    not analysed, so that two processes (``--first-rep``) split one run of ``reps`` into two exact halves."""
    rng = np.random.default_rng(seed)
    truth = scenario.truth(scenario.effect)
    counts = {"null_significant": 0, "covered": 0, "naive_null_significant": 0, "naive_covered": 0}
    for rep in range(reps):
        if rep < first:
            for effect in (0.0, scenario.effect):
                scenario.simulate(rng, effect)
            continue
        for effect in (0.0, scenario.effect):
            a, b = scenario.simulate(rng, effect)
            analyses = [("", a, b)]
            if scenario.naive is not None:
                analyses.append(("naive_", scenario.naive(a), scenario.naive(b)))
            for prefix, ua, ub in analyses:
                result = stats.compare(
                    ua,
                    ub,
                    scenario.measure(),
                    scenario.metric,
                    binary_key=scenario.binary_key,
                    n_resamples=resamples,
                    seed=seed + rep,
                )
                if effect == 0.0:
                    counts[f"{prefix}null_significant"] += result.p_value < 0.05
                else:
                    counts[f"{prefix}covered"] += result.ci_low <= truth <= result.ci_high
        if progress and (rep + 1) % progress == 0:  # a long run's partial figures, should it be cut short
            done = ", ".join(f"{key} {value}/{rep + 1 - first}" for key, value in counts.items())
            print(f"  {scenario.name}: repetitions {first}-{rep}: {done}", file=sys.stderr, flush=True)
    shares = {key: value / (reps - first) for key, value in counts.items()}
    shares["truth"] = truth
    return shares


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--first-rep", type=int, default=0, help="analyse repetitions from this one on (split a run)")
    parser.add_argument("--progress", type=int, default=0, help="print the running figures every N repetitions")
    parser.add_argument("--only", help="comma-separated: run the scenarios whose name starts with one of these")
    args = parser.parse_args()
    print(f"{args.reps} repetitions, {args.resamples} resamples each; targets: 3-7% false positives, 93-97% coverage")
    print("| scenario | true diff | false positives | coverage | naive false positives | naive coverage | minutes |")
    print("|---|---|---|---|---|---|---|")
    for scenario in SCENARIOS:
        if args.only and not scenario.name.startswith(tuple(args.only.split(","))):
            continue
        start = time.time()
        shares = run(scenario, args.reps, args.resamples, args.seed, args.progress, args.first_rep)
        cells = [
            f"{100 * shares[key]:.1f}%" if scenario.naive is not None or not key.startswith("naive") else "-"
            for key in ("null_significant", "covered", "naive_null_significant", "naive_covered")
        ]
        minutes = (time.time() - start) / 60
        print(f"| {scenario.name} | {shares['truth']:.4f} | {' | '.join(cells)} | {minutes:.1f} |", flush=True)


if __name__ == "__main__":
    main()
