"""EcomEval's Inspect solvers and scorers one at a time, each in a small Task run by Inspect's eval():
``require_grader``, ``gold_response``, ``ecomeval_exact_scorer`` and ``ecomeval_judge_meta_scorer``.
(The whole tasks that combine them are in tests/test_ecomeval_e2e.py.)"""

from __future__ import annotations

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.solver import generate

from ecom_tasks.ecomeval.prompts import read_grader_prompt
from ecom_tasks.ecomeval.schema import load_judge_cases
from ecom_tasks.inspect_evals.ecomeval import GRADERS, ecomeval_dataset, ecomeval_exact_scorer
from ecom_tasks.inspect_evals.ecomeval_judge_meta import ecomeval_judge_meta_scorer
from ecom_tasks.scorers.inspect_judge import gold_response, require_grader


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))


def scripted(reply, name: str = "model"):
    """A mockllm model answering ``reply(text of the last user message)``; its calls are counted."""
    calls = []

    def output(input, tools, tool_choice, config):
        calls.append(input[-1].text)
        return ModelOutput.from_content(model="mockllm/model", content=reply(input[-1].text))

    model = get_model(f"mockllm/{name}", custom_outputs=output, memoize=False)
    model.calls = calls  # type: ignore[attr-defined]
    return model


def case_samples(cases) -> list[Sample]:
    """Judge gold cases as the meta-eval's samples: the fixed response and the expected grade in metadata."""
    return [
        Sample(
            id=c.id,
            input=c.question,
            target=c.reference,
            metadata={
                "question": c.question,
                "reference": c.reference,
                "response": c.response,
                "expected_grade": c.expected_grade,
                "kind": c.kind,
                "source": c.source,
            },
        )
        for c in cases
    ]


def metrics_of(log) -> dict[str, float]:
    assert log.status == "success", log.error
    return {name: m.value for s in log.results.scores for name, m in s.metrics.items()}


