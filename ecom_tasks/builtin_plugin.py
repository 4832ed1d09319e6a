"""ecom-tasks' own contributions, registered through the same hooks as third parties."""

from __future__ import annotations

from pathlib import Path

from ecom_tasks.hookspecs import DatasetSpec, hookimpl


@hookimpl
def ecom_tasks_metrics():
    from ecom_tasks.scorers import core

    return {
        "accuracy": core.accuracy,
        "macro_f1": core.macro_f1,
        "binarized_accuracy": core.binarized_accuracy,
        "mean_ci": core.mean_ci,
        "confusion": core.confusion,
        "recall_at_k": core.mean_recall_at_k,
        "rubric_to_100": core.rubric_to_100,
    }


@hookimpl
def ecom_tasks_retrievers():
    from ecom_tasks.retrieval import exact_cosine_retriever

    return {"exact_cosine": exact_cosine_retriever}


@hookimpl
def ecom_tasks_lm_eval_task_dirs():
    return [str(Path(__file__).parent / "lm_eval_tasks")]


@hookimpl
def ecom_tasks_datasets():
    from ecom_tasks.data import fixtures_dir
    from ecom_tasks.monbench.schema import load_records as load_monbench
    from ecom_tasks.rair.schema import load_records as load_rair

    return [
        DatasetSpec(
            name="monbench",
            description="MonBench multiple-choice records (id, task, split, question, choices, answer, category)",
            load=lambda data: load_monbench(data, split=None),
            default_data=lambda: fixtures_dir("monbench"),
        ),
        DatasetSpec(
            name="rair",
            description="RAIR query-item records (subset, query, item text, image, industry, intent, L1-L4 label, rule_ids, language)",
            load=lambda data: load_rair(data, check_images=True),
            default_data=lambda: fixtures_dir("rair"),
        ),
    ]


@hookimpl
def ecom_tasks_baseline_responders():
    from ecom_tasks.baselines.rair import respond_rair

    return [respond_rair]
