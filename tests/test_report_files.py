"""``ecom-tasks report`` on a shared folder (issue 25): every file it writes goes through
``files.OutputFolder`` and every log it reads is a regular file. Each test plants the attack itself
(a real symlink, a real FIFO, a real folder link pointing out, a malformed results file) and checks
the victim is unchanged, nothing hangs, and the user reads one short message naming the file."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from helpers import check_ok, mark_report_folder, run_cli
from test_report_merge import _rair_log, read_table, run_rows

from ecom_tasks.files import FileRefused
from ecom_tasks.report import write_report

SECRET = b"export PATH=/home/user/bin:$PATH\n"


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim" / ".bashrc"
    victim.parent.mkdir(parents=True)
    victim.write_bytes(SECRET)
    return victim


def _folder_digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "folder"
        for p in sorted(folder.rglob("*"))
    }


def _logs(tmp_path: Path) -> Path:
    logs = tmp_path / "logs"
    _rair_log(logs / "rair.eval")
    return logs


def _short_failure(proc, *names: Path) -> str:
    """The command failed with exit 2 and one short message on stderr naming each of ``names``."""
    check_ok(proc, code=2)
    message = proc.stderr.strip()
    assert "Traceback" not in proc.stderr and len(message.splitlines()) == 1, proc.stderr
    assert all(str(name) in message for name in names), message
    return message


def test_an_existing_file_as_out_is_a_one_line_error(tmp_path: Path):
    logs = _logs(tmp_path)
    taken = tmp_path / "notes.txt"
    taken.write_text("mine\n")
    proc = run_cli(["ecom-tasks", "report", logs, "--out", taken, "--format", "md"])
    assert "is a file, not a folder" in _short_failure(proc, taken)
    assert taken.read_text() == "mine\n"


@pytest.mark.parametrize("planted", ["report.html", "report.md", "csv/runs.csv", "csv/rair_table5.csv"])
def test_a_symlink_planted_at_an_output_name_is_replaced_never_written_through(tmp_path: Path, planted: str):
    victim = _victim(tmp_path)
    out = mark_report_folder(tmp_path / "shared-report")  # an earlier report's folder, where a link was planted
    (out / planted).parent.mkdir(parents=True, exist_ok=True)
    (out / planted).symlink_to(victim)
    write_report([_logs(tmp_path)], out, plots=False)
    assert victim.read_bytes() == SECRET
    assert not (out / planted).is_symlink() and (out / planted).stat().st_size > len(SECRET)
    assert float(run_rows(out, "rair_table5")[0]["general/acc2"]) == 0.5


def test_a_symlinked_csv_folder_is_refused_and_nothing_lands_in_its_target(tmp_path: Path):
    victim_folder = _victim(tmp_path).parent
    before = _folder_digest(victim_folder)
    out = mark_report_folder(tmp_path / "shared-report")
    (out / "csv").symlink_to(victim_folder, target_is_directory=True)
    proc = run_cli(["ecom-tasks", "report", _logs(tmp_path), "--out", out, "--format", "csv"])
    assert "symbolic link" in _short_failure(proc, out / "csv")
    assert _folder_digest(victim_folder) == before


@pytest.mark.parametrize("where", ["the input folder", "inside the input folder", "the input file"])
def test_out_equal_to_or_inside_an_input_is_refused_before_anything_is_written(tmp_path: Path, where: str):
    logs = _logs(tmp_path)
    before = _folder_digest(logs)
    given, out = {
        "the input folder": (logs, logs),
        "inside the input folder": (logs, logs / "report"),
        "the input file": (logs / "rair.eval", logs / "rair.eval"),
    }[where]
    proc = run_cli(["ecom-tasks", "report", given, "--out", out, "--format", "md,csv"])
    message = _short_failure(proc, out)
    assert (
        "is a file, not a folder"
        if where == "the input file"
        else "inside the input"
        if "inside" in where
        else "is the input"
    ) in message
    assert _folder_digest(logs) == before


def test_a_fifo_is_never_opened_and_is_named_whether_given_or_found_in_a_folder(tmp_path: Path):
    logs = _logs(tmp_path)
    found = logs / "pipe.eval"
    os.mkfifo(found)  # found by the walk: named like a log, so listed as unreadable, never opened
    os.mkfifo(logs / "notes.txt")  # not named like a log: passed over
    named = tmp_path / "results_2026-01-01T10-00-00.000001.json"
    os.mkfifo(named)  # named on the command line: refused by name
    out = tmp_path / "report"
    proc = check_ok(run_cli(["ecom-tasks", "report", logs, named, "--out", out, "--format", "csv"], timeout=120))
    assert "Traceback" not in proc.stderr
    for fifo in (named, found):
        assert f"{fifo}: a FIFO (named pipe), not a regular file" in proc.stderr
    statuses = {(Path(r["source"]).name, r["status"]) for r in read_table(out, "runs")}
    assert statuses == {("rair.eval", "success"), (named.name, "unreadable"), (found.name, "unreadable")}


def test_a_symlinked_folder_pointing_out_of_an_input_is_not_walked(tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    _rair_log(elsewhere / "other.eval")
    logs = _logs(tmp_path)
    (logs / "more").symlink_to(elsewhere, target_is_directory=True)
    (logs / "link.eval").symlink_to(elsewhere / "other.eval")  # a file link leaving the folder: not read either
    out = tmp_path / "report"
    result = write_report([logs], out, plots=False)
    # The folder link is not walked; the file link is named as refused, never read.
    assert (result.runs, result.failed) == (1, 1)
    runs = {Path(r["source"]).name: r for r in read_table(out, "runs")}
    assert set(runs) == {"rair.eval", "link.eval"} and runs["link.eval"]["status"] == "unreadable"
    assert "outside" in runs["link.eval"]["error"] and "other" not in runs["rair.eval"]["source"]


def test_malformed_results_json_is_a_short_message_naming_the_file(tmp_path: Path):
    logs = _logs(tmp_path)
    broken = logs / "lm-eval" / "results_2026-01-01T10-00-00.000001.json"
    broken.parent.mkdir()
    broken.write_text('{"results": {"rair_general": {"acc2,none": 0.5}')  # cut off
    deep = logs / "lm-eval" / "results_2026-01-02T10-00-00.000001.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    out = tmp_path / "report"
    proc = check_ok(run_cli(["ecom-tasks", "report", logs, "--out", out, "--format", "csv"]))
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("report: ")]
    assert any(str(broken) in line and "not valid JSON" in line for line in lines), proc.stderr
    assert any(str(deep) in line and "nested more than" in line for line in lines), proc.stderr
    assert float(run_rows(out, "rair_table5")[0]["general/acc2"]) == 0.5  # the good log is still reported


def test_lm_eval_results_with_nan_are_read(tmp_path: Path):
    """lm-eval writes a metric that does not apply as a bare NaN: the report reads it as not applicable."""
    results = {
        "results": {"rair_general": {"alias": "rair_general", "acc2,none": 0.5, "l2_dim_acc,none": float("nan")}},
        "configs": {"rair_general": {"metadata": {"version": 1.2}, "dataset_kwargs": {"subset": "general"}}},
        "config": {"model": "ecom-baseline", "model_args": ""},
        "date": 1767261600.0,
    }
    path = tmp_path / "lm" / "results_2026-01-01T10-00-00.000001.json"
    path.parent.mkdir()
    path.write_text(json.dumps(results))  # json.dumps writes NaN, as lm-eval does
    result = write_report([tmp_path / "lm"], tmp_path / "report", plots=False)
    assert (result.runs, result.failed, result.problems) == (1, 0, [])


def test_write_report_refuses_an_out_that_is_a_file(tmp_path: Path):
    taken = tmp_path / "taken"
    taken.write_text("x")
    with pytest.raises(FileRefused, match="is a file, not a folder"):
        write_report([_logs(tmp_path)], taken)


def test_a_colleagues_unreadable_samples_file_is_named_and_the_report_still_written(tmp_path: Path):
    """A --log_samples file of a run the report compares, with a line nested 10,000 deep: it stopped the whole
    report (exit 2, nothing written); now that run is left out of the comparison, the file is named with its
    line and why, and every table is written."""
    logs = _logs(tmp_path)
    stamp = "2026-01-01T00-00-00.000000"
    results = {
        "results": {"rair_general": {"acc4,none": 0.5}},
        "configs": {"rair_general": {"metadata": {"benchmark": "rair"}}},
        "config": {"model": "another-model"},
        "date": 1.0,
    }
    (logs / "lm").mkdir()
    (logs / "lm" / f"results_{stamp}.json").write_text(json.dumps(results), encoding="utf-8")
    samples = logs / "lm" / f"samples_rair_general_{stamp}.jsonl"
    samples.write_text("[" * 10_000 + "]" * 10_000 + "\n", encoding="utf-8")
    out = tmp_path / "report"
    proc = check_ok(run_cli(["ecom-tasks", "report", logs, "--out", out, "--format", "csv"]))
    assert "Traceback" not in proc.stderr
    assert f"report: {samples}:1:-: JSON nested more than" in proc.stderr
    assert {row["model"] for row in run_rows(out, "rair_table5")} == {"openai/gpt-4o", "another-model"}
