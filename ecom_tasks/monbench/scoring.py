"""Scoring one MonBench reply: the single place both framework adapters call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ecom_tasks.monbench.parsing import MISMATCH, ParsedAnswer, parse_answer
from ecom_tasks.monbench.protocol import FORMATS, MonBenchItem
from ecom_tasks.monbench.schema import CATEGORIES, TASKS
from ecom_tasks.scorers.multiple_choice import summarize


def item_fields(item: MonBenchItem) -> dict[str, Any]:
    """JSON-friendly facts about an item that scoring needs (Inspect metadata, lm-eval doc columns)."""
    record = item.record
    return {
        "record_id": record.id,
        "task": record.task,
        "question_index": item.question_index,
        "ordering": item.run.ordering,
        "format": item.run.format,
        "displayed": list(item.displayed),
        "target_position": item.target_position,
        "category": record.category or "",
    }


def score_reply(fields: Mapping[str, Any], completion: str) -> tuple[ParsedAnswer, dict[str, int]]:
    """Parse ``completion`` for the item described by ``fields``; return the parse and the outcome."""
    parsed = parse_answer(completion, fields["format"], fields["displayed"])
    category = fields.get("category") or ""
    outcome = {
        "task": TASKS.index(fields["task"]),
        "question": int(fields["question_index"]),
        "ordering": int(fields["ordering"]),
        "format": FORMATS.index(fields["format"]),
        "position": int(fields["target_position"]),
        "category": CATEGORIES.index(category) + 1 if category in CATEGORIES else 0,
        "correct": int(parsed.position is not None and parsed.position == int(fields["target_position"])),
        "violation": int(parsed.violation),
        "mismatch": int(parsed.status == MISMATCH),
    }
    return parsed, outcome


def monbench_metrics(outcomes, *, category_weights: Mapping[int, float] | None = None) -> dict[str, float]:
    """All MonBench metrics from outcomes (see ``scorers.multiple_choice.summarize``)."""
    return summarize(outcomes, TASKS, FORMATS, category_weights=category_weights)
