"""Retrieving and scoring one RMIR query, and summarizing: the single place the adapter calls.

:class:`Retrieval` holds what a run searches: the pool of the data, embedded
once (lazily, under a lock, through the on-disk cache) by the embedder that
``retriever`` names among the registered ones (``ecom_tasks_retrievers`` hook).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.plugins import parse_metric_names, retrievers, select_metrics
from ecom_tasks.rmir.embedders import DEFAULT_RETRIEVER, EmbedInput
from ecom_tasks.rmir.index import PoolIndex
from ecom_tasks.rmir.metrics import ranking_outcome
from ecom_tasks.rmir.metrics import summarize as summarize_outcomes
from ecom_tasks.rmir.schema import RmirData, load_data
from ecom_tasks.rmir.variants import RANK_DEPTH, parse_k, parse_mode
from ecom_tasks.scorers.kinds import RANKING, recall_at

_RECALL = "recall@"


def ranking_specs(k: Any = None, metrics: str | Sequence[str] | None = None) -> list[MetricSpec]:
    """The run's ``ranking`` metrics: ``recall@K`` for each K of ``k``, then every other registered
    ranking metric (``mrr``, ``ndcg@10``, plugins'); or, when ``metrics`` names some, those
    (``recall@K`` for any K allowed)."""
    ks = parse_k(k)
    names = parse_metric_names(metrics)
    registered = {spec.name: spec for spec in select_metrics(RANKING)}
    if names is None:
        return [*(registered.get(f"{_RECALL}{n}") or recall_at(n) for n in ks), *(s for s in registered.values() if not s.name.startswith(_RECALL))]
    specs = []
    for name in dict.fromkeys(names):
        if name in registered:
            specs.append(registered[name])
        elif name.startswith(_RECALL) and name[len(_RECALL) :].isdigit() and int(name[len(_RECALL) :]) > 0:
            specs.append(recall_at(int(name[len(_RECALL) :])))
        else:
            select_metrics(RANKING, [name])  # raises the registry's error naming what exists
    return specs


def rank_depth(specs: Sequence[MetricSpec]) -> int:
    ks = [int(s.name[len(_RECALL) :]) for s in specs if s.name.startswith(_RECALL) and s.name[len(_RECALL) :].isdigit()]
    return max([RANK_DEPTH, *ks])


def parse_retriever_args(value: str | Mapping[str, Any] | None) -> dict[str, Any]:
    if value is None or value == "":
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        raise ValueError(f"retriever_args must be a JSON object, got {value!r}: {exc}") from exc
    if not isinstance(parsed, dict):
        raise ValueError(f"retriever_args must be a JSON object, got {value!r}")
    return parsed


def make_embedder(retriever: str = DEFAULT_RETRIEVER, retriever_args: str | Mapping[str, Any] | None = None) -> Any:
    """The registered embedder ``retriever``, built with ``retriever_args``; checked for an ``id`` and ``embed``."""
    factories = retrievers()
    if retriever not in factories:
        raise ValueError(f"unknown retriever {retriever!r}; registered: {', '.join(factories)}")
    embedder = factories[retriever](**parse_retriever_args(retriever_args))
    if not isinstance(getattr(embedder, "id", None), str) or not embedder.id or not callable(getattr(embedder, "embed", None)):
        raise TypeError(f"retriever {retriever!r} built {embedder!r}: an embedder needs a non-empty str `id` and an `embed(inputs, role)` method")
    return embedder


def pool_inputs(data: RmirData) -> list[EmbedInput]:
    return [EmbedInput(text=p.description or None, image=p.image) for p in data.pool]


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
        search: str = "numpy",
        check_images: bool = True,
        cache: bool = True,
    ) -> None:
        self.data, self.retriever, self.retriever_args = data, retriever, parse_retriever_args(retriever_args)
        self.search, self.check_images, self.cache = search, check_images, cache
        self._index: PoolIndex | None = None
        self._lock = threading.Lock()

    def index(self) -> PoolIndex:
        with self._lock:
            if self._index is None:
                loaded = load_data(self.data, check_images=self.check_images)
                embedder = make_embedder(self.retriever, self.retriever_args)
                self._index = PoolIndex.build(
                    embedder, [p.id for p in loaded.pool], pool_inputs(loaded), search=self.search, cache=self.cache
                )
            return self._index

    def score(
        self, fields: Mapping[str, Any], specs: Sequence[MetricSpec], *, mode: str, description: str | None = None
    ) -> QueryResult:
        index = self.index()
        item = query_input(fields, mode, description)
        category, positives = fields["category"], fields["positives"]
        if item is None:
            return QueryResult(ranking_outcome([], positives, specs, category=category, failed=True), [], [], "no_description")
        vectors, zero = index.embed_queries([item])
        if zero[0]:
            return QueryResult(ranking_outcome([], positives, specs, category=category, failed=True), [], [], "zero_vector")
        rows, scores = index.search(vectors, rank_depth(specs))
        ranked = [index.ids[i] for i in rows[0]]
        return QueryResult(ranking_outcome(ranked, positives, specs, category=category), ranked, [float(s) for s in scores[0]], "ok")


def summarize(outcomes: Iterable[Mapping[str, float]], specs: Sequence[MetricSpec]) -> dict[str, float]:
    """All RMIR metrics for the selected ranking specs (see ``metrics.summarize``)."""
    return summarize_outcomes(list(outcomes), [spec.name for spec in specs])
