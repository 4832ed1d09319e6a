"""A loopback OpenAI-compatible ``/v1/embeddings`` server for tests (a stand-in for vLLM serving an
embedding model).

It accepts both request forms vLLM does: text in the standard ``input`` field
(a string or a list of strings), and one multimodal conversation in
``messages`` (``image_url`` parts with data URLs, and text parts). Each input
becomes an :class:`EmbeddingInput` handed to ``policy(input) -> list[float]``;
every request body is recorded::

    with serve_embeddings(lambda item: [1.0, 0.0]) as server:
        httpx.post(f"{server.base_url}/embeddings", json={"model": "m", "input": ["a"]})
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from loopback.server import JsonHandler, LoopbackServer


@dataclass(frozen=True)
class EmbeddingInput:
    text: str  # text parts joined by newlines ("" when none)
    images: tuple[bytes, ...]  # decoded data-URL images, in order
    form: str  # "input" | "messages"


Policy = Callable[[EmbeddingInput], list[float]]


class RejectRequest(Exception):
    """Raised by a policy to answer with ``status`` (e.g. 503 to test retries)."""

    def __init__(self, status: int, message: str = "rejected") -> None:
        super().__init__(message)
        self.status = status


def _decode_data_url(url: str) -> bytes:
    if not url.startswith("data:") or ";base64," not in url:
        raise ValueError(f"expected a base64 data URL, got {url[:40]!r}")
    return base64.b64decode(url.split(",", 1)[1])


def parse_inputs(body: dict[str, Any]) -> list[EmbeddingInput]:
    """The inputs of one request, in either vLLM form."""
    if "messages" in body:
        texts, images = [], []
        for message in body["messages"]:
            content = message.get("content")
            if isinstance(content, str):
                texts.append(content)
                continue
            for part in content or []:
                if part.get("type") == "text":
                    texts.append(part.get("text", ""))
                elif part.get("type") == "image_url":
                    images.append(_decode_data_url(part["image_url"]["url"]))
        return [EmbeddingInput("\n".join(texts), tuple(images), "messages")]
    value = body.get("input")
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ValueError("input must be a string or a list of strings")
    return [EmbeddingInput(v, (), "input") for v in values]


class _Handler(JsonHandler):
    def do_POST(self) -> None:
        owner = self.server.owner
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self._path() != "/v1/embeddings":
            self._send_json(404, {"error": {"message": f"Not found: POST {self.path}"}})
            return
        try:
            body = json.loads(raw)
            owner._record(body, self.headers.get("Authorization"))
            inputs = parse_inputs(body)
            vectors = [owner.policy(item) for item in inputs]
        except RejectRequest as exc:
            self._send_json(exc.status, {"error": {"message": str(exc), "code": exc.status}})
            return
        except (ValueError, KeyError, TypeError) as exc:
            self._send_json(400, {"error": {"message": f"{type(exc).__name__}: {exc}", "code": 400}})
            return
        data = [{"object": "embedding", "index": i, "embedding": list(map(float, v))} for i, v in enumerate(vectors)]
        self._send_json(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model"),
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            },
        )


class EmbeddingsServer(LoopbackServer):
    """``/v1/embeddings`` on an ephemeral 127.0.0.1 port; ``requests`` holds every parsed body."""

    handler = _Handler
    thread_name = "embeddings-test-server"

    def __init__(self, policy: Policy) -> None:
        super().__init__()
        self.policy = policy


def serve_embeddings(policy: Policy) -> EmbeddingsServer:
    return EmbeddingsServer(policy).start()
