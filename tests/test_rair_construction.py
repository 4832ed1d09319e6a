"""RAIR's construction pipeline (Sec. 4.2-4.4, App. D-E): reply parsing, the votes (Eqs. 2-4), the
assembly into records, each stage with a scripted panel, and the whole build with the offline baseline
through validate and rair_hard / rair_visual, re-assembled with other thresholds without a model call."""

from __future__ import annotations

import json

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, get_model

from ecom_tasks.rair.construction.assembly import Thresholds, assemble, query_id
from ecom_tasks.rair.construction.parsing import parse_intent, parse_rule_ids, parse_visual
from ecom_tasks.rair.construction.pipeline import BuildOptions, build, default_candidates
from ecom_tasks.rair.construction.stages import rair_build_intent, rair_build_rules, rair_build_visual
from ecom_tasks.rair.construction.votes import intent_decision, rule_vote, rules_for_label, visual_decision
from ecom_tasks.rair.rules import builtin_rules
from ecom_tasks.rair.schema import load_records

CANDIDATES = default_candidates()

# --- parsing: realistic replies and the vote a careful reader takes from each ---------------------

INTENT_REPLIES = [
    ("<think>The query excludes sugar.</think>\n<answer>NC</answer>", "NC"),
    ("<think>hmm</think><answer>Negative Constraints (NC)</answer>", "NC"),
    ("<answer>SS rather than QA</answer>", "SS"),
    ("<answer>not NC, it is MA</answer>", "MA"),
    ("Reasoning: a model number.\n**Answer:** DJ", "DJ"),
    ("<answer>(5)</answer>", "NC"),  # Fig. 11 numbers the classes
    ("<answer>other</answer>", "Other"),
    ("最终答案：否定约束", "NC"),
    ("ER", "ER"),
    ("<answer>DJ or ER</answer>", None),  # a hedge is no vote
    ("It could be DJ, or maybe ER, hard to say without more context about the query.", None),
    ("<think>The user wants", None),  # cut off mid-reasoning
    ("", None),
    ("I cannot help with that.", None),
    # hostile: 100,000 characters of classes set aside, then the one asserted (was 61 s: each negation searched for in
    # all the text before its class)
    ("<answer>" + "not NC, " * 12499 + "MA</answer>", "MA"),
]


@pytest.mark.parametrize("reply,expected", INTENT_REPLIES)
def test_intent_replies(reply, expected):
    assert parse_intent(reply).vote == expected


VISUAL_REPLIES = [
    ("\\boxed{[1]}", 1),  # the paper's list form
    ("\\boxed{0}", 0),
    ("The title says nothing of the colour; the image shows red. \\boxed{1}", 1),
    ("\\boxed{1}\nOn reflection the CPV names the colour. \\boxed{0}", 0),  # the last box decides
    ("<think>text is enough</think>\\boxed{ 0 }", 0),
    ("1", 1),
    ("The image is needed.", None),
    ("\\boxed{maybe}", None),
    ("<think>looking at the image", None),
]


@pytest.mark.parametrize("reply,expected", VISUAL_REPLIES)
def test_visual_replies(reply, expected):
    assert parse_visual(reply).vote == expected


def test_rule_replies():
    allowed = ["COLOR-01", "CATEGORY-02", "BRAND-01"]
    assert parse_rule_ids("The colour differs.\nRule IDs: COLOR-01, category-02", allowed).vote == (
        "COLOR-01",
        "CATEGORY-02",
    )
    unknown = parse_rule_ids("Rule IDs: COLOR-01, FOO-9", allowed)
    assert unknown.vote == ("COLOR-01",) and unknown.unknown == ("FOO-9",)
    assert parse_rule_ids("**Rule IDs:** BRAND-01；COLOR-01", allowed).vote == ("BRAND-01", "COLOR-01")
    assert parse_rule_ids("Rule IDs: none", allowed).vote == ()  # a vote for no rule
    assert parse_rule_ids("I think COLOR-01 applies.", allowed).vote is None  # no line: an abstention
    assert parse_rule_ids("Rule IDs: COLOR-01\nRule IDs: BRAND-01", allowed).vote == ("BRAND-01",)
    # an id named only to be set aside is not voted for
    assert parse_rule_ids("Rule IDs: COLOR-01 (not BRAND-01)", allowed).vote == ("COLOR-01",)
    assert parse_rule_ids("Rule IDs: COLOR-01, except BRAND-01", allowed).vote == ("COLOR-01",)


