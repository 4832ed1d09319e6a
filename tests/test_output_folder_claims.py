"""Outputs that could land on a colleague's files or on the inputs, each met with the attack itself: a colleague's
report in the folder named, a table beside the output the user never named, a hard-linked image, an embedding cache
inside the data it embeds (or a build's seeds or build folder), a report's missing folders made inside an input, a
resource count Ray would refuse only after the work."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from loopback.embeddings_server import serve_embeddings

from ecom_tasks.data import ConfigurationError, fixtures_dir
from ecom_tasks.rmir.index import CacheError
from ecom_tasks.rmir.pool_embedding import embed_pool_ahead
from ecom_tasks.rmir.scoring import Retrieval


def _vector(item) -> list[float]:
    return [float(len(item.text) % 5 + 1), float(sum(map(len, item.images)) % 7 + 1), 1.0]


@pytest.fixture
def rmir_data(tmp_path) -> Path:
    return Path(shutil.copytree(fixtures_dir("rmir"), tmp_path / "rmir-data"))


def test_an_embedding_cache_inside_the_data_it_embeds_is_refused_before_any_embedding(rmir_data, tmp_path, monkeypatch):
    # The cache named through a link that leads back into the data folder: the path looks outside, it is not.
    (tmp_path / "caches").symlink_to(rmir_data, target_is_directory=True)
    monkeypatch.setenv("ECOM_TASKS_CACHE", str(tmp_path / "caches" / "cache"))
    before = sorted(p.relative_to(rmir_data) for p in rmir_data.rglob("*"))
    with serve_embeddings(_vector) as server:
        args = {"base_url": server.base_url, "model": "claims-embedder", "batch_size": 8}
        with pytest.raises(CacheError, match="lies inside the data folder") as refused:
            embed_pool_ahead(str(rmir_data), "openai_embeddings", json.dumps(args))
        assert str(rmir_data) in str(refused.value) and len(str(refused.value).splitlines()) == 1
        with pytest.raises(CacheError, match="lies inside the data folder"):
            Retrieval(str(rmir_data), "openai_embeddings", args).index()  # the run's route, cache=true
        assert server.requests == []  # nothing embedded, nothing paid
        assert sorted(p.relative_to(rmir_data) for p in rmir_data.rglob("*")) == before
        # Reading a cache there writes nothing into the data: allowed. And a cache outside it is filled.
        assert Retrieval(str(rmir_data), "openai_embeddings", args, cache="read").index().stats["pool_embedded"] == 26
        monkeypatch.setenv("ECOM_TASKS_CACHE", str(tmp_path / "cache"))
        assert embed_pool_ahead(str(rmir_data), "openai_embeddings", json.dumps(args)).embedded == 26
    assert sorted(p.relative_to(rmir_data) for p in rmir_data.rglob("*")) == before


def test_a_build_s_seed_index_cache_inside_the_seeds_or_the_build_is_refused_before_any_model_call(
    tmp_path, monkeypatch
):
    from ecom_tasks.rmir.construction.pipeline import BuildOptions, build
    from ecom_tasks.rmir.construction.tasks import rmir_build_retrieve

    seeds = Path(shutil.copytree(fixtures_dir("rmir"), tmp_path / "seeds"))  # a seed folder: seeds.jsonl, images/
    (tmp_path / "caches").symlink_to(seeds, target_is_directory=True)  # looks outside, leads back in
    out = tmp_path / "build"
    before = _tree(seeds)
    for cache in (tmp_path / "caches" / "cache", out / "data" / "cache"):
        monkeypatch.setenv("ECOM_TASKS_CACHE", str(cache))
        with pytest.raises(CacheError, match="lies inside the data folder"):
            build(BuildOptions(out=out, model="ecom/baseline", seeds=seeds, stage_options={"display": "none"}))
        assert not (out / "logs").exists() and not cache.exists()  # no stage started, no shard written
    # The retrieve stage run alone (inspect eval) refuses it too; a cache only read is allowed there.
    monkeypatch.setenv("ECOM_TASKS_CACHE", str(tmp_path / "caches" / "cache"))
    with pytest.raises(CacheError, match="lies inside the data folder"):
        rmir_build_retrieve(seeds=str(seeds))
    with pytest.raises(ConfigurationError, match="give the filtered queries file"):
        rmir_build_retrieve(seeds=str(seeds), cache="read")
    assert _tree(seeds) == before


@pytest.mark.parametrize("benchmark", ["rair", "rmir"])
def test_a_build_copies_images_by_default_so_editing_one_leaves_the_input_alone(benchmark, tmp_path):
    import argparse

    from ecom_tasks.construction import place_image
    from ecom_tasks.files import OutputFolder

    package = __import__(f"ecom_tasks.{benchmark}.construction", fromlist=["add_build_arguments"])
    parser = argparse.ArgumentParser()
    package.add_build_arguments(parser)
    required = ["--out", "o", "--model", "m"]
    source = tmp_path / "input.png"
    source.write_bytes(b"the colleague's picture")
    output = OutputFolder(tmp_path / "build")
    place_image(str(source), "data/images/a.png", parser.parse_args(required).images, output=output)
    built = tmp_path / "build" / "data" / "images" / "a.png"
    assert built.stat().st_nlink == 1 and built.stat().st_ino != source.stat().st_ino
    built.write_bytes(b"edited in the data set")  # in place, as an image editor saves
    assert source.read_bytes() == b"the colleague's picture"
    # A link is still there when asked for, and its help says what it shares.
    place_image(
        str(source), "data/images/b.png", parser.parse_args([*required, "--images", "link"]).images, output=output
    )
    assert (tmp_path / "build" / "data" / "images" / "b.png").stat().st_ino == source.stat().st_ino
    assert "editing either edits both" in " ".join(parser.format_help().split())


@pytest.mark.parametrize("option", ["--num-gpus", "--num-cpus"])
def test_ray_resources_take_only_finite_numbers_of_zero_or_more(option, capsys):
    from ecom_tasks.cli import build_parser

    parser = build_parser()
    for bad in ("-1", "nan", "inf", "1e400", "two"):
        with pytest.raises(SystemExit) as stop:
            parser.parse_args(["embed-pool", "--retriever", "r", option, bad])
        assert stop.value.code == 2
        assert f"must be a finite number of 0 or more, got {bad!r}" in capsys.readouterr().err
    for good, value in (("0", 0.0), ("0.5", 0.5), ("2", 2.0)):
        assert (
            getattr(parser.parse_args(["embed-pool", "--retriever", "r", option, good]), option[2:].replace("-", "_"))
            == value
        )


def _tree(root: Path) -> dict[str, str]:
    """Every entry below ``root``: a file's bytes, a link's target, a FIFO or a folder as such."""
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            found[str(path)] = f"link to {os.readlink(path)}"
        elif stat.S_ISFIFO(path.lstat().st_mode):
            found[str(path)] = "fifo"
        else:
            found[str(path)] = path.read_bytes().hex() if path.is_file() else "folder"
    return found


@pytest.mark.parametrize(
    "attack", ["colleague_report", "build_folder", "other_owner", "deep_marker", "link_at_marker", "fifo_at_marker"]
)
def test_a_report_folder_that_is_not_ours_is_refused_untouched(attack, tmp_path):
    from ecom_tasks.construction import BUILD_MARKER
    from ecom_tasks.files import FileRefused
    from ecom_tasks.report import REPORT_MARKER, write_report

    (tmp_path / "logs").mkdir()
    out = tmp_path / "shared" / "report"
    out.mkdir(parents=True)
    marker = out / REPORT_MARKER
    expected = f"{out}: not empty and not a report folder (no {REPORT_MARKER})"
    if attack == "colleague_report":  # a report of theirs, made before reports were marked: the same file names
        (out / "csv").mkdir()
        (out / "report.md").write_text("# their findings\n", encoding="utf-8")
        (out / "csv" / "runs.csv").write_text("status,model\nsuccess,theirs\n", encoding="utf-8")
    elif attack == "build_folder":
        (out / BUILD_MARKER).write_text('{"benchmark": "rair"}\n', encoding="utf-8")
    elif attack == "other_owner":
        marker.write_text('{"command": "compare"}\n', encoding="utf-8")
        expected = f"{out}: the report folder of 'compare', not of 'report'; choose another --out"
    elif attack == "deep_marker":  # read within limits, never trusted
        marker.write_text("[" * 2000 + "]" * 2000, encoding="utf-8")
        expected = f"{out}: the report folder of None, not of 'report'; choose another --out"
    elif attack == "link_at_marker":  # a colleague's file that says "report": not followed, not trusted
        (tmp_path / "victim.json").write_text('{"command": "report"}\n', encoding="utf-8")
        marker.symlink_to(tmp_path / "victim.json")
        expected = f"{marker}: not a regular file; not followed, move it away"
    else:
        os.mkfifo(marker)  # reading it would hang
        expected = f"{marker}: not a regular file; not followed, move it away"
    before = _tree(tmp_path)
    with pytest.raises(FileRefused) as refused:
        write_report([tmp_path / "logs"], out, plots=False)
    assert str(refused.value).startswith(expected) and len(str(refused.value).splitlines()) == 1
    assert _tree(tmp_path) == before


def test_a_new_report_folder_is_marked_and_reused_and_an_empty_one_is_taken(tmp_path):
    from helpers import mark_report_folder

    from ecom_tasks.report import REPORT_MARKER, write_report

    (tmp_path / "logs").mkdir()
    (tmp_path / "empty").mkdir()
    for out in (tmp_path / "new", tmp_path / "empty"):
        for _ in range(2):  # the second report replaces its own files
            result = write_report([tmp_path / "logs"], out, formats="md,csv", plots=False)
            assert (out / "report.md").is_file() and result.out == out
        assert json.loads((out / REPORT_MARKER).read_text(encoding="utf-8")) == {"command": "report"}
    # The tests' stand-in for an earlier report writes what the command writes.
    assert (mark_report_folder(tmp_path / "m") / REPORT_MARKER).read_bytes() == (out / REPORT_MARKER).read_bytes()


def test_a_report_makes_the_missing_folders_of_its_out_but_none_inside_an_input(tmp_path):
    from ecom_tasks.files import FileRefused
    from ecom_tasks.report import REPORT_MARKER, write_report

    logs = tmp_path / "logs"
    logs.mkdir()
    out = tmp_path / "a" / "b" / "c"  # as `ecom-tasks report logs --out a/b/c`, the build's `mkdir -p`
    assert write_report([logs], out, formats="md", plots=False).out == out
    assert sorted(p.name for p in out.iterdir()) == [REPORT_MARKER, "report.md"]
    (tmp_path / "notes.txt").write_text("a colleague's notes\n", encoding="utf-8")
    before = _tree(tmp_path)
    for bad, message in (
        (logs / "new" / "deep" / "report", "lies inside the input"),  # refused before any folder is made in it
        (tmp_path / "notes.txt" / "x" / "report", "lies below a file"),
    ):
        with pytest.raises(FileRefused, match=message) as refused:
            write_report([logs], bad, formats="md", plots=False)
        assert len(str(refused.value).splitlines()) == 1
        assert _tree(tmp_path) == before


def test_calibrate_replaces_only_a_derived_task_table_it_wrote(tmp_path, capsys):
    from ecom_tasks.cli import build_parser
    from ecom_tasks.ecomeval.calibration import Calibrated, task_table_path, task_table_text
    from ecom_tasks.files import FileRefused

    out = tmp_path / "calibrated.jsonl"
    table = tmp_path / "calibrated.tasks.csv"
    assert task_table_path(out, None) == table  # nothing there yet
    table.write_text(task_table_text({"ecom_qa": Calibrated(75.0, 2, 3, "medium")}), encoding="utf-8")
    assert task_table_path(out, None) == table  # a table calibrate wrote: replaced
    (tmp_path / "victim.csv").write_bytes(table.read_bytes())
    theirs = {
        "colleague_csv": lambda: table.write_text("task,owner\nshop,alice\n", encoding="utf-8"),
        "link": lambda: table.symlink_to(tmp_path / "victim.csv"),  # says ours, but a link is never ours
        "fifo": lambda: os.mkfifo(table),  # never opened
    }
    for attack, plant in theirs.items():
        table.unlink()
        plant()
        before = _tree(tmp_path)
        with pytest.raises(FileRefused, match="not a task table calibrate wrote"):
            task_table_path(out, None)
        assert task_table_path(out, str(tmp_path / "named.csv")) == tmp_path / "named.csv"  # a name given: its rules
        # The command refuses it before reading any log (this one does not exist), in one line naming the file.
        args = build_parser().parse_args(["calibrate", str(tmp_path / "absent.eval"), "--out", str(out)])
        assert args.func(args) == 2, attack
        said = capsys.readouterr().err.strip()
        assert said.startswith(f"calibrate: {table}: not a task table calibrate wrote") and "\n" not in said, said
        assert _tree(tmp_path) == before
