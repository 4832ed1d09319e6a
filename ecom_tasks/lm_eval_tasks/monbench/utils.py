"""lm-eval glue for MonBench: documents and the task class (thin; the benchmark is in ``ecom_tasks.monbench``).

The variant is fixed by the task's YAML; the ``--metadata`` keys are in the README's settings table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ecom_tasks.data import ConfigurationError, parse_flag, read_whole_number
from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.monbench.metrics import RunOutcome
from ecom_tasks.monbench.protocol import load_items, parse_shots, runs_for
from ecom_tasks.monbench.schema import LETTERS
from ecom_tasks.monbench.scoring import refused_outcome, score_reply, summarize
from ecom_tasks.scorers import context_limit
from ecom_tasks.scorers.kinds import CHOICE_RUNS, strict_keys
from ecom_tasks.scorers.lm_eval import OutcomeTask, documents


def parse_questions(value: Any) -> int | None:
    """The question limit from ``--metadata``: a positive whole number, or None for every question."""
    if value is None:
        return None
    if (number := read_whole_number(value, 1)) is None:
        raise ConfigurationError(f"MonBench questions must be a whole number of at least 1, got {value!r}")
    return number


def load_docs(
    tasks: list[str],
    design: str,
    formats: list[str],
    data: str | None = None,
    split: str = "test",
    shots: int | str = 0,
    questions: int | str | None = None,
    **_: Any,
):
    """``custom_dataset``: one document per (question, ordering, format); ids ``{id}_p{ordering}_{format}``.

    ``questions`` keeps the first N questions of the split (file order) with every run of each.
    """
    items = load_items(data, tasks=tasks, split=split, design=design, formats=formats, shots=shots)
    limit = parse_questions(questions)
    if limit is not None:
        # Items are question-major and question_index counts the evaluated questions from 0.
        items = [item for item in items if item.question_index < limit]
    return documents(items, lambda item: item.target_answer)


class MonBenchTask(OutcomeTask):
    """MonBench's metrics: the ``choice_runs`` metric specs plus the position, format and failure breakdown."""

    metric_kind = CHOICE_RUNS
    lower_is_better = frozenset({"invalid_rate", "invalid_rate_strict", "mismatch_rate", context_limit.RATE})
    #: Without a chat template lm-eval joins the system prompt and the question with nothing between.
    plain_separator = "\n\n"

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        # Every results file records the shots (configs.<task>.metadata), the default included.
        config = dict(config or {})
        metadata = dict(config.get("metadata") or {})
        metadata["shots"] = parse_shots(metadata.get("shots", 0))
        if metadata.get("questions") is not None:
            metadata["questions"] = parse_questions(metadata["questions"])
        config["metadata"] = metadata
        super().__init__(config)
        self.strict = parse_flag(metadata.get("strict", False), "strict")

    def metric_keys(self, config: Mapping[str, Any], specs: Sequence[MetricSpec]) -> list[str]:
        variant = config["dataset_kwargs"]
        keys = [*(spec.name for spec in specs), *strict_keys(specs)]
        if len(runs_for(variant["design"], variant["formats"])) > 1:  # a single run has no breakdown
            keys += [f"acc_pos_{name}" for name in LETTERS]
            keys += [f"acc_fmt_{name}" for name in variant["formats"]]
            keys.append("consistency")
        keys.append("invalid_rate")
        if "label_content" in variant["formats"]:
            keys.append("mismatch_rate")
        # No truncated_rate: lm-eval passes no stop reason, so that share is unknown (the report says so).
        keys.append(context_limit.RATE)
        return keys

    def summarize(self, outcomes: list[RunOutcome], specs: Sequence[MetricSpec]) -> Mapping[str, float]:
        return summarize(outcomes, specs)

    def score(self, doc: dict, reply: str) -> RunOutcome:
        """The run's outcome, its groups (task, question, category) included: every aggregation reads them
        from this object (lm-eval hands each the objects ``process_results`` returned)."""
        if context_limit.from_reply(reply) is not None:  # the server refused the prompt: wrong, counted apart
            return refused_outcome(doc)
        return score_reply(doc, reply, strict=self.strict)[1]