# --- the votes ---------------------------------------------------------------------------------


def test_intent_vote_two_of_three_and_abstentions():
    assert intent_decision(["NC", "NC", "QA"]).intent == "NC"
    decided = intent_decision(["NC", "NC", "QA"])
    assert decided.hard and decided.agreement == pytest.approx(2 / 3) and decided.hard_votes == 3
    # an abstaining voter counts for nothing: one NC is not two
    assert intent_decision(["NC", None, None]).status == "no_quorum"
    assert intent_decision([None, None, None]).status == "panel_no_grade"
    # three hard votes on three classes: Eq. 2 counts 3, but no class has two
    split = intent_decision(["DJ", "ER", "SS"])
    assert not split.hard and split.hard_votes == 3 and split.status == "no_quorum"
    other = intent_decision(["Other", "Other", "NC"])
    assert not other.hard and other.status == "other"
    assert not intent_decision(["NC", "NC", "QA"], min_votes=3).hard
    assert intent_decision(["MA", "MA", "MA"], min_votes=3).intent == "MA"


def test_visual_vote_eq3():
    assert visual_decision([1, 1, 0]) == (True, 2)
    assert visual_decision([1, None, None]) == (False, 1)  # abstentions are not "essential"
    assert visual_decision([1, 1, 0], min_votes=3) == (False, 2)


def test_rule_vote_eq4():
    runs = [("COLOR-01", "BRAND-01"), ("COLOR-01",), ("BRAND-01", "STYLE-01", "BRAND-01"), None]
    assert rule_vote(runs, 2, order=["BRAND-01", "COLOR-01", "STYLE-01"]) == ("BRAND-01", "COLOR-01")
    assert rule_vote(runs, 3) == ()  # a rule repeated within one run counts once
    assert rule_vote(runs, 1, order=["STYLE-01", "COLOR-01", "BRAND-01"]) == ("STYLE-01", "COLOR-01", "BRAND-01")


def test_rules_for_a_label_are_those_it_can_carry():
    rules = builtin_rules()
    levels = lambda label: {r.level for r in rules_for_label(rules, label)}  # noqa: E731
    assert levels("L4") == {"L4"}
    assert levels("L2") == {"L2", "L3", "L4"}
    assert len(rules_for_label(rules, "L1")) == len(rules.rules)


def test_assembly_membership_ids_and_thresholds():
    records = load_records(CANDIDATES, check_images=False)
    by_id = {r.id: r for r in records}
    sugar, hoodie = by_id["rair-build-syn-c02"], by_id["rair-build-syn-c09"]
    intents = {query_id(sugar.query): ["NC", "NC", None], query_id(hoodie.query): ["MA", "Other", "Other"]}
    visual = {hoodie.id: [1, 1, 0]}
    rules = {
        sugar.id: [("ATTRIBUTE-01",), ("ATTRIBUTE-01", "COLOR-01"), None],
        hoodie.id: [("COLOR-01",), ("COLOR-01",), ("COLOR-01",)],
    }
    out = assemble([sugar, hoodie], intents, visual, rules, Thresholds(), builtin_rules())
    rows = {row["id"]: row for row in out.rows}
    assert set(rows) == {"rair-build-syn-c02-hard", "rair-build-syn-c09-visual"}
    assert rows["rair-build-syn-c02-hard"]["intent"] == "NC" and rows["rair-build-syn-c02-hard"]["rule_ids"] == [
        "ATTRIBUTE-01"
    ]
    assert rows["rair-build-syn-c09-visual"]["intent"] is None and rows["rair-build-syn-c09-visual"]["rule_ids"] == [
        "COLOR-01"
    ]
    assert out.counts() == {"candidates": 2, "hard": 1, "visual": 1, "left_out": 0}
    stricter = assemble(
        [sugar, hoodie], intents, visual, rules, Thresholds(intent=3, visual=3, rules=3), builtin_rules()
    )
    assert stricter.rows == [] and stricter.counts()["left_out"] == 2
    assert [d["rule_ids"] for d in stricter.decisions] == [[], ["COLOR-01"]]


