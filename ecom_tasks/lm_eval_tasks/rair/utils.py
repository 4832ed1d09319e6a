"""lm-eval glue for RAIR: documents and the task class (thin; the benchmark is in ``ecom_tasks.rair``).

The text versions (no image is sent). ``--metadata`` keys: the README's settings table, plus
``allow_outside_images`` / ``allow_url_images`` (docs/security.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.images import ImageAccess
from ecom_tasks.rair.metrics import Outcome
from ecom_tasks.rair.protocol import load_items
from ecom_tasks.rair.rules import load_rules, provenance
from ecom_tasks.rair.scoring import score_reply, subset_metric_keys, summarize
from ecom_tasks.scorers import context_limit
from ecom_tasks.scorers.kinds import LABELS
from ecom_tasks.scorers.lm_eval import OutcomeTask, documents


def load_docs(
    subset: str,
    variant_rules: str,
    rules: str | None = None,
    data: str | None = None,
    language: str | None = None,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
    **_: Any,
):
    """``custom_dataset``: documents of one subset; ``rules`` from ``--metadata`` overrides the variant's."""
    access = ImageAccess.from_options(allow_outside_images, allow_url_images)
    items = load_items(
        data,
        subset=subset,
        rules=rules if rules is not None else variant_rules,
        image=False,
        language=language,
        image_access=access,
    )
    return documents(items, lambda item: item.target)


class RairTask(OutcomeTask):
    """RAIR's metrics: the ``labels`` metric specs plus RAIR's breakdown of the task's subset."""

    metric_kind = LABELS
    lower_is_better = frozenset({"invalid_rate", context_limit.RATE, "error_share", "confusion"})

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__(config)  # the settings checked (OutcomeTask), the documents loaded with their rules
        # The rules shown go into the results' config: version, sha256 and source (builtin = ours).
        metadata = dict(self.config.metadata or {})
        user_rules = metadata.get("rules")
        ruleset = load_rules(user_rules if user_rules is not None else self.config.dataset_kwargs["variant_rules"])
        self.config.metadata = {**metadata, **provenance(ruleset)}

    def metric_keys(self, config: Mapping[str, Any], specs: Sequence[MetricSpec]) -> list[str]:
        # No truncated_rate: lm-eval passes no stop reason, so the share is unknown (the report says so).
        keys = [key for key in subset_metric_keys(config["dataset_kwargs"]["subset"], specs) if key != "truncated_rate"]
        return [*keys[: keys.index("n")], context_limit.RATE, *keys[keys.index("n") :]]

    def summarize(self, outcomes: list[Any], specs: Sequence[MetricSpec]) -> Mapping[str, float]:
        # A group absent from the data has 0 items (its other metrics: nan, as the aggregations give).
        counts = {key: 0.0 for key in self.aggregation() if key.startswith("n/")}
        return {**counts, **summarize([Outcome(**outcome) for outcome in outcomes], specs)}

    def score(self, doc: dict, reply: str) -> Any:
        # A plain dict (the numbers beside the document's groups): --log_samples writes it as JSON.
        return asdict(score_reply(doc, reply, context_exceeded=context_limit.from_reply(reply) is not None)[1])
