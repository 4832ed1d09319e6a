"""A model that only repeats its prompt earns nothing, in both frameworks (issue 26's acceptance).

The served model answers every prompt with a copy of that prompt, garbled the
way small models and base checkpoints garble their echoes (line by line:
upper, lower or title case, doubled or dropped spaces, markdown added, moved
or removed, lines run together or spread apart), starting at the top or at a
later line, and cut off by the token limit (finish reason ``length``) at a
point that depends on the prompt. A careful human gives every such reply no
credit: every reply is invalid and every score is 0, for RAIR, MonBench and
EcomEval (judged and exact), through Inspect's ``openai-api`` provider and
lm-eval's ``local-chat-completions`` (then ``ecom-tasks judge``). For the
judged EcomEval the same server is the grader too: its echo of the grader
prompt is a judge failure, never a grade.
"""

from __future__ import annotations

import json
import math
import random
import re
import zlib

import lm_eval
import lm_eval.models  # noqa: F401  (lm-eval's own models: registering ours first skips its lazy import)
import pytest
from helpers import lm_eval_logged
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model
from loopback.openai_server import Reply, last_user_text, serve_openai_compatible, system_text

from ecom_tasks import cli
from ecom_tasks.ecomeval.protocol import select
from ecom_tasks.ecomeval.schema import load_records as load_ecomeval_records
from ecom_tasks.inspect_evals.ecomeval import ecomeval, ecomeval_exact
from ecom_tasks.inspect_evals.monbench import monbench
from ecom_tasks.inspect_evals.rair import rair_general, rair_hard
from ecom_tasks.lm_eval_tasks import task_manager
from ecom_tasks.monbench.schema import TASKS
from ecom_tasks.monbench.scoring import unpack_question

#: The shortest copy served (characters of the garbled text).
MIN_COPY = 60


def _garble_line(line: str, rng: random.Random) -> str:
    change = rng.randrange(7)
    if change == 0:
        return line.upper()
    if change == 1:
        return line.lower()
    if change == 2:
        return line.title()
    if change == 3:
        return line.replace(" ", "  ").replace(": ", ":")
    if change == 4:
        return re.sub(r"\s*\*\*\s*", " ** ", line) if "**" in line else f"**{line}**"
    if change == 5:
        return "## " + line.replace("**", "")
    return re.sub(r"(\w{4,})", lambda m: f"`{m.group(1)}`" if rng.random() < 0.2 else m.group(1), line)


def garbled_copy(prompt: str, seed: int | None = None) -> str:
    """A garbled copy of ``prompt``, from its top or a later line, cut off: deterministic in the prompt
    (and ``seed``, for several copies of one prompt)."""
    rng = random.Random(zlib.crc32(prompt.encode("utf-8")) + (seed or 0))
    lines = prompt.split("\n")
    start = 0 if rng.random() < 0.5 else rng.randrange(len(lines))
    copy = ""
    for line in lines[start:]:
        copy += _garble_line(line, rng) + rng.choice(["\n", "\n\n", " ", "\n \n"])
    if len(copy) < MIN_COPY:  # a copy from a late line: take it from the top instead
        copy = "".join(_garble_line(line, rng) + "\n" for line in lines)
    return copy[: rng.randint(min(MIN_COPY, len(copy)), len(copy))]


def echo_policy(body: dict) -> Reply:
    return Reply(garbled_copy(f"{system_text(body)}\n\n{last_user_text(body)}"), "length")


def test_the_copies_are_garbled_and_cut_off():
    from ecom_tasks.rair.protocol import build_items
    from ecom_tasks.rair.rules import load_rules
    from ecom_tasks.rair.schema import load_records

    items = build_items(load_records(subset="general"), rules=load_rules("none"))
    copies = [garbled_copy(f"{item.system_prompt}\n\n{item.user_prompt}") for item in items]
    prompts = [f"{item.system_prompt}\n\n{item.user_prompt}" for item in items]
    assert all(copy not in prompt for copy, prompt in zip(copies, prompts))  # garbled: never verbatim
    assert sum(len(copy) < 0.9 * len(prompt) for copy, prompt in zip(copies, prompts)) > len(items) / 2  # cut off
    # The level definitions appear in many copies, and so do their levels: a parser reading levels in
    # prompt text would find answers.
    assert sum(bool(re.search(r"L[1-4]\s*\(", copy)) for copy in copies) > len(items) / 3


