"""The embedder protocol (RMIR's retriever plugins: README, "Embedders") and the built-in embedders.

``corpus_level = True`` gets the whole pool in one call and may return ``scipy.sparse`` rows.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from ecom_tasks import files
from ecom_tasks.images import data_uri_bytes, file_image_bytes, image_for_model

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class EmbedInput:
    """One thing to embed: a text, an image (absolute path, data URI or URL), or both."""

    text: str | None = None
    image: str | None = None

    def __post_init__(self) -> None:
        if not self.text and not self.image:
            raise ValueError("an embedder input needs a text or an image")

    def content_hash(self) -> str:
        """sha256 over the text and the image's bytes (a URL: its text): the per-item cache key."""
        digest = hashlib.sha256()
        digest.update(b"text\0" + (self.text or "").encode("utf-8") + b"\0image\0")
        if self.image:
            if self.image.startswith("data:"):
                digest.update(self.image.encode("ascii", "replace"))
            elif self.image.startswith(("http://", "https://")):
                digest.update(b"url\0" + self.image.encode("utf-8"))
            else:
                digest.update(files.read_bytes(self.image))  # a regular file: a FIFO there never blocks
        return digest.hexdigest()


def pool_cache_id(embedder: Any) -> str:
    """What the pool cache is keyed by: ``pool_id`` (the pool-side settings) when the embedder has one, else ``id``."""
    pool_id = getattr(embedder, "pool_id", None)
    return pool_id if isinstance(pool_id, str) and pool_id else embedder.id


def reads_images(factory_or_embedder: Any) -> bool:
    """Whether an embedder (or its factory, e.g. the class) embeds images: ``reads_images``, default True."""
    return bool(getattr(factory_or_embedder, "reads_images", True))


def settings_id(name: str, **settings: Any) -> str:
    """``name(key=value,...)`` with sorted keys, None values left out: a stable embedder id."""
    shown = ",".join(f"{k}={json.dumps(v, sort_keys=True)}" for k, v in sorted(settings.items()) if v is not None)
    return f"{name}({shown})"


def load_pil(image: str):
    import io

    from PIL import Image

    if image.startswith(("http://", "https://")):
        raise ValueError(f"this embedder reads local images only, not URLs ({image[:80]})")
    data = data_uri_bytes(image) if image.startswith("data:") else file_image_bytes(image)
    with Image.open(io.BytesIO(data)) as opened:
        return opened.convert("RGB")


# --- lexical: BM25 with bm25s ----------------------------------------------------------------


class LexicalEmbedder:
    """BM25 (``bm25s``) as sparse vectors: pool rows are term weights, query rows term counts, so a dot
    product is ``bm25s.BM25.get_scores``' score."""

    corpus_level = True
    reads_images = False  # the pool is embedded from its captions

    def __init__(self, k1: float = 1.5, b: float = 0.75, method: str = "lucene", stopwords: str = "en") -> None:
        self.k1, self.b, self.method, self.stopwords = float(k1), float(b), method, stopwords
        self.id = settings_id("lexical", k1=self.k1, b=self.b, method=method, stopwords=stopwords)
        self._tokenizer = None
        self._vocab_size = 0

    def _fit(self, texts: list[str]):
        import bm25s
        import scipy.sparse as sp
        from bm25s.tokenization import Tokenizer

        if not any(t.strip() for t in texts):
            raise ValueError("lexical: no pool item has a description to match query text against")
        missing = sum(not t.strip() for t in texts)
        if missing:
            logger.warning(
                "lexical: %d of %d pool items have no description and cannot be retrieved", missing, len(texts)
            )
        tokenizer = Tokenizer(stopwords=self.stopwords, stemmer=None)
        ids = tokenizer.tokenize(texts, return_as="ids", update_vocab=True, show_progress=False)
        model = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
        model.index(ids, show_progress=False)
        scores = model.scores
        self._tokenizer, self._vocab_size = tokenizer, len(scores["indptr"]) - 1
        data = np.array(scores["data"], dtype=np.float32)
        data[scores["indptr"][0] : scores["indptr"][1]] = 0  # token 0 is bm25s' empty-document token, not a word
        weights = sp.csc_matrix(
            (data, scores["indices"], scores["indptr"]), shape=(scores["num_docs"], self._vocab_size)
        ).tocsr()
        weights.eliminate_zeros()
        return weights

    def embed(self, inputs: Sequence[EmbedInput], role: str):
        import scipy.sparse as sp

        texts = [item.text or "" for item in inputs]
        if role == "pool":
            return self._fit(texts)
        if self._tokenizer is None:
            raise RuntimeError("lexical: embed the pool before queries")
        ids = self._tokenizer.tokenize(texts, return_as="ids", update_vocab=False, show_progress=False)
        rows = np.repeat(np.arange(len(ids)), [len(t) for t in ids])
        cols = np.fromiter((t for tokens in ids for t in tokens), dtype=np.int64, count=len(rows))
        keep = cols > 0  # token 0 is bm25s' empty-document token, not a word
        counts = sp.csr_matrix(
            (np.ones(int(keep.sum()), dtype=np.float32), (rows[keep], cols[keep])), shape=(len(ids), self._vocab_size)
        )  # repeated tokens: the COO entries are summed into counts
        return counts


