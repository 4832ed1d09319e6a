"""What a run ran on and under which protocol: the facts every task records with its results (docs/reports.md)."""

from __future__ import annotations

import functools
import hashlib
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any

from ecom_tasks import files
from ecom_tasks.data import data_files

PACKAGE = "ecom_tasks"
#: A Hugging Face commit id (what ``datasets`` records as a hub dataset's module hash).
_COMMIT = re.compile(r"[0-9a-f]{40}")


def fixtures_location(benchmark: str) -> str:
    """The location a run on a benchmark's bundled fixtures records: ``ecom_tasks/fixtures/<benchmark>``."""
    return f"{PACKAGE}/fixtures/{benchmark}"


@functools.lru_cache(maxsize=64)
def _file_sha256(path: str, mtime_ns: int, size: int) -> str:
    # Keyed by mtime and size too: a file rewritten in place is hashed again.
    return files.sha256(path)


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The file's sha256 (hashed once per path, modification time and size); only a regular file is
    hashed (a FIFO or device is refused by name, never read)."""
    path = files.regular_file(path)
    stat = path.stat()
    return _file_sha256(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


def content_sha256(source: str | os.PathLike[str]) -> str:
    """SHA-256 of a local data file, or of the ``sha256sum`` listing (``<hex>  <name>``, sorted by name) of
    the data files :func:`ecom_tasks.data.data_files` reads in a folder."""
    path = Path(os.fspath(source)).expanduser()
    found = data_files(path)
    if path.is_file():
        return file_sha256(path)
    listing = "".join(f"{file_sha256(f)}  {f.name}\n" for f in sorted(found, key=lambda f: f.name))
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()


def hub_revision(dataset_id: str) -> str | None:
    """The commit of a Hugging Face dataset that ``datasets`` resolves (from its cache when offline), or None."""
    try:
        import datasets

        revision = datasets.load_dataset_builder(dataset_id).hash
    except Exception:  # any failure only means the revision is not known; the data itself loaded already
        return None
    return revision if isinstance(revision, str) and _COMMIT.fullmatch(revision) else None


def data_provenance(data: str | os.PathLike[str] | None, fixtures: str) -> dict[str, str]:
    """``data_location`` and ``data_sha256`` (local data, or the bundled ``fixtures`` when ``data`` is None) or
    ``data_revision`` (a hub id, when known). Call it after the data loaded: the files exist and are valid."""
    if data is None or os.fspath(data) == "":
        installed = Path(str(resources.files(PACKAGE))) / fixtures.removeprefix(f"{PACKAGE}/")  # works from a wheel
        return {"data_location": fixtures, "data_sha256": content_sha256(installed)}
    location = os.fspath(data)
    if Path(location).expanduser().exists():
        return {"data_location": location, "data_sha256": content_sha256(location)}
    revision = hub_revision(location)
    return {"data_location": location, **({"data_revision": revision} if revision else {})}


def task_metadata(
    benchmark: str,
    *,
    task_version: str,
    prompt_version: str,
    data: str | os.PathLike[str] | None,
    fixtures: str | None = None,
    **protocol: Any,
) -> dict[str, Any]:
    """The facts a run records; ``protocol``: the settings that define it; ``fixtures``: the bundled
    default's location (default :func:`fixtures_location` of ``benchmark``)."""
    return {
        "benchmark": benchmark,
        "task_version": task_version,
        "prompt_version": prompt_version,
        **data_provenance(data, fixtures or fixtures_location(benchmark)),
        **protocol,
    }
