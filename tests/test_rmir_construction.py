"""RMIR's construction pipeline, piece by piece: the panel's self-consistency vote, triplet decisions,
removal, pool union, TSR and the split (hand arithmetic), the reply parsers on realistic replies, the
baseline's answers to the new prompts, and the judge stage with a scripted mockllm panel (re-scored
at another confidence with no model call).
"""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai import score as inspect_score
from inspect_ai.model import ModelOutput, get_model

from ecom_tasks.construction import Stage, cost_line, write_jsonl
from ecom_tasks.data import fixtures_dir
from ecom_tasks.files import OutputFolder
from ecom_tasks.plugins import baseline_reply
from ecom_tasks.rmir.construction import prompts
from ecom_tasks.rmir.construction.assembly import NEGATIVE, POSITIVE, UNCERTAIN, Candidate, assemble, decide, query_tsr
from ecom_tasks.rmir.construction.parsing import parse_filter, parse_generation, parse_judgement
from ecom_tasks.scorers.panel import NO_MAJORITY, OK, PANEL_NO_GRADE, majority_with_confidence

T, F, A = "True", "False", "ABSTAIN"


def prompt_text(parts: list[prompts.Part]) -> str:
    """The text parts joined by newlines (what a text-only reader of the prompt sees)."""
    return "\n".join(p for p in parts if isinstance(p, str))


# --- the vote ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("votes", "label", "confidence", "status"),
    [
        ([T, T, T, T, F], T, 0.8, OK),  # the paper's worked example (Sec. 3.1.4)
        ([T] * 5, T, 1.0, OK),
        ([F, F, F, T, T], F, 0.6, OK),
        ([A, A, A, T, T], A, 0.6, OK),  # abstaining is a vote; it can win
        ([T, T, F, F, A], None, 0.0, NO_MAJORITY),  # a tie for the most votes
        ([T, T, T, T, None], T, 0.8, OK),  # a failed judge agreed with nobody
        ([None, None, None], None, 0.0, PANEL_NO_GRADE),
        ([T, F, None], None, 0.0, NO_MAJORITY),
    ],
)
def test_majority_with_confidence(votes, label, confidence, status):
    vote = majority_with_confidence(votes)
    assert (vote.label, vote.confidence, vote.status, vote.judges) == (
        label,
        pytest.approx(confidence),
        status,
        len(votes),
    )


@pytest.mark.parametrize(
    ("votes", "threshold", "outcome", "negative"),
    [
        ([T] * 5, 1.0, POSITIVE, 0.0),
        ([T, T, T, T, F], 1.0, UNCERTAIN, 0.2),
        ([T, T, T, T, F], 0.8, POSITIVE, 0.2),
        ([F] * 5, 1.0, NEGATIVE, 1.0),
        ([F, F, F, F, A], 1.0, UNCERTAIN, 0.8),
        ([A] * 5, 1.0, UNCERTAIN, 0.0),  # a unanimous abstention decides nothing
        ([T, T, T, T, None], 1.0, UNCERTAIN, 0.0),
    ],
)
def test_decide(votes, threshold, outcome, negative):
    decision = decide(votes, threshold)
    assert (decision.outcome, decision.negative_fraction) == (outcome, pytest.approx(negative))


def test_decide_refuses_unknown_votes_and_thresholds():
    with pytest.raises(ValueError):
        decide(["yes"] * 5)
    with pytest.raises(ValueError):
        decide([T] * 5, 0.0)


def test_tsr_of_a_query_uses_the_image_index_in_rank_order_padded_with_negatives():
    decisions = {"a": decide([T] * 5), "b": decide([F] * 5), "c": decide([T] * 5), "d": decide([F] * 5)}
    # Out of rank order on purpose; "d" came from the text index only and is not part of TSR.
    candidates = [
        Candidate("c", image_rank=3),
        Candidate("a", image_rank=1),
        Candidate("b", image_rank=2),
        Candidate("d", text_rank=1),
    ]
    # K = 4: negativeness [0, 1, 0, 1 (padding)]; tails 2/4, 2/3, 1/2, 1 -> (1/2 + 2/3 + 1/2 + 1) / 4 = 2/3.
    assert query_tsr(candidates, decisions, k=4) == pytest.approx(2 / 3)
    # K = 16, one positive on top and 15 padded negatives: (15/16 + 15) / 16.
    assert query_tsr([Candidate("a", image_rank=1)], decisions, k=16) == pytest.approx((15 / 16 + 15) / 16)


