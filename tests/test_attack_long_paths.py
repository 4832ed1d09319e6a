"""A path longer than the system takes (a name over 255 bytes, a path over 4,096), given to the library
from Python: each public loader and each entry point of files.py refuses it as FileRefused naming its
start, where the first Path.exists/is_dir/stat on it raised a raw OSError ("File name too long")."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest
from helpers import run_cli

from ecom_tasks import data, files
from ecom_tasks.data import DataValidationError, fixtures_dir
from ecom_tasks.ecomeval import schema as ecomeval
from ecom_tasks.errors import EcomTasksError
from ecom_tasks.monbench import schema as monbench
from ecom_tasks.rair import schema as rair
from ecom_tasks.rmir import schema as rmir
from ecom_tasks.rmir.construction.seeds import load_seeds

LOADERS = {
    "rair": rair.load_records,
    "ecomeval": ecomeval.load_records,
    "ecomeval-judge-cases": ecomeval.load_judge_cases,
    "monbench": monbench.load_records,
    "rmir": rmir.load_data,
    "rmir-splits": rmir.query_splits,
    "rmir-every-split": rmir.load_every_split,
    "rmir-seeds": load_seeds,
    "load_rows": data.load_rows,
    "data_files": data.data_files,
}


def long_name(folder: Path) -> str:
    return str(folder / ("a" * 300 + ".jsonl"))  # one name of 306 bytes


def long_path(folder: Path) -> str:
    return str(folder / ("b/" * 2600 + "x.jsonl"))  # 5,200 bytes and more, each name short


ATTACKS = {"name-300-bytes": long_name, "path-5000-bytes": long_path}


def assert_refused_briefly(exc: BaseException, path: str) -> None:
    assert isinstance(exc, files.FileRefused) and isinstance(exc, EcomTasksError), repr(exc)
    message = str(exc)
    assert message == f"{path[:60]}... ({len(path)} characters): file name too long"


@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.parametrize("loader", LOADERS)
def test_each_loader_refuses_a_path_too_long(tmp_path, loader, attack):
    path = ATTACKS[attack](tmp_path)
    with pytest.raises(OSError) as raised:
        os.stat(path)  # the attack is real: the system itself refuses this path
    assert raised.value.errno == errno.ENAMETOOLONG
    with pytest.raises(files.FileRefused) as refused:
        LOADERS[loader](path)
    assert_refused_briefly(refused.value, path)


def test_the_limits_are_the_systems(tmp_path):
    """A 255-byte name is written (its temporary name too stays within the limit), copied, linked and
    read back; 256 bytes is refused by us as by the system."""
    out = files.OutputFolder(tmp_path)
    out.write_text("n" * 255, "kept\n")
    out.copy_in(tmp_path / ("n" * 255), "é" * 127)  # 254 bytes of UTF-8
    out.copy_in(tmp_path / ("n" * 255), "l" * 255, link=True)
    for name in ("n" * 255, "é" * 127, "l" * 255):
        assert files.read_text(tmp_path / name) == "kept\n"
    assert (tmp_path / ("l" * 255)).stat().st_nlink == 2  # linked, not copied
    with pytest.raises(OSError) as raised:
        os.stat(tmp_path / ("n" * 256))
    assert raised.value.errno == errno.ENAMETOOLONG
    assert files.is_too_long(tmp_path / ("n" * 256)) and not files.is_too_long(tmp_path / ("n" * 255))
    assert files.is_too_long("c/" * 2049) and not files.is_too_long("c/" * 2048)  # 4,098 and 4,096 bytes


@pytest.mark.parametrize("attack", ATTACKS)
def test_files_entry_points_refuse_a_path_too_long(tmp_path, attack):
    path = ATTACKS[attack](tmp_path)
    relative = os.path.relpath(path, tmp_path / "out")
    calls = {
        "read_text": lambda: files.read_text(path),
        "regular_file": lambda: files.regular_file(path),
        "folder_files": lambda: files.folder_files(path),
        "sub_folders": lambda: files.sub_folders(path),
        "refused_entries": lambda: files.refused_entries(path),
        "create_parents": lambda: files.create_parents(path),
        "output folder": lambda: files.OutputFolder(path),
        "output beside an input": lambda: files.OutputFolder(tmp_path / "out", inputs=[path]),
        "write below": lambda: files.OutputFolder(tmp_path / "out").write_text(relative.replace("../", ""), "x"),
        "exists below": lambda: files.OutputFolder(tmp_path / "out").exists(relative.replace("../", "")),
    }
    for what, call in calls.items():
        try:
            call()
        except files.FileRefused as refused:  # a raw OSError fails the test as itself
            assert str(refused).endswith("characters): file name too long"), what
        else:
            pytest.fail(f"{what}: not refused")
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing was created on the way


@pytest.mark.parametrize("attack", ATTACKS)
def test_an_image_cell_too_long_is_its_rows_problem(tmp_path, attack):
    """An image path in the data (RMIR's pool) is a pool.jsonl:1:image problem, opened or not; with
    check_images=False it was accepted and failed only when a model was sent it."""
    folder = tmp_path / "rmir"
    shutil.copytree(fixtures_dir("rmir"), folder)
    image = os.path.relpath(ATTACKS[attack](folder).removesuffix(".jsonl") + ".png", folder)
    pool = (folder / "pool.jsonl").read_text(encoding="utf-8").splitlines()
    pool[0] = pool[0].replace('"images/phillips_screwdriver.png"', f'"{image}"')
    (folder / "pool.jsonl").write_text("\n".join(pool) + "\n", encoding="utf-8")
    for check in (True, False):
        with pytest.raises(DataValidationError) as refused:
            rmir.load_data(folder, check_images=check)
        [problem] = refused.value.problems
        assert (problem.source, problem.row, problem.field) == (str(folder / "pool.jsonl"), 1, "image")
        full = str(folder / image)
        assert problem.message == f"image path {full[:60]}... ({len(full)} characters): file name too long"


@pytest.mark.parametrize(
    "args",
    [
        ["judge", "LONG", "--grader", "openai/x"],  # printed whole as 'no such folder'
        ["report", "LONG"],
        ["calibrate", "LONG"],
        ["build", "rair", "--out", "LONG", "--model", "ecom/baseline"],
    ],
    ids=["judge", "report", "calibrate", "build"],
)
@pytest.mark.parametrize("attack", ATTACKS)
def test_each_command_names_a_path_too_long_briefly(tmp_path, args, attack):
    path = ATTACKS[attack](tmp_path)
    proc = run_cli(["ecom-tasks", *(path if arg == "LONG" else arg for arg in args)], cwd=tmp_path)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.endswith(f"{path[:60]}... ({len(path)} characters): file name too long"), last[:300]
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing made on the way
