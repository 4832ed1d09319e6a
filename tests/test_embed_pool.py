"""``ecom-tasks embed-pool``: the RMIR pool embedded ahead of a run, in this process or on Ray Data,
into the cache the run reads; the embedder is vLLM-style ``openai_embeddings`` on loopback servers."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval
from loopback.embeddings_server import EmbeddingInput, RejectRequest, serve_embeddings

from ecom_tasks import cli
from ecom_tasks.inspect_evals.rmir import rmir_task
from ecom_tasks.rmir.schema import load_data

DATA = load_data()
POOL_IMAGES = {Path(p.image).read_bytes() for p in DATA.pool}
MODEL = "vlm2vec-test"


def policy(item: EmbeddingInput) -> list[float]:
    """The served 'model': a fixed pseudo-random vector per (text, images)."""
    digest = hashlib.sha256(item.text.encode() + b"".join(item.images)).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little")).normal(size=16).tolist()


def pool_requests(server) -> list[bytes]:
    """The images of the requests that embedded a pool item (an image alone, no text part)."""
    found = []
    for body in server.requests:
        (message,) = body["messages"]
        parts = message["content"]
        if [p["type"] for p in parts] == ["image_url"]:
            found.append(base64.b64decode(parts[0]["image_url"]["url"].split(",", 1)[1]))
    return found


def retriever_args(server) -> str:
    return json.dumps({"base_url": server.base_url, "model": MODEL, "batch_size": 4})


def embed_pool_cli(*args: str) -> int:
    with pytest.raises(SystemExit) as stop:
        cli.main(["embed-pool", *args])
    return stop.value.code


def run_rmir(server, tmp_path: Path, name: str):
    """``ecom_tasks/rmir`` with the run's embedder on ``server``: (metrics, pool stats of the first score)."""
    task = rmir_task(retriever="openai_embeddings", retriever_args=retriever_args(server))
    (log,) = inspect_eval(task, model="none", log_dir=str(tmp_path / name), display="none")
    assert log.status == "success", log.error
    metrics = {k: m.value for s in log.results.scores for k, m in s.metrics.items()}
    stats = {k: v for k, v in log.samples[0].scores["rmir_scorer"].metadata.items() if k.startswith("pool")}
    return metrics, stats


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("ECOM_TASKS_CACHE", str(folder))
    return folder


def test_local_engine_fills_the_cache_the_run_reads(tmp_path, fresh_cache, capsys):
    with serve_embeddings(policy) as server:
        assert embed_pool_cli("--retriever", "openai_embeddings", "--retriever-args", retriever_args(server)) == 0
        assert (
            "26 pool items (26 distinct): 0 already cached, 26 embedded by 1 local worker(s)" in capsys.readouterr().out
        )
        assert sorted(pool_requests(server)) == sorted(POOL_IMAGES) and len(server.requests) == 26
        server.requests.clear()
        # A second fill finds everything cached and sends nothing.
        assert embed_pool_cli("--retriever", "openai_embeddings", "--retriever-args", retriever_args(server)) == 0
        assert "26 already cached, 0 embedded" in capsys.readouterr().out
        assert server.requests == []
        _, stats = run_rmir(server, tmp_path, "run")
        # The run embeds only its 13 queries (image + text); the pool comes from the cache.
        assert pool_requests(server) == [] and len(server.requests) == 13
        assert stats["pool_embedded"] == 0 and stats["pool_cached"] == 26


def test_ray_engine_without_ray_says_how_to_install_it(fresh_cache, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    assert (
        embed_pool_cli(
            "--retriever",
            "openai_embeddings",
            "--retriever-args",
            '{"base_url": "http://127.0.0.1:9/v1", "model": "m"}',
            "--engine",
            "ray",
        )
        == 1
    )
    err = capsys.readouterr().err.strip()
    assert err == "ecom-tasks: --engine ray needs Ray Data: pip install 'ecom-tasks[ray]'"


def test_what_cannot_be_embedded_ahead_is_one_clear_error(fresh_cache, capsys):
    assert embed_pool_cli("--retriever", "lexical") == 1
    assert "corpus_level" in capsys.readouterr().err
    args = '{"base_url": "http://127.0.0.1:9/v1", "model": "m"}'
    assert (
        embed_pool_cli(
            "--retriever", "openai_embeddings", "--retriever-args", args, "--base-url", "a", "--base-url", "b"
        )
        == 1
    )
    assert "need --engine ray" in capsys.readouterr().err


@pytest.fixture(scope="module")
def local_ray():
    # A local-only instance on 127.0.0.1: older Ray (2.40) otherwise finds its node address by
    # opening a UDP socket towards 8.8.8.8 (no packet is sent, but the network guard rightly objects).
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'ecom-tasks[ray]')")
    pytest.importorskip("ray.data", reason="Ray Data is not installed (pip install 'ecom-tasks[ray]')")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.slow
