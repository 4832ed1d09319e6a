"""Scoring one MonBench reply and summarizing outcomes: the single place both adapters call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.monbench.metrics import summarize as summarize_outcomes
from ecom_tasks.monbench.parsing import MISMATCH, ParsedAnswer, parse_reply
from ecom_tasks.monbench.protocol import FORMATS
from ecom_tasks.monbench.schema import CATEGORIES, TASKS


def score_reply(fields: Mapping[str, Any], completion: str) -> tuple[ParsedAnswer, dict[str, int]]:
    """Parse ``completion`` for the item described by ``fields``; return the parse and the outcome."""
    parsed = parse_reply(completion, fields["format"], fields["displayed"])
    category = fields.get("category") or ""
    outcome = {
        "task": TASKS.index(fields["task"]),
        "question": int(fields["question_index"]),
        "ordering": int(fields["ordering"]),
        "format": FORMATS.index(fields["format"]),
        "position": int(fields["target_position"]),
        "category": CATEGORIES.index(category) + 1 if category in CATEGORIES else 0,
        "correct": int(parsed.position is not None and parsed.position == int(fields["target_position"])),
        "invalid": int(parsed.invalid),
        "mismatch": int(parsed.status == MISMATCH),
    }
    return parsed, outcome


def summarize(
    outcomes: Iterable[Mapping[str, float]],
    specs: Sequence[MetricSpec],
    *,
    category_weights: Mapping[int, float] | None = None,
) -> dict[str, float]:
    """All MonBench metrics with the selected ``choice_runs`` metric specs (see ``metrics.summarize``)."""
    return summarize_outcomes(outcomes, specs, TASKS, FORMATS, category_weights=category_weights)
