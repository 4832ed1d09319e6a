"""Scoring one EcomEval response and summarizing outcomes: the single place both adapters call.

Two ways to grade a response, both ending in the same outcome (``metrics.py``):

- the judge (``judging.py``, both frameworks): :func:`grader_prompt` is sent to
  the grader and the grade read from its reply becomes :func:`outcome_of` the
  item (a judge failure is an ungraded outcome);
- exact answers (``ecomeval_exact``, both frameworks): :func:`score_exact`
  gives grade 3 to an exact match after normalisation and 0 otherwise, so the
  same metrics read as exact-match accuracy x 100.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ecom_tasks.ecomeval.metrics import FAILURE_THRESHOLD, JUDGE_KEYS, MULTIMODAL_MACRO, encode_outcome, metric_keys
from ecom_tasks.ecomeval.metrics import summarize as summarize_outcomes
from ecom_tasks.ecomeval.parsing import exact_match
from ecom_tasks.ecomeval.prompts import build_grader_prompt
from ecom_tasks.ecomeval.schema import DIFFICULTIES, LANGUAGES, TEXT_CATEGORIES
from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.scorers.core import RUBRIC_MAX
from ecom_tasks.scorers.replies import answer_region

#: Group fields of an item, read from its ``fields``.
GROUP_FIELDS = ("category", "language", "task", "difficulty")


def _groups(fields: Mapping[str, Any]) -> dict[str, str | None]:
    return {field: fields.get(field) or None for field in GROUP_FIELDS}


def grader_prompt(fields: Mapping[str, Any], response: str | None) -> str:
    """The grader's prompt for ``response`` (reasoning before ``</think>`` is not shown to the grader)."""
    shown = answer_region(response)
    return build_grader_prompt(
        fields["question"], fields["reference"], shown if shown is not None else (response or "")
    )


def outcome_of(fields: Mapping[str, Any], grade: float | None) -> dict[str, float]:
    """The outcome of an item graded ``grade`` (None: a judge failure)."""
    return encode_outcome(grade, _groups(fields))


def score_exact(fields: Mapping[str, Any], reply: str | None) -> tuple[bool, dict[str, float]]:
    """Exact-answer scoring: grade 3 for a match with the reference after normalisation, else 0."""
    matched = exact_match(fields["reference"], reply, prompt=fields.get("question"))  # its echo is not read
    return matched, outcome_of(fields, RUBRIC_MAX if matched else 0)


def summarize(
    outcomes: Iterable[Mapping[str, float]], specs: Sequence[MetricSpec], failure_threshold: float = FAILURE_THRESHOLD
) -> dict[str, float]:
    """All EcomEval metrics with the selected ``rubric`` metric specs (see ``metrics.summarize``);
    ``score_unreliable`` is 1.0 when the judge failed on more than ``failure_threshold`` of the items."""
    return summarize_outcomes(list(outcomes), specs, failure_threshold)


def exact_metric_keys(specs: Sequence[MetricSpec]) -> list[str]:
    """The fixed metric list of an lm-eval ``ecomeval_exact`` task. No judge: no ``judge_failure_rate``
    or ``score_unreliable``; text items only: no ``score_multimodal`` (absent, not nan); task names
    are free text, so no per-task keys."""
    keys = metric_keys(specs, {"category": TEXT_CATEGORIES, "language": LANGUAGES, "difficulty": DIFFICULTIES})
    return [key for key in keys if key not in JUDGE_KEYS and key != MULTIMODAL_MACRO]
