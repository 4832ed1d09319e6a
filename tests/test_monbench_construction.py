"""MonBench's Query-Ad Relevance construction (App. B.1.2): reading votes, hard-case selection and
question assembly against hand-worked cases, the vote stage with a scripted panel, the build with the
offline baseline through validate and monbench_canonical, and a build killed mid-stage that, re-run,
asks the loopback server only for the unfinished pairs (and nothing when only thresholds change)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from helpers import baseline_rule, offline_env
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, get_model
from loopback.openai_server import last_user_text, serve_openai_compatible, system_text

from ecom_tasks.construction import Stage, finished_items
from ecom_tasks.monbench.construction.parsing import parse_relevance
from ecom_tasks.monbench.construction.pipeline import BuildOptions, build, default_pairs, questions
from ecom_tasks.monbench.construction.seeds import AdPair, load_pairs
from ecom_tasks.monbench.construction.selection import (
    NO_POSITIVE,
    TOO_FEW_NEGATIVES,
    assemble_question,
    option_order,
    select_options,
    tally,
)

PAIRS = default_pairs()

VOTE_REPLIES = [
    ("Answer: relevant", "relevant"),
    ("The ad sells insoles, not shoes.\nAnswer: irrelevant", "irrelevant"),
    ("Answer: not relevant", "irrelevant"),
    ("Answer: Not irrelevant", "relevant"),
    ("<think>it is relevant? no</think>\n**Answer:** Irrelevant", "irrelevant"),
    ("Relevant.", "relevant"),
    ("答案：不相关", "irrelevant"),
    ("Answer: Not at all relevant", "irrelevant"),  # a word between "not" and "relevant" still negates it
    ("Answer: not really relevant", "irrelevant"),
    ("Answer: not very relevant to the query", "irrelevant"),
    ("答案：不太相关", "irrelevant"),
    ("Answer: relevant or irrelevant, depending on the user", None),
    ("The ad is relevant in part but irrelevant overall, it depends on the user's budget and location.", None),
    ("<think>The user", None),
    ("", None),
]


@pytest.mark.parametrize("reply,expected", VOTE_REPLIES)
def test_vote_replies(reply, expected):
    assert parse_relevance(reply).label == expected


def pair(pid, human, ad=None, position=0):
    return AdPair(id=pid, query="q", ad=ad or f"ad {pid}", human=human, position=position)


def test_hard_positive_and_hard_negatives_by_hand():
    pairs = [
        pair("p1", "relevant", position=0),
        pair("p2", "relevant", position=1),
        pair("n1", "irrelevant", position=2),
        pair("n2", "irrelevant", position=3),
        pair("n3", "irrelevant", position=4),
        pair("n4", "irrelevant", position=5),
        pair("n5", "irrelevant", position=6),
    ]
    votes = {  # 4 voters; None abstains
        "p1": ["relevant", "relevant", "relevant", "irrelevant"],  # 1 against the human
        "p2": ["irrelevant", "irrelevant", "relevant", None],  # 2 against: the hard positive
        "n1": ["irrelevant"] * 4,  # 0
        "n2": ["relevant", "relevant", "relevant", "irrelevant"],  # 3
        "n3": ["relevant", None, None, None],  # 1
        "n4": ["relevant", "relevant", "irrelevant", "irrelevant"],  # 2
        "n5": ["relevant", "irrelevant", None, None],  # 1, after n3: the tie goes to the earlier pair
    }
    tallies = {pid: tally(v) for pid, v in votes.items()}
    assert tallies["p2"].irrelevant == 2 and tallies["p2"].abstained == 1
    chosen = select_options(pairs, tallies)
    assert chosen.positive.id == "p2" and [p.id for p in chosen.negatives] == ["n2", "n4", "n3"]
    # thresholds: the correct ad needs 3 'irrelevant' votes -> none qualifies
    assert select_options(pairs, tallies, min_positive=3).reason == NO_POSITIVE
    # wrong ads need 2 'relevant' votes -> only n2 and n4
    assert select_options(pairs, tallies, min_negative=2).reason == TOO_FEW_NEGATIVES


def test_repeated_ad_texts_are_not_two_options():
    pairs = [
        pair("p", "relevant", "Shoes"),
        pair("a", "irrelevant", "Socks", 1),
        pair("b", "irrelevant", "SOCKS", 2),
        pair("c", "irrelevant", "Hats", 3),
        pair("d", "irrelevant", "Shoes", 4),
    ]
    tallies = {p.id: tally(["relevant"] * 4) for p in pairs}
    chosen = select_options(pairs, tallies)
    assert chosen.reason == TOO_FEW_NEGATIVES and [p.id for p in chosen.negatives] == ["a", "c"]


def test_question_assembly_puts_the_positive_where_the_order_says():
    pairs = [pair("p", "relevant", "Right ad"), *(pair(f"n{i}", "irrelevant", f"Wrong ad {i}", i) for i in range(1, 4))]
    tallies = {p.id: tally([]) for p in pairs}
    order = option_order("mb-build-x", seed=7)
    assert sorted(order) == [0, 1, 2, 3] and order == option_order("mb-build-x", seed=7)
    record = assemble_question(select_options(pairs, tallies), "mb-build-x", seed=7)
    assert record["choices"][record["answer"]] == "Right ad"
    assert [record["choices"][order.index(i)] for i in range(4)] == [
        "Right ad",
        "Wrong ad 1",
        "Wrong ad 2",
        "Wrong ad 3",
    ]
    assert record["task"] == "query_ad_relevance" and record["question"] == "User Query: q"
    seeds = {assemble_question(select_options(pairs, tallies), "mb-build-x", seed=s)["answer"] for s in range(40)}
    assert seeds == {0, 1, 2, 3}  # the correct option is not always in one place


def test_vote_stage_with_a_scripted_panel_and_the_questions_it_makes():
    from ecom_tasks.monbench.construction.stages import monbench_build_votes

    def voter(answer):
        def outputs(input, tools, tool_choice, config):
            return ModelOutput.from_content("mockllm/model", answer(input[-1].text))

        return get_model("mockllm/model", custom_outputs=outputs, memoize=False)

    says_relevant = voter(lambda text: "Answer: relevant")
    says_irrelevant = voter(lambda text: "Answer: irrelevant")
    # voter 3 calls an ad relevant when it names a place or 'shoes'; voter 4 never answers readably
    picky = voter(
        lambda text: (
            "Answer: relevant"
            if any(w in text.split("Ad:")[1] for w in ("Leeds", "Austin", "shoes"))
            else "Answer: irrelevant"
        )
    )
    mute = voter(lambda text: "I would need to see the landing page.")
    [log] = inspect_eval(
        monbench_build_votes(data=str(PAIRS)),
        model="mockllm/model",
        display="none",
        log_dir=None,
        model_roles={"voter_1": says_relevant, "voter_2": says_irrelevant, "voter_3": picky, "voter_4": mute},
    )
    assert log.status == "success"
    votes = {str(s.id): s.scores["monbench_relevance_votes"].metadata["votes"] for s in log.samples}
    assert votes["mb-build-syn-q1-a3"] == ["relevant", "irrelevant", "relevant", None]
    made, skipped = questions(load_pairs(PAIRS), votes)
    by_query = {q["question"].splitlines()[0]: q for q in made}
    shoes = by_query["User Query: running shoes for flat feet"]
    # positives: a1 ("...shoes...": 1 irrelevant vote), a2 (insoles: 2) -> a2;
    # negatives with 2 'relevant' votes: a3 (shoes), a4 (Leeds), a6 (shoes rack); a5 (tyres) has 1
    assert shoes["choices"][shoes["answer"]].startswith("Arch support insoles")
    assert sorted(shoes["choices"]) == sorted(
        [
            "Arch support insoles for runners - podiatrist designed",
            "Flat shoes for women - ballet flats in 30 colours",
            "Running club Leeds - join a beginners group",
            "Flat pack wardrobes for small bedrooms, shoes rack included",
        ]
    )
    assert list(skipped.values()) == [TOO_FEW_NEGATIVES]  # the wedding photographer has two irrelevant ads


@pytest.mark.slow
def test_build_with_the_baseline_validates_and_runs_monbench_canonical(tmp_path):
    from ecom_tasks.inspect_evals.monbench import monbench_canonical
    from ecom_tasks.plugins import datasets

    result = build(BuildOptions(out=tmp_path / "build", model="ecom/baseline", stage_options={"display": "none"}))
    records = datasets()["monbench"].load(str(result.data))  # what `ecom-tasks validate monbench` loads
    assert len(records) == 2 and {r.task for r in records} == {"query_ad_relevance"}
    shoes = next(r for r in records if "flat feet" in r.question)
    # the baseline calls an ad relevant when it repeats half the query's words: the insoles ad is the
    # human-relevant ad it misses, and the ballet flats and the wardrobes the irrelevant ones it takes
    assert shoes.choices[shoes.answer].startswith("Arch support insoles")
    assert {c.split(" - ")[0].split(",")[0] for c in shoes.choices} >= {
        "Flat shoes for women",
        "Flat pack wardrobes for small bedrooms",
    }
    [log] = inspect_eval(
        monbench_canonical(data=str(result.data)), model="ecom/baseline", display="none", log_dir=str(tmp_path / "runs")
    )
    assert log.status == "success" and log.results.total_samples == 2


# --- killed mid-stage, re-run: only the unfinished pairs are asked ------------------------------------


def build_command(out: Path, *extra: str) -> list[str]:
    script = Path(sys.executable).parent / "ecom-tasks"
    return [
        str(script),
        "build",
        "monbench",
        "--out",
        str(out),
        "--model",
        "openai-api/loop/loop-model",
        "--max-samples",
        "2",
        "--max-connections",
        "2",
        "--display",
        "none",
        *extra,
    ]


@pytest.mark.slow
def test_a_build_killed_mid_stage_resumes_asking_only_the_unfinished_pairs(tmp_path):
    out, kill_after = tmp_path / "build", 24
    total = 4 * len(load_pairs(PAIRS))
    lock, state = threading.Lock(), {"proc": None}

    def killing_policy(body):
        with lock:
            state.setdefault("n", 0)
            state["n"] += 1
            if state["n"] == kill_after:
                state["proc"].send_signal(signal.SIGKILL)  # the build dies as a killed process does: no clean-up
        return baseline_rule(system_text(body), last_user_text(body))

    def env(server):
        return offline_env(
            {"LOOP_BASE_URL": server.base_url, "LOOP_API_KEY": "none", "INSPECT_CACHE_DIR": str(tmp_path / "cache")}
        )

    with serve_openai_compatible(killing_policy, model_name="loop-model") as server:
        state["proc"] = subprocess.Popen(
            build_command(out), env=env(server), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        first_output = state["proc"].communicate(timeout=300)[0]
        assert state["proc"].returncode == -signal.SIGKILL, first_output
        asked_first = len(server.requests)
    assert kill_after <= asked_first < total
    stage = Stage("votes", "ecom_tasks/monbench_build_votes", {}, items=total // 4)
    log_folder = out / "logs" / "1_votes"
    [started] = list(log_folder.glob("*.eval"))
    from inspect_ai.log import read_eval_log

    stage.task_args = dict(read_eval_log(str(started), header_only=True).eval.task_args_passed)
    done = finished_items(log_folder, stage)
    assert 0 < done < stage.items

    with serve_openai_compatible(
        lambda body: baseline_rule(system_text(body), last_user_text(body)), model_name="loop-model"
    ) as server:
        again = subprocess.run(build_command(out), env=env(server), capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stdout + again.stderr
        asked = [last_user_text(body) for body in server.requests]
    assert f"{done * 4} of them done by an earlier run, {(stage.items - done) * 4} to make" in again.stdout
    assert len(asked) == 4 * (stage.items - done)  # each unfinished pair's four voters, nothing else
    asked_pairs = {text.split("Ad: ", 1)[1] for text in asked}
    assert len(asked_pairs) == stage.items - done and all(sum(t.endswith(ad) for t in asked) == 4 for ad in asked_pairs)
    data = [json.loads(line) for line in (out / "data" / "monbench.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(data) == 2

    # a threshold no pair can reach (5 of 4 voters) is refused before anything is asked or written
    before = (out / "data" / "monbench.jsonl").read_bytes()
    with serve_openai_compatible(lambda body: "Answer: relevant", model_name="loop-model") as server:
        refused = subprocess.run(
            build_command(out, "--min-positive-votes", "5"),
            env=env(server),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert refused.returncode == 1 and "--min-positive-votes 5 exceeds the 4 voters" in refused.stderr
        assert server.requests == []
    assert (out / "data" / "monbench.jsonl").read_bytes() == before
    # other selection thresholds: no model call, other questions
    with serve_openai_compatible(lambda body: "Answer: relevant", model_name="loop-model") as server:
        strict = subprocess.run(
            build_command(out, "--min-negative-votes", "4"),
            env=env(server),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert strict.returncode == 0, strict.stdout + strict.stderr
        assert server.requests == []
    assert "0 questions made, 3 skipped" in strict.stdout
    assert not (out / "data" / "monbench.jsonl").exists()  # never a stale data set beside a build that made none


def test_a_bad_pairs_file_names_every_problem_by_file_row_field(tmp_path):
    from ecom_tasks.data import DataValidationError

    bad = tmp_path / "pairs.jsonl"
    rows = [
        {"id": "a", "query": "q", "ad": "an ad", "human_label": "maybe"},
        {"id": "a", "query": "q", "ad": "", "human_label": "relevant"},
        {"id": "c", "query": "q", "ad": "ad c", "human_label": 1, "category": "Pets"},
    ]
    bad.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    with pytest.raises(DataValidationError) as caught:
        load_pairs(bad)
    message = str(caught.value)
    for where in (f"{bad}:1:human_label", f"{bad}:2:ad", f"{bad}:2:id", f"{bad}:3:category"):
        assert where in message, message


def test_the_stage_records_its_input_hash_and_is_no_monbench_run():
    import hashlib

    from ecom_tasks.monbench.construction.stages import monbench_build_votes

    metadata = monbench_build_votes(data=str(PAIRS)).metadata
    assert metadata["data_sha256"] == hashlib.sha256(PAIRS.read_bytes()).hexdigest()
    assert metadata["benchmark"] == "monbench_build"
