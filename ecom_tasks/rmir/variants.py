"""RMIR's run settings and their parsers, declared once (README: "Parameters")."""

from __future__ import annotations

from ecom_tasks.data import ConfigurationError
from ecom_tasks.scorers.settings import shown

MODES = ("embed", "reason_then_embed")
DEFAULT_K = (20, 50)
#: The largest cut-off taken: no pool is larger (k=10**30 asked for recall@1e30, ranking the whole pool).
MAX_K = 10_000_000
#: How deep each query is ranked: recall@K needs K, ``mrr`` finds the first positive within it
#: (below it the reciprocal rank is 0), ``ndcg@10`` needs 10.
RANK_DEPTH = 100
#: Output limit of the reason-then-embed step: None leaves it to the server (vLLM: what is left of the
#: context). Set one to cap a reasoning model (README: output limits).
MAX_TOKENS = None


def parse_k(k: int | str | list | tuple | None) -> tuple[int, ...]:
    """``"20,50"``, ``[20, 50]`` or ``20`` -> ``(20, 50)``."""
    if k is None or k == "":
        return DEFAULT_K
    values = k.split(",") if isinstance(k, str) else list(k) if isinstance(k, (list, tuple)) else [k]
    try:
        ks = tuple(dict.fromkeys(int(str(v).strip()) for v in values if str(v).strip()))
    except ValueError as exc:
        raise ConfigurationError(f"k must be positive integers like 20,50; got {shown(k)}") from exc
    if not ks or min(ks) < 1:
        raise ConfigurationError(f"k must be positive integers like 20,50; got {shown(k)}")
    if max(ks) > MAX_K:
        raise ConfigurationError(f"k must be at most {MAX_K:,} (no pool is larger); got {shown(k)}")
    return ks


SEARCH_BACKENDS = ("numpy", "faiss")


def parse_search(search: str) -> str:
    if search not in SEARCH_BACKENDS:
        raise ConfigurationError(f"unknown search {shown(search)}; expected one of {', '.join(SEARCH_BACKENDS)}")
    return search


def parse_mode(mode: str) -> str:
    if mode not in MODES:
        raise ConfigurationError(f"unknown RMIR mode {mode!r}; expected one of {', '.join(MODES)}")
    return mode


#: ``cache``: read and write the pool cache; read what is there and write nothing; no cache at all.
CACHE_MODES = ("true", "read", "false")
_CACHE_WORDS = dict.fromkeys(("1", "yes", "on"), "true") | dict.fromkeys(("0", "no", "off"), "false")
_CACHE_WORDS |= dict.fromkeys(("readonly", "read_only"), "read")


def parse_cache(value: bool | str | None) -> str:
    """``-T cache=true|read|false`` (booleans too) -> one of ``CACHE_MODES``."""
    if value is None or value is True:
        return "true"
    if value is False:
        return "false"
    word = str(value).strip().lower()
    word = _CACHE_WORDS.get(word, word)
    if word not in CACHE_MODES:
        raise ConfigurationError(f"cache must be one of {', '.join(CACHE_MODES)}; got {shown(value)}")
    return word
