"""The pool index: embeddings cached on disk, checked, and exact top-K search (README: "Index, cache and search").
``faiss`` (``IndexFlatIP``, exact) is an option; it does not promise the numpy path's tie order (pool order)."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import stat
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ecom_tasks import files
from ecom_tasks.data import ConfigurationError, DataValidationError
from ecom_tasks.rmir.embedders import EmbedInput, pool_cache_id
from ecom_tasks.rmir.variants import parse_cache, parse_search

logger = logging.getLogger(__name__)

SHARD_DIGITS = 2  # 256 shards
#: Scores of one (query block x pool block) are at most this many floats (64 MB).
BLOCK_FLOATS = 1 << 24
POOL_BLOCK = 1 << 16


class EmbedderOutputError(ValueError):
    """An embedder returned something that is not one finite row per input."""


class CacheError(ConfigurationError):
    """The cache folder cannot be written, or the embedder's vectors contradict its own cache."""


def cache_root() -> Path:
    return Path(os.environ.get("ECOM_TASKS_CACHE") or Path.home() / ".cache" / "ecom_tasks").expanduser()


def check_cache_outside(data: str, root: Path | None = None) -> None:
    """Refuse a cache to be written (``root``, default :func:`cache_root`) that is, or lies inside, the local data
    folder ``data`` it embeds: an output never lands on an input (files.OutputFolder's rule), before any embedding."""
    cache = Path(root or cache_root()).expanduser()
    if os.path.isdir(data) and files.is_inside(cache, data):
        raise CacheError(
            f"{cache}: the RMIR embedding cache lies inside the data folder {data}; point ECOM_TASKS_CACHE outside it"
        )


def is_sparse(matrix: Any) -> bool:
    return hasattr(matrix, "tocsr") and hasattr(matrix, "nnz")


def check_vectors(
    vectors: Any, n: int, who: str, *, normalize: bool = True, dim: int | None = None
) -> tuple[Any, np.ndarray]:
    """``(rows, zero_mask)`` of an embedder's output for ``n`` inputs: a wrong shape or a non-finite value
    is an ``EmbedderOutputError``; all-zero rows stay zeros, flagged; dense rows L2-normalised, sparse as given."""
    if is_sparse(vectors):
        matrix = vectors.tocsr().astype(np.float32)
        if matrix.shape[0] != n or (dim is not None and matrix.shape[1] != dim):
            raise EmbedderOutputError(
                f"{who}: expected {n} rows{'' if dim is None else f' of {dim}'}, got shape {matrix.shape}"
            )
        if not np.all(np.isfinite(matrix.data)):
            raise EmbedderOutputError(f"{who}: the embedding has NaN or infinite values")
        matrix.eliminate_zeros()
        return matrix, np.diff(matrix.indptr) == 0
    try:
        array: np.ndarray = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbedderOutputError(f"{who}: not a numeric matrix ({exc})") from exc
    if array.ndim != 2 or array.shape[0] != n or array.shape[1] < 1 or (dim is not None and array.shape[1] != dim):
        want = f"({n}, {dim if dim is not None else 'd'})"
        raise EmbedderOutputError(f"{who}: expected an array of shape {want}, got {array.shape}")
    bad = ~np.isfinite(array).all(axis=1)
    if bad.any():
        rows = np.flatnonzero(bad)
        raise EmbedderOutputError(f"{who}: NaN or infinite values in {rows.size} row(s), first at row {int(rows[0])}")
    norms = np.linalg.norm(array, axis=1)
    zero = norms == 0
    if normalize:
        array = array / np.where(zero, 1.0, norms)[:, None]
    return np.ascontiguousarray(array, dtype=np.float32), zero


# --- the on-disk cache -------------------------------------------------------------------------