# --- openai_embeddings: an OpenAI-compatible /v1/embeddings endpoint (vLLM) -----------------------


class EmbeddingRequestError(RuntimeError):
    pass


def _embedding_entry(entry: Any) -> bool:
    """One entry of an embeddings reply's ``data``: an integer index and a list of numbers."""
    if (
        not isinstance(entry, dict)
        or type(entry.get("index")) is not int
        or not isinstance(entry.get("embedding"), list)
    ):
        return False
    return all(type(x) in (int, float) for x in entry["embedding"])


class OpenAIEmbeddings:
    """An OpenAI-compatible ``/v1/embeddings`` endpoint, as vLLM serves multimodal embedding models
    (README: ``openai_embeddings``, its settings and what ``id`` and ``pool_id`` hold)."""

    RETRY_STATUS = (408, 409, 429, 500, 502, 503, 504)
    reads_images = True

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        batch_size: int = 32,
        max_connections: int = 8,
        max_retries: int = 5,
        timeout: float = 120.0,
        dimensions: int | None = None,
        query_instruction: str | None = None,
        pool_instruction: str | None = None,
        query_extra_body: dict[str, Any] | None = None,
        pool_extra_body: dict[str, Any] | None = None,
        query_model: str | None = None,
        query_base_url: str | None = None,
        cache_tag: str | None = None,
    ) -> None:
        if not base_url or not model:
            raise ValueError('openai_embeddings needs retriever_args {"base_url": ..., "model": ...}')
        if int(batch_size) < 1 or int(max_connections) < 1:
            raise ValueError("batch_size and max_connections must be >= 1")
        for name, extra in (("query_extra_body", query_extra_body), ("pool_extra_body", pool_extra_body)):
            if extra is not None and not isinstance(extra, dict):
                raise ValueError(f"openai_embeddings: {name} must be a JSON object, got {extra!r}")
        self.api_key_env = api_key_env
        self.batch_size, self.max_connections = int(batch_size), int(max_connections)
        self.max_retries = int(max_retries)
        self.timeout = float(timeout)
        self.dimensions = dimensions
        self.instructions = {"query": query_instruction, "pool": pool_instruction}
        self.extra_bodies = {"query": dict(query_extra_body or {}), "pool": dict(pool_extra_body or {})}
        self.models = {"query": query_model or model, "pool": model}
        self.base_urls = {"query": (query_base_url or base_url).rstrip("/"), "pool": base_url.rstrip("/")}
        pool_side: dict[str, Any] = dict(model=model, dimensions=dimensions, cache_tag=cache_tag)
        pool_side.update(pool_instruction=pool_instruction, pool_extra_body=pool_extra_body)
        self.pool_id = settings_id("openai_embeddings", **pool_side)
        self.id = settings_id(
            "openai_embeddings",
            **pool_side,
            query_instruction=query_instruction,
            query_extra_body=query_extra_body,
            query_model=query_model,
        )

    def _text(self, item: EmbedInput, role: str) -> str | None:
        instruction = self.instructions.get(role)
        if instruction and "{text}" in instruction:
            return instruction.replace("{text}", item.text or "")
        if instruction and item.text:
            return f"{instruction}{item.text}"
        return instruction or item.text

    def _bodies(self, inputs: Sequence[EmbedInput], role: str) -> list[tuple[list[int], dict[str, Any]]]:
        extra: dict[str, Any] = {
            **self.extra_bodies.get(role, {}),
            "model": self.models[role],
            "encoding_format": "float",
        }
        if self.dimensions is not None:
            extra["dimensions"] = int(self.dimensions)
        bodies: list[tuple[list[int], dict[str, Any]]] = []
        texts = [i for i, item in enumerate(inputs) if not item.image]
        for start in range(0, len(texts), self.batch_size):
            chunk = texts[start : start + self.batch_size]
            bodies.append((chunk, {**extra, "input": [self._text(inputs[i], role) for i in chunk]}))
        for i, item in enumerate(inputs):
            if item.image:
                content: list[dict[str, Any]] = [
                    {"type": "image_url", "image_url": {"url": image_for_model(item.image)}}
                ]
                text = self._text(item, role)
                if text:
                    content.append({"type": "text", "text": text})
                bodies.append(([i], {**extra, "messages": [{"role": "user", "content": content}]}))
        return bodies

    async def _post(self, client, semaphore, body: dict[str, Any], base_url: str) -> list[list[float]]:
        import httpx
        from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

        def retryable(exc: BaseException) -> bool:
            if isinstance(exc, httpx.HTTPStatusError):
                return exc.response.status_code in self.RETRY_STATUS
            return isinstance(exc, httpx.TransportError)

        async for attempt in AsyncRetrying(
            retry=retry_if_exception(retryable),
            wait=wait_exponential_jitter(initial=0.5, max=30),
            stop=stop_after_attempt(self.max_retries + 1),
            reraise=True,
        ):
            with attempt:
                async with semaphore:
                    response = await client.post(f"{base_url}/embeddings", json=body)
                if response.status_code in self.RETRY_STATUS:
                    response.raise_for_status()
        if response.status_code != 200:
            raise EmbeddingRequestError(f"{base_url}/embeddings answered {response.status_code}: {response.text[:500]}")
        # The reply is the server's, unchecked: strict JSON, then OpenAI's shape (data[].index, data[].embedding).
        reply, problem = files.json_problem(response.content)
        data = reply.get("data") if isinstance(reply, dict) else None
        if problem or not isinstance(data, list) or not all(_embedding_entry(d) for d in data):
            raise EmbeddingRequestError(
                f"{base_url}/embeddings answered 200 without an OpenAI embeddings list (data[].index, "
                f"data[].embedding of numbers): {problem or response.text[:200]}"
            )
        return [d["embedding"] for d in sorted(data, key=lambda d: d["index"])]

    async def _embed(self, inputs: Sequence[EmbedInput], role: str) -> np.ndarray:
        import httpx

        key = os.environ.get(self.api_key_env, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        semaphore = asyncio.Semaphore(self.max_connections)
        bodies = self._bodies(inputs, role)
        async with httpx.AsyncClient(timeout=self.timeout, headers=headers) as client:
            base_url = self.base_urls[role]
            results = await asyncio.gather(*(self._post(client, semaphore, body, base_url) for _, body in bodies))
        rows: list[Any] = [None] * len(inputs)
        for (indices, _body), vectors in zip(bodies, results):
            if len(vectors) != len(indices):
                raise EmbeddingRequestError(f"asked for {len(indices)} embeddings, the server returned {len(vectors)}")
            for i, vector in zip(indices, vectors):
                rows[i] = vector
        widths = {len(r) for r in rows}
        if len(widths) > 1:
            raise EmbeddingRequestError(f"the server returned embeddings of different lengths {sorted(widths)}")
        return np.asarray(rows, dtype=np.float32).reshape(len(inputs), -1)

    def embed(self, inputs: Sequence[EmbedInput], role: str) -> np.ndarray:
        if not inputs:
            return np.zeros((0, 0), dtype=np.float32)
        # A loop of its own, in a thread: the caller may be inside an event loop (Inspect's scorer).
        with ThreadPoolExecutor(1) as thread:
            return thread.submit(asyncio.run, self._embed(inputs, role)).result()


# --- local models (extras) ---------------------------------------------------------------------


def _fused_rows(inputs: Sequence[EmbedInput], encode_texts: Any, encode_images: Any) -> np.ndarray:
    """One row per input: its text or image vector, or the mean of both unit vectors (late fusion).
    ``encode_texts`` / ``encode_images`` embed a list of the inputs' texts / images in one call."""
    sides: list[dict[int, np.ndarray]] = []
    for encode, values in (
        (encode_texts, [item.text for item in inputs]),
        (encode_images, [item.image for item in inputs]),
    ):
        given = [i for i, value in enumerate(values) if value]
        sides.append(dict(zip(given, np.asarray(encode([values[i] for i in given])))) if given else {})
    rows = []
    for i in range(len(inputs)):
        parts = [v / (np.linalg.norm(v) or 1.0) for v in (sides[0].get(i), sides[1].get(i)) if v is not None]
        rows.append(np.mean(parts, axis=0))
    return np.asarray(rows, dtype=np.float32)


def _missing_extra(package: str, extra: str) -> ImportError:
    return ImportError(
        f"this embedder needs {package}: pip install 'ecom-tasks[{extra}]' (torch: pip install torch==2.13.0 first)"
    )


class OpenClipEmbedder:
    """An open_clip model (README: ``open_clip``); ``pretrained=None`` gives random weights, for tests."""

    reads_images = True

    def __init__(
        self, model: str = "ViT-B-32", pretrained: str | None = None, device: str = "cpu", batch_size: int = 32
    ) -> None:
        try:
            import open_clip
            import torch
        except ImportError as exc:
            raise _missing_extra("open_clip_torch", "open_clip") from exc
        self._torch = torch
        self._model, _, self._preprocess = open_clip.create_model_and_transforms(
            model, pretrained=pretrained, device=device
        )
        self._model.eval()
        self._tokenizer = open_clip.get_tokenizer(model)
        self.device, self.batch_size = device, int(batch_size)
        self.id = settings_id("open_clip", model=model, pretrained=pretrained)
        if pretrained is None:  # random weights differ per construction: never share a cache
            self.id = settings_id("open_clip", model=model, random_init=id(self))

    def _batched(self, encode: Any, prepare: Any, values: list[str]) -> np.ndarray:
        with self._torch.no_grad():
            return np.concatenate(
                [
                    encode(prepare(values[start : start + self.batch_size]).to(self.device)).float().cpu().numpy()
                    for start in range(0, len(values), self.batch_size)
                ]
            )

    def embed(self, inputs: Sequence[EmbedInput], role: str) -> np.ndarray:
        def images(paths: list[str]) -> Any:
            return self._torch.stack([self._preprocess(load_pil(path)) for path in paths])

        return _fused_rows(
            inputs,
            lambda texts: self._batched(self._model.encode_text, self._tokenizer, texts),
            lambda paths: self._batched(self._model.encode_image, images, paths),
        )


class SentenceTransformerEmbedder:
    """A sentence-transformers model (README: ``sentence_transformers``)."""

    reads_images = True

    def __init__(self, model: str | None = None, device: str = "cpu", batch_size: int = 32) -> None:
        if not model:
            raise ValueError('sentence_transformers needs retriever_args {"model": "<local folder or hub id>"}')
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise _missing_extra("sentence-transformers", "sentence_transformers") from exc
        self._model, self.batch_size = SentenceTransformer(model, device=device), int(batch_size)
        self.id = settings_id("sentence_transformers", model=model)

    def embed(self, inputs: Sequence[EmbedInput], role: str) -> np.ndarray:
        def encode(values: list[Any]) -> Any:
            return self._model.encode(values, batch_size=self.batch_size, convert_to_numpy=True)

        return _fused_rows(inputs, encode, lambda paths: encode([load_pil(path) for path in paths]))


#: The built-in embedder factories (registered through the ``ecom_tasks_retrievers`` hook).
BUILTIN_EMBEDDERS = {
    "lexical": LexicalEmbedder,
    "openai_embeddings": OpenAIEmbeddings,
    "open_clip": OpenClipEmbedder,
    "sentence_transformers": SentenceTransformerEmbedder,
}
DEFAULT_RETRIEVER = "lexical"
