"""lm-eval glue for EcomEval's ``ecomeval_exact`` tasks (thin; the benchmark is in ``ecom_tasks.ecomeval``).

Only the deterministic part of EcomEval runs in lm-eval: the text items whose
reference is an option letter or a short exact answer, scored by exact match
after normalisation (grade 3 for a match, 0 otherwise, so ``score`` is
exact-match accuracy x 100). The judge-graded tasks are Inspect-only: lm-eval
runs no judge model inside a task. Options through ``--metadata``: ``data``
(file, folder or hub id), ``language``, ``task``, ``difficulty`` (comma lists)
and ``metrics`` (the ``rubric`` metrics to compute; default all).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import datasets

from ecom_tasks.ecomeval.protocol import load_items
from ecom_tasks.ecomeval.scoring import exact_metric_keys, score_exact, summarize
from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.scorers.kinds import RUBRIC
from ecom_tasks.scorers.lm_eval import OutcomeTask


def load_docs(
    category: str,
    data: str | None = None,
    language: str | None = None,
    task: str | None = None,
    difficulty: str | None = None,
    **_: Any,
) -> datasets.DatasetDict:
    """``custom_dataset``: the exact-answer text items of one category, the question as it is."""
    items = load_items(data, category=category, language=language, task=task, difficulty=difficulty, exact=True)
    docs = [{"id": item.id, "question": item.prompt, "target": item.target, **item.fields} for item in items]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(docs)})


class EcomEvalExactTask(OutcomeTask):
    """EcomEval's ``rubric`` metrics over exact-match grades, with the category/language/difficulty means."""

    metric_kind = RUBRIC
    lower_is_better = frozenset({"judge_failure_rate"})

    def metric_keys(self, config: Mapping[str, Any], specs: Sequence[MetricSpec]) -> list[str]:
        return exact_metric_keys(specs)

    def summarize(self, outcomes: list[Any], specs: Sequence[MetricSpec]) -> Mapping[str, float]:
        return summarize(outcomes, specs)

    def score(self, doc: dict, reply: str) -> Any:
        return score_exact(doc, reply)[1]