def test_ray_engine_on_two_servers_then_the_run_embeds_no_pool_item_and_recalls_as_a_local_run(
    local_ray, tmp_path, fresh_cache, capsys, monkeypatch
):
    with serve_embeddings(policy) as first, serve_embeddings(policy) as second, serve_embeddings(policy) as run_server:
        code = embed_pool_cli(
            "--retriever",
            "openai_embeddings",
            "--retriever-args",
            json.dumps({"model": MODEL, "batch_size": 4}),
            "--engine",
            "ray",
            "--base-url",
            first.base_url,
            "--base-url",
            second.base_url,
            "--batch-size",
            "4",
        )
        assert code == 0
        assert (
            "26 pool items (26 distinct): 0 already cached, 26 embedded by 2 ray worker(s)" in capsys.readouterr().out
        )
        # One server per Ray worker: each embedded a share, together every pool image exactly once.
        by_first, by_second = pool_requests(first), pool_requests(second)
        assert by_first and by_second
        assert sorted(by_first + by_second) == sorted(POOL_IMAGES)
        assert len(first.requests) + len(second.requests) == 26
        # Shard files were renamed into place by the workers; no temporary file is left behind.
        files = list(fresh_cache.rglob("*"))
        assert any(f.suffix == ".npz" for f in files) and not [f for f in files if f.name.endswith(".tmp")]

        ray_filled, stats = run_rmir(run_server, tmp_path, "after_ray")
        assert pool_requests(run_server) == [] and len(run_server.requests) == 13  # the queries only
        assert stats["pool_embedded"] == 0 and stats["pool_cached"] == 26

        # The same run with an empty cache embeds the pool itself, in this process.
        monkeypatch.setenv("ECOM_TASKS_CACHE", str(tmp_path / "other-cache"))
        run_server.requests.clear()
        local, local_stats = run_rmir(run_server, tmp_path, "local")
        assert len(pool_requests(run_server)) == 26 and local_stats["pool_embedded"] == 26
    assert 0 < local["recall@20"] < 1
    assert ray_filled == local


@pytest.mark.slow
def test_ray_engine_reports_failed_batches_in_one_line_and_a_rerun_embeds_only_the_rest(
    local_ray, tmp_path, fresh_cache, capsys
):
    def cache_key(image: bytes) -> str:  # the cache's content hash of an image-only input
        return hashlib.sha256(b"text\0\0image\0" + image).hexdigest()

    def half_broken(item: EmbeddingInput) -> list[float]:
        # rows reach the workers sorted by that hash: the batches of the first half fail
        if cache_key(item.images[0]) < "8":
            raise RejectRequest(400, "model overloaded")
        return policy(item)

    args = json.dumps({"model": MODEL, "batch_size": 4, "max_retries": 0})
    failing = {image for image in POOL_IMAGES if cache_key(image) < "8"}
    assert 0 < len(failing) < len(POOL_IMAGES)
    with serve_embeddings(half_broken) as broken:
        code = embed_pool_cli(
            "--retriever",
            "openai_embeddings",
            "--retriever-args",
            args,
            "--engine",
            "ray",
            "--base-url",
            broken.base_url,
            "--batch-size",
            "4",
            "--workers",
            "1",
        )
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert (
        code == 1
        and err.startswith("ecom-tasks: embed-pool on Ray: ")
        and "batch(es) failed" in err
        and "model overloaded" in err
    )
    with serve_embeddings(policy) as healthy:
        assert (
            embed_pool_cli(
                "--retriever",
                "openai_embeddings",
                "--retriever-args",
                args,
                "--engine",
                "ray",
                "--base-url",
                healthy.base_url,
            )
            == 0
        )
        asked = pool_requests(healthy)
    # The batches that had succeeded were cached (a failed batch caches nothing): the re-run asks for the
    # failed items and the rest of their batches, never for an item cached the first time.
    assert failing <= set(asked) and len(asked) == len(set(asked)) < len(POOL_IMAGES)
    assert f"{len(POOL_IMAGES) - len(asked)} already cached, {len(asked)} embedded" in capsys.readouterr().out
