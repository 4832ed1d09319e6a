"""Embedding an RMIR pool into the cache ahead of a run, in this process or on Ray Data
(``ecom-tasks embed-pool``: docs/running.md, "RMIR's pool, embedded once per embedder")."""

from __future__ import annotations

import functools
import itertools
import logging
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ecom_tasks.data import ConfigurationError, EcomTasksError
from ecom_tasks.images import DEFAULT_ACCESS, ImageAccess
from ecom_tasks.rmir.embedders import EmbedInput, pool_cache_id
from ecom_tasks.rmir.index import EmbeddingCache, cache_root, check_cache_outside, embed_pool
from ecom_tasks.rmir.scoring import Retrieval, make_embedder, parse_retriever_args

ENGINES = ("local", "ray")
RAY_MISSING = "--engine ray needs Ray Data: pip install 'ecom-tasks[ray]'"
#: Pool rows per Ray Data batch (one ``embed`` call and one cache file per shard it touches).
BATCH_SIZE = 256


class PoolWorkerError(EcomTasksError):
    """A Ray worker failed (an embedding server down, a model that does not load): one line, not Ray's traceback."""


#: An exception line of a worker's traceback as Ray relays it (``httpx.ConnectError: All connection attempts failed``).
_EXCEPTION_LINE = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Exit)): (.+)$", re.M)


def _worker_failure(exc: BaseException) -> str:
    """The worker's own exception in Ray's wrapper (which relays it as text), else the wrapper's name."""
    found = [
        (name, text)
        for name, text in _EXCEPTION_LINE.findall(str(exc))
        if "Ray" not in name and "UserCodeException" not in name
    ]
    return f"{found[-1][0]}: {found[-1][1]}" if found else type(exc).__name__


@dataclass(frozen=True)
class PoolFill:
    """What one ``embed-pool`` did."""

    engine: str
    embedder_id: str  # the pool id keying the cache
    cache_dir: Path
    items: int  # pool inputs (pool order, duplicates included)
    distinct: int  # distinct contents (cache entries)
    cached: int  # distinct contents already cached before this call
    embedded: int  # distinct contents embedded by this call
    workers: int
    seconds: float

    def summary(self) -> str:
        return (
            f"{self.items} pool items ({self.distinct} distinct): {self.cached} already cached, {self.embedded} embedded "
            f"by {self.workers} {self.engine} worker(s) in {self.seconds:.1f} s; cache {self.cache_dir} (embedder {self.embedder_id})"
        )


