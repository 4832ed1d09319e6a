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
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: EmbeddingsServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        owner = self.server.owner
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.split("?", 1)[0].rstrip("/") != "/v1/embeddings":
            self._send(404, {"error": {"message": f"Not found: POST {self.path}"}})
            return
        try:
            body = json.loads(raw)
            owner._record(body, self.headers.get("Authorization"))
            inputs = parse_inputs(body)
            vectors = [owner.policy(item) for item in inputs]
        except RejectRequest as exc:
            self._send(exc.status, {"error": {"message": str(exc), "code": exc.status}})
            return
        except (ValueError, KeyError, TypeError) as exc:
            self._send(400, {"error": {"message": f"{type(exc).__name__}: {exc}", "code": 400}})
            return
        data = [{"object": "embedding", "index": i, "embedding": list(map(float, v))} for i, v in enumerate(vectors)]
        self._send(200, {"object": "list", "data": data, "model": body.get("model"), "usage": {"prompt_tokens": 0, "total_tokens": 0}})


class EmbeddingsServer:
    """``/v1/embeddings`` on an ephemeral 127.0.0.1 port; ``requests`` holds every parsed body."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str | None] = []
        self._lock = threading.Lock()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    def _record(self, body: dict[str, Any], authorization: str | None) -> None:
        with self._lock:
            self.requests.append(body)
            self.authorizations.append(authorization)

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("server is not running")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> EmbeddingsServer:
        if self._httpd is None:
            httpd = _Server(("127.0.0.1", 0), _Handler)
            httpd.owner = self
            self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
            self._httpd = httpd
            self._thread.start()
        return self

    def close(self) -> None:
        httpd, thread = self._httpd, self._thread
        self._httpd = self._thread = None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> EmbeddingsServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()


def serve_embeddings(policy: Policy) -> EmbeddingsServer:
    return EmbeddingsServer(policy).start()
