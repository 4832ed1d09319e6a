"""MonBench as Inspect tasks.

``inspect eval ecom_tasks/monbench --model ecom/baseline`` runs all four tasks
under the paper's full protocol (24 option orderings x 3 return formats = 72
runs per question). Parameters (``-T name=value``):

- ``task``: ``all`` (default) or one of ``query_ad_relevance``,
  ``product_co_purchase``, ``query_product_relation``, ``query_query_intent``.
- ``design``: ``full`` (72 runs, the paper's), ``cyclic`` (4 rotations x 3
  formats = 12 runs; every option visits every position once) or
  ``canonical`` (data order, one run per format).
- ``formats``: comma list of ``label``, ``content``, ``label_content`` (default all).
- ``shots``: 0, 1 or 5 few-shot examples from the ``fewshot`` split, in the
  system prompt (App. C).
- ``data``: a local JSONL/CSV/Parquet file or folder, or a Hugging Face id;
  default: the bundled fixtures (paper examples + synthetic items).
- ``split``: ``test`` (default) or ``validation``.
- ``category_weights``: JSON object ``{category_id: share}`` for the
  reweighted accuracy (App. B.1.1).

Metrics: ``acc`` and ``acc_ci`` (mean of run accuracies, 95% Student-t
half-width over runs; with several tasks the unweighted task mean, like
Table 2's Avg.), ``<task>/acc`` etc. per task, ``acc_pos_A..D``,
``acc_fmt_*``, ``consistency``, ``violation_rate``, ``mismatch_rate``.
Paper reference (Table 2, full protocol, test split, Avg. % ± 95% CI):
GPT-5.2 82.52 ± 0.36, GPT-5-Chat 80.48 ± 0.35, GPT-4o 76.80 ± 0.69,
DeepSeek-V3 74.03 ± 0.94, Qwen3-1.7B-nothink 44.04 ± 5.31.

Deviations (details in ``ecom_tasks/monbench/README.md``):
- Few-shot examples sit in the system prompt in data order, answered in the
  run's format, so a run's static prefix is byte-identical across questions.
- In the Content format, the open-content tasks (ad relevance, co-purchase)
  ask for the option's full text and give no example answer.
- ``<think>`` blocks are dropped before parsing. Content must match an
  option's text exactly (case, spacing and a final period aside).
- ``design=cyclic`` goes beyond the paper (12 runs instead of 72).
- The bundled fixtures are the paper's examples plus synthetic items, not
  the private test set.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.solver import generate

from ecom_tasks.monbench.protocol import build_items
from ecom_tasks.monbench.schema import TASKS
from ecom_tasks.monbench.scoring import item_fields
from ecom_tasks.scorers.inspect_scorers import monbench_scorer, monbench_summary, outcome_mean


def monbench_dataset(
    task: str = "all",
    design: str = "full",
    formats: str | list[str] | None = None,
    shots: int = 0,
    data: str | None = None,
    split: str = "test",
) -> MemoryDataset:
    """One Sample per (question, ordering, format); ids ``{id}_p{ordering}_{format}``."""
    tasks = list(TASKS) if task == "all" else [task]
    items = build_items(data, tasks, split=split, design=design, formats=formats, shots=shots)
    samples = [
        Sample(
            id=item.id,
            input=[ChatMessageSystem(content=item.system_prompt), ChatMessageUser(content=item.user_prompt)],
            target=item.target_letter,
            metadata=item_fields(item),
        )
        for item in items
    ]
    name = f"monbench_{task}_{design}"
    return MemoryDataset(samples, name=name, location=str(data or "ecom_tasks/fixtures/monbench"))


def _weights(category_weights: str | dict[str, Any] | None) -> dict[int, float] | None:
    if not category_weights:
        return None
    mapping = json.loads(category_weights) if isinstance(category_weights, str) else category_weights
    return {int(k): float(v) for k, v in mapping.items()}


@task
def monbench(
    task: str = "all",
    design: str = "full",
    formats: str | None = None,
    shots: int = 0,
    data: str | None = None,
    split: str = "test",
    category_weights: str | None = None,
    max_tokens: int = 1024,
) -> Task:
    """MonBench with the robustness protocol (see the module docstring for parameters)."""
    if task != "all" and task not in TASKS:
        raise ValueError(f"unknown MonBench task {task!r}; expected 'all' or one of {', '.join(TASKS)}")
    return Task(
        dataset=monbench_dataset(task, design, formats, shots, data, split),
        solver=generate(),
        scorer=monbench_scorer(),
        metrics=[monbench_summary(category_weights=_weights(category_weights))],
        config=GenerateConfig(temperature=0.0, max_tokens=max_tokens),
        version="1.0.0",
        epochs=Epochs(1, outcome_mean()),
    )


@task
def monbench_perm(data: str | None = None, shots: int = 0, split: str = "test") -> Task:
    """All four tasks, full 72-run protocol (the paper's Table 2 setting)."""
    return monbench(task="all", design="full", data=data, shots=shots, split=split)


@task
def monbench_cyclic(data: str | None = None, shots: int = 0, split: str = "test") -> Task:
    """All four tasks, 12 cyclic runs: 6x cheaper than the full protocol."""
    return monbench(task="all", design="cyclic", data=data, shots=shots, split=split)


@task
def monbench_canonical(data: str | None = None, shots: int = 0, split: str = "test") -> Task:
    """All four tasks in data order, Label format only: the quick single-run check."""
    return monbench(task="all", design="canonical", formats="label", data=data, shots=shots, split=split)


@task
def monbench_query_ad_relevance(design: str = "full", data: str | None = None, shots: int = 0, split: str = "test") -> Task:
    """Query-Ad Relevance: pick the ad that best serves the query in its location and market."""
    return monbench(task="query_ad_relevance", design=design, data=data, shots=shots, split=split)


@task
def monbench_product_co_purchase(design: str = "full", data: str | None = None, shots: int = 0, split: str = "test") -> Task:
    """Product Co-Purchase: pick the product a buyer of the given one may also buy."""
    return monbench(task="product_co_purchase", design=design, data=data, shots=shots, split=split)


@task
def monbench_query_product_relation(design: str = "full", data: str | None = None, shots: int = 0, split: str = "test") -> Task:
    """Query-Product Relation: ExactMatch / Substitute / Complement / Irrelevant."""
    return monbench(task="query_product_relation", design=design, data=data, shots=shots, split=split)


@task
def monbench_query_query_intent(design: str = "full", data: str | None = None, shots: int = 0, split: str = "test") -> Task:
    """Query-Query Intent: Narrowing / Complement / Irrelevant / Substitute between two queries."""
    return monbench(task="query_query_intent", design=design, data=data, shots=shots, split=split)