def test_assemble_removes_uncertain_images_everywhere_unions_the_pool_and_splits_by_tsr():
    candidates = {
        "q1": [Candidate("x", 1), Candidate("y", 2), Candidate("z", 3)],
        "q2": [Candidate("y", 1), Candidate("w", 2), Candidate("v", None, 1)],
        "q3": [Candidate("z", 1)],
        "q4": [],
    }
    votes = {
        ("q1", "x"): [T] * 5,
        ("q1", "y"): [T] * 5,
        ("q1", "z"): [F] * 5,
        ("q2", "y"): [T, T, T, T, F],  # uncertain: y leaves q1's positives and the pool too
        ("q2", "w"): [T] * 5,
        ("q2", "v"): [T] * 5,
        ("q3", "z"): [F, F, F, A, A],  # negative majority at 0.6: uncertain, z removed; q3 has no positive
    }
    result = assemble(["q1", "q2", "q3", "q4"], candidates, votes, confidence=1.0, tsr_threshold=0.5, k=4)
    assert result.removed == {"y", "z"}
    kept = {q.id: q for q in result.queries}
    assert kept["q1"].positives == ("x",) and kept["q2"].positives == ("w", "v")
    assert result.dropped == {"q3": "no positive", "q4": "no candidate"}
    assert result.pool == ["x", "w", "v"]
    # q1 (K=4): negativeness [0, 0, 1, 1]; tails 1/2, 2/3, 1, 1 -> 19/24. q2: [0 (1/5), 0, 1, 1] the same.
    assert kept["q1"].tsr == pytest.approx(19 / 24) and kept["q2"].tsr == pytest.approx(19 / 24)
    assert {q.split for q in result.queries} == {"test"}
    again = assemble(["q1", "q2", "q3", "q4"], candidates, votes, confidence=1.0, tsr_threshold=19 / 24, k=4)
    assert {q.split for q in again.queries} == {"train"}  # the test split takes TSR strictly above the threshold
    counts = result.counts()
    assert (counts["positive"], counts["negative"], counts["uncertain"], counts["pool"]) == (4, 1, 2, 3)


def test_assemble_needs_every_triplets_votes():
    with pytest.raises(ValueError, match="no votes"):
        assemble(["q"], {"q": [Candidate("x", 1)]}, {})


# --- parsers ----------------------------------------------------------------------------------------

PAIR = (
    "<query>What finishes this job?</query>\n<target>a claw hammer</target>\n<reasoning>nails need striking</reasoning>"
)


@pytest.mark.parametrize(
    ("reply", "status", "pairs", "abstained"),
    [
        (
            f"<image>a nail</image>\n<functional>\n{PAIR}\n</functional>\n<temporal>ABSTAIN</temporal>\n<causal>\n{PAIR}\n</causal>",
            "ok",
            {"functional", "causal"},
            {"temporal"},
        ),
        (
            f"<think>Let me look at <functional> ideas...</think>\n<functional>{PAIR}</functional>\n<temporal>{PAIR}</temporal>\n"
            f"<causal><query>ABSTAIN</query><target>ABSTAIN</target><reasoning>ABSTAIN</reasoning></causal>",
            "ok",
            {"functional", "temporal"},
            {"causal"},
        ),
        # the requested format echoed first, then the answer: the last block counts
        (
            f"<functional>\n<query>the query</query>\n<target>the target description</target>\n</functional>\n"
            f"Here is my answer:\n<functional>{PAIR}</functional><temporal>{PAIR}</temporal><causal>{PAIR}</causal>",
            "ok",
            {"functional", "temporal", "causal"},
            set(),
        ),
        # the paper's tag names
        (
            "<Example_FUNC_1><query>What opens it?</query><target_desc>a ring of keys</target_desc></Example_FUNC_1>",
            "partial",
            {"functional"},
            set(),
        ),
        ("```xml\n<functional>" + PAIR + "</functional>\n```", "partial", {"functional"}, set()),
        (prompts.SENSITIVE_ABSTAIN, "sensitive", set(), {"functional", "temporal", "causal"}),
        ("<think>The image shows a protest, so I should", "truncated", set(), set()),
        ("I'm sorry, I can't help with that.", "unreadable", set(), set()),
        ("", "empty", set(), set()),
        (
            "<functional><query>这个怎么打开？</query><target>一把钥匙</target></functional>",
            "partial",
            {"functional"},
            set(),
        ),
    ],
)
def test_parse_generation(reply, status, pairs, abstained):
    parsed = parse_generation(reply)
    assert (parsed.status, set(parsed.pairs), set(parsed.abstained)) == (status, pairs, abstained)
    assert parsed.failed == (status in ("empty", "truncated", "unreadable"))


