"""``ecom-tasks build rair`` stopped mid-stage by a server that fails for good, then re-run: the loopback
server is asked only for the unfinished items, and the records equal an uninterrupted build's; a changed
candidate file is a new run of every stage, never a stale log reused."""

from __future__ import annotations

import base64
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from helpers import baseline_rule
from inspect_ai.log import list_eval_logs, read_eval_log
from loopback.openai_server import (
    RequestRejected,
    image_parts,
    last_user_text,
    serve_openai_compatible,
    system_text,
)

from ecom_tasks.cli import main as ecom_tasks_main
from ecom_tasks.construction import read_jsonl
from ecom_tasks.rair.construction.pipeline import default_candidates
from ecom_tasks.rair.construction.prompts import INTENT_VERSION, RULES_VERSION, VISUAL_VERSION

# The bundled candidates (ecom_tasks/fixtures/rair_build/candidates.jsonl), counted by hand: 11 pairs;
# 9 distinct queries (c01/c02 share "sugar-free oat biscuits", c08/c09 "red hoodie"); 4 pairs with an
# image (c08-c11); every label can carry a rule (each has at least the L4 rules), so 11 rule items.
# Panels of 3: 27 intent, 12 visual, 33 rule calls. The baseline's replies always parse: no reminder.
INTENT_ITEMS, VISUAL_ITEMS, RULE_ITEMS, PANEL = 9, 4, 11, 3
#: Requests answered before the server breaks: all of stage 1, then two visual pairs (max 1 sample and
#: 1 connection at a time, so the third pair's first request is the first to fail).
VISUAL_DONE = 2
ANSWERED = INTENT_ITEMS * PANEL + VISUAL_DONE * PANEL


def stage_of(body: dict) -> str:
    system = system_text(body)
    for stage, version in (("intent", INTENT_VERSION), ("visual", VISUAL_VERSION), ("rules", RULES_VERSION)):
        if f"[{version}]" in system:
            return stage
    raise AssertionError(f"not a construction prompt: {system[:80]!r}")


class BreaksAfter:
    """Answers like the offline baseline; once ``answered`` requests were answered (None: never) every
    later request is refused with a 400, which no client retries: the server is down for good."""

    def __init__(self) -> None:
        self.answered: int | None = None
        self.served = 0

    def __call__(self, body: dict) -> str:
        if self.answered is not None and self.served >= self.answered:
            raise RequestRejected("the model server is down")
        self.served += 1
        return baseline_rule(system_text(body), last_user_text(body))


def candidates_copy(folder: Path) -> Path:
    """The bundled candidates and their images in a folder of the test's own (the last step edits them)."""
    source = default_candidates()
    shutil.copytree(source.parent, folder)
    return folder / source.name


def build(out: Path, candidates: Path, capsys) -> tuple[int, str]:
    """``ecom-tasks build rair`` in this process; (exit code, what it printed). ``--retry-attempts 0``
    keeps the failing run short (eval-set's 10 immediate retries would each ask the broken server
    again); it is no part of a stage's identity, and resuming works the same with the default."""
    argv = [
        "build",
        "rair",
        "--out",
        str(out),
        "--candidates",
        str(candidates),
        "--model",
        "openai-api/loop/loop-model",
        "--max-samples",
        "1",
        "--max-connections",
        "1",
        "--retry-attempts",
        "0",
        "--display",
        "none",
    ]
    with pytest.raises(SystemExit) as exited:
        ecom_tasks_main(argv)
    captured = capsys.readouterr()
    return exited.value.code, captured.out + captured.err


def asked(requests: list[dict]) -> dict[str, int]:
    counts = {"intent": 0, "visual": 0, "rules": 0}
    for body in requests:
        counts[stage_of(body)] += 1
    return counts


def outputs(out: Path) -> dict[str, bytes]:
    """Every file a build leaves for its user: the records, the images, the decisions."""
    files = [out / "work" / "decisions.jsonl", *sorted((out / "data").rglob("*"))]
    return {str(f.relative_to(out)): f.read_bytes() for f in files if f.is_file()}


