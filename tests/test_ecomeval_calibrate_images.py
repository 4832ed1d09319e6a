"""`ecom-tasks calibrate --out` writes a copy of the data that loads like the original: the images of
the dataset's folder are copied beside the output, never overwriting a different file."""

from __future__ import annotations

import filecmp
import json
import shutil
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from ecom_tasks import cli
from ecom_tasks.data import ConfigurationError, DataValidationError, fixtures_dir
from ecom_tasks.ecomeval.calibration import Calibrated, write_calibrated
from ecom_tasks.ecomeval.schema import load_records
from ecom_tasks.images import ImageAccess
from ecom_tasks.inspect_evals.ecomeval import ecomeval

PICTURES = fixtures_dir("ecomeval") / "images"


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


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """A data file with an image in images/ and one two folders down."""
    folder = tmp_path / "data"
    (folder / "images").mkdir(parents=True)
    (folder / "more" / "deep").mkdir(parents=True)
    shutil.copy(PICTURES / "mug.png", folder / "images" / "mug.png")
    shutil.copy(PICTURES / "knife.png", folder / "more" / "deep" / "knife.png")
    rows = [item("one", ["images/mug.png"]), item("two", ["more/deep/knife.png", "images/mug.png"])]
    data = folder / "items.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return data


LABELS = {"one": Calibrated(90.0, 3, 1, "easy"), "two": Calibrated(50.0, 3, 1, "hard")}


def test_images_are_copied_beside_an_output_in_another_folder(tmp_path, dataset):
    out = tmp_path / "elsewhere" / "calibrated.jsonl"
    assert write_calibrated(dataset, LABELS, out) == (2, 0)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["images"] for r in rows] == [["images/mug.png"], ["more/deep/knife.png", "images/mug.png"]]
    for relative in ("images/mug.png", "more/deep/knife.png"):
        assert filecmp.cmp(dataset.parent / relative, out.parent / relative, shallow=False)
    # The copy loads with the default image access (nothing outside its folder) and carries the labels.
    records = load_records(str(out))
    assert [(r.id, r.difficulty) for r in records] == [("one", "easy"), ("two", "hard")]
    assert records[1].images == (
        str((out.parent / "more/deep/knife.png").resolve()),
        str((out.parent / "images/mug.png").resolve()),
    )
    # Written again to the same place: the same files are there, nothing to refuse.
    assert write_calibrated(dataset, LABELS, out) == (2, 0)


def test_an_output_in_the_datasets_own_folder_copies_nothing(tmp_path, dataset):
    out = dataset.parent / "calibrated.jsonl"
    write_calibrated(dataset, LABELS, out)
    assert sorted(p.relative_to(dataset.parent).as_posix() for p in dataset.parent.rglob("*") if p.is_file()) == [
        "calibrated.jsonl",
        "images/mug.png",
        "items.jsonl",
        "more/deep/knife.png",
    ]
    assert json.loads(out.read_text(encoding="utf-8").splitlines()[0])["images"] == ["images/mug.png"]


def test_a_different_file_in_the_way_is_an_error_and_is_left_alone(tmp_path, dataset):
    out = tmp_path / "elsewhere" / "calibrated.jsonl"
    (out.parent / "images").mkdir(parents=True)
    shutil.copy(PICTURES / "knife.png", out.parent / "images" / "mug.png")  # another picture under the same name
    with pytest.raises(
        ConfigurationError, match=r"images/mug.png exists and differs from .*: calibrate --out would overwrite it"
    ):
        write_calibrated(dataset, LABELS, out)
    assert filecmp.cmp(PICTURES / "knife.png", out.parent / "images" / "mug.png", shallow=False)


def test_an_image_outside_the_datasets_folder_keeps_needing_the_opt_in(tmp_path, dataset):
    outside = tmp_path / "shared" / "cup.png"
    outside.parent.mkdir()
    shutil.copy(PICTURES / "mug.png", outside)
    dataset.write_text(json.dumps(item("one", ["../shared/cup.png"])) + "\n", encoding="utf-8")
    with pytest.raises(DataValidationError, match="leaves the dataset's folder"):
        write_calibrated(dataset, LABELS, tmp_path / "out" / "calibrated.jsonl")
    access = ImageAccess.from_options(True, False)
    out = tmp_path / "out" / "calibrated.jsonl"
    write_calibrated(dataset, LABELS, out, image_access=access)
    assert json.loads(out.read_text(encoding="utf-8"))["images"] == [
        "../shared/cup.png"
    ]  # not copied: it was never the data's
    with pytest.raises(DataValidationError, match="leaves the dataset's folder"):
        load_records(str(out))
    assert load_records(str(out), image_access=access)[0].images == (str(outside.resolve()),)


def test_calibrate_on_the_bundled_fixtures_writes_a_copy_that_loads(tmp_path):
    """Through the command: a baseline run on the multimodal items, calibrated into another folder."""
    (log,) = inspect_eval(
        ecomeval(multimodal=True),
        model="ecom/baseline",
        model_roles={"grader": "ecom/baseline"},
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success"
    out = tmp_path / "calibrated" / "ecomeval.jsonl"
    args = cli.build_parser().parse_args(["calibrate", log.location, "--out", str(out)])
    assert args.func(args) == 0
    copied = load_records(str(out))
    originals = {r.id: r for r in load_records()}
    assert len(copied) == len(originals) == 70
    for record in copied:
        assert [Path(p).read_bytes() for p in record.images] == [
            Path(p).read_bytes() for p in originals[record.id].images
        ]
        assert all(Path(p).is_relative_to(out.parent.resolve()) for p in record.images)
    labelled = {r.id: r.difficulty for r in copied if r.multimodal}
    assert len(labelled) == 10 and set(labelled.values()) <= {"easy", "medium", "hard"}