def test_require_grader_stops_a_sample_before_the_model_without_a_grader(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = scripted(lambda text: "an answer")
    one = Task(dataset=[Sample(input="Which size fits?", target="C")], solver=[require_grader(**GRADERS), generate()])
    (log,) = inspect_eval(one, model=model, log_dir=str(tmp_path), display="none")
    assert log.status == "error" and "--model-role grader=" in log.error.message and model.calls == []
    # A grader role, a panel role or a named grader lets the sample run.
    for roles, graders in (
        ({"grader": "mockllm/model"}, None),
        ({"grader_1": "mockllm/model"}, None),
        ({}, "mockllm/model"),
    ):
        task = Task(
            dataset=[Sample(input="Which size fits?", target="C")],
            solver=[require_grader(graders, **GRADERS), generate()],
        )
        (log,) = inspect_eval(task, model=model, model_roles=roles or None, log_dir=str(tmp_path), display="none")
        assert log.status == "success", (roles, graders, log.error)
    assert len(model.calls) == 3


def test_gold_response_is_the_output_and_the_model_is_never_called(tmp_path):
    model = scripted(lambda text: "the model's own answer")
    samples = [
        Sample(input="q1", metadata={"response": "Final Score: 3"}),
        Sample(input="q2", metadata={"response": ""}),
    ]
    (log,) = inspect_eval(
        Task(dataset=samples, solver=gold_response()), model=model, log_dir=str(tmp_path), display="none"
    )
    assert log.status == "success" and model.calls == []
    assert [s.output.completion for s in log.samples] == ["Final Score: 3", ""]


def test_exact_scorer_grades_a_match_3_and_anything_else_0(tmp_path):
    # shopping_guide's exact-answer items: paper-D3 (C), syn-qa-en-laptop-bag (C), syn-qa-th-rice-cooker (C).
    dataset = ecomeval_dataset(exact=True, task="shopping_guide")
    assert sorted(s.id for s in dataset) == ["paper-D3", "syn-qa-en-laptop-bag", "syn-qa-th-rice-cooker"]
    replies = {
        "paper-D3": "**Answer: C**",  # markdown around the stated option
        "syn-qa-en-laptop-bag": "C. 15.6-inch or larger",
        "syn-qa-th-rice-cooker": "B",  # wrong option
    }
    by_question = {s.input[0].text: s.id for s in dataset}
    model = scripted(lambda text: replies[by_question[text]])
    (log,) = inspect_eval(
        Task(dataset=dataset, solver=generate(), scorer=ecomeval_exact_scorer()),
        model=model,
        log_dir=str(tmp_path),
        display="none",
    )
    grades = {s.id: s.scores["ecomeval_exact_scorer"].value["grade"] for s in log.samples}
    assert grades == {"paper-D3": 3, "syn-qa-en-laptop-bag": 3, "syn-qa-th-rice-cooker": 0}
    m = metrics_of(log)
    assert m["score"] == pytest.approx(200 / 3) and m["score_items"] == pytest.approx(200 / 3) and m["n"] == 3
    assert "judge_failure_rate" not in m or m["judge_failure_rate"] == 0.0


def test_judge_meta_scorer_compares_the_graders_grade_with_the_expected_one(tmp_path):
    cases = list(load_judge_cases())[:4]
    # The grader gives the expected grade to the first two cases, expected + 2 (capped at 3) or - 2 to the third,
    # and nonsense to the fourth (twice: a judge failure).
    off = {cases[2].id: (cases[2].expected_grade + 2) if cases[2].expected_grade <= 1 else cases[2].expected_grade - 2}
    by_response = {(c.question, c.response): c for c in cases}

    def judge(text):
        question, _, response = read_grader_prompt(text) or (None, None, None)
        if question is None:  # a retry after nonsense carries the original prompt first; keep it nonsense
            return "no idea"
        case = by_response[(question, response)]
        if case.id == cases[3].id:
            return "no idea"
        return f"Final Score: {off.get(case.id, case.expected_grade)}"

    samples = case_samples(cases)
    grader = scripted(judge, name="meta-judge")
    task = Task(dataset=samples, solver=gold_response(), scorer=ecomeval_judge_meta_scorer())
    (log,) = inspect_eval(task, model="none", model_roles={"grader": grader}, log_dir=str(tmp_path), display="none")
    m = metrics_of(log)
    assert m["n"] == 4 and m["judge_failure_rate"] == pytest.approx(1 / 4)
    assert m["agreement"] == pytest.approx(2 / 3) and m["mae"] == pytest.approx(2 / 3)  # |diff| 0, 0, 2 over 3 graded
    scores = {s.id: s.scores["ecomeval_judge_meta_scorer"] for s in log.samples}
    assert scores[cases[0].id].metadata["expected_grade"] == cases[0].expected_grade
    assert scores[cases[3].id].answer == "no_grade"


def test_a_panel_named_by_graders_uses_those_roles_and_refuses_an_unknown_name(tmp_path):
    cases = list(load_judge_cases())[:3]
    samples = case_samples(cases)
    right = scripted(
        lambda text: (
            f"Final Score: {next(c.expected_grade for c in cases if read_grader_prompt(text)[2] == c.response)}"
        ),
        name="right",
    )
    harsh = scripted(lambda text: "Final Score: 0", name="harsh")
    unused = scripted(lambda text: "Final Score: 3", name="unused")
    roles = {"strict": harsh, "careful": right, "grader": unused}
    task = Task(dataset=samples, solver=gold_response(), scorer=ecomeval_judge_meta_scorer(graders="careful,strict"))
    (log,) = inspect_eval(task, model="none", model_roles=roles, log_dir=str(tmp_path), display="none")
    m = metrics_of(log)
    assert len(right.calls) == len(harsh.calls) == 3 and unused.calls == []  # the named roles only
    assert m["careful/agreement"] == 1.0
    assert m["strict/agreement"] == pytest.approx(sum(c.expected_grade == 0 for c in cases) / 3)
    # Median of an even panel: the mean of the two grades.
    assert m["mae"] == pytest.approx(sum(abs(c.expected_grade / 2 - c.expected_grade) for c in cases) / 3)

    typo = Task(
        dataset=samples[:1], solver=gold_response(), scorer=ecomeval_judge_meta_scorer(graders="careful,strikt")
    )
    (log,) = inspect_eval(typo, model="none", model_roles=roles, log_dir=str(tmp_path), display="none")
    assert log.status == "error" and "'strikt' is neither a model role of this run" in log.error.message


def test_the_graders_are_resolved_once_per_run_and_before_any_model_call(tmp_path, monkeypatch):
    """Nothing is checked when the task is built (a notebook builds ecomeval() after another eval(); its
    roles come with its own run). The setup solver resolves the run's graders once, the scorer reuses
    them; without a grader, a task built in Python or by name stops before the evaluated model is called."""
    from ecom_tasks.inspect_evals.ecomeval import ecomeval
    from ecom_tasks.scorers import inspect_judge

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    plans = []
    plan = inspect_judge._grader_plan
    monkeypatch.setattr(inspect_judge, "_grader_plan", lambda *args: plans.append(args) or plan(*args))
    task = ecomeval(task="shopping_guide")
    grader = scripted(lambda text: "Final Score: 3", name="notebook-judge")
    (log,) = inspect_eval(
        task, model=scripted(lambda text: "C"), model_roles={"grader": grader}, log_dir=str(tmp_path), display="none"
    )
    assert metrics_of(log)["score"] == 100.0 and len(grader.calls) == 3 and len(plans) == 1
    for built, args in ((ecomeval(category="ecom_qa"), {}), ("ecom_tasks/ecomeval", {"category": "ecom_qa"})):
        model = scripted(lambda text: "C")
        (log,) = inspect_eval(built, task_args=args, model=model, log_dir=str(tmp_path), display="none")
        assert log.status == "error" and "--model-role grader=" in log.error.message and model.calls == []
