"""Environment settings that keep a run free of incidental network access (why each: docs/running.md)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path


def litellm_tokenizer_dir() -> str | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "litellm_core_utils" / "tokenizers"
    return str(path) if path.is_dir() else None


def apply_safe_defaults() -> None:
    """Settings with no downside for any user (set only when not already set)."""
    tokenizer_dir = litellm_tokenizer_dir()
    if tokenizer_dir:
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", tokenizer_dir)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def apply_offline() -> None:
    """The safe defaults plus the Hugging Face offline flags, which also block loading a hub dataset id: set by the
    demo, tests and CI, never at import."""
    apply_safe_defaults()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
