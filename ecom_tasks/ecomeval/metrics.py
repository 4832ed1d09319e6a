"""EcomEval's metric maths: rubric grades on 0-3, reported on 0-100, overall and by group.

An outcome (one item; an Inspect ``Score.value``, an lm-eval per-document
item) is a flat mapping of numbers, so Inspect's mean reduces it across
epochs:

``grade``    the grade 0..3 when graded, 0 when the judge failed (masked by ``graded``)
``graded``   1 when the judge gave a grade, 0 for a judge failure; after epoch
             reduction the share of epochs graded
``<group>/<name>``  1 for each group the item belongs to (``category/ecom_qa``,
             ``language/vi``, ``task/brand_knowledge``, ``difficulty/hard``)

An item's grade is ``grade / graded`` (the mean over its graded epochs); an
item never graded is in no mean and counts in ``judge_failure_rate``.

The overall metrics are the registered ``rubric`` metric specs. Built-ins, as
the paper reports them: ``score`` is Table 2's Average, the mean over the
**text** categories present of each category's mean (the multimodal category
is not in it); ``score_multimodal`` is Table 4's Average, the mean over the
**multimodal tasks** present of each task's mean; ``score_items`` is the mean
over all graded items. Per group, ``<group>/<name>`` is ``score_items`` over
the group's graded items; any other (plugin) spec ``m`` adds
``m/<group>/<name>``.

Judge failures: ``judge_failure_rate`` is the share of items the judge failed
on; above the run's threshold (default :data:`FAILURE_THRESHOLD`)
``score_unreliable`` is 1.0, flagging every headline computed from the few
items that were graded (the report flags the row, ``calibrate`` leaves such
grades out).

Panels: an outcome graded by a panel also holds each grader's grade as
``panel/<label>/grade`` and ``panel/<label>/graded`` (``grade`` and ``graded``
are then the panel's). The summary adds, per grader, the headlines and its
failure rate as if it had graded alone (``<label>/score``,
``<label>/score_multimodal``, ``<label>/score_items``,
``<label>/judge_failure_rate``), and the inter-judge agreement over the
items every grader graded (``panel/exact_agreement``, ``panel/fleiss_kappa``,
``panel/cohen_kappa``, ``panel/items_compared``; ``scorers.panel.agreement``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ecom_tasks.ecomeval.schema import MULTIMODAL_CATEGORY
from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.scorers.core import NAN
from ecom_tasks.scorers.kinds import RubricGrades, compute_metrics
from ecom_tasks.scorers.panel import agreement

Outcome = Mapping[str, float]

#: Group fields, in the order their keys appear.
GROUP_FIELDS = ("category", "language", "task", "difficulty")
#: Built-in rubric metrics: ``score_items`` is the per-group value; ``score`` (Table 2's Average) and
#: ``score_multimodal`` (Table 4's) have no group form.
ITEM_MEAN = "score_items"
CATEGORY_MACRO = "score"
MULTIMODAL_MACRO = "score_multimodal"
HEADLINES = (CATEGORY_MACRO, MULTIMODAL_MACRO)
#: Judge failure share above which a run's headline is marked unreliable (``score_unreliable``).
FAILURE_THRESHOLD = 0.10
#: Keys about the judge (absent where no judge grades: the exact-match tasks).
JUDGE_KEYS = ("judge_failure_rate", "score_unreliable")
COUNTS = ("judge_failure_rate", "score_unreliable", "n")
#: Outcome keys of one panel member: ``panel/<label>/grade`` and ``panel/<label>/graded``.
PANEL_PREFIX = "panel/"


def key_name(name: str) -> str:
    """``"Brand Knowledge"`` -> ``"brand_knowledge"``: free-text names as metric-key parts."""
    out = "".join(c.casefold() if c.isalnum() else "_" for c in name)
    return "_".join(part for part in out.split("_") if part) or "_"


def encode_outcome(grade: float | None, groups: Mapping[str, str | None]) -> dict[str, float]:
    """The outcome of one item: ``grade`` 0..3, or None for a judge failure; ``groups`` field -> name."""
    outcome: dict[str, float] = {"grade": float(grade or 0), "graded": float(grade is not None)}
    for field, name in groups.items():
        if name:
            outcome[f"{field}/{key_name(name)}"] = 1.0
    return outcome


def groups_of(outcome: Outcome, field: str) -> list[str]:
    prefix = f"{field}/"
    return [key[len(prefix) :] for key, value in outcome.items() if key.startswith(prefix) and float(value) > 0]


def _grades(outcomes: Sequence[Outcome]) -> RubricGrades:
    graded = [o for o in outcomes if float(o["graded"]) > 0]
    categories = [(groups_of(o, "category") or [""])[0] for o in graded]
    return RubricGrades(
        grades=[float(o["grade"]) / float(o["graded"]) for o in graded],
        categories=categories,
        tasks=[(groups_of(o, "task") or [""])[0] for o in graded],
        multimodal=[c == MULTIMODAL_CATEGORY for c in categories],
    )


def panel_labels(outcomes: Sequence[Outcome]) -> list[str]:
    """The panel members' labels found in ``outcomes``, in order of appearance (none for one grader)."""
    labels: dict[str, None] = {}
    for outcome in outcomes:
        for key in outcome:
            if key.startswith(PANEL_PREFIX) and key.endswith("/graded"):
                labels[key[len(PANEL_PREFIX) : -len("/graded")]] = None
    return list(labels)


