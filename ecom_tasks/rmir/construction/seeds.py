"""The seed images table: where query images and candidate targets come from (Sec. 3.1, prerequisite).

A file (``.jsonl``, ``.csv``, ``.parquet``) or a folder with one ``seeds.*`` file, with RMIR's pool columns
and an optional ``input`` flag (the RMIR README, "Building a data set").
"""

from __future__ import annotations

import functools
import numbers
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ecom_tasks import files
from ecom_tasks.data import DataValidationError, Problem, Row, is_blank, load_rows, parse_flag, refusal
from ecom_tasks.images import DEFAULT_ACCESS, ImageAccess
from ecom_tasks.rmir.schema import PoolRecord, table_files, validate_pool

INPUT_COLUMN = "input"


@dataclass(frozen=True)
class Seeds:
    records: tuple[PoolRecord, ...]
    inputs: tuple[str, ...]  # ids flagged ``input`` (empty: the table has no such column)
    file: str  # the table's path

    @functools.cached_property
    def by_id(self) -> dict[str, PoolRecord]:
        return {r.id: r for r in self.records}

    def __getitem__(self, seed_id: str) -> PoolRecord:
        return self.by_id[seed_id]


def seed_file(seeds: str | os.PathLike[str]) -> Path:
    """The table file of ``seeds`` (a regular file, or a folder with exactly one ``seeds.*`` that is a
    regular file or a symlink staying inside it); anything else is a problem naming it."""
    path = files.checked_path(Path(os.fspath(seeds)).expanduser())
    if path.is_dir():
        return table_files(path, ("seeds",), ("seeds",), "seed")["seeds"]
    if not path.exists() and not path.is_symlink():
        raise DataValidationError([Problem(str(path), 0, "-", "no such seed file or folder")])
    try:
        return files.regular_file(path)
    except files.FileRefused as error:
        raise DataValidationError([refusal(path, error)]) from None


def _inputs(rows: list[Row], problems: list[Problem]) -> tuple[str, ...]:
    if not any(INPUT_COLUMN in row.values for row in rows):
        return ()
    chosen = []
    for row in rows:
        value: Any = row.values.get(INPUT_COLUMN)  # a JSON, CSV or Parquet cell
        if is_blank(value):
            continue
        if isinstance(value, numbers.Real) and not isinstance(value, (bool, int)) and float(value).is_integer():
            value = int(float(value))  # a whole number from a JSON or Parquet cell; 1.5 or inf stays a problem below
        try:
            flagged = parse_flag(value, INPUT_COLUMN)
        except (TypeError, ValueError) as exc:
            problems.append(Problem(row.source, row.index, INPUT_COLUMN, str(exc)))
            continue
        if flagged:
            chosen.append(str(row.values.get("id")).strip())
    return tuple(chosen)


@functools.lru_cache(maxsize=4)
def _load(file: str, mtime: int, size: int, access: ImageAccess) -> Seeds:
    rows = load_rows(file)
    problems: list[Problem] = []
    records = validate_pool(rows, problems, check_images=False, image_access=access)
    inputs = _inputs(rows, problems)
    if problems:
        raise DataValidationError(problems)
    return Seeds(tuple(records), inputs, file)


def load_seeds(seeds: str | os.PathLike[str], *, image_access: ImageAccess = DEFAULT_ACCESS) -> Seeds:
    """The validated seed table (images are checked for where they point, not opened: a stage opens
    the ones it shows a model, see :func:`check_seed_images`)."""
    file = seed_file(seeds)
    stat = file.stat()
    return _load(str(file.resolve()), stat.st_mtime_ns, stat.st_size, image_access)


def check_seed_images(seeds: Seeds, ids: list[str] | set[str], *, image_access: ImageAccess = DEFAULT_ACCESS) -> None:
    """Open the images of ``ids`` with pillow (a missing, undecodable or oversized image is a
    :class:`DataValidationError` naming its row)."""
    wanted = set(ids)
    rows = [row for row in load_rows(seeds.file) if str(row.values.get("id", "")).strip() in wanted]
    problems: list[Problem] = []
    validate_pool(rows, problems, check_images=True, image_access=image_access)
    if problems:
        raise DataValidationError(problems)