@pytest.fixture(scope="module")
def server():
    with serve_openai_compatible(echo_policy, model_name="echo") as served:
        yield served


def _model(server):
    # not memoized: Inspect caches models by name and base URL, and this server stops after the module
    return get_model("openai-api/vllm/echo", base_url=server.base_url, api_key="test-key", memoize=False)


def _lm_eval_rows(server, tasks: list[str], limit: int | None = None) -> dict[str, dict[str, float]]:
    """lm-eval's local-chat-completions against the echoing server: each task's metrics by name."""
    results = lm_eval.simple_evaluate(
        model="local-chat-completions",
        model_args=f"model=echo,base_url={server.chat_completions_url},num_concurrent=8",
        tasks=tasks,
        apply_chat_template=True,
        task_manager=task_manager(include_defaults=False),
        limit=limit,
        bootstrap_iters=0,
    )
    return {
        task: {key.split(",")[0]: value for key, value in row.items() if "," in key}
        for task, row in results["results"].items()
    }


def _metrics(log) -> dict[str, float]:
    assert log.status == "success", log.error
    return {name: m.value for score in log.results.scores for name, m in score.metrics.items()}


@pytest.mark.slow
def test_inspect_rair_gives_an_echo_nothing(server, tmp_path):
    logs = inspect_eval([rair_general(), rair_hard()], model=_model(server), log_dir=str(tmp_path), display="none")
    for log in logs:
        metrics = _metrics(log)
        assert (metrics["acc2"], metrics["acc4"], metrics["macro_f1"]) == (0.0, 0.0, 0.0), log.eval.task
        assert metrics["invalid_rate"] == 1.0 and metrics["truncated_rate"] == 1.0
        statuses = {s.scores["rair_scorer"].metadata["status"] for s in log.samples}
        assert statuses == {"no_label"}, statuses


@pytest.mark.slow
def test_lm_eval_rair_gives_an_echo_nothing(server):
    rows = _lm_eval_rows(server, ["rair_general", "rair_hard"])
    for task in ("rair_general", "rair_hard"):
        row = rows[task]
        assert (row["acc2"], row["acc4"], row["macro_f1"], row["invalid_rate"]) == (0.0, 0.0, 0.0, 1.0), task


@pytest.mark.slow
def test_inspect_monbench_gives_an_echo_nothing(server, tmp_path):
    (log,) = inspect_eval(
        monbench(design="cyclic", shots=1), model=_model(server), limit=8, log_dir=str(tmp_path), display="none"
    )
    metrics = _metrics(log)
    assert metrics["acc"] == 0.0 and metrics["invalid_rate"] == 1.0
    scores = [(sample.scores["monbench_scorer"].value, sample.metadata) for sample in log.samples]
    runs = [run for value, metadata in scores for run in unpack_question(value, metadata)]
    assert len(runs) == 8 * 12 and {run["invalid"] for run in runs} == {1} and {run["correct"] for run in runs} == {0}
    assert {sample.metadata["task"] for sample in log.samples} == set(TASKS)


@pytest.mark.slow
def test_lm_eval_monbench_gives_an_echo_nothing(server):
    rows = _lm_eval_rows(server, ["monbench_cyclic"], limit=24)  # the first two questions' 12 runs of each task
    for task in TASKS:
        row = rows[f"monbench_cyclic_{task}"]
        assert (row["acc"], row["invalid_rate"]) == (0.0, 1.0), task


# --- EcomEval: the echoing server is the evaluated model and the grader ----------------------------

GRADER = "grader"


