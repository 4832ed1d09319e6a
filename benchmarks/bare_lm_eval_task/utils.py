"""Loader of the bare benchmark task: one JSONL of already-expanded documents per task.

``benchmarks/overhead.py`` writes ``<docs_dir>/<task>.jsonl`` (the exact
documents our ``monbench_perm_<task>`` task builds) and passes ``docs_dir``
through the TaskManager's ``metadata``. Nothing here depends on ecom_tasks.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import datasets


def load_docs(task: str, docs_dir: str | None = None, **_: object) -> datasets.DatasetDict:
    folder = Path(docs_dir or os.environ.get("BARE_MONBENCH_DOCS", ""))
    path = folder / f"{task}.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: run benchmarks/overhead.py, which writes the documents first")
    with path.open(encoding="utf-8") as handle:
        docs = [json.loads(line) for line in handle if line.strip()]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(docs)})
