"""Scoring one RAIR reply and summarizing outcomes: the single place both adapters call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ecom_tasks.rair.parsing import OTHER_DIMENSION, ParsedRelevance, parse_reply
from ecom_tasks.rair.rules import RuleSet, gold_dimension
from ecom_tasks.rair.schema import DIMENSIONS, INDUSTRIES, INTENTS, LEVELS, RairRecord
from ecom_tasks.scorers.relevance import INVALID_CODE, encode_outcome, metric_keys, mismatch_dimension_table, summarize

GROUPS = {"industry": INDUSTRIES, "intent": INTENTS}
#: The breakdown the paper reports per subset: industries (Table 7) or hard intents.
SUBSET_GROUPS = {"general": "industry", "visual": "industry", "hard": "intent"}


def record_fields(
    record: RairRecord,
    *,
    ruleset: RuleSet | None,
    rules_version: str,
    prompt_version: str,
    image: bool,
) -> dict[str, Any]:
    """JSON-friendly facts about a sample that scoring and reports need (Inspect metadata, lm-eval columns)."""
    return {
        "record_id": record.id,
        "subset": record.subset,
        "label": record.label,
        "industry": record.industry,
        "intent": record.intent or "",
        "rule_ids": list(record.rule_ids),
        "gold_dimension": gold_dimension(record.rule_ids, ruleset) or "",
        "language": record.language,
        "image_shown": bool(image and record.image),
        "rules_version": rules_version,
        "prompt_version": prompt_version,
        "source": record.source,
    }


def _index(value: str, names: tuple[str, ...]) -> int:
    return names.index(value) + 1 if value in names else 0


def score_reply(fields: Mapping[str, Any], completion: str | None) -> tuple[ParsedRelevance, dict[str, int]]:
    """Parse ``completion`` for the sample described by ``fields``; return the parse and the outcome."""
    parsed = parse_reply(completion)
    if parsed.dimension == OTHER_DIMENSION:
        pred_dim = len(DIMENSIONS) + 1
    else:
        pred_dim = _index(parsed.dimension or "", DIMENSIONS)
    outcome = encode_outcome(
        LEVELS.index(fields["label"]),
        LEVELS.index(parsed.label) if parsed.label else INVALID_CODE,
        industry=_index(fields.get("industry") or "", INDUSTRIES),
        intent=_index(fields.get("intent") or "", INTENTS),
        gold_dim=_index(fields.get("gold_dimension") or "", DIMENSIONS),
        pred_dim=pred_dim,
    )
    return parsed, outcome


def rair_metrics(outcomes: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """All RAIR metrics (see ``scorers.relevance.summarize``)."""
    return summarize(list(outcomes), groups=GROUPS, dimensions=DIMENSIONS)


def rair_dimension_table(outcomes: Iterable[Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """Errors by gold rule dimension and the dimensions models name (Fig. 5, extended)."""
    return mismatch_dimension_table(list(outcomes), DIMENSIONS)


def subset_metric_keys(subset: str) -> list[str]:
    """The fixed metric list of one subset's lm-eval task (its paper breakdown)."""
    group = SUBSET_GROUPS[subset]
    return metric_keys({group: GROUPS[group]}, DIMENSIONS)
