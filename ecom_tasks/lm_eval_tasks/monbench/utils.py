"""lm-eval glue for MonBench: loading, per-document scoring and aggregations.

Thin by design: records, prompts, parsing and metrics all come from
``ecom_tasks.monbench`` and ``ecom_tasks.scorers``, exactly as for Inspect.
User options arrive through ``--metadata``: ``data`` (file, folder or hub
id), ``split`` (test | validation), ``shots`` (0, 1, 5), ``formats``.
"""

from __future__ import annotations

from typing import Any

import datasets

from ecom_tasks.monbench.parsing import strip_reasoning
from ecom_tasks.monbench.protocol import build_items
from ecom_tasks.monbench.scoring import item_fields, monbench_metrics, score_reply
from ecom_tasks.scorers.lm_eval_aggregations import define_aggregations

METRICS = (
    "acc",
    "acc_ci",
    "acc_pos_A",
    "acc_pos_B",
    "acc_pos_C",
    "acc_pos_D",
    "acc_fmt_label",
    "acc_fmt_content",
    "acc_fmt_label_content",
    "consistency",
    "violation_rate",
    "mismatch_rate",
)


def _docs(task: str, design: str, formats: Any = None, data: str | None = None, split: str = "test", shots: int | str = 0, **_: Any):
    items = build_items(data, [task], split=split, design=design, formats=formats, shots=shots)
    docs = [
        {
            "id": item.id,
            "system_prompt": item.system_prompt,
            "system_prefix": item.system_prompt + "\n\n",
            "user_prompt": item.user_prompt,
            "target": item.target_answer,
            **item_fields(item),
        }
        for item in items
    ]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(docs)})


def load_canonical(task: str, **metadata: Any):
    """One run: options in data order, Label format (``monbench_<task>``)."""
    metadata.setdefault("formats", "label")
    return _docs(task, "canonical", **metadata)


def load_perm(task: str, design: str = "full", **metadata: Any):
    """The paper's 72 runs (24 orderings x 3 formats) per question (``monbench_perm_<task>``)."""
    return _docs(task, design, **metadata)


def extract_reply(resps, docs):
    """Named filter: drop ``<think>`` blocks; the tags are read by ``process_results``."""
    return [[strip_reasoning(r) for r in doc_resps] for doc_resps in resps]


CANONICAL_METRICS = ("acc", "violation_rate")


def process_results(doc: dict, results: list[str]) -> dict[str, dict[str, int]]:
    """Every metric receives the whole outcome; the aggregations pick what they need."""
    _, outcome = score_reply(doc, results[0])
    return {name: outcome for name in METRICS}


def process_results_canonical(doc: dict, results: list[str]) -> dict[str, dict[str, int]]:
    """Single-run tasks: no CI, position or format breakdown to report."""
    _, outcome = score_reply(doc, results[0])
    return {name: outcome for name in CANONICAL_METRICS}


# agg_acc, agg_acc_ci, ...: one module-level function per metric, as `!function utils.agg_<key>` needs.
define_aggregations(globals(), METRICS, monbench_metrics)
