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
from dataclasses import dataclass
from typing import Any

from loopback.server import JsonHandler, LoopbackServer


@dataclass(frozen=True)
class Reply:
    """A policy's answer with its finish reason: ``Reply(text, "length")`` plays a model stopped by
    its token limit (a plain string finishes with ``"stop"``)."""

    content: str
    finish_reason: str = "stop"


Policy = Callable[[dict[str, Any]], "str | Reply"]
"""Maps a parsed request body to the assistant message content (or completion text)."""


class RequestRejected(Exception):
    """Raised by a policy to answer 400 (a client error clients do not retry), e.g. to make
    one sample of a run fail at once. ``code``: the error's code, e.g. ``"context_length_exceeded"``
    as OpenAI-compatible servers answer a request longer than the context window; ``kind``: its
    ``type``; further keyword arguments: more members of the error object."""

    def __init__(
        self, message: str = "", code: str | int | None = None, kind: str = "invalid_request_error", **fields: Any
    ) -> None:
        super().__init__(message)
        self.code = code
        self.kind = kind  # the error's ``type``
        self.fields = fields  # more members of the error object (llama.cpp: n_prompt_tokens, n_ctx)


class Hang(Exception):
    """Raised by a policy to play a hung server: the request's connection stays open and silent for
    ``seconds`` (or until the server closes), then drops without a response."""

    def __init__(self, seconds: float = 3600.0) -> None:
        super().__init__(f"hanging for {seconds} s")
        self.seconds = seconds


def hang_first(policy: Policy, requests: int = 1, seconds: float = 3600.0) -> Policy:
    """``policy``, except that the first ``requests`` requests hang (see :class:`Hang`)."""
    lock, seen = threading.Lock(), [0]

    def hanging(body: dict[str, Any]) -> str | Reply:
        with lock:
            seen[0] += 1
            hang = seen[0] <= requests
        if hang:
            raise Hang(seconds)
        return policy(body)

    return hanging


#: How servers word a refusal of a prompt longer than their context (:func:`context_window`).
CONTEXT_STYLES = ("openai", "vllm", "llama.cpp")


def prompt_chars(body: dict[str, Any]) -> int:
    """Characters of every message's text (chat) or of the prompt (completions)."""
    if "messages" in body:
        return sum(len(_flatten(m.get("content"))) for m in body.get("messages", []))
    prompt = body.get("prompt", "")
    return len(prompt) if isinstance(prompt, str) else len(prompt or [])


def context_window(policy: Policy, max_chars: int, *, style: str = "openai", reserve_output: bool = False) -> Policy:
    """``policy`` behind a context window of ``max_chars`` characters (one character plays one token):
    a longer prompt is refused with HTTP 400 as the server of ``style`` words it. ``reserve_output``:
    the request's ``max_tokens`` counts too, as vLLM counts it (a request without one is refused only
    for its prompt)."""
    if style not in CONTEXT_STYLES:
        raise ValueError(f"style must be one of {CONTEXT_STYLES}, got {style!r}")

    def limited(body: dict[str, Any]) -> str | Reply:
        prompt = prompt_chars(body)
        completion = int(body.get("max_tokens") or 0) if reserve_output else 0
        if prompt + completion <= max_chars:
            return policy(body)
        if style == "llama.cpp":
            raise RequestRejected(
                "the request exceeds the available context size, try increasing it",
                code=400,
                kind="exceed_context_size_error",
                n_prompt_tokens=prompt,
                n_ctx=max_chars,
            )
        if style == "vllm":
            raise RequestRejected(
                f"This model's maximum context length is {max_chars} tokens. However, you requested "
                f"{prompt + completion} tokens ({prompt} in the messages, {completion} in the completion). "
                "Please reduce the length of the messages or completion.",
                code=400,
                kind="BadRequestError",
            )
        raise RequestRejected(
            f"This model's maximum context length is {max_chars} tokens. However, your messages resulted in "
            f"{prompt} tokens. Please reduce the length of the messages.",
            code="context_length_exceeded",
        )

    return limited