def echo_or_grader_policy(body: dict) -> Reply:
    """The evaluated model echoes and is cut off; the grader echoes its prompt (or the judge's reminder) and
    stops on its own, so its reply reaches the grade parser instead of failing on the token limit."""
    reply = echo_policy(body)
    if body["model"].removeprefix("openai/") == GRADER:
        return Reply(reply.content, "stop")
    return reply


@pytest.fixture(scope="module")
def judged_server():
    with serve_openai_compatible(echo_or_grader_policy, model_name="echo") as served:
        yield served


def _ecomeval_judged_nothing(metrics: dict[str, float], statuses: list[str], items: int) -> None:
    """Every item a judge failure (never a grade), so no score and the headline marked unreliable."""
    from ecom_tasks.ecomeval.parsing import FAILURE_STATUSES

    assert len(statuses) == items and set(statuses) <= set(FAILURE_STATUSES), set(statuses)
    assert metrics["judge_failure_rate"] == 1.0 and metrics["score_unreliable"] == 1.0
    for key in ("score", "score_items"):  # no graded item: NaN (null in strict JSON), else 0
        assert metrics[key] is None or math.isnan(metrics[key]) or metrics[key] == 0.0, metrics


@pytest.mark.slow
def test_inspect_ecomeval_gives_an_echo_nothing_and_reads_no_grade_in_a_graders_echo(judged_server, tmp_path):
    grader = get_model(f"openai-api/vllm/{GRADER}", base_url=judged_server.base_url, api_key="test-key", memoize=False)
    (log,) = inspect_eval(
        ecomeval(cache=False),
        model=_model(judged_server),
        model_roles={"grader": grader},
        log_dir=str(tmp_path),
        display="none",
    )
    metrics = _metrics(log)
    statuses = [s.scores["ecomeval_judge"].metadata["status"] for s in log.samples]
    _ecomeval_judged_nothing(metrics, statuses, len(load_ecomeval_records()))
    replies = [r for s in log.samples for r in s.scores["ecomeval_judge"].metadata["grader_replies"]]
    assert all(replies) and len(replies) >= len(statuses)  # the grader answered (with echoes) every time


@pytest.mark.slow
def test_lm_eval_then_judge_gives_an_echo_nothing(judged_server, tmp_path, capsys):
    out = tmp_path / "out"
    lm_eval_logged(
        f"model=echo,base_url={judged_server.chat_completions_url},num_concurrent=8,max_images=10", ["ecomeval"], out
    )
    argv = ["judge", str(out), "--grader", f"openai/{GRADER}", "--api-base", judged_server.base_url]
    with pytest.raises(SystemExit) as exit_code:
        cli.main([*argv, "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    assert exit_code.value.code == 1  # the judge failed on every item: said, and not exit 0
    warning = capsys.readouterr().err
    items = len(load_ecomeval_records())
    assert f"the judge failed on {items} of {items} items (100.0%)" in warning and "score_unreliable" in warning
    [grades] = out.rglob("judge_grades_ecomeval_*.jsonl")
    statuses = [json.loads(line)["status"] for line in grades.read_text(encoding="utf-8").splitlines()]
    [results_file] = out.rglob("judge_results_ecomeval_*.json")
    metrics = json.loads(results_file.read_text(encoding="utf-8"))["metrics"]
    _ecomeval_judged_nothing(metrics, statuses, items)


@pytest.mark.slow
def test_inspect_ecomeval_exact_gives_an_echo_nothing(server, tmp_path):
    (log,) = inspect_eval(ecomeval_exact(), model=_model(server), log_dir=str(tmp_path), display="none")
    metrics = _metrics(log)
    assert metrics["score"] == 0.0 and metrics["score_items"] == 0.0
    explanations = {s.scores["ecomeval_exact_scorer"].explanation for s in log.samples}
    assert explanations == {"no exact match"} and len(log.samples) == len(select(load_ecomeval_records(), exact=True))


@pytest.mark.slow
def test_lm_eval_ecomeval_exact_gives_an_echo_nothing(server):
    row = _lm_eval_rows(server, ["ecomeval_exact"])["ecomeval_exact"]
    assert row["score"] == 0.0 and row["score_items"] == 0.0, row