def embed_pool_ahead(
    data: str | None,
    retriever: str,
    retriever_args: str | Mapping[str, Any] | None = None,
    *,
    engine: str = "local",
    split: str | None = None,
    pool_captions: bool = False,
    image_access: ImageAccess = DEFAULT_ACCESS,
    root: Path | None = None,
    address: str | None = None,
    workers: int | None = None,
    num_gpus: float | None = None,
    num_cpus: float = 1.0,
    batch_size: int = BATCH_SIZE,
    base_urls: Sequence[str] = (),
) -> PoolFill:
    """Embed the pool of ``data`` with ``retriever`` into the cache (``root``: ``$ECOM_TASKS_CACHE``)."""
    if engine not in ENGINES:
        raise ConfigurationError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")
    if batch_size < 1:
        raise ConfigurationError("batch size must be >= 1")
    ray = _import_ray() if engine == "ray" else None  # before any work: without the extra, say how to install it
    args = parse_retriever_args(retriever_args)
    if base_urls and engine == "local" and len(base_urls) > 1:
        raise ConfigurationError("several embedding servers (--base-url given more than once) need --engine ray")
    if base_urls:  # the driver's embedder (here only its pool id: the workers take the servers in turn)
        args["base_url"] = base_urls[0]
    root = Path(root) if root is not None else cache_root()
    retrieval = Retrieval(data, retriever, args, split=split, pool_captions=pool_captions, image_access=image_access)
    loaded, embedder, inputs = retrieval.pool()  # what a run with these settings embeds
    check_cache_outside(loaded.location, root)
    if getattr(embedder, "corpus_level", False):
        raise ConfigurationError(
            f"retriever {retriever!r} is fitted on the whole pool in every run (corpus_level): its pool vectors are not "
            "cached, so there is nothing to embed ahead"
        )
    start = time.monotonic()
    pool_id = pool_cache_id(embedder)
    store = EmbeddingCache(pool_id, root)
    fill = functools.partial(PoolFill, engine=engine, embedder_id=pool_id, cache_dir=store.dir, items=len(inputs))
    if ray is None:
        vectors = embed_pool(embedder, inputs, cache="true", root=root)
        return fill(
            distinct=vectors.embedded + vectors.cached,
            cached=vectors.cached,
            embedded=vectors.embedded,
            workers=1,
            seconds=time.monotonic() - start,
        )
    distinct: dict[str, EmbedInput] = {}
    for item in inputs:
        distinct.setdefault(item.content_hash(), item)
    cached = store.get(list(distinct))
    store.report()
    todo = sorted(h for h in distinct if h not in cached)  # shard-contiguous batches
    fill = functools.partial(fill, distinct=len(distinct), cached=len(cached))
    if not todo:
        return fill(embedded=0, workers=0, seconds=time.monotonic() - start)
    store.check_writable()  # an unwritable folder fails here, before any worker starts
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    try:
        ray.data.DataContext.get_current().enable_progress_bars = False
        logging.getLogger("ray.data").setLevel(logging.WARNING)
        size = workers or _default_workers(ray, num_gpus, num_cpus, base_urls)
        servers = ray.remote(num_cpus=0)(_ServerRotation).remote(list(base_urls)) if base_urls else None
        rows = [{"hash": h, "text": distinct[h].text or "", "image": distinct[h].image or ""} for h in todo]
        results = (
            ray.data.from_items(rows)
            .map_batches(
                PoolWorker,
                fn_constructor_kwargs=dict(
                    retriever=retriever, retriever_args=args, pool_id=pool_id, root=str(root), servers=servers
                ),
                batch_size=batch_size,
                batch_format="numpy",
                compute=ray.data.ActorPoolStrategy(size=size),
                num_cpus=num_cpus,
                num_gpus=num_gpus or None,
            )
            .take_all()
        )
    except Exception as exc:  # a worker that could not start: Ray relays its exception as text, with a long traceback
        if isinstance(exc, EcomTasksError):
            raise
        raise PoolWorkerError(f"embed-pool on Ray: a worker failed: {_worker_failure(exc)}") from exc
    finally:
        if started:
            ray.shutdown()
    errors = [str(row["error"]) for row in results if str(row["error"])]
    if errors:
        raise PoolWorkerError(
            f"embed-pool on Ray: {len(errors)} of {len(results)} batch(es) failed, the first with {errors[0]}; "
            "the other batches are cached: run the command again to embed the rest"
        )
    embedded = sum(int(row["embedded"]) for row in results)
    return fill(embedded=embedded, workers=size, seconds=time.monotonic() - start)


# --- Ray Data ------------------------------------------------------------------------------------


class _ServerRotation:
    """A Ray actor handing out embedding servers in turn, one per pool worker."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = itertools.cycle(urls)

    def next(self) -> str:
        return next(self.urls)


class PoolWorker:
    """A Ray Data actor: builds the embedder once, then embeds and caches each batch of pool rows."""

    def __init__(
        self, retriever: str, retriever_args: dict[str, Any], pool_id: str, root: str, servers: Any = None
    ) -> None:
        args = dict(retriever_args)
        if servers is not None:
            import ray

            args["base_url"] = ray.get(servers.next.remote())
        self.embedder = make_embedder(retriever, args)
        if pool_cache_id(self.embedder) != pool_id:
            raise ConfigurationError(
                f"retriever {retriever!r} built an embedder with pool id {pool_cache_id(self.embedder)!r} on a worker and "
                f"{pool_id!r} on the driver: its vectors change between constructions, so a cache filled elsewhere cannot be used"
            )
        self.root = Path(root)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        inputs = [EmbedInput(text=str(t) or None, image=str(i) or None) for t, i in zip(batch["text"], batch["image"])]
        try:
            # The run's own function: reads what is cached (another worker or run may have got there first),
            # embeds the rest in one call, writes each shard's file under a temporary name and renames it.
            embedded = embed_pool(self.embedder, inputs, cache="true", root=self.root, batch_size=len(inputs)).embedded
            error = ""
        except Exception as exc:  # reported by the driver; the other batches go on and are cached
            embedded, error = 0, f"{type(exc).__name__}: {exc}"
        return {"embedded": np.asarray([embedded]), "error": np.asarray([error])}


def _import_ray() -> Any:
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as exc:
        raise ConfigurationError(RAY_MISSING) from exc
    return ray


def _default_workers(ray: Any, num_gpus: float | None, num_cpus: float, base_urls: Sequence[str]) -> int:
    """One worker per server when servers are given, else as many actors as the cluster holds."""
    if base_urls:
        return len(base_urls)
    resources = ray.cluster_resources()
    if num_gpus:
        return max(1, int(resources.get("GPU", 0) // num_gpus))
    return max(1, int(resources.get("CPU", 1) // max(num_cpus, 1e-9)))
