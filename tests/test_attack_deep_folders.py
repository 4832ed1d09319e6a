"""A colleague's folder nested 1,100 levels deep beside the runs or the data: the folder walk (files.py)
goes to its bottom without exhausting Python's stack (it recursed once per level: RecursionError, a
traceback from ecom-tasks report and compare)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from helpers import run_cli

from ecom_tasks import data, files
from ecom_tasks.data import fixtures_dir

LEVELS = 1100  # past Python's recursion limit of 1,000; 2,200 bytes of path, within the system's 4,096


@pytest.fixture
def nest():
    """Makes ``root/d/d/.../d`` (:data:`LEVELS` folders, one at a time: os.makedirs recurses per level) with a
    data file at the bottom, and removes them afterwards, deepest first (pytest's clean-up recurses too)."""
    made: list[Path] = []

    def make(root: Path) -> Path:
        root.mkdir(exist_ok=True)
        folder = root
        for _ in range(LEVELS):
            folder = folder / "d"
            os.mkdir(folder)
            made.append(folder)
        (folder / "deep.jsonl").write_text('{"id": "deep"}\n', encoding="utf-8")
        return folder / "deep.jsonl"

    yield make
    for folder in reversed(made):
        if not folder.exists():
            continue
        for entry in folder.iterdir():
            if not entry.is_dir():
                entry.unlink()
        folder.rmdir()


def test_the_walk_reaches_the_bottom(tmp_path, nest):
    bottom = nest(tmp_path / "shared")
    (tmp_path / "shared" / "top.jsonl").write_text("{}\n", encoding="utf-8")
    found, refused = files.folder_listing(tmp_path / "shared", recursive=True)
    assert found == [bottom, tmp_path / "shared" / "top.jsonl"] and refused == []  # sorted: "d" before "top"


def test_data_in_a_folder_beside_a_deep_one_loads(tmp_path, nest):
    """The deep folder's data file is named as not read (a sub-folder's), the folder's own data loads."""
    folder = tmp_path / "rair"
    shutil.copytree(fixtures_dir("rair"), folder)
    nest(folder)
    assert data.data_files(folder) == [folder / "rair.jsonl"]


def test_report_and_compare_beside_a_deep_folder(tmp_path, nest):
    """Nothing else in the runs folder: the walk is the attack (each command says it found no run)."""
    runs = tmp_path / "runs"
    nest(runs)
    report = run_cli(["ecom-tasks", "report", str(runs), "--out", str(tmp_path / "out"), "--format", "csv"])
    compare = run_cli(["ecom-tasks", "compare", str(runs)])
    for proc in (report, compare):
        assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
        assert "no Inspect logs or lm-eval results" in proc.stderr or "no run of ours" in proc.stderr, proc.stderr


def test_a_deep_folder_where_a_build_removes_one_is_refused(tmp_path, nest):
    """OutputFolder.remove (a build clearing its data/images): shutil.rmtree recursed per level too."""
    nest(tmp_path / "images")
    with pytest.raises(files.FileRefused, match="images: nested too deep to remove here"):
        files.OutputFolder(tmp_path).remove("images")


def test_judge_finds_samples_beside_a_deep_folder(tmp_path, nest):
    """ecom-tasks judge's own walk of the lm-eval output folder recursed per level too."""
    from ecom_tasks.ecomeval.judge_run import find_samples

    nest(tmp_path / "lm")
    samples = tmp_path / "lm" / "model" / "samples_ecomeval_ecom_qa_2026-01-01T00-00-00.000001.jsonl"
    samples.parent.mkdir()
    samples.write_text("", encoding="utf-8")
    assert [found.path for found in find_samples(tmp_path / "lm")] == [samples]
