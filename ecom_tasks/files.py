"""Every file this package reads or writes goes through here; docs/security.md ("Files in and out") states the rules.

Shared folders make every path hostile until checked: reading takes regular files only, never through a symlink
leaving ``inside=``, and JSON strictly; writing (:class:`OutputFolder`) lands below the output folder through an
exclusive temporary file renamed into place, never onto an input.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import io
import json
import math
import os
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from ecom_tasks.errors import DataValidationError, EcomTasksError, Problem

#: JSON nested deeper than this is refused (real records nest a few levels; Python's own parser
#: overflows the stack somewhere near 1,000).
MAX_JSON_DEPTH = 64
#: Integers longer than this are refused (no id, count or token number of ours is near it).
MAX_INT_DIGITS = 40

PathLike = str | os.PathLike[str]


class FileRefused(EcomTasksError, OSError):
    """A path the command will not read or write; the message names it and says why."""


# --- checks ---------------------------------------------------------------------------------------


#: What a file of each type is called in a refusal, in the order they are tested.
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISREG, "a file"),
)


def _kind(mode: int) -> str:
    return next((name for is_kind, name in _KINDS if is_kind(mode)), "not a regular file")


def _require_regular(path: PathLike, mode: int, done: str = "read") -> None:
    if not stat.S_ISREG(mode):
        raise FileRefused(f"{os.fspath(path)}: {_kind(mode)}, not a regular file: not {done}")


#: The longest file name and path Linux takes (NAME_MAX, PATH_MAX, in bytes).
MAX_NAME_BYTES, MAX_PATH_BYTES = 255, 4096


def is_too_long(path: PathLike) -> bool:
    """Whether a name in ``path`` is over :data:`MAX_NAME_BYTES` or the whole over :data:`MAX_PATH_BYTES`:
    every call on such a path fails with OSError ENAMETOOLONG wherever it is first looked at."""
    encoded = os.fsencode(path)
    return len(encoded) > MAX_PATH_BYTES or any(len(part) > MAX_NAME_BYTES for part in encoded.split(b"/"))


def too_long_refusal(path: PathLike) -> FileRefused:
    """The refusal of a path :func:`is_too_long` (or the system) finds too long, naming only its start."""
    name = os.fsdecode(path)
    return FileRefused(f"{name[:60]}... ({len(name)} characters): file name too long")


def checked_path(path: PathLike) -> Path:
    """``path`` as a :class:`Path`, refused by :func:`too_long_refusal` when :func:`is_too_long` (a pasted
    blob, a runaway expansion): the one check every entry point here and every loader of a user's path calls."""
    try:
        too_long = is_too_long(path)
    except UnicodeEncodeError:  # a lone surrogate ("\ud800" is valid JSON): no file system has such a name
        raise FileRefused(f"{os.fsdecode(path)[:60]!r}: not a file name (it holds a lone surrogate)") from None
    if too_long:
        raise too_long_refusal(path)
    return Path(path)


def real_path(path: PathLike) -> Path:
    """``path`` with every symlink resolved; a symlink loop on the way (``a -> a``) is refused by name (Python
    3.11 and 3.12 raise RuntimeError for it, a traceback)."""
    try:
        return Path(path).resolve()
    except RuntimeError:
        raise FileRefused(f"{os.fspath(path)}: a symbolic link loop: not followed") from None


def is_inside(path: PathLike, root: PathLike) -> bool:
    """Whether ``path``, with every symlink resolved, is ``root`` or lies below it."""
    return real_path(path).is_relative_to(real_path(root))


def check_inside(path: PathLike, root: PathLike | None) -> None:
    if root is not None and not is_inside(path, root):
        raise FileRefused(
            f"{os.fspath(path)}: a symbolic link to {real_path(path)}, outside {os.fspath(root)}: not read"
        )


def regular_file(path: PathLike, *, inside: PathLike | None = None) -> Path:
    """``path`` checked to be an existing regular file (a symlink to one is followed only within
    ``inside``); for handing a path to a library that opens it itself (datasets, Pillow, Inspect)."""
    path = checked_path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise FileRefused(f"{path}: no such file") from None
    except OSError as exc:
        raise FileRefused(f"{path}: cannot be read ({exc.strerror})") from None
    _require_regular(path, mode)
    check_inside(path, inside)
    return path