def test_parse_generation_reads_the_fields():
    parsed = parse_generation(f"<functional>{PAIR}</functional>")
    assert parsed.pairs["functional"] == parse_generation(f"<functional>{PAIR}</functional>").pairs["functional"]
    assert (parsed.pairs["functional"].query, parsed.pairs["functional"].target) == (
        "What finishes this job?",
        "a claw hammer",
    )
    assert parsed.missing == ("temporal", "causal")


@pytest.mark.parametrize(
    ("reply", "valid"),
    [
        ("<image>a kettle</image>\n<reasoning>fine</reasoning>\n<verdict>yes</verdict>", True),
        ("<verdict>No</verdict>", False),
        ("<reasoning>It breaks rule 1.</reasoning>\n<verdict>**no**</verdict>", False),
        ("<is_valid>yes</is_valid>", True),
        ("Reasoning: all rules hold.\n**Verdict:** Yes.", True),
        ("<think>maybe no</think>\n<verdict>yes</verdict>", True),
        ("<verdict>是</verdict>", True),
        ("<verdict>yes or no</verdict>", None),  # the format echoed, nothing decided
        # a negated verdict word is not that word's vote (read as no verdict, never as its opposite guessed)
        ("<verdict>not valid</verdict>", None),
        ("Verdict: The pair is not valid", None),
        ("<verdict>不是</verdict>", None),
        ("<verdict>yes</verdict> ... on reflection <verdict>no</verdict>", False),  # the last verdict counts
        ("The query seems fine to me.", None),  # no verdict: not a yes
        ("<think>rule 1 holds, rule 2", None),
        ("I cannot assist with this request.", None),
    ],
)
def test_parse_filter(reply, valid):
    assert parse_filter(reply).valid is valid


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        (
            "<candidate>keys</candidate>\n<input>a padlock</input>\n<reasoning>keys open it</reasoning>\n<verdict>True</verdict>",
            T,
        ),
        ("<verdict>false</verdict>", F),
        ("<verdict>ABSTAIN</verdict>", A),
        ("<consistent>True</consistent>", T),  # the paper's tag
        ("ABSTAIN DUE TO SENSITIVE IMAGE", A),
        ("Verdict: False - the candidate shows pine needles, not manure.", F),
        ("<verdict>**True.**</verdict>", T),
        ("<verdict>True, False or ABSTAIN</verdict>", None),  # the format echoed
        ("<verdict>not true</verdict>", None),  # negated: not a True vote
        ("<verdict>I would not accept it</verdict>", None),
        ("<verdict>It isn't true</verdict>", None),
        ("<think>the candidate might be</think>\n<verdict>True</verdict>", T),
        ("<think>let me compare the two images", None),
        ("The candidate image clearly answers the query.", None),  # no verdict given
        ("", None),
    ],
)
def test_parse_judgement(reply, verdict):
    parsed = parse_judgement(reply)
    assert parsed.verdict == verdict and parsed.failed == (verdict is None)


# --- the offline baseline ---------------------------------------------------------------------------


