"""EcomEval's metric maths: rubric grades on 0-3, reported on 0-100, overall and by group; the keys and
their meaning (headlines, groups, judge failures, panels): EcomEval's README ("Metrics", "Judge panels").

An item's :class:`Outcome` joins its numbers (``Score.value``, which Inspect's mean reduces across epochs;
in lm-eval the per-document object) and its groups (Inspect's sample metadata; lm-eval's document).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ecom_tasks.ecomeval.schema import MULTIMODAL_CATEGORY
from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.names import key_name
from ecom_tasks.scorers.core import NAN
from ecom_tasks.scorers.kinds import RubricGrades, compute_metrics
from ecom_tasks.scorers.panel import agreement

#: Group fields, in the order their metrics appear.
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
COUNTS = (*JUDGE_KEYS, "n")
#: Prefix of a panel member's numbers (``panel/<label>/grade``) and of the inter-judge agreement's metrics.
PANEL_PREFIX = "panel/"


def grade_values(grade: float | None) -> dict[str, float]:
    """The numbers of a grade 0..3 (None: a judge failure)."""
    return {"grade": float(grade or 0), "graded": float(grade is not None)}


def member_values(grades: Mapping[str, float | None]) -> dict[str, float]:
    """The numbers of each panel member's grade, by label."""
    return {f"{PANEL_PREFIX}{label}/{key}": v for label, g in grades.items() for key, v in grade_values(g).items()}


def item_groups(fields: Mapping[str, Any]) -> dict[str, str]:
    """The item's groups as metric-key names (blank: in no group of that field)."""
    return {name: key_name(str(fields[name])) if fields.get(name) else "" for name in GROUP_FIELDS}


@dataclass(frozen=True)
class Outcome:
    """One item as the metrics read it: its numbers (reduced across epochs) and its groups (key names)."""

    grade: float  # 0..3 when graded, 0 for a judge failure (masked by ``graded``)
    graded: float  # 1 graded, 0 a judge failure; after epoch reduction the share of epochs graded
    category: str = ""
    language: str = ""
    task: str = ""
    difficulty: str = ""
    #: A panel's members, label -> (grade, graded); empty for one grader.
    members: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    @classmethod
    def of(cls, values: Mapping[str, Any], fields: Mapping[str, Any], labels: Sequence[str] = ()) -> Outcome:
        """From the scorer's ``values``, the item's ``fields`` and the panel's member ``labels`` (if any)."""
        panel = labels if len(labels) > 1 else ()  # one grader: its grade is the item's
        members = {
            m: (float(values[f"{PANEL_PREFIX}{m}/grade"]), float(values[f"{PANEL_PREFIX}{m}/graded"])) for m in panel
        }
        return cls(float(values["grade"]), float(values["graded"]), **item_groups(fields), members=members)

    @property
    def item_grade(self) -> float | None:
        """The mean grade over the graded epochs (None: never graded)."""
        return self.grade / self.graded if self.graded > 0 else None

    def member(self, label: str) -> Outcome:
        """This item as if the panel member ``label`` had graded alone."""
        grade, graded = self.members[label]
        return replace(self, grade=grade, graded=graded, members={})


def panel_labels(metadata: Iterable[Mapping[str, Any] | None]) -> list[str]:
    """A panel's member labels, in order, from its judgements' metadata (``graders`` by label); none for
    one grader."""
    return list(dict.fromkeys(label for record in metadata for label in (record or {}).get("graders") or {}))


def _grades(outcomes: Sequence[Outcome]) -> RubricGrades:
    graded = [o for o in outcomes if o.graded > 0]
    return RubricGrades(
        grades=[o.grade / o.graded for o in graded],
        categories=[o.category for o in graded],
        tasks=[o.task for o in graded],
        multimodal=[o.category == MULTIMODAL_CATEGORY for o in graded],
    )


def _failure_rate(outcomes: Sequence[Outcome]) -> float:
    return sum(1.0 - o.graded for o in outcomes) / len(outcomes) if outcomes else NAN


