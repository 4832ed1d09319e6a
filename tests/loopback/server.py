"""What the loopback test servers share: a quiet threaded HTTP server on 127.0.0.1:0, JSON replies,
request recording, and start/close as a context manager."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True  # a hung client must not block interpreter exit
    # listen() backlog (socketserver's default is 5): a run with many connections (a benchmark's
    # --max-connections 64) would see refused connects while the accept loop catches up.
    request_queue_size = 128
    owner: Any

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hanging up mid-response are normal in tests; stay quiet


class JsonHandler(BaseHTTPRequestHandler):
    server: QuietServer

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean (the default logs every request to stderr)

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _path(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/")


class LoopbackServer:
    """Serves ``handler`` on an ephemeral 127.0.0.1 port from a daemon thread; ``requests`` holds
    every parsed request body, ``authorizations`` their ``Authorization`` headers."""

    handler: type[JsonHandler] = JsonHandler
    thread_name = "loopback-test-server"

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str | None] = []
        self._lock = threading.Lock()
        self._httpd: QuietServer | None = None
        self._thread: threading.Thread | None = None

    def _record(self, body: dict[str, Any], authorization: str | None = None) -> None:
        with self._lock:  # handler threads run concurrently
            self.requests.append(body)
            self.authorizations.append(authorization)

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

    def start(self):
        """Bind 127.0.0.1:0 and serve in a daemon thread (no-op if already running)."""
        if self._httpd is None:
            httpd = QuietServer(("127.0.0.1", 0), self.handler)
            httpd.owner = self
            # A short poll interval makes shutdown() (and so each test) fast.
            self._thread = threading.Thread(
                target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name=self.thread_name, daemon=True
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

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()
