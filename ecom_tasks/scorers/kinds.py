"""What each kind of metric consumes, the built-in metrics of every kind, and running them.

A benchmark turns its outcomes into its kind's input (``LabelPairs``: RAIR, ``ChoiceRuns``: MonBench,
``Rankings``: RMIR, ``RubricGrades``: EcomEval) and calls :func:`compute_metrics` with the run's specs
from the ``ecom_tasks_metrics`` hook, where the built-ins below are registered like a plugin's.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.scorers.core import (
    NAN,
    accuracy,
    binarized_accuracy,
    macro_f1,
    mean_ci,
    mean_over_queries,
    mean_recall_at_k,
    ndcg_at_k,
    reciprocal_rank,
    rubric_to_100,
)

LABELS = "labels"
CHOICE_RUNS = "choice_runs"
RANKING = "ranking"
RUBRIC = "rubric"


@dataclass(frozen=True)
class LabelPairs:
    """Gold and predicted labels, one pair per answer given (``INVALID`` for an unparseable one).

    ``labels`` are the classes a macro average runs over (those present among
    the gold labels); ``positive`` / ``negative`` the two sides
    of a binary split over the whole label set (empty: no split defined);
    ``weights`` the share of each pair (epoch-averaged answers), None when all are 1.
    """

    gold: Sequence[str]
    pred: Sequence[str]
    labels: tuple[str, ...]
    positive: tuple[str, ...] = ()
    negative: tuple[str, ...] = ()
    weights: Sequence[float] | None = None

    def __len__(self) -> int:
        return len(self.gold)


@dataclass(frozen=True)
class ChoiceRuns:
    """Per-item correctness (0..1) of a multiple-choice protocol repeated over runs.

    ``run`` identifies the run (ordering x format) of each item, ``task`` its
    task; a run's accuracy with several tasks is the mean of its task accuracies.
    """

    correct: np.ndarray
    run: np.ndarray
    task: np.ndarray
    confidence: float = 0.95

    def __len__(self) -> int:
        return int(self.correct.size)

    @functools.cached_property
    def accuracy_ci(self) -> tuple[float, float]:
        """Mean run accuracy and the half-width of its Student-t interval over runs (``acc``, ``acc_ci``)."""
        return mean_ci(self.run_accuracies(), self.confidence)

    def run_accuracies(self) -> np.ndarray:
        """One accuracy per run (unweighted mean over the tasks present in that run)."""
        # Run keys stay below 1e6 (ordering * 1000 + format), so one number keys a (task, run) pair.
        pair_keys, pair_accs = _group_means(self.task * 1_000_000 + self.run, self.correct)
        return _group_means(pair_keys % 1_000_000, pair_accs)[1]


def _group_means(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct keys and the mean of ``values`` within each."""
    distinct, inverse = np.unique(keys, return_inverse=True)
    inverse = inverse.reshape(-1)
    return distinct, np.bincount(inverse, weights=values) / np.bincount(inverse)


@dataclass(frozen=True)
class Rankings:
    """Ranked ids per query (best first) and graded relevance judgements (qrels)."""

    ranked: Mapping[str, Sequence[str]]
    qrels: Mapping[str, Mapping[str, float]]

    def __len__(self) -> int:
        return len(self.qrels)