# --- each stage with a scripted panel -------------------------------------------------------------


def scripted(answer):
    """A mockllm voter answering ``answer(user_text)``."""

    def outputs(input, tools, tool_choice, config):
        return ModelOutput.from_content("mockllm/model", answer(input[-1].text))

    return get_model("mockllm/model", custom_outputs=outputs, memoize=False)


def run(task, **roles):
    [log] = inspect_eval(task, model="mockllm/model", model_roles=roles, display="none", log_dir=None)
    assert log.status == "success", log.error
    return {str(s.id): next(iter(s.scores.values())) for s in log.samples}


def test_intent_stage_with_a_scripted_panel():
    # voter 1 says NC for the sugar-free query, 2 agrees, 3 never answers readably (asked twice: abstains)
    nc_or_other = lambda text: "<answer>NC</answer>" if "sugar-free" in text else "<answer>Other</answer>"  # noqa: E731
    scores = run(
        rair_build_intent(data=str(CANDIDATES)),
        voter_1=scripted(nc_or_other),
        voter_2=scripted(nc_or_other),
        voter_3=scripted(lambda text: "Let me think about it."),
    )
    sugar = scores[query_id("sugar-free oat biscuits")]
    assert sugar.metadata["votes"] == ["NC", "NC", None] and sugar.metadata["attempts"] == [1, 1, 2]
    assert sugar.value == 1.0 and sugar.answer == "NC"
    other = scores[query_id("red hoodie")]
    assert other.value == 0.0 and other.answer == "other"
    assert len(scores) == len({r.query for r in load_records(CANDIDATES, check_images=False)})


def test_visual_stage_sees_the_image_and_counts_two_of_three():
    seen = []

    def vlm(text):
        seen.append(text)
        return "\\boxed{1}" if "red hoodie" in text else "\\boxed{0}"

    scores = run(
        rair_build_visual(data=str(CANDIDATES)),
        vlm_1=scripted(vlm),
        vlm_2=scripted(vlm),
        vlm_3=scripted(lambda t: "\\boxed{0}"),
    )
    assert {sid: s.value for sid, s in scores.items()} == {
        "rair-build-syn-c08": 1.0,
        "rair-build-syn-c09": 1.0,
        "rair-build-syn-c10": 0.0,
        "rair-build-syn-c11": 0.0,
    }
    assert scores["rair-build-syn-c08"].metadata["votes"] == [1, 1, 0]


def test_rules_stage_shows_only_the_rules_a_label_can_carry():
    shown = {}

    def annotator(text):
        return "Rule IDs: COLOR-01, CATEGORY-01" if "Unisex cotton hoodie" in text else "Rule IDs: none"

    def capture(input, tools, tool_choice, config):
        shown[input[-1].text] = input[0].text
        return ModelOutput.from_content("mockllm/model", annotator(input[-1].text))

    model = get_model("mockllm/model", custom_outputs=capture, memoize=False)
    scores = run(rair_build_rules(data=str(CANDIDATES), runs=2), annotator_1=model, annotator_2=scripted(annotator))
    blue_prompt = next(
        system for user, system in shown.items() if "Unisex cotton hoodie" in user and "level: L2" in user
    )
    assert (
        "- COLOR-01 [L2, Color]" in blue_prompt and "CATEGORY-01" not in blue_prompt
    )  # an L1 rule cannot accompany L2
    blue = scores["rair-build-syn-c09"]  # CATEGORY-01 is not on its list: dropped; COLOR-01 named twice
    assert blue.answer == "COLOR-01" and blue.value == 1.0 and blue.metadata["votes"] == [["COLOR-01"], ["COLOR-01"]]
    red = scores["rair-build-syn-c08"]  # L4: only L4 rules listed, so both ids are dropped
    assert red.answer == "none" and red.value == 1.0


