"""fan_out_generate: every run of a Sample asked with its own conversation, replies kept in run order,
and a per-solver cache that applies without the eval's (the cache argument is passed to generate() only
when given, with no private Inspect sentinel)."""

from __future__ import annotations

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import TaskState

from ecom_tasks.solvers.fan_out import FAN_OUT, fan_out_generate, fan_out_replies, fan_out_spec

SYSTEMS = {"terse": "Answer with one word.", "loud": "Answer in capitals."}
RUNS = [("r1", "terse", "colour of snow?"), ("r2", "loud", "colour of grass?"), ("r3", "terse", "colour of sky?")]


def scripted(calls: list[tuple[str, str]]):
    def output(input, tools, tool_choice, config):
        system, user = input[0].text, input[-1].text
        calls.append((system, user))
        word = {"snow": "white", "grass": "green", "sky": "blue"}[user.split()[-1].rstrip("?")]
        return ModelOutput.from_content(
            model="mockllm/model", content=word.upper() if system == SYSTEMS["loud"] else word
        )

    return get_model("mockllm/model", custom_outputs=output)


@scorer(metrics=[mean()])
def replies_in_order():
    async def score(state: TaskState, target: Target) -> Score:
        replies = fan_out_replies(state)
        return Score(
            value=1.0, answer=",".join(r["completion"] for r in replies.values()), metadata={"keys": list(replies)}
        )

    return score


def fan_out_task(cache=None) -> Task:
    sample = Sample(id="q1", input="colour of snow?", metadata={FAN_OUT: fan_out_spec(SYSTEMS, RUNS)})
    return Task(dataset=[sample], solver=fan_out_generate(cache=cache), scorer=replies_in_order())


def test_every_run_is_asked_with_its_own_system_prompt_and_kept_in_run_order(tmp_path):
    calls: list[tuple[str, str]] = []
    [log] = inspect_eval(fan_out_task(), model=scripted(calls), log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    assert sorted(calls) == sorted((SYSTEMS[system], user) for _, system, user in RUNS)
    [sample] = log.samples
    assert sample.scores["replies_in_order"].answer == "white,GREEN,blue"
    assert sample.scores["replies_in_order"].metadata["keys"] == ["r1", "r2", "r3"]
    assert sample.output.completion == "white"  # the Sample's own output is its first run's reply


def test_a_cache_given_to_the_solver_applies_without_the_evals(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    calls: list[tuple[str, str]] = []
    for attempt in ("a", "b"):
        [log] = inspect_eval(
            fan_out_task(cache=True), model=scripted(calls), log_dir=str(tmp_path / attempt), display="none"
        )
        assert log.status == "success"
    assert len(calls) == len(RUNS)  # the second eval answered every run from the cache
    # Without a cache of its own the solver follows the eval's setting: no cache here, so every run is asked again.
    for attempt in ("c", "d"):
        inspect_eval(fan_out_task(), model=scripted(calls), log_dir=str(tmp_path / attempt), display="none")
    assert len(calls) == 3 * len(RUNS)
