"""Retrieving and scoring one RMIR query, and summarizing: the single place the adapter calls."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ecom_tasks import files
from ecom_tasks.data import ConfigurationError
from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.images import DEFAULT_ACCESS, ImageAccess
from ecom_tasks.plugins import parse_metric_names, retrievers, select_metrics
from ecom_tasks.rmir.embedders import DEFAULT_RETRIEVER, EmbedInput, reads_images
from ecom_tasks.rmir.index import PoolIndex, check_cache_outside
from ecom_tasks.rmir.metrics import ranking_outcome
from ecom_tasks.rmir.schema import RmirData, load_data
from ecom_tasks.rmir.variants import RANK_DEPTH, parse_cache, parse_k, parse_mode
from ecom_tasks.scorers.kinds import RANKING, recall_at
from ecom_tasks.scorers.settings import shown

_RECALL = "recall@"


def _recall_cutoff(name: str) -> int | None:
    """K of a ``recall@K`` name (K a positive integer), else None."""
    tail = name[len(_RECALL) :] if name.startswith(_RECALL) else ""
    return int(tail) if tail.isdigit() and int(tail) > 0 else None


def ranking_specs(k: Any = None, metrics: str | Sequence[str] | None = None) -> list[MetricSpec]:
    """The run's ``ranking`` metrics: ``recall@K`` for each K of ``k``, then the other registered ones
    (``mrr``, ``ndcg@10``, plugins') that ``metrics`` selects (all when None). A ``recall@K`` in ``metrics``
    with a K not in ``k``, or an unknown name, is a :class:`ConfigurationError`."""
    ks = parse_k(k)
    names = parse_metric_names(metrics)
    registered = {spec.name: spec for spec in select_metrics(RANKING)}
    specs = {f"{_RECALL}{n}": registered.get(f"{_RECALL}{n}") or recall_at(n) for n in ks}
    others = {name: spec for name, spec in registered.items() if _recall_cutoff(name) is None}
    if names is None:
        return [*specs.values(), *others.values()]
    cutoffs = ",".join(map(str, ks))
    for name in dict.fromkeys(names):
        cutoff = _recall_cutoff(name)
        if cutoff is not None:
            if cutoff not in ks:
                raise ConfigurationError(
                    f"metrics names {name}, but the recall cut-offs are k={cutoffs}: recall@K comes from k "
                    f"(-T k={cutoffs},{cutoff}); metrics selects among the other metrics ({', '.join(others)})"
                )
        elif name in others:
            specs[name] = others[name]
        else:
            raise ConfigurationError(
                f"unknown ranking metric {name!r}; metrics selects among {', '.join(others) or 'none'} (recall@K for the cut-offs in k={cutoffs})"
            )
    return list(specs.values())


def rank_depth(specs: Sequence[MetricSpec]) -> int:
    return max([RANK_DEPTH, *(_recall_cutoff(s.name) or 0 for s in specs)])


def parse_retriever_args(value: str | Mapping[str, Any] | None, setting: str = "retriever_args") -> dict[str, Any]:
    """``-T <setting>=`` (JSON text, or the object Inspect already read) as a dict; anything else is one
    ConfigurationError naming ``setting``."""
    if value is None or value == "":
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    if not isinstance(value, str):  # a number or a list would reach json_problem and fail there as a TypeError
        raise ConfigurationError(f"{setting} must be a JSON object, got {shown(value)}")
    parsed, problem = files.json_problem(value)
    if problem is not None:
        raise ConfigurationError(f"{setting} must be a JSON object, got {value[:200]!r}: {problem}")
    if not isinstance(parsed, dict):
        raise ConfigurationError(f"{setting} must be a JSON object, got {shown(value)}")
    return parsed


def retriever_factory(retriever: Any, setting: str = "retriever") -> Any:
    """The registered embedder factory named ``retriever`` (the ``setting``); one ConfigurationError listing
    the registered names otherwise, so a task can refuse an unknown name before its first search."""
    factories = retrievers()
    if not isinstance(retriever, str) or retriever not in factories:
        raise ConfigurationError(f"unknown {setting} {shown(retriever)}; registered: {', '.join(factories)}")
    return factories[retriever]


def make_embedder(retriever: str = DEFAULT_RETRIEVER, retriever_args: str | Mapping[str, Any] | None = None) -> Any:
    """The registered embedder ``retriever``, built with ``retriever_args``; checked for an ``id`` and ``embed``."""
    embedder = retriever_factory(retriever)(**parse_retriever_args(retriever_args))
    if not (
        isinstance(getattr(embedder, "id", None), str) and embedder.id and callable(getattr(embedder, "embed", None))
    ):
        raise TypeError(
            f"retriever {retriever!r} built {embedder!r}: an embedder needs a non-empty str `id` and an `embed(inputs, role)` method"
        )
    return embedder


#: What a pool item is embedded from (recorded in the log as ``pool_input``).
POOL_IMAGE, POOL_IMAGE_CAPTION, POOL_CAPTION = "image", "image+caption", "caption"


def pool_input_kind(retriever: str = DEFAULT_RETRIEVER, pool_captions: bool = False) -> str:
    """``image`` (the paper's candidates), ``image+caption`` (opted in), or ``caption`` for an embedder
    that reads no images (``lexical``): decided by the registered factory's ``reads_images``."""
    factory = retrievers().get(retriever)
    if factory is not None and not reads_images(factory):
        return POOL_CAPTION
    return POOL_IMAGE_CAPTION if pool_captions else POOL_IMAGE


def pool_inputs(data: RmirData, kind: str = POOL_IMAGE) -> list[EmbedInput]:
    """One input per pool item: its image alone, its image and caption, or its caption (its image
    only when it has no caption: a text-only embedder then gives it a zero vector, counted)."""
    if kind == POOL_IMAGE:
        return [EmbedInput(image=p.image) for p in data.pool]
    if kind == POOL_IMAGE_CAPTION:
        return [EmbedInput(text=p.description or None, image=p.image) for p in data.pool]
    if kind == POOL_CAPTION:
        return [EmbedInput(text=p.description) if p.description else EmbedInput(image=p.image) for p in data.pool]
    raise ValueError(f"unknown pool input {kind!r}")


def query_input(fields: Mapping[str, Any], mode: str, description: str | None) -> EmbedInput | None:
    """What is embedded for a query: its image and text (``embed``), or the model's description alone."""
    if parse_mode(mode) == "reason_then_embed":
        return EmbedInput(text=description) if description else None
    return EmbedInput(text=fields["query_text"], image=fields.get("query_image"))


@dataclass(frozen=True)
class QueryResult:
    outcome: dict[str, float]
    ranked: list[str]  # best first, as deep as the run ranks
    scores: list[float]
    status: str  # ok | no_description | zero_vector


class Retrieval:
    """The pool of ``data`` indexed by one embedder; built on first use, once per instance."""

    def __init__(
        self,
        data: str | None = None,
        retriever: str = DEFAULT_RETRIEVER,
        retriever_args: str | Mapping[str, Any] | None = None,
        *,
        split: str | None = None,
        pool_captions: bool = False,
        search: str = "numpy",
        check_images: bool = True,
        cache: bool | str = True,
        image_access: ImageAccess = DEFAULT_ACCESS,
    ) -> None:
        self.data, self.retriever, self.retriever_args = data, retriever, parse_retriever_args(retriever_args)
        self.split, self.pool_input = split, pool_input_kind(retriever, pool_captions)
        self.search, self.check_images, self.cache = search, check_images, parse_cache(cache)
        self.image_access = image_access
        self._index: PoolIndex | None = None
        self._lock = threading.Lock()

    def pool(self) -> tuple[RmirData, Any, list[EmbedInput]]:
        """The loaded data, a new embedder and the pool inputs this run embeds (in pool order): what
        ``index`` searches, and what ``ecom-tasks embed-pool`` fills the cache with ahead of a run."""
        loaded = load_data(self.data, split=self.split, check_images=self.check_images, image_access=self.image_access)
        embedder = make_embedder(self.retriever, self.retriever_args)
        if not reads_images(embedder) and self.pool_input != POOL_CAPTION:
            raise ConfigurationError(
                f"retriever {self.retriever!r} built an embedder with reads_images = False, but its factory does not say so: "
                "set reads_images = False on the factory (the class), so the run records that the pool is embedded from captions"
            )
        return loaded, embedder, pool_inputs(loaded, self.pool_input)

    def index(self) -> PoolIndex:
        with self._lock:
            if self._index is None:
                loaded, embedder, inputs = self.pool()
                if self.cache == "true":
                    check_cache_outside(loaded.location)
                self._index = PoolIndex.build(
                    embedder, [p.id for p in loaded.pool], inputs, search=self.search, cache=self.cache
                )
            return self._index

    def score(
        self,
        fields: Mapping[str, Any],
        specs: Sequence[MetricSpec],
        *,
        mode: str,
        description: str | None = None,
        images_dropped: bool | None = None,
    ) -> QueryResult:
        """Rank the pool for one query. ``images_dropped``: whether the image of the model's request seems
        not to have reached it (reason-then-embed; None: not known), counted as ``images_dropped`` in the
        outcome."""
        index = self.index()
        item = query_input(fields, mode, description)
        flags = {} if images_dropped is None else {"images_dropped": int(bool(images_dropped))}
        vectors, zero = index.embed_queries([item]) if item is not None else (None, [True])
        status = "no_description" if item is None else "zero_vector" if zero[0] else "ok"
        ranked: list[str] = []
        scores: list[float] = []
        if status == "ok":
            rows, found = index.search(vectors, rank_depth(specs))
            ranked, scores = [index.ids[i] for i in rows[0]], [float(s) for s in found[0]]
        outcome = ranking_outcome(ranked, fields["positives"], specs, failed=status != "ok")
        return QueryResult({**outcome, **flags}, ranked, scores, status)
