"""The RMIR embedding cache attacked on a shared file system: a FIFO or a symlink as a shard file or as
embedder.json, a symlinked shard folder, a small deflated .npz declaring a huge array, a shard of the
right embedder with the wrong width while embedder.json is missing, and an unwritable cache met by
``ecom-tasks embed-pool``. Nothing outside the cache changes, nothing hangs, every refused file is named."""

from __future__ import annotations

import io
import json
import logging
import threading
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
from attack_helpers import digest_changes, make_fifo, plant_symlink, tree_digest
from numpy.lib import format as npy_format
from test_rmir_cache import LOGGER, Embedder, expected, items, shard_files, warnings_of

from ecom_tasks.rmir.index import CacheError, EmbeddingCache, embed_pool

SHARD_NAME = "0" * 32 + ".npz"


def in_thread(call, seconds: float = 60.0):
    """``call()``'s result, failing the test (instead of hanging it) when it does not return in time."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # re-raised in the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"no answer within {seconds} s (a FIFO opened for reading?)"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A folder outside the cache that planted links point at: a shell start-up file and a valid shard."""
    folder = tmp_path / "victim"
    folder.mkdir()
    (folder / ".bashrc").write_text("export PATH=/usr/bin\n", encoding="utf-8")
    return folder


class Impostor(Embedder):
    """The same id as :class:`Embedder` but other vectors: what a planted file would serve."""

    def vector(self, item):
        return -super().vector(item)


# --- FIFOs and symlinks in the cache's place ----------------------------------------------------------


def test_a_fifo_as_a_shard_is_named_and_never_opened_for_reading(tmp_path, caplog):
    inputs = items()
    embed_pool(Embedder(), inputs, root=tmp_path)
    first = shard_files(Embedder(), tmp_path)[0]
    fifo = make_fifo(first.parent / SHARD_NAME)
    again = Embedder()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        vectors = in_thread(lambda: embed_pool(again, inputs, root=tmp_path))
    assert (vectors.embedded, vectors.skipped, again.embedded) == (0, 1, 0)
    np.testing.assert_allclose(vectors.matrix, expected(again, inputs), rtol=1e-6)
    (warning,) = warnings_of(caplog)
    assert f"{fifo}: unreadable" in warning and "FIFO" in warning


def test_a_symlink_as_a_shard_is_named_and_not_read(tmp_path, caplog, victim):
    inputs = items()
    # A valid shard file of the same embedder id, with other vectors, outside the cache.
    embed_pool(Impostor(), inputs, root=victim / "elsewhere")
    planted_from = shard_files(Impostor(), victim / "elsewhere")[0]
    embed_pool(Embedder(), inputs, root=tmp_path / "cache")
    link = plant_symlink(shard_files(Embedder(), tmp_path / "cache")[0].parent / ("f" * 32 + ".npz"), planted_from)
    before = tree_digest(victim)
    again = Embedder()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        vectors = embed_pool(again, inputs, root=tmp_path / "cache")
    np.testing.assert_allclose(vectors.matrix, expected(again, inputs), rtol=1e-6)  # not the impostor's vectors
    assert (vectors.embedded, vectors.skipped) == (0, 1)
    (warning,) = warnings_of(caplog)
    assert f"{link}: a symbolic link: not read" in warning
    assert digest_changes(before, tree_digest(victim)) == []


def test_a_symlinked_shard_folder_is_neither_read_nor_written_through(tmp_path, caplog, victim):
    inputs = items(20)
    embed_pool(Impostor(), inputs, root=victim / "elsewhere")
    cache = EmbeddingCache(Embedder().id, tmp_path / "cache")
    shard = EmbeddingCache.shard(inputs[0].content_hash())
    link = plant_symlink(cache.dir / shard, EmbeddingCache(Impostor().id, victim / "elsewhere").dir / shard)
    before = tree_digest(victim)
    embedder = Embedder()
    with caplog.at_level(logging.WARNING, logger=LOGGER), pytest.raises(CacheError) as info:
        embed_pool(embedder, inputs, root=tmp_path / "cache")
    assert f"{link}: a symbolic link inside the RMIR embedding cache; not written through" in str(info.value)
    assert f"{link}: a symbolic link: not listed" in warnings_of(caplog)[0]  # its files were not read either
    assert digest_changes(before, tree_digest(victim)) == []
    # Read-only runs use what they can and embed the rest, still without reading through the link.
    vectors = embed_pool(Embedder(), inputs, root=tmp_path / "cache", cache="read")
    np.testing.assert_allclose(vectors.matrix, expected(Embedder(), inputs), rtol=1e-6)


