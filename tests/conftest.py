"""Test-suite setup: no network but loopback, proven by a process-wide socket guard."""

from __future__ import annotations

import ipaddress
import os
import sys
from pathlib import Path

import pytest

from ecom_tasks.offline import apply_offline

# Before anything imports datasets/litellm/inspect: they read these at import time.
apply_offline()
os.environ.setdefault("INSPECT_LOG_DIR", os.path.join(os.environ.get("TMPDIR", "/tmp"), "ecom-tasks-test-logs"))
# RMIR pool embeddings: never into the user's ~/.cache from a test run.
os.environ.setdefault("ECOM_TASKS_CACHE", os.path.join(os.environ.get("TMPDIR", "/tmp"), "ecom-tasks-test-cache"))

# The guard lives beside the sitecustomize that installs it in test subprocesses.
sys.path.insert(0, str(Path(__file__).parent / "netguard_site"))
from netguard import NetworkGuard, is_loopback_host  # noqa: E402

_GUARD = NetworkGuard()


def _is_name_lookup(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
        return False
    except ValueError:
        return not is_loopback_host(host)


def pytest_configure(config: pytest.Config) -> None:
    _GUARD.install()


def pytest_unconfigure(config: pytest.Config) -> None:
    _GUARD.uninstall()


@pytest.fixture(scope="session", autouse=True)
def network_guard():
    """Fails the session if any test tried to reach a non-loopback address or resolve a name."""
    yield _GUARD
    lookups = sorted({host for host, _ in _GUARD.lookups if host and _is_name_lookup(host)})
    assert not _GUARD.blocked, f"outbound connections were attempted: {_GUARD.blocked}"
    assert not lookups, f"host names were resolved (a sign of network use): {lookups}"


@pytest.fixture(autouse=True)
def fresh_inspect_models():
    """Each test gets new Inspect model clients.

    ``get_model`` memoizes clients by name and arguments, not by the
    ``<PROVIDER>_BASE_URL`` variable a loopback test sets: a later test naming
    the same ``openai-api/vllm/test-model`` would get a client bound to an
    earlier test's stopped server and retry it until it hangs. The cache is
    private to Inspect and has no public reset, hence the guarded access here
    in the tests only.
    """
    yield
    from inspect_ai.model import _model

    cache = getattr(_model, "_models", None)
    if isinstance(cache, dict):
        cache.clear()
