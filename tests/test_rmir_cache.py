"""The RMIR embedding cache under attack: truncated leftover temporary files, a corrupt shard, a corrupt
embedder.json, a foreign embedder's shard of the same dimension, an unwritable folder, a reader racing
a writer, and two concurrent RMIR runs. Each is skipped, named and re-embedded (or, for the folder, a
clear error or a run without the cache), never a crash."""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import uuid
from pathlib import Path

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import list_eval_logs, read_eval_log

from ecom_tasks import plugins
from ecom_tasks.rmir.embedders import EmbedInput, settings_id
from ecom_tasks.rmir.index import CacheError, EmbeddingCache, embed_pool

LOGGER = "ecom_tasks.rmir.index"


class Embedder:
    """Deterministic vectors from each item's content; ``sign`` -1 gives another embedder of the same
    dimension; counts what it is asked to embed."""

    def __init__(self, dim: int = 8, sign: float = 1.0) -> None:
        self.id = settings_id("cache_test", dim=dim, sign=sign)
        self.dim, self.sign, self.embedded = dim, sign, 0

    def vector(self, item: EmbedInput) -> np.ndarray:
        seed = int(item.content_hash()[:8], 16)
        return self.sign * np.random.default_rng(seed).normal(size=self.dim)

    def embed(self, inputs, role):
        self.embedded += len(inputs)
        return np.asarray([self.vector(item) for item in inputs])


def items(n: int = 60) -> list[EmbedInput]:
    return [EmbedInput(text=f"item {i}") for i in range(n)]


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def expected(embedder: Embedder, inputs: list[EmbedInput]) -> np.ndarray:
    return unit(np.asarray([embedder.vector(item) for item in inputs]))


def shard_files(embedder: Embedder, root: Path) -> list[Path]:
    return sorted(EmbeddingCache(embedder.id, root).dir.glob("*/*.npz"))


def warnings_of(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno == logging.WARNING]


# --- leftover and corrupt files ------------------------------------------------------------------