def test_a_fifo_as_embedder_json_is_named_and_replaced_by_the_embedder_record(tmp_path, caplog):
    inputs = items()
    embed_pool(Embedder(), inputs, root=tmp_path)
    meta = EmbeddingCache(Embedder().id, tmp_path).meta_path
    make_fifo(meta)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        vectors = in_thread(lambda: embed_pool(Embedder(), inputs, root=tmp_path))
    assert vectors.embedded == 0
    (warning,) = warnings_of(caplog)
    assert f"{meta}: unreadable" in warning and "FIFO" in warning
    assert meta.is_file() and not meta.is_symlink()
    assert json.loads(meta.read_text(encoding="utf-8")) == {"id": Embedder().id, "dim": 8}


def test_a_symlink_as_embedder_json_is_not_read_and_its_target_never_written(tmp_path, caplog, victim):
    inputs = items()
    embed_pool(Embedder(), inputs, root=tmp_path / "cache")
    meta = EmbeddingCache(Embedder().id, tmp_path / "cache").meta_path
    # A link to a record of the right id but a wrong width, outside: read, it would make every run fail.
    fake = victim / "embedder.json"
    fake.write_text(json.dumps({"id": Embedder().id, "dim": 5}), encoding="utf-8")
    plant_symlink(meta, fake)
    before = tree_digest(victim)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        vectors = embed_pool(Embedder(), inputs, root=tmp_path / "cache")
    np.testing.assert_allclose(vectors.matrix, expected(Embedder(), inputs), rtol=1e-6)
    assert f"{meta}: a symbolic link: not read" in warnings_of(caplog)[0]
    assert meta.is_file() and not meta.is_symlink()  # the link itself was replaced
    assert json.loads(meta.read_text(encoding="utf-8")) == {"id": Embedder().id, "dim": 8}
    assert digest_changes(before, tree_digest(victim)) == []


# --- an array file declaring a huge array ---------------------------------------------------------------


