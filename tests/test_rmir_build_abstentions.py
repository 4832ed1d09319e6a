"""``ecom-tasks build rmir`` refuses to invent data: a model stage whose votes mostly abstain (cut off by
the token limit, unreadable, or declined) stops the build with the counts and writes no data set; every
stage prints its votes' outcomes. The loopback panel of ``test_rmir_construction_pipeline``'s scenario."""

from __future__ import annotations

import pytest
from helpers import mark_build_folder
from loopback.openai_server import Reply, last_user_text, serve_openai_compatible
from test_rmir_construction_pipeline import _stage, build_command, scenario_seeds, scripted_policy

from ecom_tasks.cli import main as ecom_tasks_main

#: The scenario's stages: 1 input image, 2 generated queries, 7 triplets x 5 judges.
JUDGE_VOTES = 35


def run_build(policy, tmp_path, monkeypatch, capsys, *extra: str) -> tuple[int, str, list[tuple[str, int | None]]]:
    """The scenario's build in this process; (exit code, output, the stage and output limit of every request)."""
    seeds = tmp_path / "seeds" if (tmp_path / "seeds").exists() else scenario_seeds(tmp_path / "seeds")
    with serve_openai_compatible(policy) as server:
        monkeypatch.setenv("LOOP_BASE_URL", server.base_url)
        monkeypatch.setenv("LOOP_API_KEY", "none")
        with pytest.raises(SystemExit) as exited:
            ecom_tasks_main(build_command(seeds, tmp_path / "build", *extra)[1:])
        stages = [
            (_stage(last_user_text({"messages": body["messages"][:1]})), body.get("max_tokens"))
            for body in server.requests
        ]
    captured = capsys.readouterr()
    return exited.value.code, captured.out + captured.err, stages


def cut_off(body: dict) -> Reply:
    return Reply("<reasoning>Let me look at the image closely. The candidate shows", "length")


@pytest.mark.slow  # ~5 s: the first build of a run pays Inspect's start-up
def test_every_reply_cut_off_stops_at_the_first_stage(tmp_path, monkeypatch, capsys):
    code, printed, stages = run_build(cut_off, tmp_path, monkeypatch, capsys)
    assert code == 1, printed
    assert (
        "stage generate stopped the build: 1 votes: 0 answered, 1 abstained (1 cut off by the token limit, "
        "0 unreadable). With every vote abstaining" in printed
    )
    assert "raise --max-tokens" in printed and "no data set written" in printed
    assert stages == [("generate", 4096)] and not (tmp_path / "build" / "work" / "generated.jsonl").exists()


def test_a_judge_panel_cut_off_stops_the_build_and_an_earlier_data_set_goes(tmp_path, monkeypatch, capsys):
    def judges_cut_off(body: dict):
        return cut_off(body) if body["model"].startswith("judge-") else scripted_policy(body)

    mark_build_folder(tmp_path / "build", "rmir")
    stale = tmp_path / "build" / "data" / "queries.jsonl"
    stale.parent.mkdir(parents=True)
    stale.write_text('{"id": "from an earlier build"}\n', encoding="utf-8")
    code, printed, stages = run_build(judges_cut_off, tmp_path, monkeypatch, capsys, "--max-tokens", "64")
    assert code == 1, printed
    assert "  generate: 1 votes: 1 answered, 0 abstained" in printed and "  filter: 2 votes: 2 answered" in printed
    assert (
        f"stage judge stopped the build: {JUDGE_VOTES} votes: 0 answered, {JUDGE_VOTES} abstained "
        f"({JUDGE_VOTES} cut off by the token limit, 0 unreadable)" in printed
    )
    # --max-tokens reaches every stage; each cut-off vote is asked once more, then abstains
    assert {limit for _, limit in stages} == {64}
    assert [stage for stage, _ in stages].count("judge") == 2 * JUDGE_VOTES
    assert not stale.exists() and not (tmp_path / "build" / "work" / "votes.jsonl").exists()


def test_declined_votes_are_counted_and_the_share_is_the_users(tmp_path, monkeypatch, capsys):
    """The scenario's panel: 3 of its 35 votes ABSTAIN (declined). Accepted by default and printed; with
    --max-abstention-share 0.05 the same command reuses every log and stops at the judges."""
    code, printed, _ = run_build(scripted_policy, tmp_path, monkeypatch, capsys)
    assert code == 0, printed
    assert (
        f"  judge: {JUDGE_VOTES} votes: 32 answered, 3 abstained (0 cut off by the token limit, 3 declined" in printed
    )
    code, printed, stages = run_build(scripted_policy, tmp_path, monkeypatch, capsys, "--max-abstention-share", "0.05")
    assert code == 1 and stages == [], printed
    assert "stage judge stopped the build" in printed and "more than 5% of the votes abstaining" in printed
    assert "read why the model declined" in printed and not (tmp_path / "build" / "data" / "queries.jsonl").exists()
