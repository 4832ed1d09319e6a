"""Network guard for test subprocesses (``tests/netguard_site`` on ``PYTHONPATH``).

Python imports ``sitecustomize`` at start-up, after ``site`` has processed the
``.pth`` files (so the editable ``ecom_tasks`` install is importable). This one
installs :class:`netguard.NetworkGuard` (next to this file) for the whole life of
the interpreter and, at exit, adds what it saw to the JSON report named by
``ECOM_NETGUARD_REPORT`` (if set)::

    {"blocked": [[host, port], ...], "name_lookups": [host, ...]}

``name_lookups`` are ``getaddrinfo`` calls for host names that are neither IP
literals nor loopback names (resolving such a name is itself network use).
Several processes may share one report (a CLI that starts Python children):
each merges its findings into the file under a lock.

There is no other ``sitecustomize`` in the test venv, so this one does not
chain to another.
"""

from __future__ import annotations

import atexit
import ipaddress
import json
import os


def _is_name_lookup(host: str, is_loopback_host) -> bool:
    if not host:
        return False
    try:
        ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
        return False
    except ValueError:
        return not is_loopback_host(host)


def _write_report(guard, is_loopback_host, path: str) -> None:
    blocked = [[str(host), int(port)] for host, port in guard.blocked]
    lookups = [host for host, _ in guard.lookups if _is_name_lookup(str(host), is_loopback_host)]
    lock_path = path + ".lock"
    with open(lock_path, "a") as lock:
        try:
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_EX)
        except ImportError:  # not POSIX: processes rarely overlap at exit anyway
            pass
        report = {"blocked": [], "name_lookups": [], "processes": 0}
        try:
            with open(path, encoding="utf-8") as fh:
                report.update(json.load(fh))
        except (OSError, ValueError):
            pass
        report["blocked"] = [*report["blocked"], *blocked]
        report["name_lookups"] = sorted({*report["name_lookups"], *lookups})
        report["processes"] = int(report.get("processes", 0)) + 1
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(report, fh)
        os.replace(tmp, path)


def _install() -> None:
    from netguard import NetworkGuard, is_loopback_host

    guard = NetworkGuard().install()

    def at_exit() -> None:
        path = os.environ.get("ECOM_NETGUARD_REPORT")
        if path:
            _write_report(guard, is_loopback_host, path)

    atexit.register(at_exit)


_install()
