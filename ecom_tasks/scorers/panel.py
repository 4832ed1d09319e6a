"""Judge panels any task reuses: several graders grade one item (:func:`run_panel`), their grades are
combined (:func:`combine`: ``median`` or ``majority``; a failed grader is left out) and their agreement is
measured (:func:`agreement`); :func:`quorum` and :func:`majority_with_confidence` are the construction
pipelines' votes. Statuses, metrics and an example: EcomEval's README ("Judge panels") and docs/judges.md."""

from __future__ import annotations

import asyncio
import statistics
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Generic, TypeVar

from ecom_tasks.errors import ConfigurationError
from ecom_tasks.scorers.judge import Ask, JudgeResult, ParsedT, run_judge

MEDIAN = "median"
MAJORITY = "majority"
METHODS = (MEDIAN, MAJORITY)
OK = "ok"
#: Every grader of the panel failed on the item.
PANEL_NO_GRADE = "panel_no_grade"
#: ``majority``: no grade was given by more than half of the graders that gave one.
NO_MAJORITY = "no_majority"

_Grade = TypeVar("_Grade", bound=Hashable)


def check_method(method: str) -> str:
    value = str(method or MEDIAN).strip().lower()
    if value not in METHODS:
        raise ConfigurationError(f"unknown panel aggregation {method!r}; expected one of {', '.join(METHODS)}")
    return value


def combine(grades: Sequence[Any | None], method: str = MEDIAN) -> tuple[Any | None, str]:
    """(the panel's grade or None, status) from one item's grades (None: that grader failed)."""
    method = check_method(method)
    given = [g for g in grades if g is not None]
    if not given:
        return None, PANEL_NO_GRADE
    if method == MEDIAN:
        middle = statistics.median(given)
        return (int(middle) if float(middle).is_integer() else float(middle)), OK
    grade, count = Counter(given).most_common(1)[0]
    return (grade, OK) if count * 2 > len(given) else (None, NO_MAJORITY)


@dataclass
class PanelResult(Generic[ParsedT]):
    """Each grader's :class:`JudgeResult` and grade (by label, in panel order), and the panel's grade."""

    grade: Any | None
    status: str
    method: str
    results: dict[str, JudgeResult[ParsedT]] = field(default_factory=dict)
    grades: dict[str, Any | None] = field(default_factory=dict)


async def run_panel(
    asks: Mapping[str, Ask],
    prompt: str,
    parse: Callable[[str], ParsedT],
    *,
    grade_of: Callable[[JudgeResult[ParsedT]], Any | None],
    method: str = MEDIAN,
    names: Mapping[str, str] | None = None,
    **judge_options: Any,
) -> PanelResult[ParsedT]:
    """Every grader of ``asks`` (label -> grader) grades ``prompt`` with
    :func:`~ecom_tasks.scorers.judge.run_judge` (``judge_options``: ``retries``, ``max_tokens``, ...),
    concurrently; ``grade_of`` reads each grader's grade (None: none), and the grades are combined with
    ``method``. ``names``: label -> the grader's name."""
    method = check_method(method)
    labels = list(asks)
    results = await asyncio.gather(
        *(
            run_judge(asks[label], prompt, parse, grader=(names or {}).get(label, label), **judge_options)
            for label in labels
        )
    )
    by_label = dict(zip(labels, results))
    grades = {label: grade_of(result) for label, result in by_label.items()}
    grade, status = combine(list(grades.values()), method)
    return PanelResult(grade=grade, status=status, method=method, results=by_label, grades=grades)