def test_baseline_answers_the_construction_prompts_from_captions_and_abstains_without():
    with_caption = prompt_text(prompts.generation_prompt("x.png", "a kettle on a lit gas stove", captions=True))
    parsed = parse_generation(baseline_reply([("user", with_caption)]))
    assert parsed.status == "ok" and parsed.pairs["functional"].target == "a tool used with a kettle on a lit gas stove"
    blind = prompt_text(prompts.generation_prompt("x.png", "a kettle on a lit gas stove"))
    assert set(parse_generation(baseline_reply([("user", blind)])).abstained) == set(prompts.CATEGORY_TAGS)

    ok = prompt_text(prompts.filter_prompt("x.png", "What will happen next?", "a kettle whistling with steam"))
    names_it = prompt_text(
        prompts.filter_prompt("x.png", "What does the kettle do next?", "a kettle whistling with steam")
    )
    assert parse_filter(baseline_reply([("user", ok)])).valid is True
    assert parse_filter(baseline_reply([("user", names_it)])).valid is False

    def judge(candidate: str | None) -> str | None:
        text = prompt_text(
            prompts.judge_prompt(
                "a.png",
                "What happens next?",
                "b.png",
                input_caption="a kettle on a lit gas stove",
                candidate_caption=candidate,
                captions=True,
            )
        )
        return parse_judgement(baseline_reply([("user", text)])).verdict

    assert judge("a kettle on a stove with steam") == T  # shares "kettle" and "stove"
    assert judge("a kettle on a shelf") == F
    assert judge(None) == A


def test_cost_lines():
    assert (
        cost_line(Stage("judge", "t", {}, items=40, calls_per_item=5, unit="judges"))
        == "judge: 40 items x 5 judges = 200 model calls"
    )
    assert cost_line(Stage("judge", "t", {}, items=40, calls_per_item=5, unit="judges"), done=16) == (
        "judge: 40 items x 5 judges = 200 model calls; 80 of them done by an earlier run, 120 to make"
    )
    assert cost_line(Stage("generate", "t", {}, items=1)) == "generate: 1 items = 1 model call"
    assert cost_line(Stage("retrieve", "t", {}, items=26, calls_per_item=0)) == "retrieve: 26 items, no model call"


# --- the judge stage with a scripted mockllm panel --------------------------------------------------


def _judge_model(votes: dict[str, str], calls: list[int]):
    """A mockllm judge voting by the candidate's caption (the last caption in the prompt); ``calls``
    counts its replies."""

    def reply(input, tools, tool_choice, config):
        calls.append(1)
        text = input[-1].text
        caption = [line for line in text.splitlines() if line.startswith(prompts.CAPTION_LABEL)][-1]
        vote = next(v for key, v in votes.items() if key in caption)
        return ModelOutput.from_content(
            "mockllm/model", f"<reasoning>scripted at {config.temperature}</reasoning>\n<verdict>{vote}</verdict>"
        )

    return get_model("mockllm/model", custom_outputs=reply, memoize=False)


def test_judge_stage_with_a_scripted_mockllm_panel_and_rescoring_at_another_confidence(tmp_path):
    from ecom_tasks.rmir.construction.tasks import rmir_build_judge, rmir_panel_scorer

    triplets = [
        {
            "id": "q|phillips_screwdriver",
            "query_id": "q",
            "seed": "q_func_screw",
            "query_text": "Which tool takes this out?",
            "candidate": "phillips_screwdriver",
        },
        {
            "id": "q|claw_hammer",
            "query_id": "q",
            "seed": "q_func_screw",
            "query_text": "Which tool takes this out?",
            "candidate": "claw_hammer",
        },
    ]
    path = tmp_path / "triplets.jsonl"
    digest = write_jsonl(path, triplets, output=OutputFolder(tmp_path))
    # Judges 1-4 accept the screwdriver, judge 5 rejects it; everyone rejects the hammer.
    calls: list[int] = []
    roles = {f"judge_{i}": _judge_model({"phillips": T if i < 5 else F, "hammer": F}, calls) for i in range(1, 6)}
    task = rmir_build_judge(
        seeds=str(fixtures_dir("rmir") / "seeds.jsonl"), input=str(path), input_sha256=digest, captions=True
    )
    [log] = inspect_eval(task, model="mockllm/model", model_roles=roles, display="none", log_dir=str(tmp_path / "logs"))
    assert log.status == "success" and len(calls) == 10
    scores = {s.id: s.scores["rmir_panel_scorer"] for s in log.samples}
    screwdriver, hammer = scores["q|phillips_screwdriver"], scores["q|claw_hammer"]
    assert screwdriver.metadata["votes"] == {"judge_1": T, "judge_2": T, "judge_3": T, "judge_4": T, "judge_5": F}
    assert screwdriver.value["confidence"] == pytest.approx(0.8) and screwdriver.value["uncertain"] == 1
    assert hammer.value["confidence"] == 1.0 and hammer.value["negative"] == 1
    # Every judge was asked once, at the panel's temperature, with both images attached.
    for sample in log.samples:
        asked = [e for e in sample.events if e.event == "model"]
        assert len(asked) == 5 and {c.config.temperature for c in asked} == {0.85}
        assert sum(1 for part in asked[0].input[-1].content if part.type == "image") == 2
    # Re-scored at confidence 0.8 from the stored replies: the screwdriver is a positive, no model is called.
    rescored = inspect_score(log, rmir_panel_scorer(confidence=0.8), action="overwrite", display="none")
    again = {s.id: s.scores["rmir_panel_scorer"] for s in rescored.samples}
    assert again["q|phillips_screwdriver"].value["positive"] == 1
    assert len(calls) == 10