@dataclass(frozen=True)
class RubricGrades:
    """Judge grades on the 0..``RUBRIC_MAX`` rubric, one per graded item (judge failures are counted
    apart), with each item's category, task and whether it is multimodal (empty: all text items):
    ``score`` averages the text categories (EcomEval Table 2), ``score_multimodal`` the multimodal tasks (Table 4).
    """

    grades: Sequence[float]
    categories: Sequence[str]
    tasks: Sequence[str] = ()
    multimodal: Sequence[bool] = ()

    def __len__(self) -> int:
        return len(self.grades)

    def part(self, multimodal: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(grades on 0-100, categories, tasks) of the text part (``False``) or the multimodal part."""
        flags = (
            np.asarray(self.multimodal, dtype=bool) if len(self.multimodal) else np.zeros(len(self.grades), dtype=bool)
        )
        chosen = flags == multimodal
        values = np.asarray([rubric_to_100(g) for g in self.grades], dtype=float)
        tasks = np.asarray([str(t) for t in self.tasks] if len(self.tasks) else [""] * len(self.grades))
        return values[chosen], np.asarray([str(c) for c in self.categories])[chosen], tasks[chosen]


def _acc2(data: LabelPairs) -> float:
    if not data.positive:  # no binary split defined
        return NAN
    return binarized_accuracy(data.gold, data.pred, data.positive, data.negative, sample_weight=data.weights)


def recall_at(k: int) -> MetricSpec:
    """``recall@k`` averaged over queries with a relevant document (plugins may register other k)."""
    return MetricSpec(
        f"recall@{k}",
        RANKING,
        lambda data: mean_recall_at_k(data.ranked, data.qrels, k),
        description=f"share of a query's relevant items in its top {k}, averaged over queries",
    )


def _rubric_macro(data: RubricGrades, multimodal: bool) -> float:
    """The mean of the group means: text items grouped by category, multimodal items by task."""
    values, categories, tasks = data.part(multimodal)
    return float(_group_means(tasks if multimodal else categories, values)[1].mean()) if values.size else NAN


BUILTIN_METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("acc2", LABELS, _acc2, description="Acc@2: accuracy on the binary split (positive labels vs the rest)"),
    MetricSpec(
        "acc4",
        LABELS,
        lambda data: accuracy(data.gold, data.pred, sample_weight=data.weights),
        description="Acc@K: exact-label accuracy (RAIR: K = 4 levels)",
    ),
    MetricSpec(
        "macro_f1",
        LABELS,
        lambda data: macro_f1(data.gold, data.pred, data.labels, sample_weight=data.weights),
        description="Macro-F1 over the labels present among the gold labels (zero_division=0)",
    ),
    MetricSpec("acc", CHOICE_RUNS, lambda data: data.accuracy_ci[0], description="mean accuracy over runs"),
    MetricSpec(
        "acc_ci",
        CHOICE_RUNS,
        lambda data: data.accuracy_ci[1],
        higher_is_better=False,
        description="half-width of the Student-t CI of acc over runs",
    ),
    recall_at(20),
    recall_at(50),
    MetricSpec(
        "mrr",
        RANKING,
        lambda data: mean_over_queries(reciprocal_rank(data.ranked, data.qrels)),
        description="reciprocal rank of the first relevant item in the ranking, averaged over queries",
    ),
    MetricSpec(
        "ndcg@10",
        RANKING,
        lambda data: mean_over_queries(ndcg_at_k(data.ranked, data.qrels, 10)),
        description="nDCG of a query's top 10 (gain = relevance, log2 discount), averaged over queries",
    ),
    MetricSpec(
        "score",
        RUBRIC,
        lambda data: _rubric_macro(data, multimodal=False),
        description="mean over the text categories present of each category's mean grade, 0-3 mapped onto 0-100 (EcomEval Table 2's Average)",
    ),
    MetricSpec(
        "score_multimodal",
        RUBRIC,
        lambda data: _rubric_macro(data, multimodal=True),
        description="mean over the multimodal tasks present of each task's mean grade, 0-100 (EcomEval Table 4's Average)",
    ),
    MetricSpec(
        "score_items",
        RUBRIC,
        lambda data: float(np.mean([rubric_to_100(g) for g in data.grades])),
        description="mean grade over all graded items, 0-3 mapped onto 0-100",
    ),
)


def compute_metrics(specs: Sequence[MetricSpec], data: object) -> dict[str, float]:
    """Each spec's value on ``data``; ``nan`` for all when ``data`` is empty (live progress, empty groups).

    A metric that raises is an error naming the metric, never a silent gap.
    """
    if not len(data):  # type: ignore[arg-type]
        return {spec.name: NAN for spec in specs}
    result = {}
    for spec in specs:
        try:
            result[spec.name] = float(spec.compute(data))
        except Exception as exc:
            raise RuntimeError(f"metric {spec.name!r} ({spec.kind}) failed: {exc}") from exc
    return result


#: Suffix of the strict reading's metrics (``acc2_strict``): the same metric on the strict prediction.
STRICT_SUFFIX = "_strict"


def strict_keys(specs: Sequence[MetricSpec]) -> list[str]:
    """The strict reading's headline keys: each selected metric's and the invalid rate, suffixed."""
    return [f"{name}{STRICT_SUFFIX}" for name in (*(spec.name for spec in specs), "invalid_rate")]
