"""Tests for the test-suite's own tools (tests/loopback, tests/netguard_site): the local OpenAI-compatible server and the network guard.

Nothing here sends traffic off the machine: non-loopback targets are literal
TEST-NET / private IPs, and only ever contacted with the guard installed.
"""

from __future__ import annotations

import asyncio
import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from loopback.openai_server import (
    OpenAICompatibleServer,
    image_parts,
    last_user_text,
    serve_openai_compatible,
    system_text,
)
from netguard import (
    BlockedConnectionError,
    NetworkGuard,
    is_loopback_host,
)

# An opener without proxy handling: a user's http_proxy must not reroute loopback calls.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _policy(body: dict[str, Any]) -> str:
    if "prompt" in body:
        return f"completion of {body['prompt']!r}"
    text = last_user_text(body)
    if text == "boom":
        raise RuntimeError("policy exploded")
    return f"echo: {text} | system: {system_text(body)}"


@pytest.fixture
def server() -> Iterator[OpenAICompatibleServer]:
    with serve_openai_compatible(_policy, model_name="my-model") as srv:
        yield srv


def _call(url: str, body: Any = None, *, raw: bytes | None = None) -> tuple[int, bytes]:
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with _OPENER.open(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def test_base_urls(server: OpenAICompatibleServer) -> None:
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
    assert server.chat_completions_url == server.base_url + "/chat/completions"


def test_chat_completion_non_stream(server: OpenAICompatibleServer) -> None:
    body = {
        "model": "my-model",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "text", "text": "hello"}, {"type": "text", "text": "world"}]},
        ],
    }
    status, raw = _call(server.chat_completions_url, body)
    assert status == 200
    resp = json.loads(raw)
    assert resp["object"] == "chat.completion"
    assert resp["model"] == "my-model"
    assert resp["id"].startswith("chatcmpl-") and isinstance(resp["created"], int)
    assert resp["choices"] == [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "echo: hello\nworld | system: be brief"},
            "finish_reason": "stop",
            "logprobs": None,
        }
    ]
    # Whitespace words: prompt "be brief first ok hello\nworld" -> 6; completion -> 7.
    assert resp["usage"] == {"prompt_tokens": 6, "completion_tokens": 7, "total_tokens": 13}
    assert server.requests == [body]


def test_chat_completion_stream(server: OpenAICompatibleServer) -> None:
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    status, raw = _call(server.chat_completions_url, body)
    assert status == 200
    lines = [ln for ln in raw.decode().split("\n") if ln]
    assert all(ln.startswith("data: ") for ln in lines)
    assert lines[-1] == "data: [DONE]"
    first, last = (json.loads(ln[len("data: ") :]) for ln in lines[:-1])
    assert first["object"] == last["object"] == "chat.completion.chunk"
    assert first["choices"] == [
        {"index": 0, "finish_reason": None, "delta": {"role": "assistant", "content": "echo: hi | system: "}}
    ]
    assert last["choices"] == [{"index": 0, "delta": {}, "finish_reason": "stop"}]
    assert last["usage"] == {"prompt_tokens": 1, "completion_tokens": 4, "total_tokens": 5}
    assert server.requests == [body]


def test_legacy_completions(server: OpenAICompatibleServer) -> None:
    single = {"model": "m", "prompt": "Q: 1+1?"}
    batch = {"model": "m", "prompt": ["a", "b c"]}
    status, raw = _call(f"{server.base_url}/completions", single)
    assert status == 200
    resp = json.loads(raw)
    assert resp["object"] == "text_completion"
    assert [c["text"] for c in resp["choices"]] == ["completion of 'Q: 1+1?'"]
    assert resp["choices"][0]["finish_reason"] == "stop"
    status, raw = _call(f"{server.base_url}/completions", batch)
    assert status == 200
    choices = json.loads(raw)["choices"]
    assert [(c["index"], c["text"]) for c in choices] == [(0, "completion of 'a'"), (1, "completion of 'b c'")]
    assert server.requests == [single, batch]


def test_models(server: OpenAICompatibleServer) -> None:
    status, raw = _call(f"{server.base_url}/models")
    assert status == 200
    assert json.loads(raw) == {
        "object": "list",
        "data": [{"id": "my-model", "object": "model", "created": 0, "owned_by": "test"}],
    }


def test_errors_keep_server_alive(server: OpenAICompatibleServer) -> None:
    status, raw = _call(f"{server.base_url}/nope", {"x": 1})
    assert status == 404
    assert json.loads(raw)["error"]["code"] == 404
    status, raw = _call(f"http://127.0.0.1:{server.port}/v2/models")
    assert status == 404

    status, raw = _call(server.chat_completions_url, raw=b"{not json")
    assert status == 400
    assert json.loads(raw)["error"]["type"] == "invalid_request_error"

    boom = {"messages": [{"role": "user", "content": "boom"}]}
    status, raw = _call(server.chat_completions_url, boom)
    assert status == 500
    assert json.loads(raw)["error"]["message"] == "RuntimeError: policy exploded"

    ok = {"messages": [{"role": "user", "content": "still there?"}]}
    status, raw = _call(server.chat_completions_url, ok)
    assert status == 200
    assert json.loads(raw)["choices"][0]["message"]["content"] == "echo: still there? | system: "
    # Malformed and unknown-path bodies are not recorded; the failing request is.
    assert server.requests == [boom, ok]


