"""``ecom-tasks build rmir`` end to end: the offline baseline on the bundled seeds (its data set passes
``validate`` and runs through ``ecom_tasks/rmir``), a loopback panel with scripted votes checked
against hand-computed decisions, pool, TSR and split, re-assembly with other thresholds at zero
model calls, and a build killed mid-judging that re-asks only the unfinished triplets.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from helpers import check_ok, offline_env, run_cli
from inspect_ai import eval as inspect_eval
from inspect_ai.log import list_eval_logs, read_eval_log
from loopback.openai_server import last_user_text, serve_openai_compatible

from ecom_tasks.construction import file_sha256, read_jsonl
from ecom_tasks.data import ConfigurationError, fixtures_dir
from ecom_tasks.rmir.construction import prompts
from ecom_tasks.rmir.construction.pipeline import BuildOptions, build
from ecom_tasks.rmir.schema import load_data, load_every_split

FIXTURE_IMAGES = fixtures_dir("rmir") / "images"


def _stage(text: str) -> str:
    for name, start in (
        ("generate", prompts.GENERATION_INSTRUCTIONS),
        ("filter", prompts.FILTER_INSTRUCTIONS),
        ("judge", prompts.JUDGE_INSTRUCTIONS),
    ):
        if text.startswith(start[:80]):
            return name
    raise AssertionError(f"not a construction prompt: {text[:80]!r}")


def _captions(text: str) -> list[str]:
    return [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith(prompts.CAPTION_LABEL)]


def _query(text: str) -> str:
    return next(
        line[len(prompts.QUERY_LABEL) :].strip() for line in text.splitlines() if line.startswith(prompts.QUERY_LABEL)
    )


# --- the offline baseline on the bundled seeds ------------------------------------------------------


@pytest.mark.slow
def test_baseline_builds_a_dataset_that_validates_and_runs_through_rmir(tmp_path, capsys):
    out = tmp_path / "build"
    result = build(BuildOptions(out=out, model="ecom/baseline", captions=True, stage_options={"display": "none"}))
    printed = capsys.readouterr().out
    # Costs before each stage: 13 input images, 39 generated queries, 92 triplets x 5 judges on these seeds.
    generated = read_jsonl(out / "work" / "generated.jsonl")
    triplets = read_jsonl(out / "work" / "triplets.jsonl")
    filtered = read_jsonl(out / "work" / "filtered.jsonl")
    assert "stage 1/4 generate: 13 items = 13 model calls" in printed
    assert f"stage 2/4 filter: {len(generated)} items = {len(generated)} model calls" in printed
    assert f"stage 3/4 retrieve: {len(filtered)} items, no model call" in printed
    assert f"stage 4/4 judge: {len(triplets)} items x 5 judges = {5 * len(triplets)} model calls" in printed
    assert len(generated) == 39  # the baseline writes a pair for every category when it has a caption
    # The baseline's filter rejects a query naming a word of its target: its temporal template does ("hours").
    assert {r["category"] for r in generated if r not in filtered} == {"temporal"}
    # Each stage's log records its inputs' sha256 (task arguments), equal to the files read.
    for name, input_file in (
        ("generate", "inputs.jsonl"),
        ("filter", "generated.jsonl"),
        ("retrieve", "filtered.jsonl"),
        ("judge", "triplets.jsonl"),
    ):
        args = result.logs[name].eval.task_args
        assert args["input_sha256"] == file_sha256(out / "work" / input_file)
        assert args["seeds_sha256"] == file_sha256(fixtures_dir("rmir") / "seeds.jsonl")
        assert result.logs[name].eval.metadata["benchmark"] == "rmir_build"
    # A deterministic panel is unanimous: nothing is uncertain, every decision has confidence 1.0.
    counts = result.assembly.counts()
    assert counts["uncertain"] == 0 and counts["positive"] > 0 and counts["negative"] > 0
    assert {d.vote.confidence for d in result.assembly.decisions.values()} == {1.0}

    data = result.data
    splits = load_every_split(data)
    assert sum(len(s.queries) for s in splits) == counts["queries"]
    pool_ids = {p["id"] for p in read_jsonl(data / "pool.jsonl")}
    assert pool_ids == {pid for q in result.assembly.queries for pid in q.positives}
    test = load_data(data, split="test")
    [log] = inspect_eval(
        "ecom_tasks/rmir",
        model="none",
        task_args={"data": str(data)},
        display="none",
        log_dir=str(tmp_path / "rmir-logs"),
    )
    assert log.status == "success"
    assert log.results.total_samples == len(test.queries)
    assert 0.0 <= log.results.scores[0].metrics["recall@20"].value <= 1.0
    check_ok(run_cli(["ecom-tasks", "validate", "rmir", str(data)]))


# --- a loopback panel with scripted votes -------------------------------------------------------------

#: seed id -> caption; BM25 over these ranks "zebra": z3, z2, then z1 and zg tied (table order), and
#: "giraffe": g2, then g1 and zg tied (every caption has four words, so term counts decide).
SCENARIO_SEEDS = {
    "in1": "watering hole dusk",
    "z3": "zebra zebra zebra stripe",
    "z2": "zebra zebra stripe stripe",
    "z1": "zebra stripe stripe stripe",
    "g2": "giraffe giraffe neck neck",
    "g1": "giraffe neck neck neck",
    "zg": "zebra giraffe stripe neck",
    "grass": "plain field grass grass",
}
ZEBRA_QUERY = "Which striped animal drinks here at dawn?"
GIRAFFE_QUERY = "Which tall animal drinks here at noon?"
GENERATION_REPLY = (
    "<image>a watering hole</image>\n"
    f"<functional>\n<query>{ZEBRA_QUERY}</query>\n<target>zebra</target>\n<reasoning>r</reasoning>\n</functional>\n"
    f"<temporal>\n<query>{GIRAFFE_QUERY}</query>\n<target>giraffe</target>\n<reasoning>r</reasoning>\n</temporal>\n"
    "<causal>ABSTAIN</causal>"
)
#: (query, candidate) -> the five judges' votes.
SCRIPTED_VOTES = {
    (ZEBRA_QUERY, "z3"): ["True"] * 5,
    (ZEBRA_QUERY, "z2"): ["True"] * 4 + ["False"],  # confidence 0.8: uncertain at 1.0
    (ZEBRA_QUERY, "z1"): ["False"] * 5,
    (ZEBRA_QUERY, "zg"): ["True"] * 5,  # positive here, but uncertain for the giraffe query: removed
    (GIRAFFE_QUERY, "g2"): ["True"] * 5,
    (GIRAFFE_QUERY, "g1"): ["ABSTAIN"] * 3 + ["True"] * 2,  # an ABSTAIN majority: uncertain
    (GIRAFFE_QUERY, "zg"): ["False"] * 4 + ["True"],
}


def scenario_seeds(folder: Path) -> Path:
    images = sorted(FIXTURE_IMAGES.glob("*.png"))
    (folder / "images").mkdir(parents=True)
    rows = []
    for (seed, caption), image in zip(SCENARIO_SEEDS.items(), images):
        shutil.copy(image, folder / "images" / f"{seed}.png")
        rows.append({"id": seed, "image": f"images/{seed}.png", "description": caption, "input": seed == "in1"})
    (folder / "seeds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def scripted_policy(body) -> str:
    text = last_user_text(body)
    stage = _stage(text)
    if stage == "generate":
        return GENERATION_REPLY
    if stage == "filter":
        return "<reasoning>fine</reasoning>\n<verdict>yes</verdict>"
    judge = int(body["model"].rsplit("-", 1)[-1])
    candidate = next(seed for seed, caption in SCENARIO_SEEDS.items() if caption == _captions(text)[-1])
    vote = SCRIPTED_VOTES[(_query(text), candidate)][judge - 1]
    return f"<candidate>c</candidate>\n<reasoning>scripted</reasoning>\n<verdict>{vote}</verdict>"


def build_command(seeds: Path, out: Path, *extra: str) -> list[str]:
    roles = [arg for i in range(1, 6) for arg in ("--model-role", f"judge_{i}=openai-api/loop/judge-{i}")]
    return [
        "ecom-tasks",
        "build",
        "rmir",
        "--seeds",
        str(seeds),
        "--out",
        str(out),
        "--model",
        "openai-api/loop/writer",
        *roles,
        "--captions",
        "--k",
        "4",
        "--display",
        "none",
        *extra,
    ]


def loop_env(server) -> dict[str, str]:
    return {"LOOP_BASE_URL": server.base_url, "LOOP_API_KEY": "none"}


@pytest.mark.slow
def test_scripted_panel_gives_the_hand_computed_dataset_and_thresholds_change_without_calls(tmp_path):
    seeds = scenario_seeds(tmp_path / "seeds")
    out = tmp_path / "build"
    with serve_openai_compatible(scripted_policy) as server:
        proc = check_ok(
            run_cli(build_command(seeds, out, "--tsr-threshold", "0.5"), env=loop_env(server), cwd=tmp_path)
        )
        by_stage = [_stage(last_user_text(b)) for b in server.requests]
    # 1 image, 2 queries (causal abstained), (4 + 3) triplets x 5 judges
    assert by_stage.count("generate") == 1 and by_stage.count("filter") == 2 and by_stage.count("judge") == 35
    assert "stage 4/4 judge: 7 items x 5 judges = 35 model calls" in proc.stdout
    triplets = read_jsonl(out / "work" / "triplets.jsonl")
    assert [(t["candidate"], t["image_rank"]) for t in triplets] == [
        ("z3", 1),
        ("z2", 2),
        ("z1", 3),
        ("zg", 4),
        ("g2", 1),
        ("g1", 2),
        ("zg", 3),
    ]
    queries = {q["id"]: q for q in read_jsonl(out / "data" / "queries.jsonl")}
    pool = [p["id"] for p in read_jsonl(out / "data" / "pool.jsonl")]
    # Uncertain triplets (z2: 4 True + 1 False; g1: ABSTAIN majority; zg for the giraffe: 4 False + 1 True)
    # remove their images everywhere, so the zebra query keeps z3 alone.
    assert queries["in1-functional"]["positives"] == ["z3"]
    assert queries["in1-temporal"]["positives"] == ["g2"]
    assert pool == ["z3", "g2"]
    # TSR, K = 4. Zebra: negativeness [0, 0 (1/5 < half), 1, 0]; tails 1/4, 1/3, 1/2, 0 -> 13/48.
    # Giraffe: [0, 0, 0.8, 1 (padding)]; tails 0.45, 0.6, 0.9, 1 -> 0.7375.
    assert queries["in1-functional"]["tsr"] == pytest.approx(13 / 48, abs=1e-6)
    assert queries["in1-temporal"]["tsr"] == pytest.approx(0.7375, abs=1e-6)
    assert (queries["in1-functional"]["split"], queries["in1-temporal"]["split"]) == ("train", "test")
    assert [len(s.queries) for s in load_every_split(out / "data")] == [1, 1]  # what ecom-tasks validate loads

    # Other thresholds: the same command re-assembles the logged votes; no model is asked.
    with serve_openai_compatible(scripted_policy) as server:
        check_ok(
            run_cli(
                build_command(seeds, out, "--confidence", "0.8", "--tsr-threshold", "0.8"),
                env=loop_env(server),
                cwd=tmp_path,
            )
        )
        assert server.requests == []
    queries = {q["id"]: q for q in read_jsonl(out / "data" / "queries.jsonl")}
    # At 0.8, z2 (4 of 5 True) is a positive and zg's 4 False a confident negative; g1 stays uncertain.
    assert queries["in1-functional"]["positives"] == ["z3", "z2", "zg"]
    assert [p["id"] for p in read_jsonl(out / "data" / "pool.jsonl")] == ["z3", "z2", "zg", "g2"]
    assert {q["split"] for q in queries.values()} == {"train"}


# --- killed mid-judging, then resumed ----------------------------------------------------------------


def baseline_policy(body) -> str:
    from ecom_tasks.plugins import baseline_reply

    return baseline_reply([("user", last_user_text(body))])


class KillAfter:
    """Answers like the baseline until ``after`` judge requests; then holds every request and kills
    the build process (SIGKILL) ``grace`` seconds later."""

    def __init__(self, after: int, grace: float = 3.0) -> None:
        self.after, self.grace, self.judged, self.lock = after, grace, 0, threading.Lock()
        self.process: subprocess.Popen | None = None
        self.killed = threading.Event()

    def __call__(self, body):
        text = last_user_text(body)
        if _stage(text) == "judge":
            with self.lock:
                self.judged += 1
                hold = self.judged > self.after
                if self.judged == self.after + 1:
                    threading.Timer(self.grace, self._kill).start()
            if hold:
                self.killed.wait(30)
                raise ConnectionError("killed")
        return baseline_policy(body)

    def _kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        self.killed.set()


@pytest.mark.slow
def test_a_build_killed_mid_stage_asks_only_the_unfinished_items_when_rerun(tmp_path):
    from inspect_ai.log import recoverable_eval_logs

    out = tmp_path / "build"
    command = [
        "ecom-tasks",
        "build",
        "rmir",
        "--out",
        str(out),
        "--model",
        "openai-api/loop/baseline",
        "--captions",
        "--inputs",
        "4",
        "--display",
        "none",
    ]
    killer = KillAfter(after=40, grace=2.0)
    with serve_openai_compatible(killer) as server:
        killer.process = subprocess.Popen(
            [str(Path(sys.executable).parent / command[0]), *command[1:]],
            env=offline_env(loop_env(server)),
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        killer.process.communicate(timeout=300)
        assert killer.killed.is_set() and killer.process.returncode == -signal.SIGKILL
    triplets = read_jsonl(out / "work" / "triplets.jsonl")
    [crashed] = recoverable_eval_logs(str(out / "logs" / "4_judge"))
    done = crashed.flushed_samples + crashed.completed_samples
    assert 0 < done < len(triplets)

    with serve_openai_compatible(baseline_policy) as server:
        proc = check_ok(run_cli(command, env=loop_env(server), cwd=tmp_path))
        asked = [_stage(last_user_text(b)) for b in server.requests]
    # Finished stages ask nothing; the judge stage asks the five judges of each unfinished triplet only.
    assert asked.count("generate") == 0 and asked.count("filter") == 0
    assert asked.count("judge") == 5 * (len(triplets) - done)
    assert f"{5 * done} of them done by an earlier run, {5 * (len(triplets) - done)} to make" in proc.stdout
    log = read_eval_log(max(list_eval_logs(str(out / "logs" / "4_judge")), key=lambda i: i.mtime))
    assert log.status == "success" and len(log.samples) == len(triplets)
    assert (out / "data" / "queries.jsonl").is_file()


def test_a_changed_input_file_is_refused_by_its_stage(tmp_path):
    from ecom_tasks.rmir.construction.tasks import rmir_build_filter

    rows = [
        {
            "id": "q1",
            "seed": "q_func_screw",
            "category": "functional",
            "query_text": "What fits this?",
            "target_desc": "a screwdriver",
        }
    ]
    path = tmp_path / "generated.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    seeds = str(fixtures_dir("rmir") / "seeds.jsonl")
    digest = file_sha256(path)
    assert len(rmir_build_filter(seeds=seeds, input=str(path), input_sha256=digest).dataset) == 1
    path.write_text(json.dumps({**rows[0], "query_text": "What else fits this?"}) + "\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="has changed since this stage was started"):
        rmir_build_filter(seeds=seeds, input=str(path), input_sha256=digest)


def test_unknown_roles_are_refused_before_any_stage(tmp_path):
    with pytest.raises(ConfigurationError, match="judge_1 .. judge_5"):
        build(BuildOptions(out=tmp_path, model="ecom/baseline", model_roles={"grader": "ecom/baseline"}))
    with pytest.raises(ConfigurationError, match="judge_6"):
        build(BuildOptions(out=tmp_path, model="ecom/baseline", model_roles={"judge_6": "ecom/baseline"}))


@pytest.mark.parametrize(
    ("judges", "role"),
    [(1, "judge_2"), (3, "judge_0"), (3, "judge_01"), (3, "Judge_1"), (3, "judge_1 "), (3, "judge_"), (3, "judge_١")],
)
def test_a_role_that_is_no_seat_of_the_panel_is_refused_by_name(tmp_path, judges, role):
    out = tmp_path / "build"
    with pytest.raises(ConfigurationError) as refused:
        build(BuildOptions(out=out, model="ecom/baseline", judges=judges, model_roles={role: "ecom/baseline"}))
    assert str(refused.value).startswith(f"unknown model role(s) {role}: the build binds judge_1 .. judge_{judges} ")
    assert not out.exists()  # refused before the build folder is made


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"text_retriever": "lexical", "text_k": 0}, "text_k must be at least 1 with a text_retriever"),
        ({"retriever": "no_such_embedder"}, "no_such_embedder"),
        ({"k": 0}, "k must be a whole number from 1"),
        ({"judges": 0}, "judges must be a whole number from 1 to 100"),
    ],
)
def test_a_later_stages_setting_is_refused_before_the_first_stage(tmp_path, settings, message):
    # Stages 1-2 call models; a retrieve or judge setting no stage can use must not wait for them.
    out = tmp_path / "out"
    with pytest.raises(ConfigurationError, match=message):
        build(BuildOptions(out=out, model="ecom/baseline", **settings))
    assert not out.exists()
