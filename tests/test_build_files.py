"""``ecom-tasks build rair|monbench|rmir`` on a shared folder, attacked as a hostile colleague or a careless
user would: a planted symlink at an output sub-folder, a dangling symlink where an image goes, an output
onto the input, an output folder that cannot be written. Each is refused before the first model call
(the loopback server counts none) and nothing outside the build folder changes (a victim tree hashed
before and after). Then builds that refuse to invent data: a stage whose votes are all cut off by the
token limit stops, names the stage and the counts, and writes no data set."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from helpers import baseline_rule, mark_build_folder
from loopback.openai_server import Reply, last_user_text, serve_openai_compatible, system_text

from ecom_tasks.cli import main as ecom_tasks_main
from ecom_tasks.construction import place_image, read_jsonl, write_jsonl
from ecom_tasks.data import DataValidationError
from ecom_tasks.files import FileRefused, OutputFolder
from ecom_tasks.monbench.construction.pipeline import default_pairs
from ecom_tasks.monbench.construction.seeds import load_pairs
from ecom_tasks.rair.construction.pipeline import default_candidates
from ecom_tasks.rmir.construction.pipeline import default_seeds

PNG = (Path(__file__).resolve().parents[1] / "ecom_tasks" / "fixtures" / "ecomeval" / "images" / "mug.png").read_bytes()


def tree(folder: Path) -> dict[str, str]:
    """Every entry below ``folder``: a file's sha256, a symlink's target, a folder's mark."""
    entries = {}
    for path in sorted(folder.rglob("*")):
        key = path.relative_to(folder).as_posix()
        if path.is_symlink():
            entries[key] = "link -> " + os.readlink(path)
        elif path.is_dir():
            entries[key] = "folder"
        else:
            entries[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return entries


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A colleague's folder an attack points at: it must look the same after every command."""
    folder = tmp_path / "victim"
    (folder / "images").mkdir(parents=True)
    (folder / "notes.txt").write_text("my notes\n", encoding="utf-8")
    (folder / "images" / "keep.png").write_bytes(PNG)
    return folder


# --- the writers every build uses --------------------------------------------------------------------


def test_write_jsonl_replaces_a_planted_symlink_and_writes_strict_json(tmp_path, victim):
    before = tree(victim)
    out = tmp_path / "out"
    out.mkdir()
    (out / "rows.jsonl").symlink_to(victim / "notes.txt")
    digest = write_jsonl(out / "rows.jsonl", [{"a": float("nan"), "b": "é"}, {"a": 1}], output=OutputFolder(out))
    assert tree(victim) == before
    assert not (out / "rows.jsonl").is_symlink()
    raw = (out / "rows.jsonl").read_bytes()
    assert raw == '{"a": null, "b": "é"}\n{"a": 1}\n'.encode() and digest == hashlib.sha256(raw).hexdigest()
    with pytest.raises(FileRefused, match="not inside the build folder"):
        write_jsonl(victim / "x.jsonl", [{"a": 1}], output=OutputFolder(out, what="build folder"))
    assert tree(victim) == before


def test_read_jsonl_names_every_bad_line_and_never_opens_a_fifo(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"ok": 1}\n[1, 2]\n{"broken": \n' + "[" * 200 + "]" * 200 + "\n", encoding="utf-8")
    with pytest.raises(DataValidationError) as caught:
        read_jsonl(path)
    rows = [(p.row, p.message) for p in caught.value.problems]
    assert [row for row, _ in rows] == [2, 3, 4]
    assert rows[0][1] == "not a JSON object" and "not valid JSON" in rows[1][1] and "nested" in rows[2][1]
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(FileRefused, match="FIFO"):
        read_jsonl(fifo)


def test_place_image_never_writes_through_a_symlink_and_keeps_only_the_same_picture(tmp_path, victim):
    before = tree(victim)
    source = tmp_path / "source.png"
    source.write_bytes(PNG)
    output = OutputFolder(tmp_path / "out")
    images = tmp_path / "out" / "data" / "images"
    images.mkdir(parents=True)
    # a dangling symlink where the image goes: following it would create victim/images/new.png
    (images / "a.png").symlink_to(victim / "images" / "new.png")
    # a symlink to the colleague's picture: following it would overwrite it
    (images / "b.png").symlink_to(victim / "images" / "keep.png")
    for name in ("a.png", "b.png"):
        place_image(str(source), images / name, "copy", output=output)
        assert not (images / name).is_symlink() and (images / name).read_bytes() == PNG
    assert tree(victim) == before
    # the same picture is kept (a resumed build); another picture under the name is replaced
    place_image(str(source), images / "c.png", "link", output=output)
    inode = (images / "c.png").stat().st_ino
    place_image(str(source), images / "c.png", "link", output=output)
    assert (images / "c.png").stat().st_ino == inode
    (images / "d.png").write_bytes(b"an older picture")
    place_image(str(source), images / "d.png", "copy", output=output)
    assert (images / "d.png").read_bytes() == PNG
    # a symlinked sub-folder of the output is refused, never written through
    shutil.rmtree(images)
    images.symlink_to(victim / "images")
    with pytest.raises(FileRefused, match="a symbolic link inside the output folder"):
        place_image(str(source), images / "e.png", "copy", output=output)
    with pytest.raises(FileRefused, match="a symbolic link inside the output folder"):
        place_image("data:image/png;base64,iVBORw0KGgo=", images / "f.png", "copy", output=output)
    assert tree(victim) == before


@pytest.mark.parametrize("mode,swapped_at", [("link", "link"), ("link", "open"), ("copy", "open")])
def test_an_image_swapped_for_a_link_to_a_colleagues_picture_while_it_is_placed_is_refused(
    tmp_path, victim, monkeypatch, mode, swapped_at
):
    """The race itself: the build's image (a path the load resolved) is replaced by a link to a colleague's
    picture at the moment it is opened, or between the open and the hard link. Neither the picture nor a hard
    link to it lands in the build folder."""
    secret = victim / "images" / "keep.png"
    secret.write_bytes(PNG + b"colleague")
    before = tree(victim)
    source = tmp_path / "source.png"
    source.write_bytes(PNG)
    output = OutputFolder(tmp_path / "out")
    target = tmp_path / "out" / "images" / "a.png"
    real = getattr(os, swapped_at)

    def swapping(path, *args, **kwargs):
        if os.fspath(path) == os.fspath(source) and not source.is_symlink():
            source.unlink()
            source.symlink_to(secret)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, swapped_at, swapping)
    with pytest.raises(FileRefused, match=f"{source}: (a symbolic link|changed while it was linked)"):
        place_image(str(source), target, mode, output=output)
    monkeypatch.undo()
    assert not target.exists() and list((tmp_path / "out").rglob("*.tmp")) == []
    assert tree(victim) == before and secret.stat().st_nlink == 1


# --- the build commands under attack -----------------------------------------------------------------

BENCHMARKS = {
    "rair": ("--candidates", default_candidates(), "data/rair.jsonl"),
    "monbench": ("--pairs", default_pairs(), "data/monbench.jsonl"),
    "rmir": ("--seeds", default_seeds(), "data/queries.jsonl"),
}


def inputs_copy(benchmark: str, folder: Path) -> Path:
    """The bundled build input (and its images) in a folder of the test's own."""
    _, source, _ = BENCHMARKS[benchmark]
    shutil.copytree(source.parent, folder)
    return folder / source.name


def run_build(benchmark: str, out: Path, source: Path, capsys, *extra: str) -> tuple[int, str]:
    """``ecom-tasks build <benchmark>`` in this process against the loopback model; (exit code, output)."""
    option, _, _ = BENCHMARKS[benchmark]
    argv = ["build", benchmark, "--out", str(out), option, str(source), "--model", "openai-api/loop/loop-model"]
    argv += ["--max-connections", "2", "--display", "none", *extra]
    with pytest.raises(SystemExit) as exited:
        ecom_tasks_main(argv)
    captured = capsys.readouterr()
    return exited.value.code, captured.out + captured.err


@pytest.fixture
def server(monkeypatch):
    with serve_openai_compatible(lambda body: baseline_rule(system_text(body), last_user_text(body))) as running:
        monkeypatch.setenv("LOOP_BASE_URL", running.base_url)
        monkeypatch.setenv("LOOP_API_KEY", "none")
        yield running


PLANTED = {
    "rair": ["data", "data/images", "logs", "logs/2_visual", "work"],
    "monbench": ["data", "logs", "logs/1_votes", "work"],
    "rmir": ["data", "data/images", "logs/4_judge", "work"],  # the last stage's folder: refused before stage 1
}


@pytest.mark.parametrize(
    "benchmark,link", [(benchmark, link) for benchmark, links in PLANTED.items() for link in links]
)
def test_a_symlinked_output_sub_folder_is_refused_before_any_model_call(
    benchmark, link, tmp_path, victim, server, capsys
):
    source = inputs_copy(benchmark, tmp_path / "inputs")
    out = tmp_path / "build"
    (out / link).parent.mkdir(parents=True, exist_ok=True)
    (out / link).symlink_to(victim / "images", target_is_directory=True)
    before = tree(victim)
    code, printed = run_build(benchmark, out, source, capsys)
    assert code == 1 and printed.startswith("ecom-tasks: ") and "Traceback" not in printed, printed
    assert f"{out / link}: a symbolic link inside the build folder; not written through" in printed
    assert server.requests == [] and tree(victim) == before


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_a_colleagues_folder_that_no_build_made_is_refused_untouched(benchmark, tmp_path, server, capsys):
    """--out names a colleague's data set with a build's layout (data/, data/images/, work/): a build would
    replace their data file and clear their images. Only a folder a build of this benchmark marked, or a new
    or empty one, is a build folder."""
    source = inputs_copy(benchmark, tmp_path / "inputs")
    out = tmp_path / "theirs"
    _, _, data_name = BENCHMARKS[benchmark]
    (out / "data" / "images").mkdir(parents=True)
    (out / "work").mkdir()
    (out / data_name).write_text('{"id": "their record"}\n', encoding="utf-8")
    (out / "data" / "images" / "their-photo.png").write_bytes(PNG)
    before = tree(out)
    code, printed = run_build(benchmark, out, source, capsys)
    assert code == 1 and f"{out}: not empty and not a build folder (no .ecom-tasks-build.json)" in printed, printed
    assert server.requests == [] and tree(out) == before


@pytest.mark.parametrize(("benchmark", "other"), [("rair", "rmir"), ("monbench", "rair"), ("rmir", "monbench")])
def test_another_benchmarks_build_folder_is_refused_untouched(benchmark, other, tmp_path, server, capsys):
    source = inputs_copy(benchmark, tmp_path / "inputs")
    out = tmp_path / "build"
    mark_build_folder(out, other)
    (out / "data").mkdir()
    (out / "data" / "kept.jsonl").write_text("{}\n", encoding="utf-8")
    before = tree(out)
    code, printed = run_build(benchmark, out, source, capsys)
    assert code == 1 and f"{out}: the build folder of {other!r}, not of {benchmark!r}" in printed, printed
    assert server.requests == [] and tree(out) == before


@pytest.mark.parametrize("attack", ["link", "fifo"])
def test_a_planted_marker_is_refused(attack, tmp_path, victim, server, capsys):
    """A link at the marker (to a colleague's file that says "rair") or a FIFO there (reading would hang)."""
    source = inputs_copy("rair", tmp_path / "inputs")
    out = tmp_path / "build"
    out.mkdir()
    marker = out / ".ecom-tasks-build.json"
    if attack == "fifo":
        os.mkfifo(marker)
    else:
        (victim / "marker.json").write_text('{"benchmark": "rair"}', encoding="utf-8")
        marker.symlink_to(victim / "marker.json")
    before = tree(victim)
    code, printed = run_build("rair", out, source, capsys)
    assert code == 1 and f"{marker}: not a regular file; not followed" in printed, printed
    assert server.requests == [] and tree(victim) == before


def test_a_new_build_folder_is_marked_and_an_empty_one_is_taken(tmp_path, server, capsys):
    source = inputs_copy("monbench", tmp_path / "inputs")
    out = tmp_path / "empty"
    out.mkdir()
    code, printed = run_build("monbench", out, source, capsys)
    assert code == 0, printed
    assert json.loads((out / ".ecom-tasks-build.json").read_text(encoding="utf-8")) == {"benchmark": "monbench"}
    code, printed = run_build("monbench", out, source, capsys)  # the same build resumes in its folder
    assert code == 0, printed


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_the_build_folder_itself_a_symlink_is_refused(benchmark, tmp_path, victim, server, capsys):
    source = inputs_copy(benchmark, tmp_path / "inputs")
    (tmp_path / "build").symlink_to(victim, target_is_directory=True)
    before = tree(victim)
    code, printed = run_build(benchmark, tmp_path / "build", source, capsys)
    assert code == 1 and "the build folder is a symbolic link" in printed, printed
    assert server.requests == [] and tree(victim) == before


@pytest.mark.parametrize("benchmark", BENCHMARKS)
@pytest.mark.parametrize("where", ["data", "work"])
def test_output_onto_the_input_is_refused_before_any_model_call(benchmark, where, tmp_path, server, capsys):
    """The input file placed where the build writes a file of its own (a re-build from its own output)."""
    _, _, data_name = BENCHMARKS[benchmark]
    out = tmp_path / "build"
    copied = inputs_copy(benchmark, out / "inputs")
    name = data_name if where == "data" else "work/decisions.jsonl" if benchmark == "rair" else "work/votes.jsonl"
    source = out / name
    source.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(copied, source)
    if benchmark == "rair":  # its image paths are relative to the file
        shutil.move(out / "inputs" / "images", source.parent / "images")
    before = source.read_bytes()
    code, printed = run_build(benchmark, out, source, capsys)
    assert code == 1 and f"{source}: is the input {source}; choose another output" in printed, printed
    assert server.requests == [] and source.read_bytes() == before


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_a_build_folder_that_cannot_be_created_is_found_before_any_model_call(benchmark, tmp_path, server, capsys):
    source = inputs_copy(benchmark, tmp_path / "inputs")
    (tmp_path / "a-file").write_text("not a folder", encoding="utf-8")
    code, printed = run_build(benchmark, tmp_path / "a-file" / "build", source, capsys)
    assert code == 1 and f"{tmp_path / 'a-file'}: cannot create the folder" in printed, printed
    assert server.requests == []


@pytest.fixture
def read_only(monkeypatch):
    """Make a folder read-only: chmod 555, or, for root (who writes through permissions), the EACCES
    the file system would answer to creating a file in it."""
    made: list[Path] = []

    def apply(folder: Path) -> None:
        if os.geteuid() != 0:
            folder.chmod(0o555)
            made.append(folder)
            return
        real = tempfile.mkstemp

        def mkstemp(*args, **kwargs):
            if Path(kwargs.get("dir") or "").resolve() == folder.resolve():
                raise PermissionError(errno.EACCES, "Permission denied", str(folder))
            return real(*args, **kwargs)

        monkeypatch.setattr(tempfile, "mkstemp", mkstemp)

    yield apply
    for folder in made:
        folder.chmod(0o755)


@pytest.mark.parametrize("benchmark", BENCHMARKS)
@pytest.mark.parametrize("sub_folder", ["", "data"])
def test_an_unwritable_build_folder_is_found_before_any_model_call(
    benchmark, sub_folder, tmp_path, server, capsys, read_only
):
    source = inputs_copy(benchmark, tmp_path / "inputs")
    out = tmp_path / "build"
    (out / sub_folder).mkdir(parents=True, exist_ok=True)
    read_only(out / sub_folder)
    code, printed = run_build(benchmark, out, source, capsys)
    assert code == 1 and "Permission denied" in printed and str(out / sub_folder).rstrip("/") in printed, printed
    assert server.requests == []


@pytest.mark.slow
def test_a_resumed_rair_build_never_writes_an_image_through_a_dangling_symlink(tmp_path, victim, server, capsys):
    source = inputs_copy("rair", tmp_path / "inputs")
    out = tmp_path / "build"
    code, printed = run_build("rair", out, source, capsys)
    assert code == 0, printed
    images = sorted((out / "data" / "images").iterdir())
    assert images
    originals = {path.name: path.read_bytes() for path in images}
    for path in images:  # a colleague swaps every image for a dangling link into their own folder
        path.unlink()
        path.symlink_to(victim / "images" / f"planted-{path.name}")
    asked = len(server.requests)
    before = tree(victim)
    code, printed = run_build("rair", out, source, capsys)
    assert code == 0, printed
    assert len(server.requests) == asked  # resumed: every stage's log reused
    assert tree(victim) == before
    assert {p.name: p.read_bytes() for p in (out / "data" / "images").iterdir() if not p.is_symlink()} == originals


# --- builds that refuse to invent data ----------------------------------------------------------------


def cut_off(body: dict) -> Reply:
    """A model stopped by its token limit in the middle of its reasoning."""
    return Reply("Let me think about whether this ad matches the query. The user wants", "length")


def test_a_monbench_build_whose_votes_are_all_cut_off_stops_and_writes_no_data(tmp_path, monkeypatch, capsys):
    pairs = inputs_copy("monbench", tmp_path / "inputs")
    out = tmp_path / "build"
    mark_build_folder(out, "monbench")
    stale = out / "data" / "monbench.jsonl"
    stale.parent.mkdir(parents=True)
    stale.write_text('{"id": "from an earlier build"}\n', encoding="utf-8")
    with serve_openai_compatible(cut_off) as server:
        monkeypatch.setenv("LOOP_BASE_URL", server.base_url)
        monkeypatch.setenv("LOOP_API_KEY", "none")
        code, printed = run_build("monbench", out, pairs, capsys, "--voters", "2")
        asked = len(server.requests)
    pair_count = len(load_pairs(pairs))
    assert pair_count == 14
    votes = 2 * pair_count
    assert asked == 2 * votes  # each cut-off vote asked once more with the shorter-answer reminder
    assert code == 1, printed
    assert (
        f"ecom-tasks: stage votes stopped the build: {votes} votes: 0 answered, {votes} abstained "
        f"({votes} cut off by the token limit, 0 unreadable). With every vote abstaining" in printed
    )
    assert "raise --max-tokens" in printed and "no data set written" in printed and "questions made" not in printed
    assert not stale.exists() and not (out / "work" / "questions.jsonl").exists()


def test_a_rair_build_stops_at_the_stage_whose_votes_are_all_cut_off(tmp_path, monkeypatch, capsys):
    candidates = inputs_copy("rair", tmp_path / "inputs")
    out = tmp_path / "build"
    with serve_openai_compatible(cut_off) as server:
        monkeypatch.setenv("LOOP_BASE_URL", server.base_url)
        monkeypatch.setenv("LOOP_API_KEY", "none")
        panels = ("--voters", "1", "--vlms", "1", "--rule-runs", "1")
        thresholds = ("--min-intent-votes", "1", "--min-visual-votes", "1", "--min-rule-votes", "1")
        code, printed = run_build("rair", out, candidates, capsys, *panels, *thresholds)
        systems = [system_text(body) for body in server.requests]
    queries = 9  # the bundled candidates' distinct queries (11 pairs, two queries shared)
    assert code == 1, printed
    assert (
        f"stage intent stopped the build: {queries} votes: 0 answered, {queries} abstained "
        f"({queries} cut off by the token limit, 0 unreadable)" in printed
    )
    assert len(systems) == 2 * queries and "stage 2/3" not in printed  # the later stages never asked
    assert not (out / "data").exists() and not (out / "work" / "decisions.jsonl").exists()


def test_half_the_votes_abstaining_is_accepted_and_the_share_is_the_users(tmp_path, monkeypatch, capsys):
    """7 of 14 pairs' only voter is cut off: 50% is not more than the default share, so the build goes
    on (and says so); the same command with --max-abstention-share 0.4 reuses the log and stops."""
    pairs = inputs_copy("monbench", tmp_path / "inputs")
    cut_ads = {pair.ad for pair in load_pairs(pairs)[:7]}

    def policy(body: dict):
        # the pair's ad ends its line of the first user message (a retry adds a reminder after it)
        first = last_user_text({"messages": [next(m for m in body["messages"] if m["role"] == "user")]})
        if any(f"Ad: {ad}\n" in first + "\n" for ad in cut_ads):
            return cut_off(body)
        return baseline_rule(system_text(body), last_user_text(body))

    out = tmp_path / "build"
    with serve_openai_compatible(policy) as server:
        monkeypatch.setenv("LOOP_BASE_URL", server.base_url)
        monkeypatch.setenv("LOOP_API_KEY", "none")
        code, printed = run_build("monbench", out, pairs, capsys, "--voters", "1")
        assert code == 0, printed
        assert "  votes: 14 votes: 7 answered, 7 abstained (7 cut off by the token limit, 0 unreadable)" in printed
        asked = len(server.requests)
        code, printed = run_build("monbench", out, pairs, capsys, "--voters", "1", "--max-abstention-share", "0.4")
        assert len(server.requests) == asked  # the finished log is reused: no model call
    assert code == 1 and "more than 40% of the votes abstaining" in printed, printed
    assert not (out / "data" / "monbench.jsonl").exists()
    rows = [json.loads(line) for line in (out / "work" / "votes.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sum(row["votes"] == [None] for row in rows) == 7  # the earlier, accepted build's votes


def test_vote_outcomes_by_hand_and_where_a_stage_stops(capsys):
    import argparse

    from ecom_tasks.construction import TooManyAbstentions, check_abstentions, share, vote_outcomes

    # three items of a 2-seat panel: a rule stage's empty vote () is an answer ("no rule"), not an abstention
    outcomes = vote_outcomes(
        "rules",
        [
            ([("R1",), ()], ["ok", "ok"]),
            ([None, None], ["limit", "no_answer"]),
            ([None, "relevant"], ["ambiguous", "ok"]),
        ],
    )
    assert (outcomes.total, outcomes.answered, outcomes.cut_off, outcomes.abstained) == (6, 3, 1, 3)
    assert outcomes.counts() == (
        "6 votes: 3 answered, 3 abstained (1 cut off by the token limit, 2 unreadable: 1 ambiguous, 1 no_answer)"
    )
    check_abstentions(outcomes)  # 3 of 6 is not more than half: the build goes on, and says so
    assert capsys.readouterr().out == f"  rules: {outcomes.counts()}\n"
    with pytest.raises(TooManyAbstentions, match=r"stage rules stopped the build: 6 votes.*more than 40% of the votes"):
        check_abstentions(outcomes, 0.4)
    every = vote_outcomes("votes", [([None, None], ["limit", "limit"])])
    with pytest.raises(TooManyAbstentions, match="With every vote abstaining") as stopped:
        check_abstentions(every, 1.0)  # all abstained stops whatever share is accepted
    assert "raise --max-tokens" in str(stopped.value) and "answers in the prompt's format" not in str(stopped.value)
    check_abstentions(vote_outcomes("visual", []))  # a stage with no item has nothing to judge
    for text in ("nan", "-0.1", "1.5", "half"):
        with pytest.raises(argparse.ArgumentTypeError):
            share(text)
    assert share("0.25") == 0.25


@pytest.mark.parametrize("benchmark", ["rair", "monbench", "rmir"])
def test_max_tokens_must_be_a_whole_number_above_zero(benchmark, tmp_path, capsys):
    # argparse refuses the value before anything is read or asked: no build folder appears
    out = tmp_path / "build"
    for value in ("0", "-5", "1.5", "many"):
        with pytest.raises(SystemExit) as exited:
            ecom_tasks_main(["build", benchmark, "--out", str(out), "--model", "ecom/baseline", "--max-tokens", value])
        printed = capsys.readouterr().err
        assert exited.value.code == 2, printed
        assert f"argument --max-tokens: must be a whole number above 0, got {value!r}" in printed
    assert not out.exists()


@pytest.mark.parametrize("padding", [2 << 20, 0], ids=["inflates-past-the-limit", "no-log"])
def test_a_hostile_eval_log_in_a_stage_folder_is_refused_before_any_model_call(
    padding, tmp_path, server, capsys, monkeypatch
):
    """Inspect's eval_set reads every log's header in a stage's folder, and the resume its samples, each member
    inflated whole in memory: a small planted .eval of padding (here past a limit made smaller), or one that is no
    log (Inspect's reader raised a traceback), is refused by name before stage 1."""
    import zipfile

    from ecom_tasks import files

    monkeypatch.setattr(files, "MAX_LOG_INFLATED_BYTES", 1 << 20)
    source = inputs_copy("monbench", tmp_path / "inputs")
    mark_build_folder(tmp_path / "build", "monbench")  # an earlier build's folder: it resumes there
    planted = tmp_path / "build" / "logs" / "1_votes" / "2026-01-01T10-00-00+00-00_votes_x.eval"
    planted.parent.mkdir(parents=True)
    with zipfile.ZipFile(planted, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", b"{}")
        archive.writestr("samples/1_epoch_1.json", b"{" + b" " * padding + b"}")
    assert planted.stat().st_size < 20_000
    code, printed = run_build("monbench", tmp_path / "build", source, capsys)
    why = "its members inflate past" if padding else "ValidationError"
    assert code == 1 and f"{planted}: not a readable Inspect log ({why}" in printed, printed
    assert server.requests == []


@pytest.mark.parametrize(
    "benchmark,folder,name,attack",
    [
        ("monbench", "logs/1_votes", "eval-set.json", "link"),
        ("monbench", "logs/1_votes", ".eval-set-id", "fifo"),
        ("rair", "logs/3_rules", "logs.json", "dangling link"),
        ("rair", "logs/2_visual", ".eval-set-id", "link"),
    ],
)
def test_a_link_or_fifo_at_inspects_eval_set_files_is_refused_before_any_model_call(
    benchmark, folder, name, attack, tmp_path, victim, server, capsys
):
    """Inspect's eval_set reads and rewrites these by name in a stage's log folder: it wrote a colleague's
    file through a planted link, and waited forever on a FIFO. Every stage's folder is checked before stage 1."""
    source = inputs_copy(benchmark, tmp_path / "inputs")
    planted = tmp_path / "build" / folder / name
    planted.parent.mkdir(parents=True)
    if attack == "fifo":
        os.mkfifo(planted)
    else:
        planted.symlink_to(victim / ("notes.txt" if attack == "link" else "new.json"))
    before = tree(victim)
    code, printed = run_build(benchmark, tmp_path / "build", source, capsys)
    kind = "not a regular file" if attack == "fifo" else "a symbolic link"
    assert code == 1 and f"{planted}: {kind} where Inspect keeps its eval-set records" in printed, printed
    assert server.requests == [] and tree(victim) == before
