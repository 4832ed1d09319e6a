"""MonBench: monetization decisions as 4-option multiple choice (see README.md)."""

from ecom_tasks.monbench.parsing import ParsedAnswer, parse_answer
from ecom_tasks.monbench.protocol import (
    DESIGNS,
    FORMATS,
    ORDERINGS,
    MonBenchItem,
    Run,
    expand,
    runs_for,
)
from ecom_tasks.monbench.schema import CATEGORIES, TASKS, MonBenchRecord, load_records, validate_rows

__all__ = [
    "CATEGORIES",
    "DESIGNS",
    "FORMATS",
    "ORDERINGS",
    "TASKS",
    "MonBenchItem",
    "MonBenchRecord",
    "ParsedAnswer",
    "Run",
    "expand",
    "load_records",
    "parse_answer",
    "runs_for",
    "validate_rows",
]
