"""RMIR's table in the report: the paper's Table 2 (Recall@20 / Recall@50 per reasoning category) and our ranking metrics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ecom_tasks import files
from ecom_tasks.results import MergedRun
from ecom_tasks.tables import Column, Table, assemble, finish, paper_rows, run_row

CATEGORIES = (("functional", "Functional"), ("temporal", "Temporal"), ("causal", "Causal"))
EXCLUDED = ("retriever", "retriever_args", "mode")


def _setting(run: MergedRun, name: str, default: Any = None) -> Any:
    """A setting of an RMIR run (JSON text read): the task metadata records the effective one (presets fix some)."""
    value = run.info[name] if run.info.get(name) is not None else run.settings_dict.get(name, default)
    if isinstance(value, str):
        parsed, problem = files.json_problem(value)
        return value if problem is not None or not isinstance(parsed, (dict, list)) else parsed
    return value


def _embedder(run: MergedRun) -> str:
    retriever = _setting(run, "retriever", "lexical")
    args = _setting(run, "retriever_args", {})
    model = args.get("model") if isinstance(args, dict) else None
    return f"{retriever}:{model}" if model else str(retriever)


def tables(runs: Sequence[MergedRun]) -> list[Table]:
    def classify(run: MergedRun) -> tuple[str, str] | None:
        if "recall@20" not in run.metrics and "recall@50" not in run.metrics:
            return None
        mode = _setting(run, "mode", "embed")
        text = mode if mode == "embed" else f"{mode} with {run.model}"
        return text, ""

    columns = [
        *(Column(f"{c}/recall@{k}", f"{title} R@{k}") for c, title in CATEGORIES for k in (20, 50)),
        Column("recall@20", "Average R@20", headline=True),
        Column("recall@50", "Average R@50", headline=True),
        Column("category_mean/recall@20", "category mean R@20"),
        Column("category_mean/recall@50", "category mean R@50"),
        Column("mrr", "MRR"),
        Column("ndcg@10", "nDCG@10"),
        Column("failure_rate", "failures"),
    ]
    rows = [
        run_row(slots, {c.key: slots.metric("", c.key) for c in columns})
        for slots in assemble(runs, classify, EXCLUDED, model=_embedder)
    ]
    table = finish(
        Table(
            "rmir",
            "table2",
            "RMIR Table 2: Recall@20 / Recall@50 per reasoning category",
            columns,
            rows + paper_rows("rmir", "table2", "fraction"),
            note="Rows: embedder (retriever:model) and mode. Average: over all queries; category mean: mean of the three "
            "category values. The paper's Average is over all queries too, for 432 temporal and 656 causal queries "
            "(its Sec. 3.2 prints the two counts the other way round).",
        )
    )
    return [table] if table else []
