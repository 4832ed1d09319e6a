"""Environment settings that keep a run free of incidental network access.

- ``TIKTOKEN_CACHE_DIR``: Inspect counts tokens with tiktoken, which downloads
  its encoding files; litellm ships them under the right hashed names.
- ``LITELLM_LOCAL_MODEL_COST_MAP``: ``import litellm`` otherwise fetches a cost map.
- ``HF_HUB_OFFLINE`` / ``HF_DATASETS_OFFLINE``: ``datasets`` otherwise pings
  the hub even for local files. These two also block loading a hub dataset
  id, so they are set by the demo, tests and CI, not at import.
"""

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
    """Everything above plus the Hugging Face offline flags (demo, tests, CI)."""
    apply_safe_defaults()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