def npy_member(dtype: str, shape: tuple[int, ...], data: bytes) -> bytes:
    """A .npy file's bytes: a header declaring ``dtype`` and ``shape``, then ``data`` (of any length)."""
    buffer = io.BytesIO()
    npy_format.write_array_header_1_0(buffer, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buffer.getvalue() + data


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def crafted_npz(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(f"{name}.npy", data)
    return path


@pytest.mark.parametrize(
    "member, dtype, shape, says",
    [
        # 2^20 rows of 2^14 floats (64 GB) declared; 64 MB of zeros deflate to about 64 kB.
        ("vectors", "<f4", (1 << 20, 1 << 14), "declares shape (1048576, 16384)"),
        # One key of 100 MB: one element, a huge item size.
        ("keys", "|S100000000", (1,), "declares 100000000 bytes"),
    ],
)
def test_a_small_deflated_npz_declaring_a_huge_array_is_refused_from_its_header(
    tmp_path, caplog, member, dtype, shape, says
):
    inputs = items()
    embed_pool(Embedder(), inputs, root=tmp_path)
    folder = shard_files(Embedder(), tmp_path)[0].parent
    members = {  # a valid shard of one item, but for the attacked member
        "keys": npy_bytes(np.asarray([inputs[0].content_hash()], dtype="S64")),
        "vectors": npy_bytes(np.ones((1, 8), dtype=np.float32)),
        "embedder": npy_bytes(np.asarray(Embedder().id)),
    }
    zeros = bytes(64 << 20)
    members[member] = npy_member(dtype, shape, zeros)
    bomb = crafted_npz(folder / SHARD_NAME, members)
    del zeros
    assert bomb.stat().st_size < 1 << 20
    tracemalloc.start()
    try:
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            vectors_read = embed_pool(Embedder(), inputs, root=tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"{peak:,} bytes allocated"
    assert (vectors_read.embedded, vectors_read.skipped) == (0, 1)
    (warning,) = warnings_of(caplog)
    assert f"{bomb}: unreadable" in warning and says in warning


def test_a_shard_key_that_is_not_text_is_no_item_and_no_crash(tmp_path, caplog):
    inputs = items()
    embed_pool(Embedder(), inputs, root=tmp_path)
    first = sorted(shard_files(Embedder(), tmp_path))[0]
    with np.load(first) as data:
        keys = data["keys"]
    first.unlink()
    # The shard's own items, under keys that are bytes no text decodes to (0xff never starts UTF-8), then the real ones.
    planted = np.concatenate([np.asarray([b"\xff\xfe" + k[2:] for k in keys], dtype="S64"), keys])
    crafted_npz(
        first.parent / SHARD_NAME,
        {
            "keys": npy_bytes(planted),
            "vectors": npy_bytes(np.ones((len(planted), 8), dtype=np.float32)),
            "embedder": npy_bytes(np.asarray(Embedder().id)),
        },
    )
    again = Embedder()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        vectors = embed_pool(again, inputs, root=tmp_path)
    # The real keys are found (with the planted file's vectors); the others match no item.
    assert (vectors.embedded, vectors.cached, vectors.skipped, again.embedded) == (0, 60, 0, 0)
    assert warnings_of(caplog) == []


# --- the cache's identity: embedder.json is the embedder's, never a shard's ---------------------------


def plant_wrong_width(path: Path, keys: np.ndarray, embedder: Embedder, width: int = 5) -> Path:
    """A shard as the cache writes it, under the embedder's own id, with ``width``-dimensional vectors."""
    arrays = {
        "keys": keys,
        "vectors": np.ones((len(keys), width), dtype=np.float32),
        "embedder": np.asarray(embedder.id),
    }
    return crafted_npz(path, {name: npy_bytes(array) for name, array in arrays.items()})


@pytest.mark.parametrize("cached", ["every item cached", "only the wrong shard"])
def test_a_shard_of_the_wrong_width_without_embedder_json_is_an_error_naming_it(tmp_path, cached):
    inputs = items()
    embed_pool(Embedder(), inputs, root=tmp_path)
    cache = EmbeddingCache(Embedder().id, tmp_path)
    files = shard_files(Embedder(), tmp_path)
    victim = files[0]
    keys = np.load(victim)["keys"]
    if cached == "only the wrong shard":
        for path in files:
            path.unlink()
    bad = plant_wrong_width(victim.parent / SHARD_NAME, keys, Embedder())  # "000…" sorts before the others
    victim.unlink(missing_ok=True)
    cache.meta_path.unlink()
    embedder = Embedder()
    with pytest.raises(CacheError) as info:
        embed_pool(embedder, inputs, root=tmp_path)
    message = str(info.value)
    assert f"{bad} holds 5-dimensional vectors" in message and "returns 8-dimensional vectors" in message
    assert "remove those files" in message
    assert not cache.meta_path.exists()  # no record written from the shard (nor from anything else)
    # Only the embedder's own width was asked for: one item, or the first batch of the missing ones.
    assert embedder.embedded == (1 if cached == "every item cached" else 60 - len(keys))
    # Once the named file is gone, a run works, and the record says the embedder's width.
    bad.unlink()
    again = Embedder()
    vectors = embed_pool(again, inputs, root=tmp_path)
    np.testing.assert_allclose(vectors.matrix, expected(again, inputs), rtol=1e-6)
    assert json.loads(cache.meta_path.read_text(encoding="utf-8")) == {"id": again.id, "dim": 8}
    third = Embedder()
    assert embed_pool(third, inputs, root=tmp_path).embedded == 0 and third.embedded == 0


# --- an unwritable cache met by embed-pool ----------------------------------------------------------------


def test_embed_pool_into_an_unwritable_cache_fails_before_any_embedding_call(tmp_path, monkeypatch, capsys):
    from loopback.embeddings_server import serve_embeddings
    from test_embed_pool import embed_pool_cli, policy, retriever_args

    root = tmp_path / "cache"
    root.write_text("a file where the cache folder should be\n", encoding="utf-8")
    monkeypatch.setenv("ECOM_TASKS_CACHE", str(root))
    with serve_embeddings(policy) as server:
        code = embed_pool_cli("--retriever", "openai_embeddings", "--retriever-args", retriever_args(server))
        sent = list(server.requests)
    err = capsys.readouterr().err
    assert code == 1 and sent == []
    assert "cannot write the RMIR embedding cache folder" in err and str(root) in err
    assert "Traceback" not in err