def member_outcomes(outcomes: Sequence[Outcome], label: str) -> list[dict[str, float]]:
    """``outcomes`` as if the panel member ``label`` had graded alone."""
    grade, graded = f"{PANEL_PREFIX}{label}/grade", f"{PANEL_PREFIX}{label}/graded"
    return [
        {
            **{k: v for k, v in o.items() if not k.startswith(PANEL_PREFIX)},
            "grade": float(o.get(grade, 0.0)),
            "graded": float(o.get(graded, 0.0)),
        }
        for o in outcomes
    ]


def member_grade(outcome: Outcome) -> int | None:
    """An item's grade (the nearest whole grade after epoch reduction), None when never graded."""
    graded = float(outcome["graded"])
    return round(float(outcome["grade"]) / graded) if graded > 0 else None


def panel_summary(
    outcomes: Sequence[Outcome], each: Callable[[list[dict[str, float]]], Mapping[str, float]], keys: Sequence[str]
) -> dict[str, float]:
    """Per panel member, ``keys`` of ``each(its outcomes)`` as ``<label>/<key>``; and the inter-judge
    agreement as ``panel/<measure>``. Empty without a panel."""
    labels = panel_labels(outcomes)
    if len(labels) < 2:
        return {}
    result: dict[str, float] = {}
    members = {label: member_outcomes(outcomes, label) for label in labels}
    for label, own in members.items():
        values = each(own)
        for key in keys:
            if key in values:
                result[f"{label}/{key}"] = values[key]
    ratings = [[member_grade(members[label][i]) for label in labels] for i in range(len(outcomes))]
    result.update({f"{PANEL_PREFIX}{name}": value for name, value in agreement(ratings).items()})
    return result


def unreliable(failure_rate: float, threshold: float = FAILURE_THRESHOLD) -> float:
    """``score_unreliable``: 1.0 when the judge failed on more than ``threshold`` of the items, else
    0.0 (nan when there were no items)."""
    if failure_rate != failure_rate:
        return NAN
    return 1.0 if failure_rate > threshold else 0.0


