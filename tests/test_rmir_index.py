"""The pool index: exact blocked top-K against brute force, the on-disk cache, embedder output checks,
and the lexical embedder against bm25s itself."""

from __future__ import annotations

import numpy as np
import pytest

from ecom_tasks.rmir.embedders import EmbedInput, LexicalEmbedder, OpenAIEmbeddings, settings_id
from ecom_tasks.rmir.index import (
    EmbedderOutputError,
    EmbeddingCache,
    PoolIndex,
    check_vectors,
    embed_pool,
    fill_pool_cache,
    top_k,
    top_k_faiss,
)


def brute_force(pool: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    scores = queries @ pool.T
    return np.argsort(-scores, axis=1, kind="stable")[:, :k]  # stable: ties in pool order


def test_top_k_equals_a_full_stable_sort_with_ties_and_blocks():
    rng = np.random.default_rng(0)
    # Few distinct values: many ties, also at the K boundary.
    pool = rng.integers(-2, 3, size=(500, 4)).astype(np.float32)
    queries = rng.integers(-2, 3, size=(37, 4)).astype(np.float32)
    for k in (1, 7, 50, 500, 900):
        want = brute_force(pool, queries, min(k, 500))
        for block in (64, 500, 1 << 16):
            idx, val = top_k(pool, queries, k, pool_block=block)
            np.testing.assert_array_equal(idx, want)
            np.testing.assert_allclose(val, np.take_along_axis(queries @ pool.T, want, axis=1))


def test_top_k_threshold_path_keeps_ties_in_pool_order():
    # 5000 columns: enough 64-column groups for the group-maximum threshold at k = 50.
    rng = np.random.default_rng(2)
    pool = rng.integers(-3, 4, size=(5000, 3)).astype(np.float32)
    queries = rng.integers(-3, 4, size=(9, 3)).astype(np.float32)
    for k, block in ((20, 1800), (50, 5000), (78, 1 << 16)):
        # blocks of 1800: two full ones (flat take) and a short last one (2-D gather), all >= 20 groups
        idx, _ = top_k(pool, queries, k, pool_block=block)
        np.testing.assert_array_equal(idx, brute_force(pool, queries, k))
    dense_pool, _ = check_vectors(rng.normal(size=(5000, 8)), 5000, "t")
    idx, _ = top_k(dense_pool, dense_pool[:20], 60)
    np.testing.assert_array_equal(idx, brute_force(dense_pool, dense_pool[:20], 60))


def test_faiss_finds_the_same_neighbours_without_ties():
    rng = np.random.default_rng(1)
    pool, _ = check_vectors(rng.normal(size=(300, 16)), 300, "t")
    queries, _ = check_vectors(rng.normal(size=(20, 16)), 20, "t")
    idx, _ = top_k(pool, queries, 10)
    fidx, fval = top_k_faiss(pool, queries, 10)
    np.testing.assert_array_equal(idx, fidx)


def test_check_vectors_errors_zero_rows_and_normalisation():
    rows, zero = check_vectors([[3.0, 4.0], [0.0, 0.0]], 2, "e")
    np.testing.assert_allclose(rows, [[0.6, 0.8], [0.0, 0.0]])
    assert zero.tolist() == [False, True]
    with pytest.raises(EmbedderOutputError, match=r"e: expected an array of shape \(3, d\), got \(2, 2\)"):
        check_vectors([[1.0, 0.0], [0.0, 1.0]], 3, "e")
    with pytest.raises(EmbedderOutputError, match=r"expected an array of shape \(1, 3\), got \(1, 2\)"):
        check_vectors([[1.0, 0.0]], 1, "e", dim=3)
    with pytest.raises(EmbedderOutputError, match="NaN or infinite values in 1 row"):
        check_vectors([[1.0, 0.0], [np.nan, 1.0]], 2, "e")
    with pytest.raises(EmbedderOutputError, match="not a numeric matrix"):
        check_vectors([["a", "b"]], 1, "e")


class CountingEmbedder:
    """Deterministic text vectors; counts what it is asked to embed."""

    def __init__(self, dim: int = 8, tag: str = "a") -> None:
        self.id = settings_id("counting", dim=dim, tag=tag)
        self.dim, self.calls, self.embedded = dim, 0, 0

    def embed(self, inputs, role):
        self.calls += 1
        self.embedded += len(inputs)
        rows = []
        for item in inputs:
            seed = int.from_bytes(item.content_hash().encode()[:8], "little") % (2**32)
            rows.append(np.random.default_rng(seed).normal(size=self.dim))
        return np.asarray(rows)


def _inputs(n: int) -> list[EmbedInput]:
    return [EmbedInput(text=f"item {i}") for i in range(n)]


def test_second_run_embeds_zero_pool_items(tmp_path):
    inputs = _inputs(300)
    first = CountingEmbedder()
    a = embed_pool(first, inputs, root=tmp_path, batch_size=64)
    assert (a.embedded, a.cached, first.embedded) == (300, 0, 300)
    second = CountingEmbedder()
    b = embed_pool(second, inputs, root=tmp_path)
    assert (b.embedded, b.cached, second.calls) == (0, 300, 0)
    np.testing.assert_array_equal(a.matrix, b.matrix)
    # A changed item is the only one embedded again; another embedder id has its own cache.
    changed = [*inputs[:-1], EmbedInput(text="item changed")]
    third = CountingEmbedder()
    assert embed_pool(third, changed, root=tmp_path).embedded == 1 and third.embedded == 1
    assert embed_pool(CountingEmbedder(tag="b"), inputs, root=tmp_path).embedded == 300
    shards = [p for p in EmbeddingCache(first.id, tmp_path).dir.iterdir() if p.is_dir()]
    assert 100 < len(shards) <= 256  # 300 items spread over the 256 hash shards


def test_workers_fill_disjoint_shards_independently(tmp_path):
    inputs = _inputs(200)
    done = [fill_pool_cache(CountingEmbedder(), inputs, w, 3, root=tmp_path) for w in range(3)]
    assert sum(done) == 200 and all(d > 0 for d in done)
    final = CountingEmbedder()
    assert embed_pool(final, inputs, root=tmp_path).embedded == 0 and final.calls == 0
    # Alone in an empty cache, worker 1 of 3 writes only its own shards (a shared cache hides an overlap).
    alone = tmp_path / "alone"
    assert fill_pool_cache(CountingEmbedder(), inputs, 1, 3, root=alone) == done[1]
    shards = [p.name for p in EmbeddingCache(final.id, alone).dir.iterdir() if p.is_dir()]
    assert shards and all(int(name, 16) % 3 == 1 for name in shards)


def test_pool_embedder_output_is_checked(tmp_path):
    class Bad:
        id = "bad"

        def __init__(self, output):
            self.output = output

        def embed(self, inputs, role):
            return self.output(len(inputs))

    with pytest.raises(EmbedderOutputError, match=r"embedder 'bad': expected an array of shape \(3, d\), got \(2, 4\)"):
        embed_pool(Bad(lambda n: np.ones((n - 1, 4))), _inputs(3), root=tmp_path)
    with pytest.raises(EmbedderOutputError, match="NaN"):
        embed_pool(Bad(lambda n: np.full((n, 4), np.nan)), _inputs(3), root=tmp_path / "nan")
    zero = embed_pool(Bad(lambda n: np.vstack([np.zeros((1, 4)), np.ones((n - 1, 4))])), _inputs(3), cache=False)
    assert zero.zero.tolist() == [True, False, False]
    np.testing.assert_allclose(zero.matrix[1], [0.5] * 4)  # the others are normalised


def test_lexical_scores_equal_bm25s_and_rank_in_pool_order():
    import bm25s
    from bm25s.tokenization import Tokenizer

    docs = ["a phillips head screwdriver", "an adult green frog on a leaf", "a kettle with steam", "frog pond frog", ""]
    queries = ["what does the frog look like", "kettle steam frog frog", "nothing matches here"]
    embedder = LexicalEmbedder()
    index = PoolIndex.build(
        embedder,
        [f"p{i}" for i in range(5)],
        [EmbedInput(text=d or None, image="x.png" if not d else None) for d in docs],
    )
    vectors, zero = index.embed_queries([EmbedInput(text=q) for q in queries])
    assert zero.tolist() == [False, False, True]  # no pool term in the last query: a counted failure
    tokenizer = Tokenizer(stopwords="en", stemmer=None)
    model = bm25s.BM25()
    model.index(tokenizer.tokenize(docs, return_as="ids", update_vocab=True, show_progress=False), show_progress=False)
    for row, query in enumerate(queries[:2]):
        ids = tokenizer.tokenize([query], return_as="ids", update_vocab=False, show_progress=False)[0]
        expected = model.get_scores([t for t in ids if t > 0])
        np.testing.assert_allclose(
            np.asarray((index.vectors.matrix @ vectors[row].T).todense()).ravel(), expected, rtol=1e-6
        )
    idx, scores = index.search(vectors[:1], 5)
    # "frog" twice in the shorter p3 beats once in p1; the rest score 0 and keep pool order.
    assert [index.ids[i] for i in idx[0]] == ["p3", "p1", "p0", "p2", "p4"]
    assert scores[0][0] > scores[0][1] > 0 == scores[0][2] == scores[0][4]
    assert index.stats == {"pool": 5, "pool_embedded": 5, "pool_cached": 0, "pool_zero": 1, "pool_cache_skipped": 0}


def test_openai_embeddings_needs_url_and_model_and_keeps_base_url_out_of_its_id():
    with pytest.raises(ValueError, match="base_url"):
        OpenAIEmbeddings(model="m")
    a = OpenAIEmbeddings(base_url="http://127.0.0.1:1/v1", model="m")
    b = OpenAIEmbeddings(base_url="http://127.0.0.1:2/v1", model="m")
    assert a.id == b.id == 'openai_embeddings(model="m")'
    assert OpenAIEmbeddings(base_url="http://x/v1", model="m", dimensions=64).id != a.id