#: A finished shard file; anything else in a shard folder (a writer's ``.<hex>.tmp``, a leftover
#: ``<hex>.tmp.npz`` of older versions) is not read.
SHARD_FILE = re.compile(r"^[0-9a-f]{32}\.npz$")
#: Skipped files named in full in the warning; the rest are counted.
SHOWN_SKIPS = 5
#: A shard file is written by one batch, so it holds at most a batch's rows: a file declaring more
#: than this many rows, or than the pool has items, whichever is more, is refused from its header.
MIN_SHARD_ROWS = 1 << 12
#: The widest vectors read while ``embedder.json`` does not say the width.
MAX_UNKNOWN_DIM = 1 << 14
#: The arrays of a shard file: (dtype kind, dimensions).
SHARD_ARRAYS = {"keys": ("S", 1), "vectors": ("f", 2), "embedder": ("U", 0)}


class EmbeddingCache:
    """Per-item vectors of one embedder, sharded by content hash. ``writable=False`` reads what is there
    and writes nothing; ``skipped`` lists ``(path, reason)`` for every file that was not used."""

    def __init__(self, embedder_id: str, root: Path | None = None, *, writable: bool = True) -> None:
        self.embedder_id = embedder_id
        self.writable = writable
        self.root = Path(root or cache_root()).expanduser()
        self.relative = Path("rmir", "embeddings", hashlib.sha256(embedder_id.encode()).hexdigest()[:32])
        self.dir = self.root / self.relative
        self.meta_path = self.dir / "embedder.json"
        self.dim: int | None = None
        self.skipped: list[tuple[Path, str]] = []
        #: Files whose vectors were used while the width was unknown, with their width.
        self._widths: dict[Path, int] = {}
        self._output: files.OutputFolder | None = None
        self._read_meta()

    def _skip(self, path: Path, reason: str) -> None:
        self.skipped.append((path, reason))

    @staticmethod
    def _reason(path: Path, exc: Exception) -> str:
        """An error's message without the path it starts with (the warning names the path)."""
        text = str(exc)
        return text.removeprefix(f"{path}: ")

    def _read_meta(self) -> None:
        try:
            mode = self.meta_path.lstat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            self._skip(self.meta_path, f"unreadable ({exc.strerror}); it is rewritten")
            return
        if stat.S_ISLNK(mode):
            self._skip(self.meta_path, "a symbolic link: not read; it is replaced by a file")
            return
        try:
            meta = files.read_json(self.meta_path, inside=self.root)
        except (files.FileRefused, DataValidationError) as exc:
            self._skip(self.meta_path, f"unreadable ({self._reason(self.meta_path, exc)}); it is rewritten")
            return
        dim = meta.get("dim") if isinstance(meta, dict) else None
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 1:
            self._skip(self.meta_path, f"not an embedder record ({files.dumps_strict(meta)[:80]!r}); it is rewritten")
            return
        if meta.get("id") != self.embedder_id:
            self._skip(
                self.meta_path, f"belongs to embedder {meta.get('id')!r}, not {self.embedder_id!r}; it is rewritten"
            )
            return
        self.dim = dim

    @staticmethod
    def shard(content_hash: str) -> str:
        return content_hash[:SHARD_DIGITS]

    def _read(self, path: Path, max_rows: int) -> tuple[np.ndarray, np.ndarray] | None:
        """A shard file's keys and vectors, or None (recorded in ``skipped``) when it cannot be used.
        Its header is checked before its data is read: at most ``max_rows`` rows of the known width."""
        if path.is_symlink():
            self._skip(path, "a symbolic link: not read (a shard is read only as a regular file)")
            return None
        limit = max_rows * (self.dim or MAX_UNKNOWN_DIM)
        try:
            arrays = files.load_npz(path, SHARD_ARRAYS, max_items=limit, max_bytes=limit * 8, inside=self.root)
        except files.FileRefused as exc:
            if not path.exists() and not path.is_symlink():
                return None  # gone since the folder was listed
            self._skip(path, f"unreadable ({self._reason(path, exc)})")
            return None
        keys, vectors, owner = arrays["keys"], arrays["vectors"], str(arrays["embedder"])
        if owner != self.embedder_id:
            self._skip(path, f"written by embedder {owner!r}")
            return None
        if vectors.shape[0] != keys.shape[0] or vectors.shape[1] < 1 or self.dim not in (None, vectors.shape[1]):
            shapes = f"keys of shape {keys.shape} and vectors of shape {vectors.shape}"
            self._skip(path, f"{shapes}, not {self.dim or 'd'}-dimensional rows")
            return None
        if not np.isfinite(vectors).all():
            self._skip(path, "holds NaN or infinite values")
            return None
        return keys, vectors

    def get(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        wanted = {h.encode(): h for h in hashes}  # a shard's keys are compared as bytes: a planted one is never decoded
        max_rows = max(len(wanted), MIN_SHARD_ROWS)
        found: dict[str, np.ndarray] = {}
        for shard in sorted({self.shard(h) for h in wanted.values()}):
            folder = self.dir / shard
            if folder.is_symlink():
                self._skip(folder, "a symbolic link: not listed (a shard folder is read only as a real folder)")
                continue
            try:
                names = sorted(os.listdir(folder))
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError as exc:
                self._skip(folder, f"cannot be listed ({exc.strerror or exc})")
                continue
            for name in names:
                if not SHARD_FILE.match(name):
                    continue
                path = folder / name
                read = self._read(path, max_rows)
                if read is None:
                    continue
                used = False
                for key, vector in zip(read[0].tolist(), read[1]):
                    if key in wanted:
                        found[wanted[key]], used = vector, True
                if used and self.dim is None:
                    self._widths[path] = int(read[1].shape[1])
        return found

    def check_widths(self, dim: int) -> None:
        """With ``embedder.json`` missing, the files read held vectors of a width the embedder's own
        ``dim``-wide vectors contradict: a CacheError naming them (nothing is recorded from them)."""
        wrong = [(path, width) for path, width in self._widths.items() if width != dim]
        if not wrong:
            return
        shown = _first_few([f"{path} holds {width}-dimensional vectors" for path, width in wrong])
        raise CacheError(
            f"RMIR embedding cache {self.dir}: embedder {self.embedder_id!r} returns {dim}-dimensional vectors, but "
            f"{shown} (and embedder.json, which records the width, is missing): remove those files; if a setting "
            "that changes the vectors is missing from the embedder's id, give it a cache_tag"
        )

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """A folder or file below the cache root refused: a CacheError naming the folder and the ways out."""
        try:
            yield
        except files.FileRefused as exc:
            raise CacheError(
                f"cannot write the RMIR embedding cache folder {self.dir} ({exc}); make it writable, point "
                "ECOM_TASKS_CACHE at another folder, or run without writing to it: -T cache=read (use what is there) or -T cache=false"
            ) from None

    def _folder(self) -> files.OutputFolder:
        """The cache root as the output folder (every folder below it checked real), the cache's folder created."""
        if self._output is None:
            with self._writing():
                files.create_parents(self.root)
                output = files.OutputFolder(self.root, what="RMIR embedding cache")
                output.folder(self.relative)
            self._output = output
        return self._output

    def check_writable(self) -> None:
        """Create the folder and a probe file in it, before anything is embedded; a CacheError names the folder."""
        if not self.writable:
            return
        self._folder()
        with self._writing():
            files.OutputFolder(self.dir, what="RMIR embedding cache folder").check_writable()

    def record(self, dim: int) -> None:
        """Write ``embedder.json`` with the width of the embedder's own vectors (writable caches only)."""
        if self.writable:
            with self._writing():
                self._folder().write_text(
                    self.relative / "embedder.json", files.dumps_strict({"id": self.embedder_id, "dim": dim})
                )
        self.dim = dim

    def put(self, hashes: Sequence[str], vectors: np.ndarray) -> None:
        if not len(hashes) or not self.writable:
            return
        dim = int(vectors.shape[1])  # embed_pool has held it to the recorded width
        if self.dim is None:  # the cache's first vectors, or embedder.json lost: the embedder says its width
            self.check_widths(dim)
            self.record(dim)
        by_shard: dict[str, list[int]] = {}
        for i, h in enumerate(hashes):
            by_shard.setdefault(self.shard(h), []).append(i)
        owner = np.asarray(self.embedder_id)
        output = self._folder()
        for shard, rows in by_shard.items():
            # Written under a hidden temporary name and renamed: readers take only <hex>.npz, never a file being written.
            data = files.npz_bytes(
                keys=np.asarray([hashes[i] for i in rows], dtype="S64"),
                vectors=vectors[rows].astype(np.float32),
                embedder=owner,
            )
            with self._writing():
                output.write_bytes(self.relative / shard / f"{uuid.uuid4().hex}.npz", data)

    def report(self) -> None:
        """One warning naming the files that were skipped (their items were embedded again)."""
        if self.skipped:
            logger.warning(
                "RMIR embedding cache: %d file(s) not used (items found in no other file are embedded again): %s",
                len(self.skipped),
                _first_few([f"{path}: {reason}" for path, reason in self.skipped]),
            )


def _first_few(entries: list[str]) -> str:
    """The first ``SHOWN_SKIPS`` entries, then how many more there are."""
    more = f"; and {len(entries) - SHOWN_SKIPS} more" if len(entries) > SHOWN_SKIPS else ""
    return "; ".join(entries[:SHOWN_SKIPS]) + more


# --- embedding the pool ------------------------------------------------------------------------


@dataclass
class PoolVectors:
    matrix: Any  # (n, d) float32 unit rows, or a sparse matrix from a corpus-level embedder
    zero: np.ndarray  # rows that came back all-zero (counted failures)
    embedded: int  # items sent to the embedder in this run
    cached: int  # items read from the cache
    skipped: int = 0  # cache files not used (unreadable, foreign, wrong shape), named in a warning


def _raw_rows(embedder: Any, inputs: Sequence[EmbedInput]) -> np.ndarray:
    """The embedder's pool rows for ``inputs``, checked for shape and NaNs but not normalised (cache what it said)."""
    return check_vectors(
        embedder.embed(list(inputs), "pool"), len(inputs), f"embedder {embedder.id!r}", normalize=False
    )[0]


def embed_pool(
    embedder: Any,
    inputs: Sequence[EmbedInput],
    *,
    cache: bool | str = True,
    batch_size: int = 256,
    root: Path | None = None,
) -> PoolVectors:
    """Pool vectors in pool order, from the cache where present (``cache``: ``variants.parse_cache``);
    new ones are cached batch by batch."""
    who = f"embedder {embedder.id!r}"
    if getattr(embedder, "corpus_level", False):
        matrix, zero = check_vectors(embedder.embed(list(inputs), "pool"), len(inputs), who)
        return PoolVectors(matrix, zero, len(inputs), 0)
    if not inputs:
        raise ValueError("the pool is empty")
    mode = parse_cache(cache)
    hashes = [item.content_hash() for item in inputs]
    first: dict[str, int] = {}
    for i, h in enumerate(hashes):
        first.setdefault(h, i)
    store = EmbeddingCache(pool_cache_id(embedder), root, writable=mode == "true") if mode in ("true", "read") else None
    found = store.get(list(first)) if store is not None else {}
    missing = [h for h in first if h not in found]
    early = None  # the first batch's rows when they were needed before the loop
    if store is not None:
        store.report()
        if missing or store.dim is None:
            store.check_writable()  # before the first embedding call
        if store.dim is None and found:
            # embedder.json is lost: the shards read do not say the width, the embedder's own vectors do (its
            # first batch, or one cached item embedded again); files of another width are an error naming them.
            early = _raw_rows(embedder, [inputs[first[h]] for h in missing[:batch_size] or [next(iter(found))]])
            store.check_widths(early.shape[1])
            store.record(early.shape[1])
    dim = store.dim if store is not None else None
    for start in range(0, len(missing), batch_size):
        chunk = missing[start : start + batch_size]
        rows = early if start == 0 and early is not None else _raw_rows(embedder, [inputs[first[h]] for h in chunk])
        if dim is not None and rows.shape[1] != dim:
            if store is not None and store.dim is not None:
                raise CacheError(
                    f"embedder {store.embedder_id!r} returned {rows.shape[1]}-dimensional vectors; its cache {store.dir} "
                    f"holds {store.dim}-dimensional ones: a setting that changes the vectors is missing from the embedder's "
                    "id (give it a cache_tag), or delete that folder"
                )
            raise EmbedderOutputError(
                f"{who}: returned {rows.shape[1]}-dimensional vectors after {dim}-dimensional ones"
            )
        dim = rows.shape[1]
        if store is not None:
            store.put(chunk, rows)
        found.update(zip(chunk, rows))
    matrix, zero = check_vectors(np.stack([found[h] for h in hashes]), len(inputs), who)
    if zero.any():
        logger.warning(
            "%s: %d pool item(s) embedded as all-zero vectors; they score 0 for every query", who, int(zero.sum())
        )
    skipped = len(store.skipped) if store is not None else 0
    return PoolVectors(matrix, zero, len(missing), len(first) - len(missing), skipped)


def fill_pool_cache(
    embedder: Any,
    inputs: Sequence[EmbedInput],
    worker: int,
    workers: int,
    *,
    batch_size: int = 256,
    root: Path | None = None,
) -> int:
    """Embed and cache the pool items of this worker's shards (shard number % workers == worker), for
    independent workers (README: "Index, cache and search"); returns how many items this call embedded."""
    if not 0 <= worker < workers:
        raise ValueError(f"worker must be in 0..{workers - 1}")
    mine = [item for item in inputs if int(EmbeddingCache.shard(item.content_hash()), 16) % workers == worker]
    return embed_pool(embedder, mine, batch_size=batch_size, root=root).embedded if mine else 0


# --- exact top-K search ------------------------------------------------------------------------


#: Columns per group in the top-K threshold pass (see ``_block_top_k``).
GROUP = 64


def _block_top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top ``k`` columns of each row, best first, equal scores in column order. The k-th largest maximum of
    disjoint groups of columns bounds the row's k-th largest score from below, so the top K lies in the groups
    reaching it (about k): one max-reduction pass, then a sort of their few columns, much cheaper than
    ``argpartition`` over every column. A block of fewer than k groups is sorted whole (stable)."""
    rows_n, n = scores.shape
    groups = -(-n // GROUP)
    if groups < k:
        order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        return order, np.take_along_axis(scores, order, axis=1)
    maxima = np.maximum.reduceat(scores, np.arange(0, n, GROUP), axis=1)
    threshold = np.partition(maxima, groups - k, axis=1)[:, groups - k]
    # Only groups whose maximum reaches the threshold can hold candidates: about k per row.
    group_rows, group_ids = np.nonzero(maxima >= threshold[:, None])
    cols = group_ids[:, None] * GROUP + np.arange(GROUP)
    inside = cols < n  # the last group may be short
    cols = np.minimum(cols, n - 1)
    if scores.flags.c_contiguous:  # a flat take is about twice as fast as 2-D fancy indexing
        values = np.take(scores.reshape(-1), group_rows[:, None] * n + cols)
    else:
        values = scores[group_rows[:, None], cols]
    keep = inside & (values >= threshold[group_rows][:, None])
    rows = np.broadcast_to(group_rows[:, None], cols.shape)[keep]
    cols, values = cols[keep], values[keep]
    order = np.lexsort((cols, -values, rows))
    rows, cols, values = rows[order], cols[order], values[order]
    take = np.searchsorted(rows, np.arange(rows_n))[:, None] + np.arange(k)
    return cols[take], values[take]


def _scores(queries: Any, pool_block: Any, buffer: np.ndarray | None = None) -> np.ndarray:
    if is_sparse(pool_block):
        return np.asarray(
            (pool_block @ queries.T).T.todense() if is_sparse(queries) else (pool_block @ queries.T).T, dtype=np.float32
        )
    if buffer is None or queries.dtype != np.float32 or pool_block.dtype != np.float32:
        return queries @ pool_block.T
    # One buffer for every block: no fresh pages to fault in per block.
    out = buffer[: queries.shape[0], : pool_block.shape[0]]
    return np.matmul(queries, pool_block.T, out=out)


def top_k(pool: Any, queries: Any, k: int, *, pool_block: int = POOL_BLOCK) -> tuple[np.ndarray, np.ndarray]:
    """Indices (into the pool) and scores of each query's ``k`` best pool rows, best first, ties in pool
    order; blocks of at most ``BLOCK_FLOATS`` scores."""
    n_pool, n_queries = pool.shape[0], queries.shape[0]
    k = min(int(k), n_pool)
    if k < 1:
        raise ValueError("k must be >= 1")
    pool_block = min(pool_block, n_pool)
    query_block = max(1, min(n_queries, BLOCK_FLOATS // pool_block))
    out_idx = np.empty((n_queries, k), dtype=np.int64)
    out_val = np.empty((n_queries, k), dtype=np.float32)
    buffer = None if is_sparse(pool) else np.empty((query_block, pool_block), dtype=np.float32)
    for qs in range(0, n_queries, query_block):
        q = queries[qs : qs + query_block]
        cand_idx, cand_val = [], []
        for ps in range(0, n_pool, pool_block):
            idx, val = _block_top_k(_scores(q, pool[ps : ps + pool_block], buffer), k)
            cand_idx.append(idx + ps)
            cand_val.append(val)
        idx, val = np.concatenate(cand_idx, axis=1), np.concatenate(cand_val, axis=1)
        order = np.lexsort((idx, -val), axis=1)[:, :k]
        idx, val = np.take_along_axis(idx, order, axis=1), np.take_along_axis(val, order, axis=1)
        out_idx[qs : qs + len(idx)], out_val[qs : qs + len(idx)] = idx, val
    return out_idx, out_val


def top_k_faiss(pool: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The same search with ``faiss.IndexFlatIP`` (exact inner product; tie order is faiss's)."""
    try:
        import faiss
    except ImportError as exc:
        raise ImportError("search=faiss needs faiss-cpu: pip install 'ecom-tasks[faiss]'") from exc
    if is_sparse(pool):
        raise ValueError("faiss searches dense vectors; this embedder's are sparse (use search=numpy)")
    index = faiss.IndexFlatIP(pool.shape[1])
    index.add(np.ascontiguousarray(pool, dtype=np.float32))
    scores, idx = index.search(np.ascontiguousarray(queries, dtype=np.float32), min(int(k), pool.shape[0]))
    return idx.astype(np.int64), scores


# --- the pool index ----------------------------------------------------------------------------


@dataclass
class PoolIndex:
    """Pool ids and vectors of one embedder, ready to search."""

    ids: tuple[str, ...]
    vectors: PoolVectors
    embedder: Any
    search_backend: str = "numpy"
    stats: dict[str, int] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        embedder: Any,
        ids: Sequence[str],
        inputs: Sequence[EmbedInput],
        *,
        search: str = "numpy",
        cache: bool | str = True,
        root: Path | None = None,
    ) -> PoolIndex:
        search = parse_search(search)
        vectors = embed_pool(embedder, inputs, cache=cache, root=root)
        stats = {
            "pool": len(ids),
            "pool_embedded": vectors.embedded,
            "pool_cached": vectors.cached,
            "pool_zero": int(vectors.zero.sum()),
            "pool_cache_skipped": vectors.skipped,
        }
        return cls(tuple(ids), vectors, embedder, search, stats)

    def embed_queries(self, inputs: Sequence[EmbedInput]) -> tuple[Any, np.ndarray]:
        """Checked query rows and their all-zero mask (shape must match the pool's)."""
        dim = self.vectors.matrix.shape[1]
        return check_vectors(
            self.embedder.embed(list(inputs), "query"), len(inputs), f"embedder {self.embedder.id!r}", dim=dim
        )

    def search(self, queries: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        if self.search_backend == "faiss":
            return top_k_faiss(self.vectors.matrix, queries, k)
        return top_k(self.vectors.matrix, queries, k)
