"""A socket guard proving that tests make no outbound connection except to loopback.

While a :class:`NetworkGuard` is installed, ``socket.socket.connect``,
``socket.socket.connect_ex`` and ``socket.create_connection`` raise
:class:`BlockedConnectionError` for any target that is not loopback
(127.0.0.0/8, ::1, ``localhost``) or an ``AF_UNIX`` path. The check runs before
the real call, so a blocked attempt never sends a packet. Patching the
``socket.socket`` class covers sync clients (``http.client``, httpx/httpcore)
and asyncio (``loop.sock_connect`` / ``create_connection`` call ``sock.connect``
on a non-blocking socket), hence also anyio, httpx.AsyncClient, the openai
client and Inspect.

Limits: ``socket.getaddrinfo`` is only recorded in :attr:`NetworkGuard.lookups`
(the libc resolver talks to DNS without Python sockets, so it cannot be
blocked here; assert on ``lookups`` instead), and connections made by C code
(e.g. uvloop, or raw ``_socket.socket`` objects) bypass the guard.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any

_PATCHED_METHODS = ("connect", "connect_ex")
_PATCHED_FUNCTIONS = ("create_connection", "getaddrinfo")


class BlockedConnectionError(OSError):
    """Raised instead of connecting to a non-loopback address."""


def is_loopback_host(host: str) -> bool:
    """True for ``localhost``, 127.0.0.0/8, ``::1`` and IPv4-mapped loopback.

    Other hostnames are *not* resolved (that would itself be network traffic).
    """
    name = host.strip("[]").rstrip(".").lower()
    if name == "localhost":
        return True
    try:
        addr = ipaddress.ip_address(name.split("%", 1)[0])  # drop an IPv6 zone id
    except ValueError:
        return False
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped.is_loopback
    return addr.is_loopback


class NetworkGuard:
    """Blocks and records non-loopback connections while installed.

    Use as ``with NetworkGuard() as guard: ...`` or call :meth:`install` /
    :meth:`uninstall`. The patch is process-wide (all threads). Guards nest if
    uninstalled in reverse order.
    """

    def __init__(self) -> None:
        self.blocked: list[tuple[str, int]] = []
        self.allowed: list[tuple[str, int]] = []
        self.lookups: list[tuple[str, int | str | None]] = []
        self._lock = threading.Lock()
        # name -> (previous value, whether it lived in the patched object's own __dict__)
        self._saved: dict[str, tuple[Any, bool]] = {}

    @property
    def installed(self) -> bool:
        """Whether the patches are currently in place."""
        return bool(self._saved)

    def _check(self, family: int, address: Any) -> None:
        """Record ``address`` and raise :class:`BlockedConnectionError` unless it is local."""
        if hasattr(socket, "AF_UNIX") and family == socket.AF_UNIX:
            return
        if family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
            host, port = str(address[0]), int(address[1])
            if is_loopback_host(host):
                with self._lock:
                    self.allowed.append((host, port))
                return
        else:  # unusual families (netlink, packet, ...) are not provably local
            host, port = repr(address), 0
        with self._lock:
            self.blocked.append((host, port))
        raise BlockedConnectionError(f"NetworkGuard blocked a connection to non-loopback address {host}:{port}")

    def install(self) -> NetworkGuard:
        """Patch the socket module (no-op if this guard is already installed)."""
        if self.installed:
            return self
        guard = self
        orig_connect: Callable[..., Any] = socket.socket.connect
        orig_connect_ex: Callable[..., Any] = socket.socket.connect_ex
        orig_create: Callable[..., Any] = socket.create_connection
        orig_gai: Callable[..., Any] = socket.getaddrinfo

        def connect(self: socket.socket, address: Any) -> None:
            guard._check(self.family, address)
            orig_connect(self, address)

        def connect_ex(self: socket.socket, address: Any) -> int:
            guard._check(self.family, address)
            return int(orig_connect_ex(self, address))

        def create_connection(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
            # Check before the original resolves the name, so no DNS query is sent for
            # a blocked host; allowed targets are recorded by the patched connect().
            host, port = str(address[0]), int(address[1])
            if not is_loopback_host(host):
                with guard._lock:
                    guard.blocked.append((host, port))
                raise BlockedConnectionError(f"NetworkGuard blocked a connection to non-loopback address {host}:{port}")
            return orig_create(address, *args, **kwargs)  # type: ignore[no-any-return]

        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            name = host.decode() if isinstance(host, bytes) else str(host)
            with guard._lock:
                guard.lookups.append((name, port))
            return orig_gai(host, port, *args, **kwargs)

        for name in _PATCHED_METHODS:
            self._saved[name] = (getattr(socket.socket, name), name in vars(socket.socket))
        for name in _PATCHED_FUNCTIONS:
            self._saved[name] = (getattr(socket, name), True)
        socket.socket.connect = connect  # type: ignore[method-assign, assignment]
        socket.socket.connect_ex = connect_ex  # type: ignore[method-assign, assignment]
        socket.create_connection = create_connection  # type: ignore[assignment]
        socket.getaddrinfo = getaddrinfo
        return self

    def uninstall(self) -> None:
        """Restore exactly what :meth:`install` replaced (no-op if not installed)."""
        for name, (value, own) in self._saved.items():
            if name in _PATCHED_METHODS:
                if own:
                    setattr(socket.socket, name, value)
                else:
                    # connect/connect_ex are normally inherited from _socket.socket;
                    # deleting our override restores the original lookup exactly.
                    delattr(socket.socket, name)
            else:
                setattr(socket, name, value)
        self._saved.clear()

    def __enter__(self) -> NetworkGuard:
        return self.install()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.uninstall()