def test_truncated_leftover_temporary_files_are_never_opened(tmp_path, caplog):
    inputs = items()
    embed_pool(Embedder(), inputs, root=tmp_path)
    good = shard_files(Embedder(), tmp_path)[0]
    raw = good.read_bytes()
    # What a writer killed mid-write leaves: the old naming (<hex>.tmp.npz, which `*.npz` globbing
    # used to read and crash on with a bare BadZipFile) and ours (.<hex>.tmp).
    (good.parent / f"{uuid.uuid4().hex}.tmp.npz").write_bytes(raw[: len(raw) // 2])
    (good.parent / f".{uuid.uuid4().hex}.tmp").write_bytes(raw[:40])
    again = Embedder()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        vectors = embed_pool(again, inputs, root=tmp_path)
    assert (vectors.embedded, vectors.cached, vectors.skipped, again.embedded) == (0, 60, 0, 0)
    np.testing.assert_allclose(vectors.matrix, expected(again, inputs), rtol=1e-6)
    assert warnings_of(caplog) == []  # in-flight or leftover temporary files are not the reader's business


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
def test_a_corrupt_shard_is_named_skipped_and_its_items_embedded_again(tmp_path, caplog, damage):
    inputs = items()
    embed_pool(Embedder(), inputs, root=tmp_path)
    victim = shard_files(Embedder(), tmp_path)[3]
    with np.load(victim) as data:
        lost = len(data["keys"])
    raw = victim.read_bytes()
    victim.write_bytes(
        {"truncated": raw[: len(raw) // 2], "garbage": b"PK\x03\x04 not really a zip", "empty": b""}[damage]
    )
    again = Embedder()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        vectors = embed_pool(again, inputs, root=tmp_path)
    assert (vectors.embedded, vectors.skipped, again.embedded) == (lost, 1, lost)
    np.testing.assert_allclose(vectors.matrix, expected(again, inputs), rtol=1e-6)
    (warning,) = warnings_of(caplog)
    assert f"{victim}: unreadable" in warning and "embedded again" in warning
    # The re-embedded items were cached in a new file: the next run embeds nothing (and still names the bad file).
    third = Embedder()
    assert embed_pool(third, inputs, root=tmp_path).embedded == 0 and third.embedded == 0


def test_a_shard_of_the_wrong_shape_is_skipped(tmp_path, caplog):
    inputs = items(20)
    embedder = Embedder()
    embed_pool(embedder, inputs, root=tmp_path)
    victim = shard_files(embedder, tmp_path)[0]
    with np.load(victim) as data:
        keys = data["keys"]
    with open(victim, "wb") as fh:  # same embedder id, 5 columns instead of 8
        np.savez(fh, keys=keys, vectors=np.ones((len(keys), 5), dtype=np.float32), embedder=np.asarray(embedder.id))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        vectors = embed_pool(Embedder(), inputs, root=tmp_path)
    assert vectors.embedded == len(keys) and vectors.skipped == 1
    assert (
        f"{victim}: keys of shape ({len(keys)},) and vectors of shape ({len(keys)}, 5), not 8-dimensional rows"
        in warnings_of(caplog)[0]
    )


@pytest.mark.parametrize("content", ['{"id": "cache_test(dim=8', "[]", '{"id": "someone else", "dim": 8}', "\udcff"])
def test_a_corrupt_embedder_json_is_named_and_rewritten(tmp_path, caplog, content):
    inputs = items()
    embed_pool(Embedder(), inputs, root=tmp_path)
    meta = EmbeddingCache(Embedder().id, tmp_path).meta_path
    if content == "\udcff":
        meta.write_bytes(b"\xff\xfe\x00 not utf-8")
    else:
        meta.write_text(content, encoding="utf-8")
    again = Embedder()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        vectors = embed_pool(again, inputs, root=tmp_path)
    # Every shard records its embedder: no pool item needs embedding again; one item is embedded to learn
    # the width from the embedder itself (never from a shard), and embedder.json is rewritten with it.
    assert (vectors.embedded, vectors.cached, again.embedded) == (0, 60, 1)
    np.testing.assert_allclose(vectors.matrix, expected(again, inputs), rtol=1e-6)
    (warning,) = warnings_of(caplog)
    assert str(meta) in warning
    assert json.loads(meta.read_text(encoding="utf-8")) == {"id": again.id, "dim": 8}


def test_a_foreign_shard_of_the_same_dimension_is_not_used(tmp_path, caplog):
    """Folders merged by hand: another embedder's shard (same items, same width) lands in ours. It used
    to be read like our own, and, sorting last, to override our vectors."""
    inputs = items()
    ours, theirs = Embedder(sign=1.0), Embedder(sign=-1.0)
    embed_pool(ours, inputs, root=tmp_path)
    embed_pool(theirs, inputs, root=tmp_path)
    own_dir = EmbeddingCache(ours.id, tmp_path).dir
    planted = []
    for path in shard_files(theirs, tmp_path):
        target = own_dir / path.parent.name / ("f" * 32 + ".npz")  # sorts after our own files
        shutil.copyfile(path, target)
        planted.append(target)
    again = Embedder(sign=1.0)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        vectors = embed_pool(again, inputs, root=tmp_path)
    np.testing.assert_allclose(vectors.matrix, expected(again, inputs), rtol=1e-6)
    assert (vectors.embedded, vectors.skipped) == (0, len(planted))
    (warning,) = warnings_of(caplog)
    assert f"{planted[0]}: written by embedder {theirs.id!r}" in warning
    assert f"{len(planted)} file(s) not used" in warning


def test_a_foreign_shard_does_not_move_an_rmir_score(monkeypatch, tmp_path):
    """The issue's numbers: the oracle embedder scores recall@20 = 1.0 on the fixtures; the reversed
    embedder's shards planted in its cache folder (same dimension) used to pull it down to 0.77."""
    from test_rmir_e2e import ScriptedEmbedder, _manager_with, metrics_of

    from ecom_tasks.inspect_evals.rmir import rmir

    cache = tmp_path / "cache"
    monkeypatch.setenv("ECOM_TASKS_CACHE", str(cache))
    monkeypatch.setattr(
        plugins,
        "plugin_manager",
        lambda: _manager_with(
            oracle=lambda: Pinned(ScriptedEmbedder(1.0), "oracle"),
            reversed=lambda: Pinned(ScriptedEmbedder(-1.0), "reversed"),
        ),
    )
    best, worst = inspect_eval(
        [rmir(retriever="oracle"), rmir(retriever="reversed")],
        model="none",
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert metrics_of(best)["recall@20"] == 1.0 and metrics_of(worst)["recall@20"] == 0.0
    oracle_dir = EmbeddingCache("pinned(oracle)", cache).dir
    for path in EmbeddingCache("pinned(reversed)", cache).dir.glob("*/*.npz"):
        shutil.copyfile(path, oracle_dir / path.parent.name / ("f" * 32 + ".npz"))
    (again,) = inspect_eval(rmir(retriever="oracle"), model="none", log_dir=str(tmp_path / "logs2"), display="none")
    assert metrics_of(again)["recall@20"] == 1.0
    stats = again.samples[0].scores["rmir_scorer"].metadata
    assert stats["pool_embedded"] == 0 and stats["pool_cache_skipped"] > 0


class Pinned:
    """An embedder under a fixed id (the scripted ones carry their object id), so two runs share a cache."""

    def __init__(self, inner, name: str) -> None:
        self.inner, self.id = inner, f"pinned({name})"

    def embed(self, inputs, role):
        return self.inner.embed(inputs, role)


# --- an unwritable folder ------------------------------------------------------------------------


def test_an_unwritable_cache_folder_is_named_and_read_or_off_runs_without_it(tmp_path):
    root = tmp_path / "not-a-folder"
    root.write_text("a file where the cache folder should be", encoding="utf-8")
    folder = EmbeddingCache(Embedder().id, root).dir
    embedder = Embedder()
    with pytest.raises(CacheError) as info:
        embed_pool(embedder, items(), root=root)
    assert f"cannot write the RMIR embedding cache folder {folder}" in str(info.value)
    assert "-T cache=read" in str(info.value) and "-T cache=false" in str(info.value)
    assert embedder.embedded == 0  # refused before anything was embedded
    for mode in ("read", False):
        vectors = embed_pool(Embedder(), items(), root=root, cache=mode)
        assert vectors.embedded == 60
        np.testing.assert_allclose(vectors.matrix, expected(Embedder(), items()), rtol=1e-6)


@pytest.fixture
def read_only(monkeypatch):
    """Make a folder tree read-only: chmod 555, or, for root (who writes through permissions), the
    EACCES the file system would answer, raised by the calls that create files and folders in it."""
    import builtins
    import errno
    import io

    def apply(folder: Path) -> None:
        if os.geteuid() != 0:
            for path in [folder, *folder.rglob("*")]:
                if path.is_dir():
                    path.chmod(0o555)  # the test restores 755
            return
        inside = str(folder)

        def guard(real, write_mode):
            def call(path, *args, **kwargs):
                mode = args[0] if args else kwargs.get("mode", "r")
                if str(path).startswith(inside) and (not write_mode or any(c in str(mode) for c in "wax+")):
                    raise PermissionError(errno.EACCES, "Permission denied", str(path))
                return real(path, *args, **kwargs)

            return call

        def guard_os_open(real):
            def call(path, flags, *args, **kwargs):
                if str(path).startswith(inside) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
                    raise PermissionError(errno.EACCES, "Permission denied", str(path))
                return real(path, flags, *args, **kwargs)

            return call

        monkeypatch.setattr(os, "mkdir", guard(os.mkdir, False))
        monkeypatch.setattr(os, "open", guard_os_open(os.open))  # tempfile.mkstemp creates files with it
        monkeypatch.setattr(io, "open", guard(io.open, True))
        monkeypatch.setattr(builtins, "open", guard(builtins.open, True))

    yield apply


def test_a_read_only_cache_folder_is_named_and_cache_read_uses_it(tmp_path, read_only):
    inputs = items()
    embed_pool(Embedder(), inputs, root=tmp_path)
    folder = EmbeddingCache(Embedder().id, tmp_path).dir
    try:
        read_only(folder)
        with pytest.raises(
            CacheError, match=f"cannot write the RMIR embedding cache folder {folder} .*Permission denied"
        ):
            embed_pool(Embedder(), [*inputs, EmbedInput(text="new")], root=tmp_path)
        read = embed_pool(Embedder(), [*inputs, EmbedInput(text="new")], root=tmp_path, cache="read")
        assert (read.cached, read.embedded) == (60, 1)
        np.testing.assert_allclose(read.matrix, expected(Embedder(), [*inputs, EmbedInput(text="new")]), rtol=1e-6)
    finally:
        for path in [folder, *folder.rglob("*")]:
            if path.is_dir():
                path.chmod(0o755)


def test_an_unwritable_cache_in_a_run_names_the_folder_and_cache_read_runs(monkeypatch, tmp_path):
    from test_rmir_e2e import _manager_with, metrics_of

    from ecom_tasks.inspect_evals.rmir import rmir

    root = tmp_path / "cache-file"
    root.write_text("x", encoding="utf-8")
    monkeypatch.setenv("ECOM_TASKS_CACHE", str(root))
    monkeypatch.setattr(plugins, "plugin_manager", lambda: _manager_with(plain=lambda: Embedder(sign=1.0)))
    failed, ran = inspect_eval(
        [rmir(retriever="plain"), rmir(retriever="plain", cache="read")],
        model="none",
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert failed.status == "error"
    assert (
        f"cannot write the RMIR embedding cache folder {EmbeddingCache(Embedder().id, root).dir}"
        in failed.error.message
    )
    assert metrics_of(ran)["n"] == 13 and ran.eval.metadata["cache"] == "read"


# --- concurrency ---------------------------------------------------------------------------------


def test_readers_racing_a_writer_see_only_whole_files(tmp_path):
    writer_embedder = Embedder()
    batches = [items(400)[i : i + 20] for i in range(0, 400, 20)]
    truth = {item.content_hash(): unit(writer_embedder.vector(item)[None])[0] for batch in batches for item in batch}
    hashes = list(truth)
    # A leftover truncated temporary file from an earlier crash sits in the way too.
    leftover = EmbeddingCache(writer_embedder.id, tmp_path).dir / hashes[0][:2]
    leftover.mkdir(parents=True)
    (leftover / f"{uuid.uuid4().hex}.tmp.npz").write_bytes(b"PK\x03\x04truncated")
    errors: list[BaseException] = []
    skipped: list = []
    done = threading.Event()

    def write() -> None:
        try:
            cache = EmbeddingCache(writer_embedder.id, tmp_path)
            for batch in batches:
                cache.put(
                    [item.content_hash() for item in batch],
                    np.asarray([writer_embedder.vector(item) for item in batch], dtype=np.float32),
                )
        except BaseException as exc:
            errors.append(exc)
        finally:
            done.set()

    def read() -> None:
        try:
            while True:
                finished = done.is_set()
                cache = EmbeddingCache(writer_embedder.id, tmp_path)
                for key, vector in cache.get(hashes).items():
                    np.testing.assert_allclose(vector / np.linalg.norm(vector), truth[key], rtol=1e-5)
                skipped.extend(cache.skipped)
                if finished:
                    return
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write), *(threading.Thread(target=read) for _ in range(3))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    assert skipped == []
    assert len(EmbeddingCache(writer_embedder.id, tmp_path).get(hashes)) == 400


@pytest.mark.slow
def test_two_concurrent_rmir_runs_over_a_cache_with_a_truncated_leftover(tmp_path):
    from loopback.embeddings_server import serve_embeddings
    from test_rmir_http import hand_computed, policy, run_task

    from ecom_tasks.rmir.embedders import OpenAIEmbeddings
    from ecom_tasks.rmir.schema import load_data
    from ecom_tasks.rmir.scoring import pool_inputs

    data = load_data()
    # The cache folder both runs use: the served model's pool-side id; a truncated leftover in a pool shard.
    pool_id = OpenAIEmbeddings(base_url="http://127.0.0.1:1/v1", model="vlm2vec-test").pool_id
    cache = EmbeddingCache(pool_id, tmp_path / "cache")
    shard = cache.dir / EmbeddingCache.shard(pool_inputs(data)[0].content_hash())
    shard.mkdir(parents=True)
    (shard / f"{uuid.uuid4().hex}.tmp.npz").write_bytes(b"PK\x03\x04" + os.urandom(200))
    (cache.dir / "embedder.json").write_text('{"id": "vlm2vec', encoding="utf-8")  # torn as well
    results: dict[str, dict[str, float]] = {}
    errors: list[BaseException] = []

    with serve_embeddings(policy) as server:

        def run(name: str) -> None:
            try:
                results[name] = run_task(tmp_path, server, name)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(name,)) for name in ("a", "b")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=600)
        assert not errors, errors
        server.requests.clear()
        results["c"] = run_task(tmp_path, server, "c")
        third = list(server.requests)
    want = hand_computed()
    for name in ("a", "b", "c"):
        for key, value in want.items():
            assert results[name][key] == pytest.approx(value, abs=1e-9), (name, key)
    assert len(third) == 13  # the pool came whole from the cache the two runs filled; only the queries were sent
    (info,) = list_eval_logs(str(tmp_path / "c"))
    assert read_eval_log(info).samples[0].scores["rmir_scorer"].metadata["pool_cached"] == 26