def agreement(ratings: Sequence[Sequence[Hashable | None]]) -> dict[str, float]:
    """Inter-judge agreement of items x graders ``ratings`` (None: that grader failed on the item).

    ``exact_agreement``: share of the compared items on which every grader gave the same grade;
    ``fleiss_kappa`` (statsmodels); ``cohen_kappa`` (scikit-learn, unweighted; the mean over grader
    pairs with more than two graders); ``items_compared``: items every grader graded.
    """
    nan = float("nan")
    rows = [list(r) for r in ratings if r and all(g is not None for g in r)]
    out = {"exact_agreement": nan, "fleiss_kappa": nan, "cohen_kappa": nan, "items_compared": float(len(rows))}
    if not rows or len(rows[0]) < 2:
        return out
    out["exact_agreement"] = sum(len(set(r)) == 1 for r in rows) / len(rows)
    categories = sorted({g for r in rows for g in r}, key=repr)
    if len(categories) < 2:
        return out  # every grade alike: chance agreement is 1, kappa undefined
    import numpy as np
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    codes = {c: i for i, c in enumerate(categories)}
    coded = np.array([[codes[g] for g in r] for r in rows])
    table, _ = aggregate_raters(coded, n_cat=len(categories))
    out["fleiss_kappa"] = float(fleiss_kappa(table, method="fleiss"))
    pairs = []
    for a, b in combinations(range(coded.shape[1]), 2):
        if len(set(coded[:, a]) | set(coded[:, b])) > 1:
            pairs.append(float(cohen_kappa_score(coded[:, a], coded[:, b], labels=list(range(len(categories))))))
    out["cohen_kappa"] = float(np.mean(pairs)) if pairs else nan
    return out


#: :func:`quorum`: no grade was given by ``min_votes`` graders.
NO_QUORUM = "no_quorum"
#: :func:`quorum`: two different grades each reached ``min_votes`` (possible when ``min_votes`` is at most half the panel).
SPLIT_QUORUM = "split_quorum"


def quorum(grades: Sequence[_Grade | None], min_votes: int) -> tuple[_Grade | None, str]:
    """(the grade at least ``min_votes`` graders gave, status) from one item's grades (None: that
    grader failed or abstained). Unlike ``majority``, the count is absolute: a failed grader is a
    vote for nothing, so with 3 graders and ``min_votes=2`` one grade from the single grader that
    answered is not enough (the construction pipelines' "at least 2 of 3" rule). Status ``ok``,
    :data:`PANEL_NO_GRADE`, :data:`NO_QUORUM` or :data:`SPLIT_QUORUM` (then no grade is chosen).
    """
    if min_votes < 1:
        raise ValueError(f"min_votes must be at least 1, got {min_votes}")
    counts = Counter(g for g in grades if g is not None)
    if not counts:
        return None, PANEL_NO_GRADE
    reached = [grade for grade, count in counts.items() if count >= min_votes]
    if not reached:
        return None, NO_QUORUM
    if len(reached) > 1:
        return None, SPLIT_QUORUM
    return reached[0], OK


@dataclass(frozen=True)
class Vote:
    """One item's panel vote (:func:`majority_with_confidence`)."""

    label: Hashable | None  # the vote more judges gave than any other; None without one
    confidence: float  # share of the whole panel that gave ``label`` (0.0 without a label)
    counts: dict[Hashable, int]  # vote -> judges who gave it (failed judges left out)
    judges: int  # panel size, failed judges included
    status: str  # ok | no_majority (a tie for the most votes) | panel_no_grade (every judge failed)


def majority_with_confidence(votes: Sequence[Hashable | None]) -> Vote:
    """Self-consistency over a panel's votes (None: that judge failed): the most frequent vote and the
    share of judges that gave it, as RMIR's confidence (Sec. 3.1.4: 4 True + 1 False -> True, 0.8).

    Abstaining is a vote like any other (``"ABSTAIN"`` can be the majority). A failed judge agreed
    with nobody: it stays in the denominator, so a panel with a failure never reaches confidence
    1.0. A tie for the most votes has no label (status :data:`NO_MAJORITY`, confidence 0.0).
    """
    judges = len(votes)
    counts = Counter(v for v in votes if v is not None)
    if not counts:
        return Vote(None, 0.0, {}, judges, PANEL_NO_GRADE)
    ranked = counts.most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return Vote(None, 0.0, dict(counts), judges, NO_MAJORITY)
    label, count = ranked[0]
    return Vote(label, count / judges, dict(counts), judges, OK)
