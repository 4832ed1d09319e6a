"""MonBench in lm-eval: ``--limit`` counts documents (runs); ``--metadata '{"questions": N}'`` counts questions."""

from __future__ import annotations

import json
from pathlib import Path

import lm_eval
import pytest
from helpers import check_ok, run_cli

from ecom_tasks.data import ConfigurationError
from ecom_tasks.lm_eval_tasks import task_manager
from ecom_tasks.lm_eval_tasks.monbench.utils import load_docs, parse_questions
from ecom_tasks.monbench.protocol import expand, runs_for
from ecom_tasks.monbench.schema import TASKS, load_records
from ecom_tasks.monbench.scoring import score_reply, summarize
from ecom_tasks.plugins import baseline_reply, select_metrics
from ecom_tasks.report.runs import lm_eval_runs

CYCLIC_RUNS = 12  # 4 rotations x 3 formats


def baseline_metrics(task: str, questions: int) -> dict[str, float]:
    """The offline baseline on the first ``questions`` test questions of ``task``, scored without lm-eval."""
    records = [r for r in load_records(None, split="test") if r.task == task][:questions]
    items = expand(records, runs_for("cyclic"))
    outcomes = [
        score_reply(item.fields, baseline_reply([("system", item.system_prompt), ("user", item.user_prompt)]))[1]
        for item in items
    ]
    return summarize(outcomes, select_metrics("choice_runs"))


def test_questions_keeps_whole_questions_and_is_recorded(tmp_path: Path):
    out = tmp_path / "out"
    check_ok(
        run_cli(
            [
                "ecom-lm-eval",
                "--tasks",
                "monbench_cyclic",
                "--model",
                "ecom-baseline",
                "--metadata",
                '{"questions": 3}',
                "--output_path",
                str(out),
                "--log_samples",
            ],
            cwd=tmp_path,
        )
    )
    (results_file,) = out.rglob("results_*.json")
    results = json.loads(results_file.read_text(encoding="utf-8"))
    for task in TASKS:
        name = f"monbench_cyclic_{task}"
        assert results["n-samples"][name] == {"original": 3 * CYCLIC_RUNS, "effective": 3 * CYCLIC_RUNS}
        assert results["configs"][name]["metadata"]["questions"] == 3
        (samples_file,) = out.rglob(f"samples_{name}_*.jsonl")
        ids = [json.loads(line)["doc"]["id"] for line in samples_file.read_text(encoding="utf-8").splitlines()]
        first_three = [r.id for r in load_records(None, split="test") if r.task == task][:3]
        assert sorted({i.rsplit("_p", 1)[0] for i in ids}) == sorted(
            first_three
        )  # ids: {question}_p{ordering}_{format}
        expected = baseline_metrics(task, 3)
        for metric in ("acc", "consistency", "acc_fmt_label", "acc_pos_A"):
            assert results["results"][name][f"{metric},none"] == pytest.approx(expected[metric]), (name, metric)
    # The report reads the limit as one of the run's settings.
    (run,) = [r for r in lm_eval_runs(results, str(results_file)) if r.task == "monbench_cyclic_query_ad_relevance"]
    assert dict(run.settings)["questions"] == "3"


def test_limit_counts_runs_and_questions_counts_questions():
    task = "monbench_cyclic_product_co_purchase"

    def evaluate(limit=None, metadata=None):
        results = lm_eval.simple_evaluate(
            model="ecom-baseline",
            tasks=[task],
            limit=limit,
            bootstrap_iters=0,
            task_manager=task_manager(include_defaults=False, metadata=metadata or {}),
        )
        return results["n-samples"][task]["effective"], results["results"][task]["acc,none"]

    first_question = baseline_metrics("product_co_purchase", 1)["acc"]
    # --limit 12 is the first question's 12 runs: the same documents as questions=1, the same score.
    assert (
        evaluate(limit=CYCLIC_RUNS)
        == evaluate(metadata={"questions": 1})
        == (CYCLIC_RUNS, pytest.approx(first_question))
    )
    # --limit 3 is three runs of one question, not three questions.
    assert evaluate(limit=3)[0] == 3


@pytest.mark.parametrize("value", [0, -1, 2.5, "two", True, ""])
def test_a_bad_question_limit_is_a_configuration_error(value):
    with pytest.raises(ConfigurationError, match="MonBench questions must be a whole number of at least 1"):
        parse_questions(value)
    with pytest.raises(ConfigurationError):
        load_docs(["query_ad_relevance"], "canonical", ["label"], questions=value)


@pytest.mark.parametrize(("value", "expected"), [(None, None), (1, 1), ("4", 4), (4.0, 4), (1000, 1000)])
def test_question_limit_values(value, expected):
    assert parse_questions(value) == expected
    docs = load_docs(["query_ad_relevance"], "canonical", ["label"], questions=value)["test"]
    in_data = sum(r.task == "query_ad_relevance" for r in load_records(None, split="test"))
    assert len(docs) == min(expected or in_data, in_data)