# --- the whole build with the offline baseline ------------------------------------------------------


@pytest.mark.slow
def test_build_with_the_baseline_validates_and_runs_and_rethresholds_offline(tmp_path):
    from ecom_tasks.inspect_evals.rair import rair_hard, rair_visual
    from ecom_tasks.plugins import datasets

    out = tmp_path / "build"
    first = build(BuildOptions(out=out, model="ecom/baseline", stage_options={"display": "none"}))
    data = first.data
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    # the baseline classes queries by surface cues (rair.baseline.classify_query): one query per class
    assert {r["candidate"].removeprefix("rair-build-syn-"): r["intent"] for r in rows if r["subset"] == "hard"} == {
        "c01": "NC",
        "c02": "NC",
        "c03": "QA",
        "c04": "ER",
        "c05": "SS",
        "c06": "DJ",
        "c07": "MA",
    }
    # visually salient: the query names a colour or material the item text lacks; c10's title says "striped"
    assert sorted(r["candidate"].removeprefix("rair-build-syn-") for r in rows if r["subset"] == "visual") == [
        "c08",
        "c09",
        "c11",
    ]
    ruleset = builtin_rules()
    for row in rows:
        assert set(row["rule_ids"]) <= {r.id for r in rules_for_label(ruleset, row["label"])}
    assert len(datasets()["rair"].load(str(data))) == 10  # what `ecom-tasks validate rair` loads
    for task, samples in ((rair_hard(data=str(data)), 7), (rair_visual(data=str(data)), 3)):
        [log] = inspect_eval(task, model="ecom/baseline", display="none", log_dir=str(tmp_path / "runs"))
        assert log.status == "success" and log.results.total_samples == samples
    decisions = (out / "work" / "decisions.jsonl").read_text(encoding="utf-8")
    assert "rair-build-syn-c10" in decisions  # left out, still listed for review

    # a threshold no item can reach (4 of 3 voters) is refused before anything is asked or written
    from ecom_tasks.data import ConfigurationError

    before = data.read_bytes()
    with pytest.raises(ConfigurationError, match="--min-intent-votes 4 exceeds the 3 voters"):
        build(
            BuildOptions(
                out=out, model="ecom/baseline", thresholds=Thresholds(intent=4), stage_options={"display": "none"}
            )
        )
    assert data.read_bytes() == before
    # other thresholds: every stage's log is reused, nothing is asked
    again = build(
        BuildOptions(out=out, model="ecom/baseline", thresholds=Thresholds(intent=3), stage_options={"display": "none"})
    )
    names = lambda result: {stage: log.location.rsplit("/", 1)[-1] for stage, log in result.logs.items()}  # noqa: E731
    assert names(again) == names(first)
    assert all(len(list((out / "logs" / folder).glob("*.eval"))) == 1 for folder in ("1_intent", "2_visual", "3_rules"))
    # the baseline's voters agree on every query: a unanimous threshold selects what the first build did
    assert (
        again.assembly.counts() == first.assembly.counts() == {"candidates": 11, "hard": 7, "visual": 3, "left_out": 1}
    )


