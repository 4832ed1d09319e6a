"""open_clip and sentence_transformers embedders with randomly initialised models (never downloaded).

Skipped unless the extras are installed (CI need not install them:
``pip install torch==2.13.0`` then ``pip install -e '.[open_clip,sentence_transformers]'``).
"""

from __future__ import annotations

import numpy as np
import pytest

from ecom_tasks.rmir.embedders import EmbedInput, OpenClipEmbedder, SentenceTransformerEmbedder
from ecom_tasks.rmir.index import check_vectors
from ecom_tasks.rmir.schema import load_data


def _inputs():
    data = load_data()
    query = data.queries[0]
    return [
        EmbedInput(text=query.query_text),
        EmbedInput(image=query.query_image),
        EmbedInput(text=query.query_text, image=query.query_image),
    ]


def test_open_clip_random_weights_text_image_and_fused():
    pytest.importorskip("open_clip")
    embedder = OpenClipEmbedder(model="RN50", pretrained=None)  # random init: nothing is fetched
    rows, zero = check_vectors(embedder.embed(_inputs(), "query"), 3, embedder.id)
    assert rows.shape[0] == 3 and not zero.any()
    # The fused row is the mean of the unit text and image rows.
    raw = embedder.embed(_inputs(), "query")
    unit = raw[:2] / np.linalg.norm(raw[:2], axis=1, keepdims=True)
    np.testing.assert_allclose(raw[2], unit.mean(axis=0), rtol=1e-4, atol=1e-5)


def test_sentence_transformers_tiny_random_model(tmp_path):
    pytest.importorskip("sentence_transformers")
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    vocab = [
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",
        *sorted({w for q in load_data().queries for w in q.query_text.lower().split()}),
    ]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab), encoding="utf-8")
    BertTokenizerFast(vocab_file=str(tmp_path / "vocab.txt")).save_pretrained(tmp_path / "bert")
    BertModel(
        BertConfig(
            vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64
        )
    ).save_pretrained(tmp_path / "bert")
    word = models.Transformer(str(tmp_path / "bert"))
    model = SentenceTransformer(modules=[word, models.Pooling(word.get_word_embedding_dimension())])
    model.save(str(tmp_path / "st"))
    embedder = SentenceTransformerEmbedder(model=str(tmp_path / "st"))
    rows = embedder.embed([EmbedInput(text="which tool fits this"), EmbedInput(text="frog")], "query")
    assert rows.shape == (2, 32) and np.isfinite(rows).all()
    assert embedder.id == f'sentence_transformers(model="{tmp_path / "st"}")'