def summarize(
    outcomes: Sequence[Outcome], specs: Sequence[MetricSpec], failure_threshold: float = FAILURE_THRESHOLD
) -> dict[str, float]:
    """Every metric as a flat dict: the selected specs, ``judge_failure_rate``, ``score_unreliable``
    (failure rate above ``failure_threshold``), ``n``, and the group keys of the groups present."""
    outcomes = list(outcomes)
    result = compute_metrics(specs, _grades(outcomes))
    result["judge_failure_rate"] = sum(1.0 - float(o["graded"]) for o in outcomes) / len(outcomes) if outcomes else NAN
    result["score_unreliable"] = unreliable(result["judge_failure_rate"], failure_threshold)
    result["n"] = float(len(outcomes))
    group_specs = [s for s in specs if s.name not in HEADLINES]
    for field in GROUP_FIELDS:
        names = sorted({name for o in outcomes for name in groups_of(o, field)})
        for name in names:
            members = [o for o in outcomes if float(o.get(f"{field}/{name}", 0)) > 0]
            values = compute_metrics(group_specs, _grades(members))
            for spec in group_specs:
                key = f"{field}/{name}" if spec.name == ITEM_MEAN else f"{spec.name}/{field}/{name}"
                result[key] = values[spec.name]
    headline_keys = [*(spec.name for spec in specs), "judge_failure_rate"]
    result.update(panel_summary(outcomes, lambda own: _headlines(own, specs), headline_keys))
    return result


def _headlines(outcomes: Sequence[Outcome], specs: Sequence[MetricSpec]) -> dict[str, float]:
    values = compute_metrics(specs, _grades(outcomes))
    values["judge_failure_rate"] = sum(1.0 - float(o["graded"]) for o in outcomes) / len(outcomes) if outcomes else NAN
    return values


def metric_keys(specs: Sequence[MetricSpec], groups: Mapping[str, Sequence[str]]) -> list[str]:
    """The keys ``summarize`` gives for items of the ``groups`` named (for lm-eval's fixed list)."""
    keys = [*(spec.name for spec in specs), *COUNTS]
    for field, names in groups.items():
        for name in names:
            for spec in specs:
                if spec.name == ITEM_MEAN:
                    keys.append(f"{field}/{key_name(name)}")
                elif spec.name not in HEADLINES:
                    keys.append(f"{spec.name}/{field}/{key_name(name)}")
    return keys


def judge_agreement(outcomes: Sequence[Outcome]) -> dict[str, float]:
    """The judge meta-eval: how a grader's grades compare with the gold set's expected grades.

    Outcomes hold ``grade``, ``graded`` (as above), ``expected`` and ``adversarial`` (1 for an
    adversarial case). Judge failures are in no mean and counted in ``judge_failure_rate``.
    ``adversarial_high_grade_rate``: share of graded adversarial cases graded 2 or 3 (should be 0).
    A panel's outcomes add each grader's own ``<label>/agreement``, ``<label>/mae``,
    ``<label>/adversarial_high_grade_rate``, ``<label>/judge_failure_rate`` and the inter-judge
    ``panel/...`` agreement.
    """
    from sklearn.metrics import mean_absolute_error

    outcomes = list(outcomes)
    graded = [o for o in outcomes if float(o["graded"]) > 0]
    # Not rounded: an even panel's median (1 and 0 -> 0.5) or an epoch mean is no integer grade, and
    # round() would move it half a grade, to the even neighbour (0.5 -> 0, 1.5 -> 2). It agrees with
    # the expected grade only when equal, and counts its true distance in mae.
    grades = [float(o["grade"]) / float(o["graded"]) for o in graded]
    expected = [int(o["expected"]) for o in graded]
    adversarial = [g for o, g in zip(graded, grades) if float(o["adversarial"]) > 0]
    result = {
        "agreement": sum(g == e for g, e in zip(grades, expected)) / len(graded) if graded else NAN,
        "mae": float(mean_absolute_error(expected, grades)) if graded else NAN,
        "adversarial_high_grade_rate": sum(g >= 2 for g in adversarial) / len(adversarial) if adversarial else NAN,
        "judge_failure_rate": sum(1.0 - float(o["graded"]) for o in outcomes) / len(outcomes) if outcomes else NAN,
        "n": float(len(outcomes)),
    }
    keys = ("agreement", "mae", "adversarial_high_grade_rate", "judge_failure_rate")
    result.update(panel_summary(outcomes, judge_agreement, keys))
    return result