def test_rule_stage_refuses_rules_without_ids(tmp_path):
    from ecom_tasks.data import ConfigurationError

    verbatim = tmp_path / "rules.md"
    verbatim.write_text("Brand mismatches are L2.\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="structured rules"):
        rair_build_rules(data=str(CANDIDATES), rules=str(verbatim))


def test_a_changed_candidate_file_is_never_read_as_the_logged_one(tmp_path):
    from ecom_tasks.construction import file_sha256
    from ecom_tasks.data import ConfigurationError

    copy = tmp_path / "candidates.jsonl"
    copy.write_bytes(CANDIDATES.read_bytes())
    logged = file_sha256(copy)
    with copy.open("a", encoding="utf-8") as fh:  # edited after the stage's log recorded its hash
        fh.write(CANDIDATES.read_text(encoding="utf-8").splitlines()[0].replace("c01", "c99") + "\n")
    with pytest.raises(ConfigurationError, match="has changed"):
        rair_build_intent(data=str(copy), data_sha256=logged)


def test_each_stage_records_its_inputs_hashes_and_is_no_rair_run():
    import hashlib

    expected = hashlib.sha256(CANDIDATES.read_bytes()).hexdigest()
    for task in (
        rair_build_intent(data=str(CANDIDATES)),
        rair_build_visual(data=str(CANDIDATES)),
        rair_build_rules(data=str(CANDIDATES)),
    ):
        assert task.metadata["data_sha256"] == expected and task.metadata["benchmark"] == "rair_build"
    rules = rair_build_rules(data=str(CANDIDATES)).metadata
    assert rules["rules_sha256"] == hashlib.sha256(builtin_rules_bytes()).hexdigest()


def builtin_rules_bytes() -> bytes:
    from importlib import resources

    return (resources.files("ecom_tasks") / "rair" / "rules_v1.json").read_bytes()


def test_every_stage_reads_the_candidates_with_the_builds_image_access(tmp_path):
    """An image outside the candidate file's folder, allowed by --allow-outside-images: every stage reads
    the candidate file (the intent and rules stages refused it before, stopping the build at stage 1)."""
    import shutil

    from ecom_tasks.data import DataValidationError
    from ecom_tasks.images import ImageAccess
    from ecom_tasks.rair.construction.pipeline import stages

    shutil.copytree(CANDIDATES.parent, tmp_path / "inputs")
    (tmp_path / "pictures").mkdir()
    shutil.move(tmp_path / "inputs" / "images" / "color_blue.png", tmp_path / "pictures" / "color_blue.png")
    moved = tmp_path / "inputs" / "candidates.jsonl"
    moved.write_text(
        moved.read_text(encoding="utf-8").replace('"images/color_blue.png"', '"../pictures/color_blue.png"'),
        encoding="utf-8",
    )
    options = BuildOptions(out=tmp_path / "build", model="ecom/baseline", candidates=moved)
    options.image_access = ImageAccess.from_options(True, False)
    records = load_records(moved, check_images=True, image_access=options.image_access)
    planned = stages(options, records, builtin_rules(), "")
    assert [stage.task_args["allow_outside_images"] for stage in planned] == [True, True, True]
    samples = {"intent": 9, "visual": 4, "rules": 11}
    for stage, make in zip(planned, (rair_build_intent, rair_build_visual, rair_build_rules)):
        assert len(make(**stage.task_args).dataset) == samples[stage.name]
        with pytest.raises(DataValidationError, match="leaves the dataset's folder"):
            make(data=str(moved))


@pytest.mark.parametrize(
    "make,roles", [(rair_build_intent, "voter"), (rair_build_visual, "vlm"), (rair_build_rules, "annotator")]
)
def test_a_seat_that_echoes_what_it_was_sent_casts_no_vote(make, roles):
    """Seats 1 and 2 copy their last message: the item, then the reminder. The intent reminder's example
    (<answer>SS</answer>) was read as their vote (every query 'SS'); seat 3 answers."""
    own = {"voter": "<answer>QA</answer>", "vlm": "\\boxed{0}", "annotator": "Rule IDs: none"}[roles]
    echo = scripted(lambda text: text)
    scores = run(
        make(data=str(CANDIDATES)), **{f"{roles}_1": echo, f"{roles}_2": echo, f"{roles}_3": scripted(lambda t: own)}
    )
    for score in scores.values():
        assert score.metadata["votes"][:2] == [None, None] and score.metadata["attempts"][:2] == [2, 2], score.metadata
        assert score.metadata["statuses"][:2] != ["ok", "ok"] and score.metadata["votes"][2] is not None
