"""MonBench end to end through Inspect's eval() and lm-eval's simple_evaluate()."""

from __future__ import annotations

import lm_eval
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, get_model
from lm_eval.api.model import LM

from ecom_tasks.data import ConfigurationError
from ecom_tasks.inspect_evals.monbench import monbench
from ecom_tasks.lm_eval_tasks import task_manager
from ecom_tasks.lm_eval_tasks.models import EcomBaselineLM
from ecom_tasks.monbench.baseline import last_options_block, reply_in_requested_format, requested_format
from ecom_tasks.monbench.protocol import expand, runs_for
from ecom_tasks.monbench.schema import TASKS, load_records
from ecom_tasks.monbench.variants import TASK_VERSION


def reply_choosing(messages: list[tuple[str, str]], pick) -> str:
    """A reply in the requested format choosing ``pick(options)``."""
    _, options = last_options_block(messages[-1][1])
    return reply_in_requested_format(messages[0][1], options, pick(options))


def first_shown(messages):
    return reply_choosing(messages, lambda options: 0)


def oracle_policy():
    items = expand(load_records(split="test"), runs_for("full"))
    answers = {(i.system_prompt, i.user_prompt): i.target_answer for i in items}
    return lambda messages: answers[(messages[0][1].strip(), messages[-1][1])]


def scripted_inspect_model(policy):
    def output(input, tools, tool_choice, config):
        messages = [(m.role, m.text) for m in input]
        return ModelOutput.from_content(model="mockllm/model", content=policy(messages))

    return get_model("mockllm/model", custom_outputs=output)


def run_inspect(task, model, tmp_path, **eval_args):
    [log] = inspect_eval(task, model=model, log_dir=str(tmp_path), display="none", **eval_args)
    assert log.status == "success", log.error
    return {name: m.value for s in log.results.scores for name, m in s.metrics.items()}, log


@pytest.mark.parametrize(("design", "n_runs"), [("full", 72), ("cyclic", 12)])
def test_inspect_first_option_model_gets_exactly_a_quarter(design, n_runs, tmp_path):
    metrics, log = run_inspect(monbench(design=design), scripted_inspect_model(first_shown), tmp_path)
    questions = len(load_records(split="test"))
    # One Sample per question; its runs are generated inside it, one model event each.
    assert log.results.total_samples == questions
    assert all(len(sample.metadata["runs"]) == n_runs for sample in log.samples)
    model_events = [e for e in log.samples[0].events if e.event == "model"]
    assert len(model_events) == n_runs
    assert metrics["acc"] == pytest.approx(0.25)
    for task in TASKS:
        assert metrics[f"{task}/acc"] == pytest.approx(0.25)
        assert metrics[f"{task}/n_runs"] == n_runs
    assert metrics["acc_pos_A"] == 1.0
    assert metrics["acc_pos_B"] == metrics["acc_pos_C"] == metrics["acc_pos_D"] == 0.0
    assert metrics["consistency"] == 0.0
    assert metrics["invalid_rate"] == 0.0
    # Every question shows its answer first in exactly a quarter of the orderings, so every run is 0.25
    # only on average: the CI is computed over runs and is positive.
    assert metrics["acc_ci"] > 0


def test_inspect_oracle_model_is_right_in_every_run(tmp_path):
    metrics, log = run_inspect(monbench(design="full"), scripted_inspect_model(oracle_policy()), tmp_path)
    assert metrics["acc"] == 1.0
    assert metrics["acc_ci"] == 0.0
    assert metrics["consistency"] == 1.0
    for fmt in ("label", "content", "label_content"):
        assert metrics[f"acc_fmt_{fmt}"] == 1.0
    for sample in log.samples:
        value = sample.scores["monbench_scorer"].value
        assert all(value[f"{key}/correct"] == 1 for key in sample.metadata["runs"])
        assert sample.scores["monbench_scorer"].answer == "72/72 runs right"


def test_inspect_bad_replies_are_counted_not_raised(tmp_path):
    replies = iter(["", "no idea", "<Label>E</Label>", "<Label>A</Label><Label>B</Label>"] * 100)
    model = scripted_inspect_model(lambda messages: next(replies))
    metrics, log = run_inspect(monbench(task="query_query_intent", design="canonical"), model, tmp_path)
    assert metrics["acc"] == 0.0
    assert metrics["invalid_rate"] == 1.0
    statuses = {status for s in log.samples for status in s.scores["monbench_scorer"].metadata["answers"].values()}
    assert statuses >= {"no_tag", "out_of_range", "conflicting_tags"}


