"""Reading benchmark rows from a local file, a folder of files or a Hugging Face id, and the checks every schema
shares. Each row says where it came from, so a bad value is reported as ``file:row:field``."""

from __future__ import annotations

import csv
import functools
import io
import math
import os
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from ecom_tasks import files

# The errors live below this module (files.py raises them too); importing them from here keeps working.
from ecom_tasks.errors import ConfigurationError as ConfigurationError
from ecom_tasks.errors import DataValidationError as DataValidationError
from ecom_tasks.errors import DataWarning
from ecom_tasks.errors import EcomTasksError as EcomTasksError
from ecom_tasks.errors import Problem as Problem

RecordT = TypeVar("RecordT")


class SkippedFilesWarning(DataWarning):
    """A data file of a folder that was not read (in a sub-folder), named so nothing is dropped unseen."""


_FORMAT_BY_SUFFIX = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}


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
    value: Any = row.values.get(field)
    if is_blank(value):
        return None
    if isinstance(value, str):
        value, problem = files.json_problem(value)  # CSV cells hold the list as JSON
        if problem is not None:
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
    """A yes/no task setting that may arrive as a string (``-T image=false``, JSON metadata): a bool, None
    (no), 0/1 or a yes/no word. Anything else (a list, NaN, 2) is a ConfigurationError naming ``name``, not
    "true" because it is not empty."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if type(value) is int and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in ("1", "true", "yes", "on"):
            return True
        if word in ("0", "false", "no", "off", ""):
            return False
    raise ConfigurationError(f"{name} must be true or false (yes/no, on/off, 1/0), got {value!r:.80}")


def read_whole_number(value: Any, low: int, high: int | None = None) -> int | None:
    """The one reading of a count a user gives (an option, a task setting): an int (not a bool), a float
    without a fraction (YAML and JSON give 2.0) or an int's text as ``int()`` reads it ('+5', ' 7 '; ASCII
    digits), from ``low`` to ``high`` (None: no upper bound). None otherwise: each caller refuses in its own
    words and error type."""
    if isinstance(value, str):
        if not re.fullmatch(r"\s*[+-]?[0-9]{1,40}\s*", value):
            return None
        value = int(value)
    elif isinstance(value, float) and value.is_integer():  # not nan or inf
        value = int(value)
    if type(value) is not int or value < low or (high is not None and value > high):
        return None
    return value


def fixtures_dir(benchmark: str) -> Path:
    """The bundled fixture folder of a benchmark (works from an installed wheel)."""
    return Path(str(resources.files("ecom_tasks") / "fixtures" / benchmark))


def _is_data_file(path: Path) -> bool:
    return path.suffix.lower() in _FORMAT_BY_SUFFIX


def refusal(path: Path | str, error: files.FileRefused) -> Problem:
    """A file ``files.py`` refused (a FIFO, a symlink leaving the folder...) as a ``file:0:-`` problem."""
    return Problem(str(path), 0, "-", str(error).removeprefix(f"{path}: "))


def _local_files(path: Path) -> tuple[list[Path], list[Problem]]:
    """The files :func:`load_rows` reads from the local ``path`` (the file, or a folder's data files), and a
    problem naming each data file of a real sub-folder, which is not read (sub-folders hold images or other data
    sets, e.g. EcomEval's ``judge_meta``; a symlinked one is never walked)."""
    try:
        if not path.is_dir():
            return [files.regular_file(path)], []
        found = files.folder_files(path, match=_is_data_file)
        refused = [refusal(file, error) for file, error in files.refused_entries(path, match=_is_data_file)]
    except files.FileRefused as error:
        raise DataValidationError([refusal(path, error)]) from None
    if refused:
        raise DataValidationError(refused)
    if not found:
        raise DataValidationError([Problem(str(path), 0, "-", "folder holds no .jsonl, .json, .csv or .parquet file")])
    skipped: list[Problem] = []
    for sub in files.sub_folders(path):
        if sub.name.startswith("."):
            continue
        try:
            nested = files.folder_files(sub, recursive=True, match=_is_data_file)
        except files.FileRefused as error:
            skipped.append(refusal(sub, error))
            continue
        note = f"not read: in a sub-folder of {path} (give its own path to read it)"
        skipped.extend(Problem(str(p), 0, "-", note) for p in nested)
    return found, skipped


def data_files(data: str | os.PathLike[str]) -> list[Path]:
    """The files :func:`load_rows` reads for a local file or folder (a folder's sub-folders are not read)."""
    return _local_files(files.checked_path(Path(os.fspath(data)).expanduser()))[0]


def json_objects(
    path: str | os.PathLike[str], inside: Path | None = None, not_object: str = "a JSON line must be an object"
) -> list[dict[str, Any]]:
    """The objects of a JSON Lines file, every broken line (and each that is no object: ``not_object``) a
    ``file:line`` problem (:class:`DataValidationError`). Not read with ``datasets``: values stay as written (a
    column may mix a category id and a name, which an Arrow schema refuses), no cache is built."""
    values, problems = files.json_lines(path, inside=inside)
    problems += [Problem(os.fspath(path), row, "-", not_object) for row, value in values if not isinstance(value, dict)]
    if problems:
        raise DataValidationError(sorted(problems, key=lambda p: p.row))
    return [value for _, value in values]


def _no_rows(path: Path) -> Problem:
    return Problem(str(path), 0, "-", "no records: the file holds no data rows")


def _csv_problem(path: Path, raw: bytes) -> Problem | None:
    """Where the CSV file ``path`` (its bytes ``raw``) that could not be read goes wrong (the first byte not UTF-8,
    the first record with more fields than the header, no record), as a ``file:row`` problem giving the line too."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        # Records before the bad byte, plus the one it is in ("x" stands for it); the header is row 0.
        before = raw[: exc.start].decode("utf-8-sig", "replace") + "x"
        row = sum(1 for _ in csv.reader(io.StringIO(before))) - 1
        why = f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at byte offset {exc.start} (line {line})"
        return Problem(str(path), row, "-", why)
    reader = csv.reader(io.StringIO(text))
    records = 0
    try:
        header = next(reader, None)
        if header is None:
            return _no_rows(path)
        for number, record in enumerate(reader, start=1):
            records += bool(record)  # blank lines are no records
            if len(record) > len(header):
                why = f"{len(record)} fields but the header has {len(header)} (line {reader.line_num})"
                return Problem(str(path), number, "-", why)
    except csv.Error as exc:
        return Problem(str(path), max(1, reader.line_num - 1), "-", f"not valid CSV: {exc} (line {reader.line_num})")
    return None if records else _no_rows(path)


def _table(fmt: str, raw: bytes) -> Iterable[Any]:
    """The rows of a CSV or Parquet file's bytes as ``datasets`` gives them (a CSV through pandas, as its csv
    builder reads one; a Parquet file's feature metadata, images included, decoded). Read from the bytes of the
    one checked open, not by path: the file cannot be swapped for a FIFO or a link between check and read, and
    no cache is written into the user's Hugging Face folder."""
    import datasets

    if fmt == "csv":
        import pandas

        return datasets.Dataset.from_pandas(pandas.read_csv(io.BytesIO(raw)), preserve_index=False)
    import pyarrow
    import pyarrow.parquet
    from datasets.table import InMemoryTable

    return datasets.Dataset(InMemoryTable(pyarrow.parquet.read_table(pyarrow.BufferReader(raw))))


def _load_file(path: Path, inside: Path | None = None) -> list[Row]:
    """The rows of one data file (``inside``: the folder it was listed from, which it must not leave)."""
    fmt = _FORMAT_BY_SUFFIX.get(path.suffix.lower())
    if fmt is None:
        raise DataValidationError([Problem(str(path), 0, "-", f"unsupported file type {path.suffix!r}")])
    try:
        if fmt == "json":
            values: Iterable[Any] = json_objects(path, inside)
        else:
            raw = files.read_bytes(path, inside=inside)
            if not raw:
                raise DataValidationError([Problem(str(path), 0, "-", "no records: the file is empty")])
            try:
                values = _table(fmt, raw)
            except Exception as exc:  # pandas and pyarrow raise many types for unreadable input
                found = _csv_problem(path, raw) if fmt == "csv" else None
                cause = exc.__cause__ or exc
                why = f"could not be read as {fmt}: {type(cause).__name__}: {cause}"
                raise DataValidationError([found or Problem(str(path), 0, "-", why)]) from exc
    except files.FileRefused as error:
        raise DataValidationError([refusal(path, error)]) from None
    rows = [Row(str(path), index, dict(row)) for index, row in enumerate(values, start=1)]
    if not rows:
        empty = fmt == "json" and not path.stat().st_size  # the file was read: the size only words the problem
        raise DataValidationError(
            [Problem(str(path), 0, "-", "no records: the file is empty") if empty else _no_rows(path)]
        )
    return rows


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
    """Rows from a local file or folder, or from a Hugging Face dataset id (the only network use): every split of
    it, each row getting a ``split`` column named after its hub split unless it has one."""
    path = files.checked_path(Path(os.fspath(data)).expanduser())
    if path.exists():
        found, skipped = _local_files(path)
        for problem in skipped:
            warnings.warn(SkippedFilesWarning(str(problem)), stacklevel=2)
        rows: list[Row] = []
        problems: list[Problem] = []
        for file in found:
            try:
                rows.extend(_load_file(file, inside=path if path.is_dir() else None))
            except DataValidationError as exc:  # every file's problems, listed together
                problems.extend(exc.problems)
        if problems:
            raise DataValidationError(problems)
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


def choice(
    row: Row, field: str, allowed: Sequence[str], problems: list[Problem], spellings: Mapping[str, str] | None = None
) -> str:
    """The value of ``field``, one of ``allowed``: the text itself, or with ``spellings`` (case-folded spelling ->
    value) the value it spells; else "" and a problem (``unknown <field> ...; expected one of ...``)."""
    value = require_text(row, field, problems)
    found = spellings.get(value.casefold()) if spellings is not None else value if value in allowed else None
    if value and found is None:
        message = f"unknown {field} {value!r}; expected one of {', '.join(allowed)}"
        problems.append(Problem(row.source, row.index, field, message))
    return found or ""


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
    """The records ``build(row, record_id, problems)`` makes of rows that add no problem to ``problems``, with a
    problem for every duplicate id (listed after the rows' own problems)."""
    records: list[RecordT] = []
    duplicates: list[Problem] = []
    first_row: dict[str, Row] = {}
    for row in rows:
        before = len(problems)
        record_id = read_id(row, problems)
        first = first_row.setdefault(record_id, row) if record_id else row
        if first is not row:
            message = f"duplicate id {record_id!r} (first at {first.source}:{first.index})"
            duplicates.append(Problem(row.source, row.index, "id", message))
        record = build(row, record_id, problems)
        if len(problems) == before:
            records.append(record)
    problems.extend(duplicates)
    return records


def validate_records(rows: list[Row], build: Callable[[Row, str, list[Problem]], RecordT]) -> list[RecordT]:
    """Every row's record (:func:`collect_records`), or one ``DataValidationError`` listing every problem."""
    problems: list[Problem] = []
    records = collect_records(rows, build, problems)
    if problems:
        raise DataValidationError(problems)
    return records


def _source_key(data: str | os.PathLike[str]) -> tuple[str, int, int]:
    """What identifies a data source's current content: path + mtime + size (hub ids: the id)."""
    path = files.checked_path(Path(os.fspath(data)).expanduser())
    if path.is_file():
        stat = path.stat()
        return str(path.resolve()), stat.st_mtime_ns, stat.st_size
    if path.is_dir():
        found = _local_files(path)[0]
        return str(path.resolve()), max(f.stat().st_mtime_ns for f in found), sum(f.stat().st_size for f in found)
    return str(data), 0, 0


@functools.lru_cache(maxsize=8)
def _validated(
    key: tuple[str, int, int], data: str, validate: Callable[..., list[Any]], options: tuple
) -> tuple[Any, ...]:
    return tuple(validate(load_rows(data), **dict(options)))


def load_validated(
    data: str | os.PathLike[str], validate: Callable[..., list[RecordT]], **options: Any
) -> list[RecordT]:
    """``validate(load_rows(data), **options)``, read once per process while the source is unchanged
    (several tasks of one run read the same file; records are frozen, so shared). Errors are not cached."""
    return list(_validated(_source_key(data), os.fspath(data), validate, tuple(sorted(options.items()))))
