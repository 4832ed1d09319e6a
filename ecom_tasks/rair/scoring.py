"""Scoring one RAIR reply and summarizing outcomes: the single place both adapters call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.rair import metrics
from ecom_tasks.rair.metrics import Outcome
from ecom_tasks.rair.parsing import ParsedRelevance, parse_reply, parse_strict
from ecom_tasks.rair.schema import DIMENSIONS, INDUSTRIES, INTENTS, LEVELS
from ecom_tasks.scorers import context_limit
from ecom_tasks.scorers.replies import answer_region

GROUPS = {"industry": INDUSTRIES, "intent": INTENTS}
#: The breakdown the paper reports per subset: industries (Table 7) or hard intents.
SUBSET_GROUPS = {"general": "industry", "visual": "industry", "hard": "intent"}


def _level(parsed: ParsedRelevance) -> int:
    return LEVELS.index(parsed.label) if parsed.label else metrics.INVALID_CODE


def score_reply(
    fields: Mapping[str, Any],
    completion: str | None,
    *,
    truncated: bool | None = None,
    prompt: Sequence[str] | None = None,
    context_exceeded: bool = False,
) -> tuple[ParsedRelevance, Outcome]:
    """The careful reading of ``completion`` (the headline) and the item's outcome, which holds the strict reading
    (exactly the requested output) in ``strict_*``. ``truncated``: None when the framework does not know (then a
    reply cut off inside ``<think>`` is); ``prompt``: the messages sent (default: ``fields``' prompts), whose copies
    are not read; ``context_exceeded``: the server refused the prompt: wrong, counted apart."""
    if context_exceeded:
        completion, truncated = None, False
    if prompt is None and fields.get("system_prompt"):
        prompt = (fields["system_prompt"], fields.get("user_prompt") or "")
    parsed = parse_reply(completion, prompt=prompt, truncated=truncated)
    if truncated is None:
        truncated = answer_region(completion) is None
    outcome = metrics.item_outcome(
        LEVELS.index(fields["label"]),
        _level(parsed),
        _level(parse_strict(completion)),
        dimension=parsed.dimension,
        truncated=truncated,
        context_exceeded=context_exceeded,
        **metrics.groups_of(fields),
    )
    return parsed, outcome


def summarize(outcomes: Sequence[Outcome], specs: Sequence[MetricSpec]) -> dict[str, float]:
    """All RAIR metrics with the selected ``labels``-kind metric specs (see ``metrics.summarize``), and the
    share of prompts longer than the server's context."""
    summary = metrics.summarize(outcomes, specs, groups=GROUPS, dimensions=DIMENSIONS)
    return context_limit.with_rate(summary, [o.numbers for o in outcomes])


def dimension_table(outcomes: Iterable[Outcome]) -> dict[str, dict[str, float]]:
    """Errors by gold rule dimension and the dimensions models name (Fig. 5, extended)."""
    return metrics.mismatch_dimension_table(list(outcomes), DIMENSIONS)


def subset_metric_keys(subset: str, specs: Sequence[MetricSpec]) -> list[str]:
    """The fixed metric list of one subset's lm-eval task (its paper breakdown)."""
    group = SUBSET_GROUPS[subset]
    return metrics.metric_keys(specs, {group: GROUPS[group]}, DIMENSIONS)