def panel_summary(
    outcomes: Sequence[Outcome], each: Callable[[list[Outcome]], Mapping[str, float]], keys: Sequence[str]
) -> dict[str, float]:
    """Per panel member, ``keys`` of ``each(its outcomes)`` as ``<label>/<key>``; and the inter-judge
    agreement as ``panel/<measure>``. Empty without a panel."""
    labels = list(dict.fromkeys(label for o in outcomes for label in o.members))
    if len(labels) < 2:
        return {}
    result: dict[str, float] = {}
    members = {label: [o.member(label) for o in outcomes] for label in labels}
    for label, own in members.items():
        values = each(own)
        result.update({f"{label}/{key}": values[key] for key in keys if key in values})
    # Each member's item grade, as the nearest whole grade after epoch reduction (None: never graded).
    grades = [[None if (g := o.item_grade) is None else round(g) for o in members[label]] for label in labels]
    result.update({f"{PANEL_PREFIX}{name}": value for name, value in agreement(list(zip(*grades))).items()})
    return result


def summarize(
    outcomes: Sequence[Outcome], specs: Sequence[MetricSpec], failure_threshold: float = FAILURE_THRESHOLD
) -> dict[str, float]:
    """Every metric as a flat dict: the selected specs, ``judge_failure_rate``, ``score_unreliable``
    (failure rate above ``failure_threshold``), ``n``, and the group keys of the groups present."""
    outcomes = list(outcomes)
    result = _headlines(outcomes, specs)
    rate = result["judge_failure_rate"]  # nan without items: then so is score_unreliable
    result["score_unreliable"] = NAN if rate != rate else float(rate > failure_threshold)
    result["n"] = float(len(outcomes))
    group_specs = [s for s in specs if s.name not in HEADLINES]
    for group in GROUP_FIELDS:
        for name in sorted({getattr(o, group) for o in outcomes} - {""}):
            values = compute_metrics(group_specs, _grades([o for o in outcomes if getattr(o, group) == name]))
            result.update({group_key(spec, group, name): values[spec.name] for spec in group_specs})
    headline_keys = [*(spec.name for spec in specs), "judge_failure_rate"]
    result.update(panel_summary(outcomes, lambda own: _headlines(own, specs), headline_keys))
    return result


def _headlines(outcomes: Sequence[Outcome], specs: Sequence[MetricSpec]) -> dict[str, float]:
    return {**compute_metrics(specs, _grades(outcomes)), "judge_failure_rate": _failure_rate(outcomes)}


def metric_keys(specs: Sequence[MetricSpec], groups: Mapping[str, Sequence[str]]) -> list[str]:
    """The keys ``summarize`` gives for items of the ``groups`` named (for lm-eval's fixed list)."""
    group_specs = [spec for spec in specs if spec.name not in HEADLINES]
    return [
        *(spec.name for spec in specs),
        *COUNTS,
        *(
            group_key(spec, group, key_name(name))
            for group, names in groups.items()
            for name in names
            for spec in group_specs
        ),
    ]


def group_key(spec: MetricSpec, group: str, name: str) -> str:
    """``<group>/<name>`` for ``score_items``, ``<metric>/<group>/<name>`` for any other group metric."""
    return f"{group}/{name}" if spec.name == ITEM_MEAN else f"{spec.name}/{group}/{name}"


def judge_agreement(
    outcomes: Sequence[Outcome], expected: Sequence[int], adversarial: Sequence[bool]
) -> dict[str, float]:
    """The judge meta-eval: how a grader's grades compare with the gold set's ``expected`` grades (one per
    outcome; ``adversarial`` marks the adversarial cases). The keys: EcomEval's README ("Metrics")."""
    from sklearn.metrics import mean_absolute_error

    # Not rounded: an even panel's median (1 and 0 -> 0.5) or an epoch mean is no integer grade, and
    # round() would move it half a grade, to the even neighbour (0.5 -> 0, 1.5 -> 2). It agrees with
    # the expected grade only when equal, and counts its true distance in mae.
    cases = [(o.item_grade, e, a) for o, e, a in zip(outcomes, expected, adversarial) if o.item_grade is not None]
    grades, wanted = [g for g, _, _ in cases], [e for _, e, _ in cases]
    high = [g >= 2 for g, _, a in cases if a]
    result = {
        "agreement": sum(g == e for g, e in zip(grades, wanted)) / len(cases) if cases else NAN,
        "mae": float(mean_absolute_error(wanted, grades)) if cases else NAN,
        "adversarial_high_grade_rate": sum(high) / len(high) if high else NAN,
        "judge_failure_rate": _failure_rate(outcomes),
        "n": float(len(outcomes)),
    }
    keys = ("agreement", "mae", "adversarial_high_grade_rate", "judge_failure_rate")
    result.update(panel_summary(outcomes, lambda own: judge_agreement(own, expected, adversarial), keys))
    return result
