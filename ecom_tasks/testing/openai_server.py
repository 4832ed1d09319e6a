"""A tiny OpenAI-compatible HTTP server on 127.0.0.1 for tests (a stand-in for vLLM).

Example::

    with serve_openai_compatible(lambda body: "Answer: B") as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

Policy = Callable[[dict[str, Any]], str]
"""Maps a parsed request body to the assistant message content (or completion text)."""


class RequestRejected(Exception):
    """Raised by a policy to answer 400 (a client error clients do not retry), e.g. to make
    one sample of a run fail at once."""


def _flatten(content: Any) -> str:
    """Return the text of a message ``content`` (a string or a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    # vLLM joins the text parts of one message with newlines; do the same.
    return "\n".join(
        str(part.get("text", ""))
        for part in content
        if isinstance(part, dict) and part.get("type") == "text"
    )


def last_user_text(body: dict[str, Any]) -> str:
    """Text of the last ``user`` message of a chat request ("" if there is none)."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return _flatten(users[-1].get("content")) if users else ""


def system_text(body: dict[str, Any]) -> str:
    """Text of all ``system``/``developer`` messages, joined by newlines."""
    return "\n".join(
        _flatten(m.get("content"))
        for m in body.get("messages", [])
        if m.get("role") in ("system", "developer")
    )


def image_parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    """All ``{"type": "image_url", ...}`` content parts of all messages, in order."""
    return [
        part
        for m in body.get("messages", [])
        if isinstance(m.get("content"), list)
        for part in m["content"]
        if isinstance(part, dict) and part.get("type") == "image_url"
    ]


def _usage(prompt: str, completion: str) -> dict[str, int]:
    # Whitespace tokens: good enough for tests that only check usage is plausible.
    p, c = len(prompt.split()), len(completion.split())
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True  # a hung client must not block interpreter exit
    owner: OpenAICompatibleServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hanging up mid-response are normal in tests; stay quiet


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean (the default logs every request to stderr)

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, kind: str) -> None:
        self._send_json(status, {"error": {"message": message, "type": kind, "code": status}})

    def _path(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/")

    def do_GET(self) -> None:
        owner = self.server.owner
        if self._path() == "/v1/models":
            model = {"id": owner.model_name, "object": "model", "created": 0, "owned_by": "test"}
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._error(404, f"Not found: GET {self.path}", "not_found_error")

    def do_POST(self) -> None:
        owner, path = self.server.owner, self._path()
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if path not in ("/v1/chat/completions", "/v1/completions"):
            self._error(404, f"Not found: POST {self.path}", "not_found_error")
            return
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("request body must be a JSON object")
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            self._error(400, f"Malformed JSON body: {exc}", "invalid_request_error")
            return
        owner._record(body)
        try:
            if path == "/v1/chat/completions":
                self._chat(owner, body)
            else:
                self._completions(owner, body)
        except RequestRejected as exc:
            self._error(400, str(exc), "invalid_request_error")
        except Exception as exc:  # a failing policy must not kill the server
            self._error(500, f"{type(exc).__name__}: {exc}", "server_error")

    def _chat(self, owner: OpenAICompatibleServer, body: dict[str, Any]) -> None:
        content = owner._answer(body)
        prompt = " ".join(_flatten(m.get("content")) for m in body.get("messages", []))
        usage = _usage(prompt, content)
        head = {"id": f"chatcmpl-{uuid.uuid4().hex}", "created": int(time.time()),
                "model": owner.model_name}
        if not body.get("stream"):
            message = {"role": "assistant", "content": content}
            choice = {"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}
            self._send_json(200, {**head, "object": "chat.completion", "choices": [choice],
                                  "usage": usage})
            return
        chunk = {**head, "object": "chat.completion.chunk"}
        delta = {"role": "assistant", "content": content}
        events = [
            {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
             "usage": usage},
        ]
        # HTTP/1.0 without Content-Length: closing the connection ends the stream.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for event in events:
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")

    def _completions(self, owner: OpenAICompatibleServer, body: dict[str, Any]) -> None:
        prompt = body.get("prompt", "")
        # A list of ints is one tokenized prompt; any other list is a batch of prompts.
        single = isinstance(prompt, str) or (
            isinstance(prompt, list) and bool(prompt) and all(isinstance(t, int) for t in prompt)
        )
        prompts: list[Any] = [prompt] if single else list(prompt)
        # The policy sees one prompt at a time, so batched requests (lm-eval) just work.
        texts = [owner._answer({**body, "prompt": p}) for p in prompts]
        choices = [
            {"index": i, "text": t, "finish_reason": "stop", "logprobs": None}
            for i, t in enumerate(texts)
        ]
        usage = _usage(" ".join(p if isinstance(p, str) else "" for p in prompts), " ".join(texts))
        self._send_json(200, {"id": f"cmpl-{uuid.uuid4().hex}", "object": "text_completion",
                              "created": int(time.time()), "model": owner.model_name,
                              "choices": choices, "usage": usage})


class OpenAICompatibleServer:
    """OpenAI-compatible server on an ephemeral 127.0.0.1 port, served from a daemon thread."""

    def __init__(self, policy: Policy, *, model_name: str = "test-model") -> None:
        self.policy = policy
        self.model_name = model_name
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def _record(self, body: dict[str, Any]) -> None:
        with self._lock:  # handler threads run concurrently
            self.requests.append(body)

    def _answer(self, body: dict[str, Any]) -> str:
        content = self.policy(body)
        if not isinstance(content, str):  # fail loudly (as a 500) rather than emit bad JSON
            raise TypeError(f"policy must return str, got {type(content).__name__}")
        return content

    @property
    def port(self) -> int:
        """The bound port (only while running)."""
        if self._httpd is None:
            raise RuntimeError("server is not running; use start() or a with-block")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, the ``base_url`` an OpenAI client expects."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def chat_completions_url(self) -> str:
        """Full URL of the chat completions endpoint."""
        return f"{self.base_url}/chat/completions"

    def start(self) -> OpenAICompatibleServer:
        """Bind 127.0.0.1:0 and serve in a daemon thread (no-op if already running)."""
        if self._httpd is None:
            httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
            httpd.owner = self
            # A short poll interval makes shutdown() (and so each test) fast.
            self._thread = threading.Thread(
                target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                name="openai-test-server", daemon=True,
            )
            self._httpd = httpd
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and release the port (idempotent)."""
        httpd, thread = self._httpd, self._thread
        self._httpd = self._thread = None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> OpenAICompatibleServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def serve_openai_compatible(
    policy: Policy, *, model_name: str = "test-model"
) -> OpenAICompatibleServer:
    """Start a server; use it as ``with serve_openai_compatible(policy) as server:``."""
    return OpenAICompatibleServer(policy, model_name=model_name).start()