@pytest.mark.slow
def test_a_build_stopped_by_a_failing_server_resumes_asking_only_the_unfinished_work(tmp_path, monkeypatch, capsys):
    candidates = candidates_copy(tmp_path / "candidates")
    # c08 and c09 share query and title: a visual request names its pair only by its image (a data URL)
    pair_of_image = {
        base64.b64encode((candidates.parent / r["image"]).read_bytes()).decode(): r["id"]
        for r in read_jsonl(candidates)
        if r["image"]
    }
    policy = BreaksAfter()
    with serve_openai_compatible(policy, model_name="loop-model") as server:
        monkeypatch.setenv("LOOP_BASE_URL", server.base_url)
        monkeypatch.setenv("LOOP_API_KEY", "none")

        # An uninterrupted build in another folder: the reference output.
        code, printed = build(tmp_path / "clean", candidates, capsys)
        assert code == 0, printed
        full = asked(server.requests)
        assert full == {"intent": INTENT_ITEMS * PANEL, "visual": VISUAL_ITEMS * PANEL, "rules": RULE_ITEMS * PANEL}

        # The server breaks after stage 1 and two visual pairs: the build stops with the resume hint.
        out = tmp_path / "build"
        before, policy.served, policy.answered = len(server.requests), 0, ANSWERED
        code, printed = build(out, candidates, capsys)
        assert code == 1 and "stage visual did not finish" in printed and "Re-run the same command" in printed, printed
        first = asked(server.requests[before:])
        assert first["intent"] == INTENT_ITEMS * PANEL and first["rules"] == 0
        # the third pair's voters: the first refused request fails its sample; the others may be in flight
        assert VISUAL_DONE * PANEL < first["visual"] <= (VISUAL_DONE + 1) * PANEL
        assert not (out / "data").exists()
        [stopped] = [read_eval_log(info) for info in list_eval_logs(str(out / "logs" / "2_visual"))]
        assert stopped.status == "error"
        finished = {str(s.id) for s in stopped.samples if s.error is None}
        assert len(finished) == VISUAL_DONE

        # The same command with the server healthy: stage 1 asks nothing, stage 2 its two unfinished
        # pairs (2 x 3 = 6 requests), stage 3 everything (11 x 3 = 33).
        before, policy.answered = len(server.requests), None
        code, printed = build(out, candidates, capsys)
        assert code == 0, printed
        second = server.requests[before:]
        assert asked(second) == {
            "intent": 0,
            "visual": (VISUAL_ITEMS - VISUAL_DONE) * PANEL,
            "rules": RULE_ITEMS * PANEL,
        }
        assert (
            "stage 1/3 intent: 9 items x 3 voters = 27 model calls; 27 of them done by an earlier run, 0 to make"
            in printed
        )
        assert (
            "stage 2/3 visual: 4 items x 3 VLMs = 12 model calls; 6 of them done by an earlier run, 6 to make"
            in printed
        )
        assert "stage 3/3 rules: 11 items x 3 runs = 33 model calls" in printed
        visual_asked = Counter(
            pair_of_image[image_parts(body)[0]["image_url"]["url"].split(",", 1)[1]]
            for body in second
            if stage_of(body) == "visual"
        )
        assert visual_asked == {
            pair: PANEL for pair in set(pair_of_image.values()) - finished
        }  # each unfinished pair's 3 VLMs
        assert outputs(out) == outputs(tmp_path / "clean")
        assert len(read_jsonl(out / "data" / "rair.jsonl")) == 10

        # A changed candidate file is another task for every stage (its sha256 is a task argument):
        # all three stages run again in full, and the records follow the new file.
        rows = read_jsonl(candidates)
        mug = next(r for r in rows if r["id"] == "rair-build-syn-c11")
        mug["title"] = "Ceramic coffee mug 350ml"  # the query's "ceramic" is now in the text: the image is not needed
        candidates.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        before = len(server.requests)
        code, printed = build(out, candidates, capsys)
        assert code == 0, printed
        assert asked(server.requests[before:]) == full
    subsets = {r["candidate"]: r["subset"] for r in read_jsonl(out / "data" / "rair.jsonl") if r["subset"] == "visual"}
    assert sorted(subsets) == ["rair-build-syn-c08", "rair-build-syn-c09"]
    for folder in ("1_intent", "2_visual", "3_rules"):  # the earlier runs' logs stay beside the new ones, unused
        assert len(list_eval_logs(str(out / "logs" / folder))) >= 2


@pytest.mark.slow
def test_another_model_in_the_same_folder_is_not_counted_as_done(tmp_path, monkeypatch, capsys):
    """A build with the offline baseline, then the same command with a served model in the same folder:
    eval_set reuses no log of the other model, and the cost lines say so (they compared only task and
    arguments, and printed "27 of them done by an earlier run, 0 to make" before 72 calls were made)."""
    candidates = candidates_copy(tmp_path / "candidates")
    out = tmp_path / "build"
    argv = [
        "build",
        "rair",
        "--out",
        str(out),
        "--candidates",
        str(candidates),
        "--model",
        "ecom/baseline",
        "--display",
        "none",
    ]
    with pytest.raises(SystemExit) as exited:
        ecom_tasks_main(argv)
    assert exited.value.code == 0
    capsys.readouterr()
    with serve_openai_compatible(BreaksAfter(), model_name="loop-model") as server:
        monkeypatch.setenv("LOOP_BASE_URL", server.base_url)
        monkeypatch.setenv("LOOP_API_KEY", "none")
        code, printed = build(out, candidates, capsys)
        assert code == 0, printed
        assert asked(server.requests) == {
            "intent": INTENT_ITEMS * PANEL,
            "visual": VISUAL_ITEMS * PANEL,
            "rules": RULE_ITEMS * PANEL,
        }
    lines = printed.splitlines()
    for line in (
        "stage 1/3 intent: 9 items x 3 voters = 27 model calls",
        "stage 2/3 visual: 4 items x 3 VLMs = 12 model calls",
        "stage 3/3 rules: 11 items x 3 runs = 33 model calls",
    ):
        assert line in lines  # the whole line: nothing counted as done by the other model