def test_message_helpers() -> None:
    img = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    img2 = {"type": "image_url", "image_url": {"url": "http://127.0.0.1/x.png", "detail": "low"}}
    body = {
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": "sys"}]},
            {"role": "developer", "content": "dev"},
            {"role": "user", "content": [img, {"type": "text", "text": "what is this?"}]},
            {"role": "user", "content": [{"type": "text", "text": "and"}, img2]},
        ]
    }
    assert image_parts(body) == [img, img2]
    assert last_user_text(body) == "and"
    assert system_text(body) == "sys\ndev"
    assert last_user_text({"messages": []}) == "" and image_parts({}) == []


def test_server_stops_on_exit() -> None:
    with OpenAICompatibleServer(_policy) as srv:
        port = srv.port
        assert _call(f"{srv.base_url}/models")[0] == 200
    with pytest.raises(RuntimeError):
        _ = srv.base_url
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_is_loopback_host() -> None:
    for host in ("127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LOCALHOST.", "::ffff:127.0.0.1"):
        assert is_loopback_host(host), host
    for host in ("10.255.255.1", "192.0.2.1", "0.0.0.0", "::", "example.invalid", ""):
        assert not is_loopback_host(host), host


def _causes(exc: BaseException | None) -> Iterator[BaseException]:
    """Walk an exception's cause/context chain and any exception groups in it."""
    seen: set[int] = set()
    stack = [exc]
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        stack += [e.__cause__, e.__context__, *getattr(e, "exceptions", ())]


def test_guard_blocks_and_restores(server: OpenAICompatibleServer) -> None:
    # The suite's own session guard (conftest) may already be installed underneath.
    overridden_before = {name: name in vars(socket.socket) for name in ("connect", "connect_ex")}
    originals = (socket.socket.connect, socket.socket.connect_ex, socket.create_connection, socket.getaddrinfo)
    guard = NetworkGuard().install()
    try:
        # Sanity first: the patches are in place before any non-loopback attempt.
        assert socket.socket.connect is not originals[0]
        assert socket.create_connection is not originals[2]

        with pytest.raises(BlockedConnectionError, match=r"192\.0\.2\.1:80"):
            socket.create_connection(("192.0.2.1", 80), timeout=1)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            with pytest.raises(BlockedConnectionError, match=r"192\.0\.2\.2:443"):
                s.connect(("192.0.2.2", 443))
            with pytest.raises(BlockedConnectionError):
                s.connect_ex(("192.0.2.3", 443))
        assert issubclass(BlockedConnectionError, OSError)

        async def fetch() -> None:
            import httpx

            async with httpx.AsyncClient(timeout=5, trust_env=False) as client:
                await client.get("http://10.255.255.1:9/")

        with pytest.raises(Exception) as info:
            asyncio.run(fetch())
        # httpx wraps the OSError in ConnectError; the guard's error is the root cause.
        assert any(isinstance(e, BlockedConnectionError) for e in _causes(info.value))

        # Loopback is allowed and recorded.
        with socket.create_connection(("127.0.0.1", server.port), timeout=5):
            pass
        assert _call(f"{server.base_url}/models")[0] == 200
    finally:
        guard.uninstall()

    assert guard.blocked == [("192.0.2.1", 80), ("192.0.2.2", 443), ("192.0.2.3", 443), ("10.255.255.1", 9)]
    assert guard.allowed == [("127.0.0.1", server.port)] * 2
    assert (socket.socket.connect, socket.socket.connect_ex, socket.create_connection, socket.getaddrinfo) == originals
    assert {name: name in vars(socket.socket) for name in ("connect", "connect_ex")} == overridden_before
    assert not guard.installed


def test_guard_context_manager_and_nesting() -> None:
    original = socket.create_connection
    with NetworkGuard() as outer:
        with NetworkGuard() as inner:
            with pytest.raises(BlockedConnectionError):
                socket.create_connection(("192.0.2.1", 80))
        assert inner.blocked == [("192.0.2.1", 80)] and outer.blocked == []
        assert socket.create_connection is not original
    assert socket.create_connection is original


def test_openai_client_through_guard(server: OpenAICompatibleServer, monkeypatch: pytest.MonkeyPatch) -> None:
    openai = pytest.importorskip("openai")
    # Make sure an ambient proxy setting cannot reroute the loopback call.
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.lower(), raising=False)
    with NetworkGuard() as guard:
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        resp = client.chat.completions.create(
            model="my-model",
            messages=[{"role": "system", "content": "s"}, {"role": "user", "content": "ping"}],
        )
        stream = client.chat.completions.create(
            model="my-model", messages=[{"role": "user", "content": "pong"}], stream=True
        )
        streamed = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        client.close()
    assert resp.choices[0].message.content == "echo: ping | system: s"
    assert resp.usage is not None and resp.usage.total_tokens == 2 + 5
    assert streamed == "echo: pong | system: "
    assert guard.blocked == []
    assert guard.allowed and all(host == "127.0.0.1" for host, _ in guard.allowed)
    assert [r["messages"][-1]["content"] for r in server.requests] == ["ping", "pong"]
