"""RAIR: rule-aware four-level query-item relevance (General, Hard, Visually Salient; see README.md)."""

from ecom_tasks.rair.parsing import ParsedRelevance, parse_reply
from ecom_tasks.rair.prompts import (
    PROMPT_VERSION,
    RairItem,
    build_items,
    build_system_prompt,
    build_user_prompt,
    render_answer,
)
from ecom_tasks.rair.rules import RuleSet, builtin_rules, load_rules
from ecom_tasks.rair.schema import (
    DIMENSIONS,
    INDUSTRIES,
    INTENTS,
    LANGUAGES,
    LEVELS,
    SUBSETS,
    RairRecord,
    load_records,
    validate_rows,
)
from ecom_tasks.rair.scoring import rair_dimension_table, rair_metrics, score_reply

__all__ = [
    "DIMENSIONS",
    "INDUSTRIES",
    "INTENTS",
    "LANGUAGES",
    "LEVELS",
    "PROMPT_VERSION",
    "SUBSETS",
    "ParsedRelevance",
    "RairItem",
    "RairRecord",
    "RuleSet",
    "build_items",
    "build_system_prompt",
    "build_user_prompt",
    "builtin_rules",
    "load_records",
    "load_rules",
    "parse_reply",
    "rair_dimension_table",
    "rair_metrics",
    "render_answer",
    "score_reply",
    "validate_rows",
]
