"""A colleague's file in a shared folder named with terminal control sequences (ESC, BEL, a newline that forges a
line of output): every command shows the name escaped as Python writes it in a string, never raw."""

from __future__ import annotations

import json
import os
import shutil
import warnings

from helpers import run_cli

from ecom_tasks.data import fixtures_dir
from ecom_tasks.ecomeval.schema import load_records
from ecom_tasks.errors import DataValidationError, Problem
from ecom_tasks.files import FileRefused
from ecom_tasks.user_errors import user_message

#: Clears the screen, retitles the terminal window (OSC ... BEL), then forges validate's own verdict on a new line.
HOSTILE = "x\x1b[2J\x1b]0;owned\x07\nOK: 80 monbench records in.jsonl"
ESCAPED = r"x\x1b[2J\x1b]0;owned\x07\nOK: 80 monbench records in.jsonl"


def _raw_controls(text: str) -> list[str]:
    return sorted({char for char in text if (ord(char) < 32 and char not in "\n\t") or 0x7F <= ord(char) <= 0x9F})


def test_validate_names_a_hostile_file_escaped(tmp_path):
    shutil.copy2(fixtures_dir("monbench") / "monbench.jsonl", tmp_path / "monbench.jsonl")
    os.mkfifo(tmp_path / HOSTILE)
    proc = run_cli(["ecom-tasks", "validate", "monbench", str(tmp_path)], timeout=120)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert _raw_controls(output) == [], output
    assert ESCAPED in proc.stderr, output
    assert not any(line.startswith("OK:") for line in output.splitlines()), output


def test_report_and_compare_name_a_hostile_file_escaped(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    os.mkfifo(runs / HOSTILE.replace(".jsonl", ".eval"))
    report = run_cli(["ecom-tasks", "report", str(runs), "--out", str(tmp_path / "out")], timeout=120)
    compare = run_cli(["ecom-tasks", "compare", str(runs)], timeout=120)
    markdown = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    for text in (report.stdout + report.stderr, compare.stdout + compare.stderr):
        assert _raw_controls(text) == [], text
        assert ESCAPED.replace(".jsonl", ".eval") in text, text
        assert not any(line.startswith("OK:") for line in text.splitlines()), text
    assert _raw_controls(markdown) == [], markdown
    assert r"x\x1b\[2J\x1b\]0;owned\x07 OK: 80" in markdown, markdown  # markdown's escapes, the newline a space


def test_user_message_escapes_controls_and_keeps_one_line_per_problem():
    refused = user_message(FileRefused(f"/shared/{HOSTILE}: a FIFO (named pipe), not a regular file: not read"))
    assert refused == f"ecom-tasks: /shared/{ESCAPED}: a FIFO (named pipe), not a regular file: not read"
    problems = [Problem("a\rb.jsonl", 3, "id", "bad\x9b31m"), Problem("c.jsonl", 0, "-", "line\nbreak\ttab")]
    assert user_message(DataValidationError(problems)).splitlines() == [
        "ecom-tasks: 2 problems in the data:",
        r"  a\rb.jsonl:3:id: bad\x9b31m",
        "  c.jsonl:0:-: line\\nbreak\ttab",
    ]


def test_data_warnings_show_names_escaped_on_one_line(tmp_path):
    """Our warnings name columns, tasks and files of the data: Python's display of them (what ``inspect eval`` and
    ``lm_eval`` show) carries no raw control character and no forged line either."""
    source = tmp_path / "ecomeval.jsonl"
    first, *rest = (fixtures_dir("ecomeval") / "ecomeval_fixtures.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(first) | {"note\x1b]52;c;cm0gLXJmIH4=\x07\nOK": 1, "task": "task\x1b[8m"}
    source.write_text("\n".join([json.dumps(record), *rest]) + "\n", encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_records(source, check_images=False)
    shown = {
        w.category.__name__: warnings.formatwarning(w.message, w.category, w.filename, w.lineno, "") for w in caught
    }
    assert set(shown) == {"IgnoredColumnsWarning", "UnknownTasksWarning"}, shown
    for text in shown.values():
        assert _raw_controls(text) == [] and text.count("\n") == 1, text  # formatwarning's own line end
    assert r"note\x1b]52;c;cm0gLXJmIH4=\x07\nOK" in shown["IgnoredColumnsWarning"]
