"""What a newcomer sees: a mistyped or wrongly prefixed task name gets the name meant, and an
lm-eval run of our tasks prints none of lm-eval's "Custom kwargs can be passed to `--metadata`"
notices (our task class loads documents without it; ``--metadata`` still reaches the loader)."""

from __future__ import annotations

import logging
from pathlib import Path

import lm_eval
import pytest
from helpers import check_ok, run_cli

from ecom_tasks import cli
from ecom_tasks.data import EcomTasksError
from ecom_tasks.lm_eval_tasks import task_dirs, task_manager
from ecom_tasks.lm_eval_tasks.cli import unknown_tasks
from ecom_tasks.names import nearest, unknown_name

LISTING = "(ecom-tasks list shows ours, lm-eval ls tasks all)"


@pytest.fixture(scope="module")
def lm_eval_names() -> list[str]:
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=task_dirs(), include_defaults=False).all_tasks


@pytest.fixture(scope="module")
def inspect_names() -> list[str]:
    return [name for kind, name in cli._inspect_objects() if kind == "task"]


# What a person typing each name meant, by a reader's judgement.
LM_EVAL_TYPOS = [
    ("rair_hrd", "rair_hard"),  # a dropped letter
    ("rair_hadr", "rair_hard"),  # swapped letters
    ("RAIR_HARD", "rair_hard"),  # caps
    ("ecom_tasks/rair_hard", "rair_hard"),  # Inspect's spelling
    ("ecom_tasks/monbench_prem", "monbench_perm"),  # Inspect's spelling and a typo
    ("monbench_pem", "monbench_perm"),
    ("monbench_cyclic_query_intent", "monbench_cyclic_query_query_intent"),  # a word short
    ("rair_visual", "rair_visual_text"),  # lm-eval has the text-only visual task
    ("ecomeval_exct", "ecomeval_exact"),
    ("rair_general_builtin_rule", "rair_general_builtin_rules"),
]


@pytest.mark.parametrize(("typed", "meant"), LM_EVAL_TYPOS)
def test_nearest_lm_eval_name(typed: str, meant: str, lm_eval_names: list[str]) -> None:
    assert meant in lm_eval_names
    assert nearest(typed, lm_eval_names) == [meant]


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("rair_hard", "ecom_tasks/rair_hard"),  # lm-eval's spelling: the prefix is missing
        ("monbench_perm", "ecom_tasks/monbench_perm"),
        ("ecom_tasks/rair_hrd", "ecom_tasks/rair_hard"),
        ("ecom_task/rair_hard", "ecom_tasks/rair_hard"),
        ("ecom_tasks/rmir_reasn", "ecom_tasks/rmir_reason"),
    ],
)
def test_nearest_inspect_name(typed: str, meant: str, inspect_names: list[str]) -> None:
    assert meant in inspect_names
    assert nearest(typed, inspect_names) == [meant]


@pytest.mark.parametrize("typed", ["hellaswag", "gsm8k", "translate_to_french", "zzz"])
def test_nothing_close_is_no_suggestion(typed: str, lm_eval_names: list[str]) -> None:
    assert nearest(typed, lm_eval_names) == []
    assert unknown_name("lm-eval task", typed, lm_eval_names) == f"unknown lm-eval task {typed!r}"


def test_message_names_the_prefix_rule(lm_eval_names: list[str], inspect_names: list[str]) -> None:
    assert (
        unknown_name("lm-eval task", "rair_hrd", lm_eval_names)
        == "unknown lm-eval task 'rair_hrd'; did you mean rair_hard?"
    )
    assert unknown_name("lm-eval task", "ecom_tasks/rair_hard", lm_eval_names) == (
        "unknown lm-eval task 'ecom_tasks/rair_hard'; did you mean rair_hard? lm-eval task names have no ecom_tasks/ prefix"
    )
    assert unknown_name("Inspect task", "rair_hard", inspect_names, "ecom-tasks list shows every task") == (
        "unknown Inspect task 'rair_hard'; did you mean ecom_tasks/rair_hard? Inspect task names start with ecom_tasks/ "
        "(ecom-tasks list shows every task)"
    )


def test_unknown_tasks_reads_lm_evals_list_not_substrings() -> None:
    """``rair`` is a known group and a substring of the unknown ``rair_hrd``: only ``rair_hrd`` is reported."""
    assert unknown_tasks("Tasks not found: rair_hrd", ["rair_hrd,rair"], None) == [
        "unknown lm-eval task 'rair_hrd'; did you mean rair_hard?"
    ]
    assert unknown_tasks("Tasks not found: rair_hrd", "rair,rair_hrd", None) == [
        "unknown lm-eval task 'rair_hrd'; did you mean rair_hard?"
    ]
    # Another ValueError is not ours to rewrite.
    assert unknown_tasks("could not convert string to float: 'x'", ["rair_hrd"], None) == []


@pytest.mark.slow
def test_ecom_lm_eval_suggests_the_task_meant(tmp_path: Path) -> None:
    proc = check_ok(
        run_cli(
            ["ecom-lm-eval", "--model", "ecom-baseline", "--tasks", "rair_hrd,monbench_perm,ecom_tasks/rair_general"],
            cwd=tmp_path,
        ),
        1,
    )
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "ecom-tasks: unknown lm-eval task 'rair_hrd'; did you mean rair_hard?; "
        "unknown lm-eval task 'ecom_tasks/rair_general'; did you mean rair_general? "
        f"lm-eval task names have no ecom_tasks/ prefix {LISTING}"
    )


def test_ecom_tasks_validate_suggests_the_benchmark(capsys) -> None:
    for typed, meant in [("monbnch", "monbench"), ("ecom_tasks/rair", "rair"), ("rair_hard", "rair"), ("RMIR", "rmir")]:
        args = cli.build_parser().parse_args(["validate", typed])
        assert cli.cmd_validate(args) == 2
        err = capsys.readouterr().err
        assert err == f"unknown benchmark {typed!r}; known: ecomeval, monbench, rair, rmir; did you mean {meant}?\n"


# --- lm-eval's custom_dataset notice -----------------------------------------------------------


def test_lm_eval_run_prints_no_custom_kwargs_notice(caplog) -> None:
    """Five tasks (MonBench's canonical group of four, RAIR Hard), their documents loaded, and no notice."""
    with caplog.at_level(logging.WARNING):
        results = lm_eval.simple_evaluate(
            model="ecom-baseline",
            tasks=["monbench_canonical", "rair_hard"],
            task_manager=task_manager(include_defaults=False),
            limit=2,
            bootstrap_iters=0,
        )
    notices = [r.getMessage() for r in caplog.records if "Custom kwargs" in r.getMessage()]
    assert notices == []
    tasks = {name for name in results["n-samples"]}
    assert tasks == {
        "rair_hard",
        "monbench_canonical_product_co_purchase",
        "monbench_canonical_query_ad_relevance",
        "monbench_canonical_query_product_relation",
        "monbench_canonical_query_query_intent",
    }
    assert all(n["effective"] == 2 and n["original"] >= 2 for n in results["n-samples"].values())


def test_metadata_still_reaches_the_loader(tmp_path: Path) -> None:
    """``--metadata data=...`` is read by the documents' loader: a missing file is a user error naming it."""
    missing = tmp_path / "no_such_rair.jsonl"
    with pytest.raises(EcomTasksError, match="no_such_rair.jsonl"):
        lm_eval.simple_evaluate(
            model="ecom-baseline",
            tasks=["rair_hard"],
            task_manager=task_manager(include_defaults=False, metadata={"data": str(missing)}),  # what --metadata does
            limit=1,
            bootstrap_iters=0,
        )
