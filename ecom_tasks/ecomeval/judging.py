"""Grading one EcomEval response with a grader or a panel of graders (``Ask`` callables by label): the one
implementation Inspect's ``ecomeval_judge`` and ``ecom-tasks judge`` (lm-eval's samples) both call."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ecom_tasks.ecomeval.metrics import FAILURE_THRESHOLD, grade_values, member_values
from ecom_tasks.ecomeval.parsing import parse_grade
from ecom_tasks.ecomeval.prompts import GRADER_VERSION
from ecom_tasks.ecomeval.scoring import grader_prompt
from ecom_tasks.scorers.context_limit import CONTEXT_EXCEEDED
from ecom_tasks.scorers.judge import (
    GRADER_MAX_TOKENS,
    GRADER_TEMPERATURE,
    INSPECT_LIMIT_OPTION,
    Ask,
    JudgeResult,
    failure_share,
    option_value,
    positive_whole_number,
)
from ecom_tasks.scorers.panel import MEDIAN, NO_MAJORITY, PanelResult, check_method, run_panel

#: A judge reply that cannot be read is asked again this many times before it is a judge failure.
JUDGE_RETRIES = 1


@dataclass(frozen=True)
class JudgeSettings:
    """How the judge grades, checked once where the options come in (:meth:`from_options`: Inspect's ``-T``
    options and ``ecom-tasks judge``'s flags). :meth:`record` is what a run keeps of it."""

    max_tokens: int = GRADER_MAX_TOKENS
    method: str = MEDIAN
    failure_threshold: float = FAILURE_THRESHOLD

    @classmethod
    def from_options(
        cls,
        max_tokens: int | str | None,
        panel: str,
        failure_threshold: float | str = FAILURE_THRESHOLD,
        *,
        spelled: tuple[str, str] = ("grader_max_tokens", "judge_failure_threshold"),
    ) -> JudgeSettings:
        """The grader's output limit, the panel method and the failure threshold, checked; a bad value is a
        :class:`ConfigurationError` naming the option as the command ``spelled`` it."""
        method = check_method(panel)
        limit = GRADER_MAX_TOKENS if max_tokens in (None, "") else max_tokens
        return cls(
            option_value(spelled[0], positive_whole_number, limit),
            method,
            option_value(spelled[1], failure_share, failure_threshold),
        )

    def record(self, *, with_threshold: bool = True, **graders: Any) -> dict[str, Any]:
        """The judge's settings as Inspect's task metadata and ``ecom-tasks judge``'s results both keep
        them: ``graders`` (who grades, as the framework names them), then how they grade (the failure
        threshold left out ``with_threshold=False``, where no share of failures is judged)."""
        how: dict[str, Any] = {
            "grader_prompt_version": GRADER_VERSION,
            "judge_temperature": GRADER_TEMPERATURE,
            "judge_retries": JUDGE_RETRIES,
            "grader_max_tokens": self.max_tokens,
        }
        if with_threshold:
            how["judge_failure_threshold"] = self.failure_threshold
        return {**graders, **how}


def refused_values(labels: Sequence[str]) -> dict[str, float]:
    """The numbers of an item whose question the evaluated model's server refused (longer than its
    context): no response, so no grader is asked; grade 0 (from every member of a panel of ``labels``),
    counted in ``context_exceeded_rate``. Both frameworks score it so."""
    members = member_values(dict.fromkeys(labels, 0)) if len(labels) > 1 else {}
    return {**grade_values(0), **members, CONTEXT_EXCEEDED: 1.0}


def refused_metadata(detail: str, labels: Sequence[str]) -> dict[str, Any]:
    """What is kept of such an item (score metadata, the grades file); a panel's members by label."""
    refused = {"grade": 0, "status": CONTEXT_EXCEEDED, "detail": detail}
    return {**refused, "graders": dict.fromkeys(labels, refused)} if len(labels) > 1 else refused


def judge_status(result: JudgeResult) -> tuple[int | None, str, str]:
    """(grade or None, status, detail): a grader stopped by a limit is :data:`GRADER_LIMIT` whatever
    its cut-off reply says; otherwise the parse decides."""
    failure = result.limit_failure()  # a limit or a prompt too long: the detail points at the cause
    if failure is not None:
        return None, *failure
    parsed = result.parsed
    return parsed.grade, parsed.status, parsed.detail


@dataclass
class Judgement:
    """One response judged: the grade (None: a judge failure), its status and detail, and the panel."""

    grade: float | None
    status: str
    detail: str
    panel: PanelResult

    @property
    def is_panel(self) -> bool:
        return len(self.panel.results) > 1


async def judge_response(
    asks: Mapping[str, Ask],
    fields: Mapping[str, Any],
    response: str | None,
    *,
    names: Mapping[str, str] | None = None,
    method: str = MEDIAN,
    max_tokens: int = GRADER_MAX_TOKENS,
    limit_option: str = INSPECT_LIMIT_OPTION,
) -> Judgement:
    """Grade ``response`` to the item of ``fields`` (question, reference) with every grader of ``asks``."""
    prompt = grader_prompt(fields, response)
    panel = await run_panel(
        asks,
        prompt,
        functools.partial(parse_grade, prompt=prompt),  # what the grader copies from its prompt is not read
        method=method,
        names=names,
        grade_of=lambda result: judge_status(result)[0],
        retries=JUDGE_RETRIES,
        max_tokens=max_tokens,
        limit_option=limit_option,
    )
    if len(panel.results) == 1:
        grade, status, detail = judge_status(next(iter(panel.results.values())))
    else:
        grade, status, detail = panel.grade, panel.status, ""
        if grade is None:
            detail = "no grader of the panel gave a grade"
            if status == NO_MAJORITY:
                detail = f"no majority among the grades {list(panel.grades.values())}"
    return Judgement(grade=grade, status=status, detail=detail, panel=panel)


def judgement_values(judgement: Judgement) -> dict[str, float]:
    """The item's numbers: its grade; with a panel, each grader's grade too."""
    members = member_values(judgement.panel.grades) if judgement.is_panel else {}
    return {**grade_values(judgement.grade), **members, CONTEXT_EXCEEDED: 0.0}


def grader_record(result: JudgeResult) -> dict[str, Any]:
    """What is kept of one grader's work on one item (score metadata, the grades file)."""
    grade, status, detail = judge_status(result)
    return {
        "grade": grade,
        "status": status,
        "detail": detail,
        "grader": result.grader,
        "attempts": result.attempts,
        "grader_replies": result.replies,
        "grader_stop_reasons": result.stop_reasons,
        "grader_max_tokens": result.max_tokens,
    }


def judgement_metadata(judgement: Judgement) -> dict[str, Any]:
    """Score metadata / grades-file fields: with one grader its record as it is; with a panel the
    panel's grade, status and method, and every grader's record by label."""
    if not judgement.is_panel:
        return {**grader_record(next(iter(judgement.panel.results.values()))), "grader_prompt_version": GRADER_VERSION}
    return {
        "grade": judgement.grade,
        "status": judgement.status,
        "detail": judgement.detail,
        "panel_method": judgement.panel.method,
        "graders": {label: grader_record(result) for label, result in judgement.panel.results.items()},
        "grader_prompt_version": GRADER_VERSION,
    }


def judgement_explanation(judgement: Judgement) -> str:
    """The score explanation: the grader's last reply, or ``JUDGE FAILURE (...)`` saying why."""
    if not judgement.is_panel:
        result = next(iter(judgement.panel.results.values()))
        last = result.replies[-1] if result.replies else ""
        if judgement.grade is None:
            return (
                f"JUDGE FAILURE ({judgement.status}: {judgement.detail}) after {result.attempts} attempt(s) by {result.grader}; "
                f"excluded from every mean, counted in judge_failure_rate. Last grader reply:\n{last}"
            )
        return last
    grades = judgement.panel.grades  # a grader's grade, else its status says why not
    lines = [
        f"{label} ({r.grader}): {judge_status(r)[1] if grades[label] is None else grades[label]}"
        for label, r in judgement.panel.results.items()
    ]
    head = (
        f"panel {judgement.panel.method}: {judgement.grade}"
        if judgement.grade is not None
        else f"JUDGE FAILURE ({judgement.status}: {judgement.detail}); excluded from every mean, counted in judge_failure_rate"
    )
    return "\n".join([head, *lines])