def _flatten(content: Any) -> str:
    """Return the text of a message ``content`` (a string or a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    # vLLM joins the text parts of one message with newlines; do the same.
    return "\n".join(
        str(part.get("text", "")) for part in content if isinstance(part, dict) and part.get("type") == "text"
    )


def last_user_text(body: dict[str, Any]) -> str:
    """Text of the last ``user`` message of a chat request ("" if there is none)."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return _flatten(users[-1].get("content")) if users else ""


def system_text(body: dict[str, Any]) -> str:
    """Text of all ``system``/``developer`` messages, joined by newlines."""
    return "\n".join(
        _flatten(m.get("content")) for m in body.get("messages", []) if m.get("role") in ("system", "developer")
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


class _Handler(JsonHandler):
    def _error(self, status: int, message: str, kind: str, code: str | int | None = None, **fields: Any) -> None:
        self._send_json(status, {"error": {"message": message, "type": kind, "code": code or status, **fields}})

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
        owner._record(body, self.headers.get("Authorization"))
        try:
            if path == "/v1/chat/completions":
                self._chat(owner, body)
            else:
                self._completions(owner, body)
        except Hang as exc:
            owner._released.wait(exc.seconds)
        except RequestRejected as exc:
            self._error(400, str(exc), exc.kind, exc.code, **exc.fields)
        except Exception as exc:  # a failing policy must not kill the server
            self._error(500, f"{type(exc).__name__}: {exc}", "server_error")

    def _chat(self, owner: OpenAICompatibleServer, body: dict[str, Any]) -> None:
        content, finish_reason = owner._answer_with_reason(body)
        prompt = " ".join(_flatten(m.get("content")) for m in body.get("messages", []))
        usage = _usage(prompt, content)
        head = {"id": f"chatcmpl-{uuid.uuid4().hex}", "created": int(time.time()), "model": owner.model_name}
        if not body.get("stream"):
            message = {"role": "assistant", "content": content}
            choice = {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
            self._send_json(200, {**head, "object": "chat.completion", "choices": [choice], "usage": usage})
            return
        chunk = {**head, "object": "chat.completion.chunk"}
        delta = {"role": "assistant", "content": content}
        events = [
            {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish_reason}], "usage": usage},
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
        choices = [{"index": i, "text": t, "finish_reason": "stop", "logprobs": None} for i, t in enumerate(texts)]
        usage = _usage(" ".join(p if isinstance(p, str) else "" for p in prompts), " ".join(texts))
        self._send_json(
            200,
            {
                "id": f"cmpl-{uuid.uuid4().hex}",
                "object": "text_completion",
                "created": int(time.time()),
                "model": owner.model_name,
                "choices": choices,
                "usage": usage,
            },
        )


class OpenAICompatibleServer(LoopbackServer):
    """OpenAI-compatible server on an ephemeral 127.0.0.1 port, served from a daemon thread."""

    handler = _Handler
    thread_name = "openai-test-server"

    def __init__(self, policy: Policy, *, model_name: str = "test-model") -> None:
        super().__init__()
        self.policy = policy
        self.model_name = model_name
        self._released = threading.Event()  # ends every Hang when the server closes

    def close(self) -> None:
        self._released.set()
        super().close()

    def _answer(self, body: dict[str, Any]) -> str:
        return self._answer_with_reason(body)[0]

    def _answer_with_reason(self, body: dict[str, Any]) -> tuple[str, str]:
        content = self.policy(body)
        if isinstance(content, Reply):
            return content.content, content.finish_reason
        if not isinstance(content, str):  # fail loudly (as a 500) rather than emit bad JSON
            raise TypeError(f"policy must return str or Reply, got {type(content).__name__}")
        return content, "stop"

    @property
    def chat_completions_url(self) -> str:
        """Full URL of the chat completions endpoint."""
        return f"{self.base_url}/chat/completions"


def serve_openai_compatible(policy: Policy, *, model_name: str = "test-model") -> OpenAICompatibleServer:
    """Start a server; use it as ``with serve_openai_compatible(policy) as server:``."""
    return OpenAICompatibleServer(policy, model_name=model_name).start()
