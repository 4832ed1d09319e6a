"""Outputs that could land on a colleague's files or on the inputs, each met with the attack itself: a colleague's
report in the folder named, a table beside the output the user never named, a hard-linked image, an embedding cache
inside the data it embeds, a resource count Ray would refuse only after the work."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from loopback.embeddings_server import serve_embeddings

from ecom_tasks.data import fixtures_dir
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
        assert f"expected a finite number of 0 or more, got {bad!r}" in capsys.readouterr().err
    for good, value in (("0", 0.0), ("0.5", 0.5), ("2", 2.0)):
        assert (
            getattr(parser.parse_args(["embed-pool", "--retriever", "r", option, good]), option[2:].replace("-", "_"))
            == value
        )
