"""Scoring one EcomEval response, the single place both adapters call: the judge's prompt
(:func:`grader_prompt`; grading is ``judging.py``) or exact answers (:func:`score_exact`, grade 3 or 0,
so the rubric metrics read as exact-match accuracy x 100)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ecom_tasks.ecomeval.metrics import JUDGE_KEYS, MULTIMODAL_MACRO, grade_values, metric_keys
from ecom_tasks.ecomeval.parsing import exact_match
from ecom_tasks.ecomeval.prompts import build_grader_prompt
from ecom_tasks.ecomeval.schema import DIFFICULTIES, LANGUAGES, TEXT_CATEGORIES
from ecom_tasks.ecomeval.tasks import TASKS
from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.scorers.core import RUBRIC_MAX
from ecom_tasks.scorers.replies import answer_region


def grader_prompt(fields: Mapping[str, Any], response: str | None) -> str:
    """The grader's prompt for ``response`` (reasoning before ``</think>`` is not shown to the grader; a
    response cut off inside its reasoning answered nothing, and shows as empty)."""
    return build_grader_prompt(fields["question"], fields["reference"], answer_region(response) or "")


def score_exact(
    fields: Mapping[str, Any], reply: str | None, *, truncated: bool | None = None
) -> tuple[bool, dict[str, float]]:
    """Exact-answer scoring: grade 3 for a match with the reference after normalisation, else 0.
    ``truncated``: the reply was stopped by a limit (None: not known, as in lm-eval)."""
    matched = exact_match(fields["reference"], reply, prompt=fields.get("question"), truncated=truncated)
    return matched, grade_values(RUBRIC_MAX if matched else 0)


def exact_metric_keys(specs: Sequence[MetricSpec], categories: Sequence[str] = TEXT_CATEGORIES) -> list[str]:
    """The fixed metric list of an lm-eval ``ecomeval_exact`` task. No judge: no ``judge_failure_rate``
    or ``score_unreliable``; text items only: no ``score_multimodal`` (absent, not nan); per-task keys for
    the listed tasks of the task's ``categories`` (one outside the list has none: lm-eval's list is fixed
    before the data loads)."""
    tasks = [task.id for task in TASKS if task.category in categories]
    groups = {"category": TEXT_CATEGORIES, "language": LANGUAGES, "task": tasks, "difficulty": DIFFICULTIES}
    keys = metric_keys(specs, groups)
    return [key for key in keys if key not in JUDGE_KEYS and key != MULTIMODAL_MACRO]
