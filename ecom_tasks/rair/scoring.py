"""Scoring one RAIR reply and summarizing outcomes: the single place both adapters call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.rair.metrics import (
    INVALID_CODE,
    encode_outcome,
    metric_keys,
    mismatch_dimension_table,
    strict_fields,
)
from ecom_tasks.rair.metrics import summarize as summarize_outcomes
from ecom_tasks.rair.parsing import OTHER_DIMENSION, ParsedRelevance, parse_reply, parse_strict
from ecom_tasks.rair.schema import DIMENSIONS, INDUSTRIES, INTENTS, LEVELS
from ecom_tasks.scorers.replies import answer_region

GROUPS = {"industry": INDUSTRIES, "intent": INTENTS}
#: The breakdown the paper reports per subset: industries (Table 7) or hard intents.
SUBSET_GROUPS = {"general": "industry", "visual": "industry", "hard": "intent"}


def _index(value: str, names: tuple[str, ...]) -> int:
    return names.index(value) + 1 if value in names else 0


def score_reply(
    fields: Mapping[str, Any],
    completion: str | None,
    *,
    truncated: bool | None = None,
    prompt: Sequence[str] | None = None,
) -> tuple[ParsedRelevance, dict[str, int]]:
    """Parse ``completion`` for the sample described by ``fields``; return the parse and the outcome.

    The outcome carries both readings: the careful one (``parsed``, the headline) and the strict
    one (``parse_strict``: exactly the requested output) in its ``strict_*`` fields.

    ``truncated``: the reply stopped on the token limit, when the framework
    knows; otherwise a reply cut off inside ``<think>`` counts as truncated.
    ``prompt``: the system and user message sent (default: ``fields``' ``system_prompt`` and
    ``user_prompt`` when it has them); what the reply copies from them is not read.
    """
    if prompt is None and fields.get("system_prompt"):
        prompt = (fields["system_prompt"], fields.get("user_prompt") or "")
    parsed = parse_reply(completion, prompt=prompt, truncated=truncated)
    if truncated is None:
        truncated = answer_region(completion) is None
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
        truncated=truncated,
    )
    strict = parse_strict(completion)
    outcome.update(strict_fields(outcome["gold"], LEVELS.index(strict.label) if strict.label else INVALID_CODE))
    return parsed, outcome


def summarize(outcomes: Iterable[Mapping[str, float]], specs: Sequence[MetricSpec]) -> dict[str, float]:
    """All RAIR metrics with the selected ``labels``-kind metric specs (see ``metrics.summarize``)."""
    return summarize_outcomes(list(outcomes), specs, groups=GROUPS, dimensions=DIMENSIONS)


def dimension_table(outcomes: Iterable[Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """Errors by gold rule dimension and the dimensions models name (Fig. 5, extended)."""
    return mismatch_dimension_table(list(outcomes), DIMENSIONS)


def subset_metric_keys(subset: str, specs: Sequence[MetricSpec]) -> list[str]:
    """The fixed metric list of one subset's lm-eval task (its paper breakdown)."""
    group = SUBSET_GROUPS[subset]
    return metric_keys(specs, {group: GROUPS[group]}, DIMENSIONS)
