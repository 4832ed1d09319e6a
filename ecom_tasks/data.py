"""Reading benchmark rows from a local file, a folder of files or a Hugging Face id.

Every benchmark validates rows into its own canonical record; this module only
gets the rows in and says *where* each came from, so that a bad value is
reported as ``file:row:field``. CSV, Parquet and hub datasets are read with
``datasets``; JSON Lines with the standard library (see ``_json_lines``).

A folder contributes its data files (suffixes in any case); data files in its
sub-folders are not read, and every file skipped is named in a warning. A name
that looks like a local path but does not exist is a "no such file" error, never
a Hugging Face hub query (see :func:`looks_like_local_path`).
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import os
import re
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

# The errors live below this module (files.py raises them too); importing them from here keeps working.
from ecom_tasks.errors import ConfigurationError as ConfigurationError
from ecom_tasks.errors import DataValidationError as DataValidationError
from ecom_tasks.errors import EcomTasksError as EcomTasksError
from ecom_tasks.errors import Problem as Problem

RecordT = TypeVar("RecordT")


class SkippedFilesWarning(UserWarning):
    """A data file of a folder that was not read (in a sub-folder), named so nothing is dropped unseen."""


_FORMAT_BY_SUFFIX = {
    ".jsonl": "json",
    ".json": "json",
    ".csv": "csv",
    ".parquet": "parquet",
}


@dataclass(frozen=True)
class Row:
    """A raw row plus where it came from (for error messages and relative paths)."""

    source: str  # file path or hub id
    index: int  # 1-based
    values: dict[str, Any]

    @property
    def base_dir(self) -> Path | None:
        path = Path(self.source)
        return path.parent if path.exists() else None


def is_blank(value: Any) -> bool:
    """An empty cell: None, NaN (pandas/CSV) or a blank string."""
    return (
        value is None
        or (isinstance(value, float) and math.isnan(value))
        or (isinstance(value, str) and not value.strip())
    )


def id_list(row: Row, field: str, problems: list[Problem], what: str = "ids") -> tuple[str, ...] | None:
    """The ids listed in ``field`` (a list, a Parquet array, or a CSV cell holding a JSON list); None
    when the cell is blank. A malformed cell or an empty or non-string entry is a problem (and ``()``)."""
    value = row.values.get(field)
    if is_blank(value):
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)  # CSV cells hold the list as JSON
        except json.JSONDecodeError:
            problems.append(Problem(row.source, row.index, field, "not a list (nor a JSON list)"))
            return ()
    if hasattr(value, "tolist"):  # numpy arrays from Parquet
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        problems.append(Problem(row.source, row.index, field, f"must be a list of {what}, got {type(value).__name__}"))
        return ()
    ids = []
    for i, item in enumerate(value):
        if not isinstance(item, (str, int)) or isinstance(item, bool) or not str(item).strip():
            problems.append(Problem(row.source, row.index, f"{field}[{i}]", "empty or not a string"))
            return ()
        ids.append(str(item).strip())
    return tuple(ids)


def parse_flag(value: bool | str | int | None, name: str) -> bool:
    """A yes/no task setting that may arrive as a string (``-T image=false``, JSON metadata)."""
    if isinstance(value, str):
        word = value.strip().lower()
        if word in ("1", "true", "yes", "on"):
            return True
        if word in ("0", "false", "no", "off", ""):
            return False
        raise ValueError(f"{name} must be true or false, got {value!r}")
    return bool(value)


def fixtures_dir(benchmark: str) -> Path:
    """The bundled fixture folder of a benchmark (works from an installed wheel)."""
    return Path(str(resources.files("ecom_tasks") / "fixtures" / benchmark))


def _data_format(path: Path) -> str | None:
    return _FORMAT_BY_SUFFIX.get(path.suffix.lower())


def _folder_files(folder: Path) -> tuple[list[Path], list[Problem]]:
    """The data files of ``folder`` (any suffix case), and a problem naming each data file left unread
    because it sits in a sub-folder (a benchmark's data is one level: its sub-folders hold images or
    other data sets, e.g. EcomEval's ``judge_meta``)."""
    files = sorted(p for p in folder.iterdir() if p.is_file() and _data_format(p))
    skipped = [
        Problem(str(p), 0, "-", f"not read: in a sub-folder of {folder} (give its own path to read it)")
        for sub in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
        for p in sorted(sub.rglob("*"))
        if p.is_file() and _data_format(p)
    ]
    return files, skipped


def _data_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    files, _ = _folder_files(path)
    if not files:
        raise DataValidationError([Problem(str(path), 0, "-", "folder holds no .jsonl, .json, .csv or .parquet file")])
    return files


def data_files(data: str | os.PathLike[str]) -> list[Path]:
    """The files :func:`load_rows` reads for a local file or folder (a folder's sub-folders are not read)."""
    return _data_files(Path(os.fspath(data)).expanduser())


def _not_utf8(path: Path, line: int, offset: int, raw: bytes, exc: UnicodeDecodeError) -> Problem:
    return Problem(
        str(path), line, "-", f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at byte offset {offset + exc.start}"
    )


def _json_lines(path: Path) -> list[dict[str, Any]]:
    """The objects of a JSON Lines file; a broken line is a ``file:line`` problem (every one is listed).

    Read with the standard library rather than ``datasets``: each line has to be
    parsed anyway to say which one is broken, the values stay as written (a
    column may mix a category id and a name, which an Arrow schema refuses), and
    a small file does not pay for building an Arrow cache. Lines are decoded one
    by one so that a byte that is not UTF-8 is reported with its line and offset.
    """
    records: list[dict[str, Any]] = []
    problems: list[Problem] = []
    offset = 0
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            start, offset = offset, offset + len(raw)
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                problems.append(_not_utf8(path, number, start, raw, exc))
                continue
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(Problem(str(path), number, "-", f"not valid JSON: {exc.msg}"))
                continue
            if not isinstance(value, dict):
                problems.append(Problem(str(path), number, "-", "a JSON line must be an object"))
                continue
            records.append(value)
    if problems:
        raise DataValidationError(problems)
    return records


def _csv_problem(path: Path) -> Problem | None:
    """Where a CSV file ``datasets`` could not read goes wrong, found with the standard library: the first
    byte that is not UTF-8, or the first record with more fields than the header. Rows are counted as
    records after the header (as in ``file:row:field`` problems); the message gives the line too."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        # Records before the bad byte, plus the one it is in ("x" stands for it); the header is row 0.
        before = raw[: exc.start].decode("utf-8-sig", "replace") + "x"
        row = sum(1 for _ in csv.reader(io.StringIO(before))) - 1
        return Problem(
            str(path), row, "-", f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at byte offset {exc.start} (line {line})"
        )
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader, None)
        if header is None:
            return None
        for number, record in enumerate(reader, start=1):
            if len(record) > len(header):
                return Problem(
                    str(path),
                    number,
                    "-",
                    f"{len(record)} fields but the header has {len(header)} (line {reader.line_num})",
                )
    except csv.Error as exc:
        return Problem(str(path), max(1, reader.line_num - 1), "-", f"not valid CSV: {exc} (line {reader.line_num})")
    return None


def _load_file(path: Path) -> Iterator[Row]:
    fmt = _data_format(path)
    if fmt is None:
        raise DataValidationError([Problem(str(path), 0, "-", f"unsupported file type {path.suffix!r}")])
    if fmt == "json":
        for index, values in enumerate(_json_lines(path), start=1):
            yield Row(str(path), index, values)
        return
    import datasets

    try:
        dataset = datasets.load_dataset(fmt, data_files=str(path), split="train")
    except Exception as exc:  # datasets raises many types for unreadable input
        found = _csv_problem(path) if fmt == "csv" else None
        cause = exc.__cause__ or exc
        raise DataValidationError(
            [found or Problem(str(path), 0, "-", f"could not be read as {fmt}: {type(cause).__name__}: {cause}")]
        ) from exc
    for index, values in enumerate(dataset, start=1):
        yield Row(str(path), index, dict(values))


#: A Hugging Face dataset id: ``name`` or ``owner/name``.
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?")
#: A file extension (letters only: ``.jsonl``, ``.jsonll``, ``.CSV``; not ``.v2`` or ``.5-mini``).
_EXTENSION = re.compile(r"\.[A-Za-z]{1,12}")


def looks_like_local_path(data: str | os.PathLike[str]) -> bool:
    """Whether ``data`` names a local file or folder rather than a Hugging Face id: it starts with
    ``.``, ``/`` or ``~``, has a path separator that an ``owner/name`` id does not, or ends in a
    file extension. Such a name that does not exist is a "no such file" error, not a hub query."""
    text = os.fspath(data)
    if text.startswith((".", "/", "~")) or "\\" in text or not _HUB_ID.fullmatch(text):
        return True
    return bool(_EXTENSION.fullmatch(PurePosixPath(text).suffix))


def load_rows(data: str | os.PathLike[str]) -> list[Row]:
    """Rows from a local file or folder, or from a Hugging Face dataset id.

    A local folder contributes every data file in it (a warning names each data
    file of its sub-folders, which are not read). A hub id needs network
    access to that hub (the only network use; offline flags make it fail fast);
    all its splits are read, each row getting a ``split`` column named after
    its hub split unless it has one, like a local file's.
    """
    path = Path(os.fspath(data)).expanduser()
    if path.exists():
        if path.is_dir():
            _, skipped = _folder_files(path)
            for problem in skipped:
                warnings.warn(SkippedFilesWarning(str(problem)), stacklevel=2)
        rows: list[Row] = []
        for file in _data_files(path):
            rows.extend(_load_file(file))
        return rows
    if looks_like_local_path(data):
        raise DataValidationError(
            [Problem(str(data), 0, "-", "no such file or folder (a Hugging Face dataset id has the form owner/name)")]
        )
    import datasets

    try:
        loaded = datasets.load_dataset(str(data))
    except Exception as exc:
        raise DataValidationError(
            [Problem(str(data), 0, "-", f"not a local path, and loading it as a Hugging Face dataset failed: {exc}")]
        ) from exc
    rows = []
    for name in loaded:
        for index, values in enumerate(loaded[name], start=1):
            values = dict(values)
            # Hub datasets keep splits apart; the canonical record carries it as a column.
            values.setdefault("split", name)
            rows.append(Row(f"{data}[{name}]", index, values))
    return rows


def require_text(row: Row, field: str, problems: list[Problem], *, optional: bool = False) -> str:
    """The stripped string in ``field``; records a problem when missing or empty."""
    value = row.values.get(field)
    if value is None or (isinstance(value, float) and value != value):
        if not optional:
            problems.append(Problem(row.source, row.index, field, "missing"))
        return ""
    if not isinstance(value, str):
        problems.append(Problem(row.source, row.index, field, f"must be a string, got {type(value).__name__}"))
        return ""
    if not value.strip() and not optional:
        problems.append(Problem(row.source, row.index, field, "empty string"))
    return value.strip()


def check_unique_ids(ids: list[tuple[Row, str]], problems: list[Problem]) -> None:
    seen: dict[str, Row] = {}
    for row, record_id in ids:
        if record_id in seen:
            first = seen[record_id]
            problems.append(
                Problem(
                    row.source, row.index, "id", f"duplicate id {record_id!r} (first at {first.source}:{first.index})"
                )
            )
        else:
            seen[record_id] = row


def read_id(row: Row, problems: list[Problem], field: str = "id") -> str:
    """The id in ``field`` (a non-empty string or integer), else "" and a problem."""
    raw = row.values.get(field)
    if isinstance(raw, (str, int)) and not isinstance(raw, bool) and str(raw).strip():
        return str(raw).strip()
    problems.append(Problem(row.source, row.index, field, "missing or empty"))
    return ""


def collect_records(
    rows: Iterable[Row], build: Callable[[Row, str, list[Problem]], RecordT], problems: list[Problem]
) -> list[RecordT]:
    """Run a benchmark's ``build(row, record_id, problems)`` over every row, adding to ``problems``.

    Reads the ``id``, keeps a record only when its row added no problem, and
    checks ids are unique. For data validated across several files (RMIR's
    pool and queries); a single file goes through :func:`validate_records`.
    """
    records: list[RecordT] = []
    ids: list[tuple[Row, str]] = []
    for row in rows:
        before = len(problems)
        record_id = read_id(row, problems)
        if record_id:
            ids.append((row, record_id))
        record = build(row, record_id, problems)
        if len(problems) == before:
            records.append(record)
    check_unique_ids(ids, problems)
    return records


def validate_records(rows: list[Row], build: Callable[[Row, str, list[Problem]], RecordT]) -> list[RecordT]:
    """Every row's record (see :func:`collect_records`), or one ``DataValidationError`` listing every
    problem of every row. Shared by every schema."""
    problems: list[Problem] = []
    records = collect_records(rows, build, problems)
    if problems:
        raise DataValidationError(problems)
    return records


def _source_key(data: str | os.PathLike[str]) -> tuple[str, int, int]:
    """What identifies a data source's current content: path + mtime + size (hub ids: the id)."""
    path = Path(os.fspath(data)).expanduser()
    if path.is_file():
        stat = path.stat()
        return str(path.resolve()), stat.st_mtime_ns, stat.st_size
    if path.is_dir():
        files = _data_files(path)
        return str(path.resolve()), max(f.stat().st_mtime_ns for f in files), sum(f.stat().st_size for f in files)
    return str(data), 0, 0


@functools.lru_cache(maxsize=8)
def _validated(
    key: tuple[str, int, int], data: str, validate: Callable[..., list[Any]], options: tuple
) -> tuple[Any, ...]:
    return tuple(validate(load_rows(data), **dict(options)))


def load_validated(
    data: str | os.PathLike[str], validate: Callable[..., list[RecordT]], **options: Any
) -> list[RecordT]:
    """``validate(load_rows(data), **options)``, read once per process while the source is unchanged.

    Several tasks of one run (lm-eval's group members, Inspect's task list) read
    the same file; records are frozen, so they are shared. Errors are not cached.
    """
    return list(_validated(_source_key(data), os.fspath(data), validate, tuple(sorted(options.items()))))