@contextlib.contextmanager
def open_regular(path: PathLike, *, inside: PathLike | None = None, exact: bool = False) -> Iterator[io.BufferedReader]:
    """A binary reader of ``path``, refused unless it is a regular file (within ``inside``; ``exact``: with no
    symlink anywhere on the path). Both are checked again on the opened file: a link pointed elsewhere between
    the check and the open is refused."""
    path = checked_path(path)
    check_inside(path, inside)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise FileRefused(f"{path}: no such file") from None
    except OSError as exc:  # a socket (ENXIO), no permission, a folder on some systems
        raise FileRefused(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        opened = os.fstat(fd)
        _require_regular(path, opened.st_mode)
        if inside is not None or exact:
            check_inside(path, inside)
            if exact and (real := real_path(path)) != path.absolute():
                raise FileRefused(f"{path}: a symbolic link (to {real}): not read")
            try:
                same = os.path.samestat(opened, os.stat(path))
            except OSError:  # removed or unreadable since the open
                same = False
            if not same:
                raise FileRefused(f"{path}: changed while it was opened: not read")
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        yield handle


def _refuse_larger(path: PathLike, handle: IO[bytes], max_bytes: int | None) -> None:
    """Refuse before reading a file larger than ``max_bytes`` (a sparse 50 GB file costs no disk to plant)."""
    if max_bytes is not None and os.fstat(handle.fileno()).st_size > max_bytes:
        raise FileRefused(f"{os.fspath(path)}: larger than {max_bytes} bytes: not read")


def read_bytes(
    path: PathLike, *, inside: PathLike | None = None, max_bytes: int | None = None, exact: bool = False
) -> bytes:
    with open_regular(path, inside=inside, exact=exact) as handle:
        _refuse_larger(path, handle, max_bytes)
        data = handle.read() if max_bytes is None else handle.read(max_bytes + 1)
    if max_bytes is not None and len(data) > max_bytes:  # it grew while read
        raise FileRefused(f"{os.fspath(path)}: larger than {max_bytes} bytes: not read")
    return data


def decode_utf8(raw: bytes, source: str, row: int = 0, offset: int = 0) -> str:
    """``raw`` as UTF-8 text (a leading BOM dropped), else a ``file:row:-`` problem with the byte offset."""
    try:
        return raw.decode("utf-8-sig" if offset == 0 else "utf-8")
    except UnicodeDecodeError as exc:
        raise DataValidationError(
            [
                Problem(
                    source, row, "-", f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at byte offset {offset + exc.start}"
                )
            ]
        ) from None


def read_text(path: PathLike, *, inside: PathLike | None = None, max_bytes: int | None = None) -> str:
    return decode_utf8(read_bytes(path, inside=inside, max_bytes=max_bytes), os.fspath(path))


def package_text(package: str, name: str) -> str:
    """A UTF-8 text file shipped inside our own package (a template, a style sheet, prompt text): trusted
    installed data, read from the package wherever it is installed (a wheel, an editable checkout)."""
    from importlib import resources

    return (resources.files(package) / name).read_text(encoding="utf-8")


def sha256(path: PathLike, *, inside: PathLike | None = None) -> str:
    with open_regular(path, inside=inside) as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


# --- JSON -----------------------------------------------------------------------------------------


class _JsonRefused(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _JsonRefused(f"{name} where a number must be finite")


def _checked_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _JsonRefused(f"an integer of {len(text.lstrip('-'))} digits (more than {MAX_INT_DIGITS})")
    return int(text)


def _too_deep(value: Any) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > MAX_JSON_DEPTH:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def json_problem(text: str | bytes, *, allow_nan: bool = False) -> tuple[Any, str | None]:
    """``(value, None)`` for valid JSON, else ``(None, what is wrong)``; the checks of :func:`parse_json`."""
    try:
        value = json.loads(
            text,
            parse_int=_checked_int,
            parse_constant=float if allow_nan else _reject_constant,
        )
    except _JsonRefused as exc:
        return None, str(exc)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON: {exc.msg} (column {exc.colno})"
    except RecursionError:
        return None, f"JSON nested more than {MAX_JSON_DEPTH} levels deep"
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"not valid JSON: {exc}"
    if _too_deep(value):
        return None, f"JSON nested more than {MAX_JSON_DEPTH} levels deep"
    return value, None


def parse_json(text: str | bytes, source: str, row: int = 0, field: str = "-", *, allow_nan: bool = False) -> Any:
    """The JSON value of ``text``, or a ``source:row:field`` :class:`DataValidationError`."""
    value, problem = json_problem(text, allow_nan=allow_nan)
    if problem is not None:
        raise DataValidationError([Problem(source, row, field, problem)])
    return value


def read_json(
    path: PathLike, *, inside: PathLike | None = None, allow_nan: bool = False, max_bytes: int | None = None
) -> Any:
    return parse_json(read_text(path, inside=inside, max_bytes=max_bytes), os.fspath(path), allow_nan=allow_nan)


def parse_json_document(text: str, source: str, *, allow_nan: bool = False) -> Any:
    """:func:`parse_json` for a document of many lines: a syntax error's problem gives its line as the row."""
    value, problem = json_problem(text, allow_nan=allow_nan)
    if problem is None:
        return value
    line = 0
    try:  # decoded again only to find the line; ints and constants kept as text so nothing else fails
        json.loads(text, parse_int=str, parse_constant=str)
    except json.JSONDecodeError as exc:
        line = exc.lineno
    except (RecursionError, ValueError):
        pass
    raise DataValidationError([Problem(source, line, "-", problem)])


def json_lines(
    path: PathLike, *, inside: PathLike | None = None, allow_nan: bool = False, max_bytes: int | None = None
) -> tuple[list[tuple[int, Any]], list[Problem]]:
    """``(line number, value)`` of every non-blank line, and a problem for each line that is not
    UTF-8 or not valid JSON (every one is listed, none stops the reading); a file larger than ``max_bytes``
    is refused unread."""
    source = os.fspath(path)
    values: list[tuple[int, Any]] = []
    problems: list[Problem] = []
    offset = 0
    with open_regular(path, inside=inside) as handle:
        _refuse_larger(path, handle, max_bytes)
        for number, raw in enumerate(handle, start=1):
            start, offset = offset, offset + len(raw)
            try:
                line = decode_utf8(raw, source, number, start)
            except DataValidationError as exc:
                problems.extend(exc.problems)
                continue
            if not line.strip():
                continue
            value, problem = json_problem(line, allow_nan=allow_nan)
            if problem is not None:
                problems.append(Problem(source, number, "-", problem))
            else:
                values.append((number, value))
    return values, problems


def _log_problem(source: str, *, samples: bool) -> str | None:
    """Why the Inspect log at ``source`` (its suffix names its kind) is not read (see :func:`check_inspect_log`)."""
    if source.endswith(".json"):
        return json_problem(read_bytes(source, max_bytes=MAX_LOG_INFLATED_BYTES), allow_nan=True)[1]
    if source.endswith(".eval"):
        return _inflating_problem(source, samples=samples)
    return None


def check_inspect_log(path: PathLike, *, samples: bool = False) -> str:
    """``path`` (as text) when it is a regular file and, for a ``.json`` log, holds to the rules of
    :func:`parse_json` (NaN allowed: Inspect writes it), else FileRefused naming it: Inspect reads a ``.json``
    log's header with a streaming parser that kills the process on a 5,000-digit integer and does not finish
    100,000 levels of nesting. An ``.eval`` log's members (its ``samples`` too when they are to be read) must not
    inflate past :data:`MAX_LOG_INFLATED_BYTES` (:func:`_inflating_problem`). Call it before any Inspect reader
    (``read_eval_log``, ``eval_set``) sees the file; :func:`read_inspect_log` also makes Inspect read the file
    that was checked."""
    source = os.fspath(regular_file(path))
    if (problem := _log_problem(source, samples=samples)) is not None:
        raise FileRefused(f"{source}: not a readable Inspect log ({problem})")
    return source


@contextlib.contextmanager
def _pinned_name(handle: IO[bytes], suffix: str) -> Iterator[str]:
    """A name in :func:`private_folder` that opens the very file ``handle`` has open, for a library that opens by
    name: whatever is put at the original name afterwards (a link to a colleague's file, a file that kills the
    reader), the library reads what was checked. A link to ``/proc/self/fd`` where there is one, else a copy."""
    private = private_folder()
    pinned = private.path(f"{os.urandom(8).hex()}{suffix}")
    fd_link = Path(f"/proc/self/fd/{handle.fileno()}")
    if fd_link.exists():
        os.symlink(fd_link, pinned)
    else:
        with private.open_write(pinned.name) as copy:
            shutil.copyfileobj(handle, copy)
    try:
        yield os.fspath(pinned)
    finally:
        pinned.unlink(missing_ok=True)


def read_inspect_log(path: PathLike, *, header_only: bool = False, inside: PathLike | None = None) -> Any:
    """``inspect_ai.log.read_eval_log`` of ``path`` after the checks of :func:`check_inspect_log`, both on the one
    file opened here (:func:`_pinned_name`); whatever Inspect raises for a file that is not a log is one
    FileRefused naming the file. The log's ``location`` is ``path``; ``inside`` as :func:`open_regular`."""
    from inspect_ai.log import read_eval_log

    source = os.fspath(regular_file(path, inside=inside))
    with open_regular(source, inside=inside) as handle, _pinned_name(handle, Path(source).suffix) as pinned:
        try:  # a refusal names the file the user gave, never the private name
            problem = _log_problem(pinned, samples=not header_only)
        except FileRefused as exc:
            raise FileRefused(str(exc).replace(pinned, source)) from None
        if problem is not None:
            raise FileRefused(f"{source}: not a readable Inspect log ({problem})")
        try:
            log = read_eval_log(pinned, header_only=header_only)
        except Exception as exc:  # ValueError, RecursionError, KeyError, pydantic's...: not a log we can read
            why = (str(exc).strip().splitlines() or [""])[0][:200].replace(pinned, source)
            raise FileRefused(f"{source}: not a readable Inspect log ({type(exc).__name__}: {why})") from None
    log.location = source
    return log


#: An Inspect ``.eval`` log whose members inflate past this in all (those a read opens; a sixteenth of it for a
#: header read) is refused: Inspect inflates each member whole in memory (a 1 MB log of whitespace took 2 GB).
#: A ``.json`` log, an lm-eval results or samples file, or a judge's file larger than this is refused unread.
MAX_LOG_INFLATED_BYTES = 1024**3
_ZSTD = 93  # the zip method number of zstandard, Inspect's own compression


def _inflating_problem(source: str, *, samples: bool) -> str | None:
    """Why an ``.eval`` log is not read (None: it may be): its members (the ``samples/`` and summaries only with
    ``samples``) inflated chunk by chunk, never whole, and counted until they pass :data:`MAX_LOG_INFLATED_BYTES`."""
    import zlib

    import zstandard

    total, chunk = 0, 1 << 20
    limit = MAX_LOG_INFLATED_BYTES if samples else MAX_LOG_INFLATED_BYTES // 16
    try:
        with open_regular(source) as handle, zipfile.ZipFile(handle) as archive:
            for info in archive.infolist():
                if not samples and info.filename.startswith(("samples/", "summaries")):
                    continue  # a header read does not open them
                if info.compress_size > limit - total:
                    return f"its members are larger than {limit} bytes ({info.filename})"
                handle.seek(info.header_offset)
                local = handle.read(30)  # a local header: 30 bytes, then the name and extra field (lengths at 26, 28)
                handle.seek(int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little"), 1)
                data = handle.read(info.compress_size)
                if info.compress_type == zipfile.ZIP_STORED:
                    total += len(data)
                elif info.compress_type == zipfile.ZIP_DEFLATED:
                    inflate = zlib.decompressobj(-15)
                    while data and total <= limit:
                        total += len(inflate.decompress(data, chunk))
                        data = inflate.unconsumed_tail
                elif info.compress_type == _ZSTD:
                    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True)
                    while total <= limit and (part := reader.read(chunk)):
                        total += len(part)
                if total > limit:
                    return f"its members inflate past {limit} bytes ({info.filename})"
    except (zipfile.BadZipFile, zlib.error, zstandard.ZstdError, EOFError, ValueError) as exc:
        return f"not a zip archive Inspect can read ({type(exc).__name__}: {exc})"
    return None


def dumps_strict(value: Any, **options: Any) -> str:
    """``json.dumps`` that never writes a bare ``NaN``/``Infinity`` (not JSON): they become ``null``."""
    return json.dumps(_finite(value), allow_nan=False, **options)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


# --- folders --------------------------------------------------------------------------------------


def _walk(folder: Path, recursive: bool) -> Iterator[tuple[Path, Path | None]]:
    """(a regular file, None) or (an entry left out, the folder holding it) for each entry of ``folder`` (and of
    its real sub-folders when ``recursive``), sorted by name; real sub-folders are not entries. A loop, not a
    recursion: a folder nested a thousand levels deep raised RecursionError (a traceback from report)."""
    pending = [(folder, iter(sorted(os.scandir(folder), key=lambda e: e.name)))]
    while pending:
        parent, entries = pending[-1]
        entry = next(entries, None)
        if entry is None:
            pending.pop()
            continue
        path = Path(entry.path)
        if entry.is_symlink():
            # A link is read only when it stays in the folder and names a regular file; a linked
            # folder is never walked (images -> /usr would list the whole system).
            try:
                linked_file = entry.is_file()
            except OSError:  # a link loop (ELOOP): left out, and refused by name like a dangling link
                linked_file = False
            yield path, (None if linked_file and is_inside(path, parent) else parent)
        elif entry.is_file(follow_symlinks=False):
            yield path, None
        elif not entry.is_dir(follow_symlinks=False):
            yield path, parent
        elif recursive:
            pending.append((path, iter(sorted(os.scandir(path), key=lambda e: e.name))))


def _refusal(path: Path, folder: Path) -> FileRefused:
    """What reading an entry :func:`_walk` left out would raise."""
    try:
        if path.is_symlink():
            regular_file(path, inside=folder)
        kind = _kind(path.lstat().st_mode)
    except FileRefused as exc:
        return exc
    except OSError as exc:  # gone since the listing
        return FileRefused(f"{path}: cannot be read ({exc.strerror})")
    return FileRefused(f"{path}: {kind}, not a regular file: not read")


def folder_listing(
    folder: PathLike, *, recursive: bool = False, match: Callable[[Path], bool] | None = None
) -> tuple[list[Path], list[tuple[Path, FileRefused]]]:
    """One walk of ``folder``: what :func:`folder_files` lists and what :func:`refused_entries` gives (of every
    real sub-folder too when ``recursive``), each only where ``match`` takes the entry."""
    root = checked_path(folder)
    try:
        entries = [(path, left_in) for path, left_in in _walk(root, recursive) if match is None or match(path)]
    except NotADirectoryError:
        raise FileRefused(f"{root}: not a folder") from None
    except OSError as exc:
        raise FileRefused(f"{root}: cannot be listed ({exc.strerror})") from None
    found = [path for path, left_in in entries if left_in is None]
    return found, [(path, _refusal(path, left_in)) for path, left_in in entries if left_in is not None]


def folder_files(
    folder: PathLike, *, recursive: bool = False, match: Callable[[Path], bool] | None = None
) -> list[Path]:
    """The regular files of ``folder`` (of its real sub-folders too when ``recursive``), sorted; a
    symlink is listed only when it stays inside ``folder`` and names a regular file."""
    return folder_listing(folder, recursive=recursive, match=match)[0]


def sub_folders(folder: PathLike) -> list[Path]:
    """The real (not symlinked) sub-folders of ``folder``, sorted."""
    return sorted(Path(e.path) for e in os.scandir(checked_path(folder)) if e.is_dir(follow_symlinks=False))


def refused_entries(folder: PathLike, *, match: Callable[[Path], bool] | None = None) -> list[tuple[Path, FileRefused]]:
    """Each entry of ``folder`` (not of its sub-folders) that :func:`folder_files` leaves out, with what
    reading it would raise: a FIFO, socket or device, or a symlink that leaves the folder, dangles or
    names no regular file. Only entries ``match`` takes; real sub-folders are not entries here."""
    return folder_listing(folder, match=match)[1]


# --- arrays ---------------------------------------------------------------------------------------


def load_npz(
    path: PathLike,
    expected: dict[str, tuple[str, int]],
    *,
    max_items: int,
    inside: PathLike | None = None,
    max_bytes: int | None = None,
) -> dict[str, Any]:
    """The arrays of an ``.npz`` file, each checked from its header before its data is read.

    ``expected`` maps each array name to (dtype kind, number of dimensions), e.g. ``{"vectors": ("f", 2)}``;
    an array of another kind, rank, or more than ``max_items`` elements is refused, as is any other member.
    ``max_bytes`` bounds each array's data too (a string dtype declares its own item size: ``S100000000``).
    """
    import numpy as np
    from numpy.lib import format as npy_format

    source = os.fspath(path)

    def refuse(message: str) -> FileRefused:
        return FileRefused(f"{source}: {message}")

    header_readers = {(1, 0): npy_format.read_array_header_1_0, (2, 0): npy_format.read_array_header_2_0}
    data = read_bytes(path, inside=inside)
    arrays: dict[str, Any] = {}
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = {info.filename.removesuffix(".npy"): info for info in archive.infolist()}
            if set(names) != set(expected):
                raise refuse(f"holds {sorted(names)}, expected {sorted(expected)}")
            for name, (kind, ndim) in expected.items():
                with archive.open(names[name]) as member:
                    version = npy_format.read_magic(member)
                    read_header = header_readers.get(version)
                    if read_header is None:
                        raise refuse(f"array {name!r}: unsupported .npy version {version}")
                    shape, fortran, dtype = read_header(member)
                    if dtype.kind != kind or len(shape) != ndim or dtype.hasobject:
                        raise refuse(
                            f"array {name!r} is {dtype} of shape {shape}, expected kind {kind!r} with {ndim} dimension(s)"
                        )
                    count = math.prod(shape)
                    size = count * dtype.itemsize
                    if count > max_items:
                        raise refuse(f"array {name!r} declares shape {shape} ({count} elements, more than {max_items})")
                    if max_bytes is not None and size > max_bytes:
                        raise refuse(f"array {name!r} declares {size} bytes, more than {max_bytes}")
                    raw = member.read(size + 1)
                    if len(raw) != size:
                        raise refuse(f"array {name!r}: {len(raw)} bytes of data for shape {shape}")
                    array = np.frombuffer(raw, dtype=dtype)
                    arrays[name] = array.reshape(shape, order="F" if fortran else "C").copy()
    except FileRefused:
        raise
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise refuse(f"not a readable .npz file ({exc})") from None
    return arrays


def npz_bytes(**arrays: Any) -> bytes:
    """``np.savez`` into bytes (for :meth:`OutputFolder.write_bytes`)."""
    import numpy as np

    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


# --- writing --------------------------------------------------------------------------------------


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()


def _temporary_prefix(target: Path) -> str:
    # At most 60 characters of the name (240 bytes of UTF-8): with the random part and ".tmp" the
    # temporary's name stays within MAX_NAME_BYTES even when the target's own name is at the limit.
    return f".{target.name[:60]}."


def create_parents(path: PathLike) -> None:
    """The missing folders above ``path`` (an output the user named, e.g. ``--out runs/new/build``), made
    as ``mkdir -p`` makes them; the output folder itself is made by :class:`OutputFolder`."""
    parent = checked_path(Path(path).expanduser()).absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FileRefused(f"{parent}: cannot create the folder ({exc.strerror or exc})") from None


def _same_file(a: Path, b: Path) -> bool:
    """Whether both exist and are one file (device and inode), whatever their names."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


class OutputFolder:
    """The folder a command writes into: every write lands below it, never through a symlink.

    ``inputs`` are the files and folders the command reads: the folder, or any file written, that is
    or lies inside one of them is refused (a data file is never truncated by its own output).
    """

    def __init__(self, root: PathLike, *, inputs: Iterable[PathLike] = (), what: str = "output folder") -> None:
        self.root = checked_path(Path(root).expanduser())
        self.what = what
        self.inputs = [checked_path(Path(p).expanduser()) for p in inputs]
        try:
            mode = self.root.lstat().st_mode
        except FileNotFoundError:
            mode = None
        except NotADirectoryError:
            raise FileRefused(f"{self.root}: the {what} lies below a file, not a folder") from None
        if mode is not None and stat.S_ISLNK(mode):
            raise FileRefused(
                f"{self.root}: the {what} is a symbolic link (to {real_path(self.root)}); name the folder itself"
            )
        if mode is not None and not stat.S_ISDIR(mode):
            raise FileRefused(f"{self.root}: the {what} exists and is {_kind(mode)}, not a folder")
        self._refuse_input(self.root)

    def _refuse_input(self, target: Path) -> None:
        # Compared as paths and, where they exist, as files: on a case-insensitive file system (macOS,
        # Windows) `DATA.jsonl` is `data.jsonl` under another spelling, as a hard link is on any.
        resolved = real_path(target)
        for source in self.inputs:
            real = real_path(source)
            if resolved == real or _same_file(resolved, real):
                raise FileRefused(f"{target}: is the input {source}; choose another output")
            if real.is_dir() and (
                resolved.is_relative_to(real) or any(_same_file(parent, real) for parent in resolved.parents)
            ):
                raise FileRefused(f"{target}: lies inside the input {source}; choose another output")

    def path(self, name: PathLike) -> Path:
        """Where ``name`` (relative, without ``..``) is below the folder."""
        relative = Path(name)
        if relative.is_absolute() or ".." in relative.parts or not relative.parts:
            raise FileRefused(f"{name}: not a plain name below the {self.what} {self.root}")
        return checked_path(self.root / relative)

    def check_target(self, name: PathLike) -> Path:
        """Where ``name`` will be written, refused now when it is, or lies inside, an input (a command
        checks its planned outputs before any work)."""
        target = self.path(name)
        self._refuse_input(target)
        return target

    def folder(self, name: PathLike, *, create: bool = True) -> Path:
        """The real folder ``name`` below the output folder (created when ``create``), each part checked:
        a symlink or a file where a folder should be is refused (for a folder another library writes
        into, such as Inspect's log folders)."""
        return self._real_folder(self.check_target(name), create=create)

    def _real_folder(self, folder: Path, *, create: bool) -> Path:
        """``folder`` (the root or below it) as a real folder, each part created or checked: a symlink
        or a file where a folder should be is refused."""
        parts = folder.relative_to(self.root).parts
        current = self.root
        for part in ("",) + parts:
            current = current / part if part else current
            try:
                mode = current.lstat().st_mode
            except NotADirectoryError:
                raise FileRefused(f"{current}: lies below a file, not a folder") from None
            except FileNotFoundError:
                if not create:
                    raise FileRefused(f"{current}: no such folder") from None
                try:
                    current.mkdir()
                except FileExistsError:
                    pass
                except OSError as exc:
                    raise FileRefused(f"{current}: cannot create the {self.what} ({exc.strerror})") from None
                mode = current.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise FileRefused(f"{current}: a symbolic link inside the {self.what}; not written through")
            if not stat.S_ISDIR(mode):
                raise FileRefused(f"{current}: {_kind(mode)} where a folder is needed in the {self.what}")
        return folder

    def _temporary(self, target: Path) -> tuple[int, Path]:
        parent = self._real_folder(target.parent, create=True)
        try:
            fd, temp = tempfile.mkstemp(prefix=_temporary_prefix(target), suffix=".tmp", dir=parent)
        except OSError as exc:
            raise FileRefused(f"{target}: cannot write in {parent} ({exc.strerror})") from None
        os.fchmod(fd, _FILE_MODE)
        return fd, Path(temp)

    def _commit(self, temp: Path, target: Path) -> None:
        try:
            mode = target.lstat().st_mode
        except FileNotFoundError:
            mode = None
        if mode is not None and stat.S_ISDIR(mode):
            temp.unlink(missing_ok=True)
            raise FileRefused(f"{target}: is a folder; not replaced")
        # rename replaces a planted symlink itself, never the file it points to
        os.replace(temp, target)

    @contextlib.contextmanager
    def open_write(self, name: PathLike) -> Iterator[IO[bytes]]:
        """A binary writer whose file replaces ``name`` atomically when the block ends without error."""
        target = self.check_target(name)
        fd, temp = self._temporary(target)
        try:
            with os.fdopen(fd, "wb") as handle:
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
            self._commit(temp, target)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise

    def write_bytes(self, name: PathLike, data: bytes) -> Path:
        with self.open_write(name) as handle:
            handle.write(data)
        return self.path(name)

    def write_text(self, name: PathLike, text: str) -> Path:
        return self.write_bytes(name, text.encode("utf-8"))

    def write_lines(self, name: PathLike, lines: Iterable[str]) -> str:
        """Write ``lines`` (each ending in a newline) as UTF-8; returns the file's sha256."""
        digest = hashlib.sha256()
        with self.open_write(name) as handle:
            for line in lines:
                data = line.encode("utf-8")
                digest.update(data)
                handle.write(data)
        return digest.hexdigest()

    def append_text(self, name: PathLike, text: str) -> None:
        """Append ``text`` in one write and fsync it (a kill leaves at most one partial last line)."""
        target = self.check_target(name)
        self._real_folder(target.parent, create=True)
        try:
            fd = os.open(
                target,
                os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                _FILE_MODE,
            )
        except OSError as exc:
            raise FileRefused(
                f"{target}: cannot be appended to ({exc.strerror}; a symbolic link is never followed)"
            ) from None
        try:
            info = os.fstat(fd)
            _require_regular(target, info.st_mode, "written")
            if info.st_nlink > 1:  # the append would land in the file behind each other name too (an input?)
                raise FileRefused(f"{target}: a hard link (one of {info.st_nlink} names of one file): not appended to")
            os.write(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def copy_in(self, source: PathLike, name: PathLike, *, link: bool = False, exact: bool = False) -> Path:
        """Put the regular file ``source`` (checked as :func:`open_regular` checks it) at ``name``: a hard link when
        ``link`` and the file system allows it, else a copy; either way created under a fresh name and renamed
        into place. What lands is the one file opened and checked: a link made to another (``source`` swapped
        in between) is refused."""
        target = self.check_target(name)
        with open_regular(source, exact=exact) as reader:
            if link and self._link_in(os.fspath(source), reader, target):
                return target
            with self.open_write(name) as writer:
                shutil.copyfileobj(reader, writer)
        return target

    def _link_in(self, source: str, reader: IO[bytes], target: Path) -> bool:
        """Hard-link ``source`` to ``target`` when it is still the file ``reader`` has open; False: links are
        not possible here (another file system, not allowed), copy instead."""
        parent = self._real_folder(target.parent, create=True)
        temp = parent / f"{_temporary_prefix(target)}{os.urandom(8).hex()}.tmp"
        try:
            os.link(source, temp, follow_symlinks=True)
        except OSError:
            return False
        try:
            if not os.path.samestat(os.fstat(reader.fileno()), os.lstat(temp)):
                raise FileRefused(f"{source}: changed while it was linked: not linked")
            self._commit(temp, target)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        return True

    def exists(self, name: PathLike) -> bool:
        """Whether ``name`` is a regular file below the folder (a symlink there is not)."""
        try:
            return stat.S_ISREG(self.path(name).lstat().st_mode)
        except (FileNotFoundError, NotADirectoryError):
            return False

    def remove(self, name: PathLike) -> None:
        """Remove the file or real folder ``name``; a symlink is removed itself, never what it names."""
        target = self.path(name)
        try:
            self._real_folder(target.parent, create=False)
        except FileRefused:
            if target.parent.exists() or target.parent.is_symlink():
                raise
            return  # nothing there to remove
        try:
            mode = target.lstat().st_mode
        except FileNotFoundError:
            return
        if stat.S_ISDIR(mode):
            try:
                shutil.rmtree(target)  # fd-based on Linux: never follows a symlink inside
            except RecursionError:  # Python 3.11's rmtree recurses once per level of a planted deep nest
                raise FileRefused(f"{target}: nested too deep to remove here; remove it yourself") from None
        else:
            target.unlink()

    def check_writable(self) -> None:
        """Create the folder and a probe file in it, then remove the probe: a folder that cannot be
        written is found before any work is paid for."""
        self._real_folder(self.root, create=True)
        try:
            fd, temp = tempfile.mkstemp(prefix=".ecom-tasks-probe.", dir=self.root)
        except OSError as exc:
            raise FileRefused(f"{self.root}: the {self.what} cannot be written ({exc.strerror})") from None
        os.close(fd)
        os.unlink(temp)


_private_root: Path | None = None


def private_folder() -> OutputFolder:
    """This process's own folder (made by ``tempfile.mkdtemp``: mode 0700, a fresh name) for copies of checked inputs that
    another library opens later by path; no other user can swap a file in it. Removed when the process exits."""
    global _private_root
    if _private_root is None:
        _private_root = Path(tempfile.mkdtemp(prefix="ecom-tasks-"))
        atexit.register(shutil.rmtree, _private_root, ignore_errors=True)
    return OutputFolder(_private_root, what="private folder")


def claim_folder(output: OutputFolder, marker: str, key: str, owner: str, *, option: str) -> None:
    """Make ``output`` (an existing folder) one that only ``owner``'s command works in, before anything in it is
    touched: a folder whose ``marker`` file (a regular file in it) holds ``{key: owner}`` is reused; a new or empty
    one is marked so; anything else (not empty and unmarked, marked by another owner, a link or FIFO at the
    marker) is refused untouched: the command replaces files by name there, and they may be a colleague's."""
    path = output.path(marker)
    if output.exists(marker):
        found = json_problem(read_bytes(path, inside=output.root, max_bytes=4096))[0]  # not JSON: no owner
        marked = found.get(key) if isinstance(found, dict) else None
        if marked != owner:
            raise FileRefused(
                f"{output.root}: the {output.what} of {marked!r}, not of {owner!r}; choose another {option}"
            )
        return
    if os.path.lexists(path):
        raise FileRefused(f"{path}: not a regular file; not followed, move it away")
    with os.scandir(output.root) as entries:
        empty = not any(entries)
    if not empty:
        raise FileRefused(
            f"{output.root}: not empty and not a {output.what} (no {marker}); its files may be a colleague's, which"
            f" this command would replace: choose a new or empty {option}"
        )
    output.write_text(marker, dumps_strict({key: owner}) + "\n")