def test_inspect_label_content_disagreement_is_graded_by_the_label_and_counted(tmp_path):
    def mismatching(messages):
        _, options = last_options_block(messages[-1][1])
        return f"<Label>A</Label> <Answer>{options[1]}</Answer>"

    records = load_records(None, split="test", tasks=["query_query_intent"])
    answered_a = sum(r.answer == 0 for r in records) / len(records)  # canonical order: the label A is right
    assert answered_a == 2 / 10
    task = monbench(task="query_query_intent", design="canonical", formats="label_content")
    metrics, _ = run_inspect(task, scripted_inspect_model(mismatching), tmp_path / "lenient")
    assert metrics["acc"] == pytest.approx(answered_a)
    assert metrics["mismatch_rate"] == 1.0
    assert metrics["invalid_rate"] == 0.0
    # The strict reading: wrong unless both tags name the right option.
    strict = monbench(task="query_query_intent", design="canonical", formats="label_content", strict=True)
    metrics, _ = run_inspect(strict, scripted_inspect_model(mismatching), tmp_path / "strict")
    assert metrics["acc"] == 0.0
    assert metrics["mismatch_rate"] == 1.0
    assert metrics["invalid_rate"] == 0.0


def test_inspect_task_args_are_recorded_and_shots_reach_the_prompt(tmp_path, monkeypatch):
    # Away from the repo root, where "ecom_tasks/monbench" is also a folder that eval() would treat as a path.
    monkeypatch.chdir(tmp_path)
    seen = []

    def recording(messages):
        seen.append(messages[0][1])
        return first_shown(messages)

    [log] = inspect_eval(
        "ecom_tasks/monbench",
        task_args={"task": "query_ad_relevance", "design": "canonical", "formats": "label", "shots": 5},
        model=scripted_inspect_model(recording),
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success"
    assert log.eval.task_args["shots"] == 5 and log.eval.task_args["design"] == "canonical"
    assert all(s.count("Here are some examples") == 1 for s in seen)
    assert len(set(seen)) == 1
    # The shots and the reading are in the log's eval.metadata, where the report reads them.
    recorded = {key: log.eval.metadata[key] for key in ("benchmark", "shots", "strict", "tasks", "design", "formats")}
    assert "parsing" not in log.eval.metadata  # both readings are in every run
    assert recorded == {
        "benchmark": "monbench",
        "shots": 5,
        "strict": False,
        "tasks": ["query_ad_relevance"],
        "design": "canonical",
        "formats": ["label"],
    }
    assert log.eval.task_version == TASK_VERSION


@pytest.mark.parametrize(("shots", "expected"), [(None, 0), ("1", 1), (5, 5)])
def test_inspect_every_log_records_its_shots(shots, expected, tmp_path):
    args = {} if shots is None else {"shots": shots}
    task = monbench(task="query_query_intent", design="canonical", **args)
    _, log = run_inspect(task, scripted_inspect_model(first_shown), tmp_path)
    assert log.eval.metadata["shots"] == expected


def test_inspect_run_reports_the_strict_reading_beside_the_careful_one(tmp_path):
    def dressed_letter(messages):  # "<Label>A. Substitute</Label>": the first option with its text
        _, options = last_options_block(messages[-1][1])
        return f"<Label>A. {options[0]}</Label>"

    records = load_records(None, split="test", tasks=["query_query_intent"])
    answered_a = sum(r.answer == 0 for r in records) / len(records)  # canonical order
    assert answered_a > 0
    args = {"task": "query_query_intent", "design": "canonical", "formats": "label"}
    metrics, _ = run_inspect(monbench(**args), scripted_inspect_model(dressed_letter), tmp_path)
    assert (metrics["acc"], metrics["invalid_rate"]) == (pytest.approx(answered_a), 0.0)
    # The strict reading takes only a bare letter in <Label>: every reply is invalid there.
    assert (metrics["acc_strict"], metrics["invalid_rate_strict"]) == (0.0, 1.0)


def test_unknown_task_parameter_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown MonBench task 'ads'"):
        monbench(task="ads")
    with pytest.raises(ConfigurationError, match="shots must be one of 0, 1, 5, got 3"):
        monbench(shots=3)
    with pytest.raises(TypeError, match="parsing"):  # the setting is gone: both readings are in every run
        monbench(parsing="strict")


class ScriptedLM(LM):
    """An lm-eval model answering from a policy over (role, text) messages."""

    def __init__(self, policy):
        super().__init__()
        self.policy = policy

    def generate_until(self, requests, disable_tqdm=False):
        out = []
        for request in requests:
            messages = EcomBaselineLM._messages(request.args[0])
            if len(messages) == 1:  # plain context: system prompt, blank line, question
                system, _, user = messages[0][1].rpartition("\n\n")
                messages = [("system", system), ("user", user)]
            out.append(self.policy(messages))
        return out

    def loglikelihood(self, requests, disable_tqdm=False):
        raise NotImplementedError

    def loglikelihood_rolling(self, requests, disable_tqdm=False):
        raise NotImplementedError


def run_lm_eval(model, tasks):
    results = lm_eval.simple_evaluate(
        model=model, tasks=tasks, task_manager=task_manager(include_defaults=False), bootstrap_iters=0
    )
    return {name: {k.split(",")[0]: v for k, v in m.items() if "," in k} for name, m in results["results"].items()}


def test_lm_eval_first_option_model_gets_exactly_a_quarter():
    results = run_lm_eval(ScriptedLM(first_shown), ["monbench_perm"])
    for task in TASKS:
        row = results[f"monbench_perm_{task}"]
        assert row["acc"] == pytest.approx(0.25)
        assert row["acc_pos_A"] == 1.0 and row["acc_pos_D"] == 0.0
    assert results["monbench_perm"]["acc"] == pytest.approx(0.25)


@pytest.mark.parametrize(("metadata", "shots"), [({}, 0), ({"shots": "5"}, 5)])
def test_lm_eval_results_record_shots(metadata, shots):
    results = lm_eval.simple_evaluate(
        model=ScriptedLM(first_shown),
        tasks=["monbench_canonical"],
        task_manager=task_manager(include_defaults=False, metadata=metadata),
        bootstrap_iters=0,
    )
    for task in TASKS:
        recorded = results["configs"][f"monbench_canonical_{task}"]["metadata"]
        assert (recorded["shots"], recorded["version"]) == (shots, float(TASK_VERSION))


def first_option_with_text(messages):
    """``A. <first shown option>`` in every requested tag (the loopback test's model, in-process)."""
    _, options = last_options_block(messages[-1][1])
    wants_label, wants_answer = requested_format(messages[0][1])
    tags = (["<Label>A. {}</Label>"] if wants_label else []) + (["<Answer>A. {}</Answer>"] if wants_answer else [])
    return " ".join(tag.format(options[0]) for tag in tags)


def test_lm_eval_run_reports_both_readings():
    # Every question is right in 18 of its 72 runs (tests/test_monbench_http_grading.py); the strict
    # reading keeps only the 6 Content runs among them. limit=72: each task's first question.
    results = lm_eval.simple_evaluate(
        model=ScriptedLM(first_option_with_text),
        tasks=["monbench_perm"],
        limit=len(runs_for("full")),
        task_manager=task_manager(include_defaults=False),
        bootstrap_iters=0,
    )["results"]
    for task in TASKS:
        row = results[f"monbench_perm_{task}"]
        assert (row["acc,none"], row["invalid_rate,none"]) == (pytest.approx(0.25), 0.0), task
        assert row["acc_strict,none"] == pytest.approx(6 / 72), task
        assert row["invalid_rate_strict,none"] == pytest.approx(48 / 72), task


def test_lm_eval_oracle_model_is_right_in_every_run():
    results = run_lm_eval(ScriptedLM(oracle_policy()), ["monbench_perm"])
    for task in TASKS:
        assert results[f"monbench_perm_{task}"]["acc"] == 1.0
        assert results[f"monbench_perm_{task}"]["consistency"] == 1.0
        assert results[f"monbench_perm_{task}"]["acc_ci"] == 0.0


def test_baseline_scores_identically_in_both_frameworks(tmp_path):
    results = lm_eval.simple_evaluate(
        model="ecom-baseline",
        tasks=["monbench_perm"],
        task_manager=task_manager(include_defaults=False, metadata={}),
        bootstrap_iters=0,
    )
    assert results is not None
    full_metrics, _ = run_inspect(monbench(design="full"), "ecom/baseline", tmp_path)
    lm = {name: {k.split(",")[0]: v for k, v in m.items() if "," in k} for name, m in results["results"].items()}
    for task in TASKS:
        assert lm[f"monbench_perm_{task}"]["acc"] == pytest.approx(full_metrics[f"{task}/acc"])
        assert lm[f"monbench_perm_{task}"]["acc_ci"] == pytest.approx(full_metrics[f"{task}/acc_ci"])
    assert lm["monbench_perm"]["acc"] == pytest.approx(full_metrics["acc"])
    # The baseline is lexical, not random: it beats the 0.25 chance level on the fixtures.
    assert full_metrics["acc"] > 0.3


def test_tasks_are_registered_under_the_package_namespace():
    # Fails when a stale ecom_tasks.egg-info on sys.path (a setuptools build left in the checkout)
    # hides the editable install from Inspect; delete it (tests/test_inspect_task_declarations.py).
    from inspect_ai.util import registry_info

    assert registry_info(monbench).name == "ecom_tasks/monbench"


def test_epochs_are_reduced_by_mean(tmp_path):
    # Epoch 1 always right, epoch 2 always wrong: every sample reduces to 0.5 correct.
    oracle = oracle_policy()
    calls: dict[tuple[str, str], int] = {}

    def alternating(messages):
        key = (messages[0][1], messages[-1][1])
        calls[key] = calls.get(key, 0) + 1
        return oracle(messages) if calls[key] == 1 else "no answer"

    task = monbench(task="query_query_intent", design="cyclic", formats="label")
    [log] = inspect_eval(
        task, model=scripted_inspect_model(alternating), epochs=2, log_dir=str(tmp_path), display="none"
    )
    metrics = {name: m.value for s in log.results.scores for name, m in s.metrics.items()}
    assert log.eval.config.epochs == 2
    assert metrics["acc"] == pytest.approx(0.5)
    assert metrics["invalid_rate"] == pytest.approx(0.5)
    assert metrics["consistency"] == 0.0  # wrong in one epoch is not right in every run
    assert metrics["n_items"] == 4 * len(load_records(split="test", tasks=["query_query_intent"]))


@pytest.mark.slow
def test_epochs_of_the_same_replies_give_every_number_of_one_epoch(tmp_path):
    # A score holds only its runs' numbers; a question's task and category reach the metrics from its
    # sample's metadata, which Inspect keeps through epoch reduction.
    def metrics(epochs):
        task = monbench(design="cyclic", formats="label", category_weights='{"1": 0.5, "2": 0.3, "5": 0.2}')
        [log] = inspect_eval(
            task, model=get_model("ecom/baseline"), epochs=epochs, log_dir=str(tmp_path), display="none"
        )
        return {name: m.value for s in log.results.scores for name, m in s.metrics.items() if m.value == m.value}

    one = metrics(1)
    assert metrics(3) == one
    assert len({one[f"{task}/acc"] for task in TASKS}) == 4 and one["acc_reweighted"] > 0  # groups that differ


def test_an_interrupted_run_resumes_without_asking_finished_questions_again(tmp_path, monkeypatch):
    from inspect_ai import eval_retry
    from loopback.openai_server import RequestRejected, last_user_text, serve_openai_compatible

    records = load_records(split="test", tasks=["query_query_intent"])
    last = records[-1]
    asked: list[str] = []
    server_down_for_last = [True]

    def policy(body):
        user = last_user_text(body)
        asked.append(user)
        if server_down_for_last[0] and last.question in user:
            raise RequestRejected("the server cannot answer this one now")
        return first_shown([("system", body["messages"][0]["content"]), ("user", user)])

    runs = len(runs_for("cyclic"))
    with serve_openai_compatible(policy, model_name="flaky") as server:
        monkeypatch.setenv("VLLM_BASE_URL", server.base_url)
        monkeypatch.setenv("VLLM_API_KEY", "x")
        task = monbench(task="query_query_intent", design="cyclic")
        [log] = inspect_eval(task, model="openai-api/vllm/flaky", log_dir=str(tmp_path), display="none", max_samples=1)
        assert log.status == "error"
        finished = [text for text in asked if last.question not in text]
        assert len(finished) == (len(records) - 1) * runs  # every other question was asked in full

        asked.clear()
        server_down_for_last[0] = False
        [retried] = eval_retry(log, log_dir=str(tmp_path), display="none")
    assert retried.status == "success"
    assert len(asked) == runs and all(last.question in text for text in asked)  # only the unfinished question
    metrics = {name: m.value for s in retried.results.scores for name, m in s.metrics.items()}
    assert metrics["acc"] == pytest.approx(0.25) and metrics["n_items"] == len(records) * runs


def test_the_model_cache_works_per_run(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    calls: list[str] = []

    def counting(messages):
        calls.append(messages[-1][1])
        return first_shown(messages)

    task = monbench(task="query_query_intent", design="cyclic", formats="label")
    expected_calls = 4 * len(load_records(split="test", tasks=["query_query_intent"]))
    first, _ = run_inspect(task, scripted_inspect_model(counting), tmp_path / "a", cache=True)
    assert len(calls) == expected_calls
    again, _ = run_inspect(task, scripted_inspect_model(counting), tmp_path / "b", cache=True)
    assert len(calls) == expected_calls  # every run answered from the cache: no new model call
    assert again["acc"] == first["acc"] == pytest.approx(0.25)