# --- echoes of the stage's instructions: never a pair, never a vote -----------------------------------

_FORMAT_BLOCK = (
    "<functional>\n<query>the query</query>\n<target>the target description</target>\n"
    "<reasoning>one or two sentences linking image, query and target</reasoning>\n</functional>"
)


@pytest.mark.parametrize(
    ("reply", "status", "pairs"),
    [
        # the format's own block, copied alone: placeholders, not a pair
        (_FORMAT_BLOCK, "unreadable", set()),
        ("Sure!\n" + _FORMAT_BLOCK.upper(), "unreadable", set()),
        # a garbled copy of the instructions, cut off inside the format
        (
            "You are writing test questions for image   search engines that must reason. Reply in this format, "
            "the three kinds in this order:\n<image>one sentence describing the input image</image>\n<functional>",
            "unreadable",
            set(),
        ),
        # the model's own pair after a copy of the format is read
        (_FORMAT_BLOCK + "\n\n<functional>" + PAIR + "</functional>", "partial", {"functional"}),
    ],
)
def test_parse_generation_never_takes_the_instructions_for_a_pair(reply, status, pairs):
    parsed = parse_generation(reply)
    assert (parsed.status, set(parsed.pairs)) == (status, pairs)


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        # the reminder's three tags, copied: alternatives, no vote
        (prompts.JUDGE_REMINDER, None),
        ("<verdict>True</verdict>, <verdict>False</verdict> or <verdict>ABSTAIN</verdict>", None),
        # the format line, copied
        (
            "<reasoning>why the candidate does or does not answer the query</reasoning>\n"
            "<verdict>True, False or ABSTAIN</verdict>",
            None,
        ),
        # the instructions' examples end in verdict words; copied, they are no vote
        ('- Input [a padlock on a gate], query "What would open this?", candidate [a ring of keys]: True.', None),
        # the model's own verdicts
        (
            "<candidate>a ring of keys</candidate>\n<reasoning>keys open padlocks</reasoning>\n<verdict>True</verdict>",
            "True",
        ),
        ("Keys open a padlock, so this fits.\nVerdict: True", "True"),
        (prompts.JUDGE_REMINDER + "\nThe pool is empty, so no guests.\n<verdict>False</verdict>", "False"),
    ],
)
def test_parse_judgement_never_takes_the_instructions_for_a_vote(reply, verdict):
    assert parse_judgement(reply).verdict == verdict


@pytest.mark.parametrize(
    ("reply", "valid"),
    [
        ("<image>your description of the input image</image>\n<verdict>yes or no</verdict>", None),
        ("<image>a padlock on a gate</image>\n<reasoning>needs the image</reasoning>\n<verdict>yes</verdict>", True),
    ],
)
def test_parse_filter_never_takes_the_format_for_a_verdict(reply, valid):
    assert parse_filter(reply).valid is valid
