"""Retrievers for retrieval benchmarks; plugins add more through ``ecom_tasks_retrievers``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def exact_cosine_retriever(doc_ids: Sequence[str], doc_vectors: np.ndarray):
    """Exact cosine search over ``doc_vectors`` (numpy; faiss is an optional extra).

    Returns ``search(query_vectors, k) -> list[list[doc_id]]``, best first,
    ties broken by document order so rankings are deterministic.
    """
    docs = np.asarray(doc_vectors, dtype=np.float64)
    if docs.ndim != 2 or len(doc_ids) != docs.shape[0]:
        raise ValueError("doc_vectors must be 2-D with one row per doc id")
    norms = np.linalg.norm(docs, axis=1, keepdims=True)
    docs = docs / np.where(norms == 0, 1, norms)
    ids = list(doc_ids)

    def search(query_vectors: np.ndarray, k: int) -> list[list[str]]:
        queries = np.atleast_2d(np.asarray(query_vectors, dtype=np.float64))
        qn = np.linalg.norm(queries, axis=1, keepdims=True)
        sims = (queries / np.where(qn == 0, 1, qn)) @ docs.T
        order = np.argsort(-sims, axis=1, kind="stable")[:, :k]
        return [[ids[j] for j in row] for row in order]

    return search
