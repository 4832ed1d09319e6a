"""``ecom-tasks calibrate`` on a shared folder, attacked as a hostile colleague or a careless user would:
its output onto its data (or into a data folder, onto a log), the task table onto an input, a dangling
symlink where a copied image goes, a symlinked image folder under ``--out``, a log that is a FIFO or
lacks ``metadata.task``, an output that cannot be written. Each is one short message, a non-zero exit,
and nothing outside the output changes (a victim tree hashed before and after)."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, write_eval_log

from ecom_tasks.cli import main as ecom_tasks_main
from ecom_tasks.data import fixtures_dir
from ecom_tasks.inspect_evals.ecomeval import ecomeval

PICTURES = fixtures_dir("ecomeval") / "images"


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


def item(id: str, images: list[str]) -> dict:
    return {
        "id": id,
        "category": "ecom_multimodal",
        "task": "t",
        "language": "en",
        "question": f"What is in {id}?",
        "reference": "a mug",
        "images": images,
    }


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, Path]:
    """(a data file with an image in images/, a baseline run's log of it), made once for the module."""
    root = tmp_path_factory.mktemp("calibrate")
    folder = root / "data"
    (folder / "images").mkdir(parents=True)
    shutil.copy(PICTURES / "mug.png", folder / "images" / "mug.png")
    data = folder / "items.jsonl"
    rows = [item("one", ["images/mug.png"]), {**item("two", []), "category": "ecom_qa"}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (log,) = inspect_eval(
        ecomeval(data=str(data)),
        model="ecom/baseline",
        model_roles={"grader": "ecom/baseline"},
        log_dir=str(root / "logs"),
        display="none",
    )
    assert log.status == "success"
    return data, Path(log.location)


@pytest.fixture
def inputs(run, tmp_path) -> tuple[Path, Path]:
    """A copy of the module's data folder and log for one test to attack."""
    data, log = run
    shutil.copytree(data.parent, tmp_path / "data")
    shutil.copy(log, tmp_path / log.name)
    return tmp_path / "data" / data.name, tmp_path / log.name


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    folder = tmp_path / "victim"
    (folder / "images").mkdir(parents=True)
    (folder / "notes.txt").write_text("my notes\n", encoding="utf-8")
    (folder / "images" / "keep.png").write_bytes((PICTURES / "knife.png").read_bytes())
    return folder


def calibrate(capsys, *argv: str | Path) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exited:
        ecom_tasks_main(["calibrate", *map(str, argv)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return exited.value.code, captured.out + captured.err


def test_a_plain_calibrate_writes_the_copy_and_its_table(inputs, tmp_path, capsys):
    data, log = inputs
    out = tmp_path / "new" / "deeper" / "calibrated.jsonl"  # folders that do not exist yet are made
    code, printed = calibrate(capsys, log, "--data", data, "--out", out)
    assert code == 0, printed
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["one", "two"] and rows[0]["images"] == ["images/mug.png"]
    assert (out.parent / "images" / "mug.png").read_bytes() == (PICTURES / "mug.png").read_bytes()
    assert (out.parent / "calibrated.tasks.csv").read_text(encoding="utf-8").startswith("task,items,models,score")


@pytest.mark.parametrize("target", ["data file", "log", "inside data folder"])
def test_an_output_onto_an_input_is_refused_and_the_input_is_unchanged(target, inputs, capsys):
    data, log = inputs
    before = tree(data.parent), log.read_bytes()
    if target == "inside data folder":  # the data named as its folder: every file in it is data
        code, printed = calibrate(capsys, log, "--data", data.parent, "--out", data.parent / "calibrated.jsonl")
        # the output's folder is the data folder itself
        assert f"calibrate: {data.parent}: is the input {data.parent}; choose another output" in printed
    else:
        out = data if target == "data file" else log
        code, printed = calibrate(capsys, log, "--data", data, "--out", out)
        assert f"{out}: is the input {out}; choose another output" in printed
    assert code == 2 and "calibrate: " in printed, printed
    assert (tree(data.parent), log.read_bytes()) == before


def test_a_refused_output_leaves_no_folder_inside_the_input(inputs, capsys):
    """The missing folders above --out are made only once --out is known to lie outside every input."""
    data, log = inputs
    before = tree(data.parent)
    code, printed = calibrate(capsys, log, "--data", data.parent, "--out", data.parent / "new" / "deep" / "c.jsonl")
    assert code == 2 and "lies inside the input" in printed, printed
    assert tree(data.parent) == before


def test_the_data_recorded_in_the_log_is_an_input_too(inputs, capsys):
    """Without --data the logs name the data: an --out onto that file is refused once it is known."""
    _, log = inputs
    data = read_eval_log(str(log), header_only=True).eval.metadata["data"]
    before = Path(data).read_bytes()
    code, printed = calibrate(capsys, log, "--out", data)
    assert code == 2 and f"{data}: is the input {data}; choose another output" in printed, printed
    assert Path(data).read_bytes() == before


@pytest.mark.parametrize("onto", ["data", "log", "out"])
def test_a_task_table_onto_an_input_is_refused_before_anything_is_written(onto, inputs, tmp_path, capsys):
    data, log = inputs
    out = tmp_path / "out" / "calibrated.jsonl"
    table = {"data": data, "log": log, "out": out}[onto]
    before = tree(data.parent), log.read_bytes()
    code, printed = calibrate(capsys, log, "--data", data, "--out", out, "--tasks-out", table)
    assert code == 2, printed
    assert "choose another" in printed and str(table) in printed
    assert (tree(data.parent), log.read_bytes()) == before and not out.exists()


def test_a_dangling_symlink_where_an_image_goes_creates_nothing_outside_the_output(inputs, tmp_path, victim, capsys):
    data, log = inputs
    out = tmp_path / "out"
    (out / "images").mkdir(parents=True)
    (out / "images" / "mug.png").symlink_to(victim / "images" / "planted.png")  # dangling
    before = tree(victim)
    code, printed = calibrate(capsys, log, "--data", data, "--out", out / "calibrated.jsonl")
    assert code == 0, printed
    assert tree(victim) == before and not (victim / "images" / "planted.png").exists()
    copied = out / "images" / "mug.png"
    assert not copied.is_symlink() and copied.read_bytes() == (PICTURES / "mug.png").read_bytes()


def test_a_symlink_to_a_colleagues_picture_where_an_image_goes_is_replaced_not_written_through(
    inputs, tmp_path, victim, capsys
):
    data, log = inputs
    out = tmp_path / "out"
    (out / "images").mkdir(parents=True)
    (out / "images" / "mug.png").symlink_to(victim / "images" / "keep.png")
    before = tree(victim)
    code, printed = calibrate(capsys, log, "--data", data, "--out", out / "calibrated.jsonl")
    assert code == 0, printed
    assert tree(victim) == before
    assert (out / "images" / "mug.png").read_bytes() == (PICTURES / "mug.png").read_bytes()


@pytest.mark.parametrize("link", ["images", "out"])
def test_a_symlinked_output_folder_is_refused(link, inputs, tmp_path, victim, capsys):
    data, log = inputs
    out = tmp_path / "out"
    if link == "images":
        out.mkdir()
        (out / "images").symlink_to(victim / "images", target_is_directory=True)
    else:
        out.symlink_to(victim, target_is_directory=True)
    before = tree(victim)
    code, printed = calibrate(capsys, log, "--data", data, "--out", out / "calibrated.jsonl")
    assert code == 2 and "a symbolic link" in printed and str(out / link if link == "images" else out) in printed
    assert tree(victim) == before


def test_a_log_sample_without_metadata_task_is_a_short_message_naming_the_log(inputs, tmp_path, capsys):
    _, log = inputs
    broken = read_eval_log(str(log))
    del broken.samples[0].metadata["task"]
    bad = tmp_path / "bad.eval"
    write_eval_log(broken, str(bad))
    code, printed = calibrate(capsys, bad)
    assert code == 2, printed
    assert f"calibrate: {bad}: sample {broken.samples[0].id} has no metadata.task" in printed


def test_a_fifo_or_a_folder_as_a_log_is_named_not_opened(inputs, tmp_path, capsys):
    fifo = tmp_path / "run.eval"
    os.mkfifo(fifo)  # opening it for reading would wait for a writer forever
    code, printed = calibrate(capsys, fifo)
    assert code == 2 and f"calibrate: {fifo}: a FIFO (named pipe), not a regular file: not read" in printed
    code, printed = calibrate(capsys, tmp_path)
    assert code == 2 and f"calibrate: {tmp_path}: a folder, not a regular file" in printed


def test_an_output_that_cannot_be_written_is_found_before_any_log_is_read(inputs, tmp_path, capsys, monkeypatch):
    data, _ = inputs
    fifo = tmp_path / "run.eval"
    os.mkfifo(fifo)  # were the log read first, this would be the message
    (tmp_path / "a-file").write_text("not a folder", encoding="utf-8")
    code, printed = calibrate(capsys, fifo, "--data", data, "--out", tmp_path / "a-file" / "out" / "c.jsonl")
    assert code == 2 and f"{tmp_path / 'a-file' / 'out'}: the output folder lies below a file" in printed, printed
    # a folder the file system will not let us write (for root, who writes through permissions, the
    # EACCES it would answer)
    locked = tmp_path / "locked"
    locked.mkdir()
    if os.geteuid() != 0:
        locked.chmod(0o555)
    else:
        real = tempfile.mkstemp

        def mkstemp(*args, **kwargs):
            if Path(kwargs.get("dir") or "").resolve() == locked.resolve():
                raise PermissionError(errno.EACCES, "Permission denied", str(locked))
            return real(*args, **kwargs)

        monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    try:
        code, printed = calibrate(capsys, fifo, "--data", data, "--out", locked / "c.jsonl")
    finally:
        locked.chmod(0o755)
    assert code == 2 and f"{locked}: the output folder cannot be written (Permission denied)" in printed, printed


def test_an_output_that_is_the_data_under_another_name_is_refused(inputs, capsys):
    """On a case-insensitive file system ``--out DATA.jsonl`` is ``data.jsonl``: the paths differ, the file is one.
    A hard link is the same on any file system (and replacing it would replace the input on macOS)."""
    data, log = inputs
    other_name = data.with_name("DATA-" + data.name)
    os.link(data, other_name)
    before = tree(data.parent), log.read_bytes()
    code, printed = calibrate(capsys, log, "--data", data, "--out", other_name)
    assert code == 2 and f"{other_name}: is the input {data}; choose another output" in printed, printed
    assert (tree(data.parent), log.read_bytes()) == before
