"""ecom-tasks' own contributions, registered through the same hooks as third parties."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from ecom_tasks.data import fixtures_dir
from ecom_tasks.ecomeval.baseline import respond_ecomeval, respond_grader
from ecom_tasks.ecomeval.schema import fixture_file as ecomeval_fixture_file
from ecom_tasks.ecomeval.schema import load_records as load_ecomeval
from ecom_tasks.hookspecs import DatasetSpec, hookimpl
from ecom_tasks.images import DEFAULT_ACCESS
from ecom_tasks.monbench.baseline import respond_multiple_choice
from ecom_tasks.monbench.schema import load_records as load_monbench
from ecom_tasks.rair.baseline import respond_rair
from ecom_tasks.rair.schema import load_records as load_rair
from ecom_tasks.rmir.baseline import respond_rmir
from ecom_tasks.rmir.embedders import BUILTIN_EMBEDDERS
from ecom_tasks.rmir.schema import load_every_split as load_rmir_splits
from ecom_tasks.scorers.kinds import BUILTIN_METRICS


@hookimpl
def ecom_tasks_metrics():
    return list(BUILTIN_METRICS)


@hookimpl
def ecom_tasks_lm_eval_task_dirs():
    return [str(Path(__file__).parent / "lm_eval_tasks")]


@hookimpl
def ecom_tasks_datasets():
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
            load=partial(load_rair, check_images=True),
            default_data=lambda: fixtures_dir("rair"),
        ),
        DatasetSpec(
            name="ecomeval",
            description="EcomEval (Shopee) records (category, task, language, question, reference, images, difficulty)",
            load=partial(load_ecomeval, check_images=True),
            default_data=ecomeval_fixture_file,
        ),
        DatasetSpec(
            name="rmir",
            description="RMIR folder: queries (category, query_text, query_image, positives or qrels) and pool (id, image, description)",
            # Every split on its own (a run scores one); a pool shared by the splits is listed once.
            load=lambda data, image_access=DEFAULT_ACCESS: list(
                dict.fromkeys(
                    r for d in load_rmir_splits(data, check_images=True, image_access=image_access) for r in d.records()
                )
            ),
            default_data=lambda: fixtures_dir("rmir"),
        ),
    ]


@hookimpl
def ecom_tasks_baseline_responders():
    # RAIR's recognises only its own prompts; MonBench's answers any A-D question in tags.
    # EcomEval's baseline judge goes first: its prompts quote questions the others would answer.
    # EcomEval's answerer takes a lone user question unless it asks for MonBench's tags.
    return [respond_grader, respond_rair, respond_rmir, respond_ecomeval, respond_multiple_choice]


@hookimpl
def ecom_tasks_retrievers():
    return dict(BUILTIN_EMBEDDERS)
