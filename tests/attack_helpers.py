"""The attacks of the attack matrix (tests/test_attack_matrix.py), their sandbox, a runner of a row's
command in the test's own process, and a runner for the frameworks' data loaders.

Each matrix row gets a :class:`Sandbox`: its inputs, its output folder and a ``victim`` folder (a
shell start-up file, a secret, real images) that a planted link points at. Everything in the sandbox
outside the folders a row may write is hashed before and after the command (:func:`tree_digest`):
a changed victim, a truncated input or a file written beside the output folder all show up.

Run as a script (``python attack_helpers.py JOBS RESULTS``) it builds one framework task per job
(Inspect through ``inspect_ai.eval``, lm-eval through ``ecom_tasks.lm_eval_tasks.task_manager``),
each under its own alarm, and writes one JSON result line per job as it finishes.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import os
import shutil
import stat
import subprocess
import sys
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

#: Digits of the huge integer attack (Python refuses to parse more than 4,300 by default).
HUGE_DIGITS = 5000
#: Nesting depth of the deep JSON attack (Python's parser gives up near 1,000).
DEEP_LEVELS = 100_000
#: Bytes that are not UTF-8 (a lone 0xff and 0xfe can start no UTF-8 sequence).
NOT_UTF8 = b"\xff\xfe"

#: What each decoding attack puts as a JSON Lines file's first line (the valid lines stay after it).
BAD_LINES: dict[str, bytes] = {
    "deep_nesting": b'{"id": "deep", "nested": ' + b"[" * DEEP_LEVELS + b"]" * DEEP_LEVELS + b"}",
    "huge_int": b'{"id": "huge", "number": ' + b"7" * HUGE_DIGITS + b"}",
    "non_utf8": b'{"id": "bytes-' + NOT_UTF8 + b'"}',
}
#: The decoding attacks, the empty file among them.
DECODING_ATTACKS = (*BAD_LINES, "empty_file")


def poison_json_lines(path: Path, attack: str) -> Path:
    """``path`` (JSON Lines) with the attack's line first, or emptied for ``empty_file``."""
    if attack == "empty_file":
        path.write_bytes(b"")
    else:
        path.write_bytes(BAD_LINES[attack] + b"\n" + path.read_bytes())
    return path


def poison_json_document(path: Path, attack: str) -> Path:
    """``path`` (one JSON document) replaced by the attack's document, or emptied for ``empty_file``."""
    path.write_bytes(b"" if attack == "empty_file" else BAD_LINES[attack])
    return path


def poison_eval_samples(path: Path, attack: str) -> Path:
    """``path`` (an Inspect ``.eval`` log) with the attack's value (deep nesting or a huge integer) first in
    every sample, its members stored again with deflate (Inspect reads either; the standard library cannot
    open the Zstandard members Inspect writes, so their bytes are read from the archive's local headers)."""
    import zipfile

    import zstandard  # Inspect's own dependency

    value = {"deep_nesting": BAD_LINES["deep_nesting"], "huge_int": BAD_LINES["huge_int"]}[attack]
    raw = path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
    members = {}
    for info in infos:
        start = info.header_offset + 30  # the local header's fixed part, then its name and extra field
        start += int.from_bytes(raw[info.header_offset + 26 : info.header_offset + 28], "little")
        start += int.from_bytes(raw[info.header_offset + 28 : info.header_offset + 30], "little")
        data = raw[start : start + info.compress_size]
        if info.compress_type != zipfile.ZIP_STORED:
            data = zstandard.ZstdDecompressor().decompressobj().decompress(data)
        if info.filename.startswith("samples/"):
            data = b'{"ecom_attack": ' + value + b", " + data.removeprefix(b"{")
        members[info.filename] = data
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def make_fifo(path: Path) -> Path:
    """A named pipe at ``path`` (replacing a file there): opening it for reading waits for a writer."""
    if path.is_symlink() or path.exists():
        path.unlink()
    os.mkfifo(path)
    return path


def make_huge(path: Path) -> Path:
    """A sparse file at ``path`` one byte over the bound of a log or results file read whole (no disk is used:
    a colleague can plant a 50 GB one as cheaply)."""
    from ecom_tasks.files import MAX_LOG_INFLATED_BYTES

    path.unlink(missing_ok=True)
    with path.open("wb") as handle:
        handle.truncate(MAX_LOG_INFLATED_BYTES + 1)
    return path


def plant_symlink(path: Path, target: Path) -> Path:
    """A symlink at ``path`` (replacing what is there) pointing at ``target``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    path.symlink_to(target)
    return path


def swap_at_open(monkeypatch, mine: Path, secret: Path) -> None:
    """The race of a shared folder: at the moment ``mine`` is opened (``os.open``), it becomes a link to
    ``secret`` (a colleague's file)."""
    real_open = os.open

    def swapping_open(path, *args, **kwargs):
        if os.fspath(path) == os.fspath(mine) and not mine.is_symlink():
            mine.unlink()
            mine.symlink_to(secret)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", swapping_open)


def running_as_root() -> bool:
    return os.geteuid() == 0


def make_unwritable(folder: Path) -> Path:
    """``folder`` made impossible to write into: read-only (0o500), or, for root (whom permissions do
    not stop), a regular file where the folder should be. Returns the path the message should name."""
    if running_as_root():
        if folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.write_text("a regular file where a folder is needed\n", encoding="utf-8")
    else:
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o500)
    return folder


def make_immutable(folder: Path) -> bool:
    """``folder`` made impossible to write into even for root, keeping what is in it readable: the
    file system's immutable flag (``chattr +i``). False where the file system or the tool refuses it."""
    chattr = shutil.which("chattr")
    if chattr is None:
        return False
    done = subprocess.run([chattr, "+i", str(folder)], capture_output=True, check=False)
    if done.returncode != 0:
        return False
    IMMUTABLE.add(folder)
    return True


#: Folders made immutable, cleared again by :func:`restore_writable`.
IMMUTABLE: set[Path] = set()


def restore_writable(root: Path) -> None:
    """Undo :func:`make_unwritable`'s chmod and :func:`make_immutable`'s flag under ``root`` so pytest
    can remove the sandbox."""
    for folder in [f for f in IMMUTABLE if f.is_relative_to(root)]:
        subprocess.run(["chattr", "-i", str(folder)], capture_output=True, check=False)
        IMMUTABLE.discard(folder)
    for folder, dirs, _ in os.walk(root):
        for name in dirs:
            path = Path(folder) / name
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | stat.S_IWUSR | stat.S_IXUSR | stat.S_IRUSR)


def release_fifo_readers(root: Path) -> None:
    """Open every FIFO below ``root`` for writing and close it again: a reader a hang left waiting in
    ``open`` (in any thread of this process) gets its end of file and goes on."""
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if stat.S_ISFIFO(os.lstat(path).st_mode):
                try:
                    os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:  # no reader waiting (ENXIO): nothing to release
                    pass


class RowTimeout(BaseException):
    """A row's time ran out (not an ``Exception``: no ``except Exception`` in the command swallows it)."""


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """``os.environ`` with ``values`` set, restored afterwards."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


#: What the commands import lazily, inside the function that needs it. A first import cut off by a row's alarm
#: (a slow import on a loaded machine) leaves its submodules behind, and every later import of the package in
#: this process fails ("partially initialized module 'litellm'"): the rows after it would fail for that
#: row's timing. Imported once before the first alarm, they are never a row's first import.
LAZY_IMPORTS = (
    "litellm",
    "datasets",
    "inspect_ai",
    "inspect_ai.log",
    "lm_eval.tasks",
    "lm_eval.utils",
    "matplotlib.figure",
    "sklearn.metrics",
    "scipy.special",
    "statsmodels.stats.contingency_tables",
    "statsmodels.stats.inter_rater",
    "statsmodels.stats.multitest",
    "statsmodels.stats.power",
    "nltk.stem.snowball",
    "tenacity",
    "httpx",
)


@functools.cache
def import_lazy_modules() -> None:
    for name in LAZY_IMPORTS:
        importlib.import_module(name)


def run_command_in_process(argv: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess | None:
    """``ecom-tasks argv[1:]`` through ``ecom_tasks.cli.main`` (what the console script calls) in this process:
    its exit code and output as the script's would be (an uncaught exception prints its traceback and
    exits 1), or None when it took longer than ``timeout`` seconds (a hang). The time limit is a
    SIGALRM, so this runs in the main thread; FIFOs a hung command waits on are released by the caller
    (:func:`release_fifo_readers`)."""
    import io
    import logging
    import signal
    import traceback
    from contextlib import redirect_stderr, redirect_stdout

    from ecom_tasks.cli import main

    assert argv[0] == "ecom-tasks", argv
    import_lazy_modules()

    def expire(signum, frame):
        raise RowTimeout()

    stdout, stderr = io.StringIO(), io.StringIO()
    # A warning logged with no logging set up reaches the script's stderr (logging's last resort); here
    # pytest's own handler would take it instead.
    warnings_logged = logging.StreamHandler(stderr)
    warnings_logged.setLevel(logging.WARNING)
    logging.getLogger().addHandler(warnings_logged)
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(max(1, int(timeout)))
    code: int | None = 0
    try:
        with environment(env), redirect_stdout(stdout), redirect_stderr(stderr), warnings.catch_warnings():
            # Python's warnings as a fresh interpreter shows them, on stderr (pytest would record them).
            warnings.resetwarnings()
            for quiet in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
                warnings.simplefilter("ignore", quiet)
            warnings.showwarning = show_warning
            try:
                main([str(arg) for arg in argv[1:]])
            except SystemExit as exit:
                if isinstance(exit.code, str):  # as the interpreter does: the text on stderr, exit 1
                    print(exit.code, file=sys.stderr)
                code = exit.code if isinstance(exit.code, int) else int(exit.code is not None)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001  (what the script would die of: the row's finding)
                if _holds(exc, RowTimeout):
                    code = None
                else:
                    traceback.print_exc()
                    code = 1
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        logging.getLogger().removeHandler(warnings_logged)
    if code is None:
        return None
    return subprocess.CompletedProcess(argv, code, stdout.getvalue(), stderr.getvalue())


#: Files larger than this are described by inode and change time, not hashed.
HASHED_BYTES = 64 * 1024 * 1024


def _describe(path: Path) -> str:
    info = path.lstat()
    kind = stat.S_IFMT(info.st_mode)
    perms = oct(stat.S_IMODE(info.st_mode))
    if stat.S_ISLNK(info.st_mode):
        return f"symlink -> {os.readlink(path)}"
    if stat.S_ISREG(info.st_mode) and info.st_size > HASHED_BYTES:
        # A planted huge file (make_huge): any write to it changes its ctime, which no unprivileged process can
        # set; hashing its gigabyte twice a row cost seconds and a gigabyte of memory.
        return f"file {perms} {info.st_size} inode {info.st_ino} ctime {info.st_ctime_ns}"
    if stat.S_ISREG(info.st_mode):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        return f"file {perms} {info.st_size} {digest}"
    if stat.S_ISDIR(info.st_mode):
        return f"folder {perms}"
    return f"special {kind:o} {perms}"  # a FIFO or socket: never opened (a FIFO would block)


def tree_digest(root: Path, skip: Iterable[Path] = ()) -> dict[str, str]:
    """Every entry below ``root`` (relative path -> type, permissions, content hash or link target),
    leaving out the ``skip`` paths and what lies below them; symlinks are described, never followed."""
    skipped = {os.path.abspath(p) for p in skip}
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = [d for d in dirs if os.path.join(folder, d) not in skipped]
        for name in [*dirs, *files]:
            path = os.path.join(folder, name)
            if path not in skipped:
                found[os.path.relpath(path, root)] = _describe(Path(path))
    return found


def digest_changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """What changed between two :func:`tree_digest` results, one line per path."""
    lines = []
    for path in sorted(set(before) | set(after)):
        if before.get(path) != after.get(path):
            lines.append(f"{path}: {before.get(path, '(absent)')} => {after.get(path, '(absent)')}")
    return lines


def names_file(text: str, path: Path) -> bool:
    """Whether ``text`` names ``path`` (as given, or with its links resolved)."""
    return any(form in text for form in {str(path), os.path.realpath(path)})


# --- the frameworks' data loaders, run in one process, one alarm per job ------------------------------


def _build_inspect(job: dict) -> None:
    from inspect_ai import eval as inspect_eval

    logs = inspect_eval(
        job["task"],
        task_args={"data": job["data"]},
        model=job.get("model", "ecom/baseline"),
        model_roles=job.get("model_roles"),
        limit=1,
        display="none",
        log_dir=job["log_dir"],
    )
    if logs and logs[0].status != "success":
        raise RuntimeError(f"the run ended {logs[0].status}: {logs[0].error}")


def _build_lm_eval(job: dict) -> None:
    from ecom_tasks.lm_eval_tasks import task_manager

    loaded = task_manager(include_defaults=False, metadata={"data": job["data"]}).load([job["task"]])
    for task in loaded["tasks"].values():  # the documents are read when first asked for
        list(task.eval_docs)


def _holds(exc: BaseException, kind: type[BaseException]) -> bool:
    """Whether ``exc`` is, contains (exception groups) or was caused by an exception of ``kind``."""
    seen, stack = set(), [exc]
    while stack:
        item = stack.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, kind):
            return True
        stack += [item.__cause__, item.__context__, *getattr(item, "exceptions", ())]
    return False


def run_loader_jobs(jobs_file: str, results_file: str) -> None:
    """Build each job's task; a result line per job: ``ok``, ``refused`` (an ``EcomTasksError``: what
    the excepthook of both frameworks prints as one short message), ``traceback`` or ``hang``."""
    import signal
    import traceback

    from ecom_tasks.user_errors import find_user_error, user_message

    class Alarm(BaseException):  # not an Exception: no library's ``except Exception`` swallows it
        pass

    def alarm(signum, frame):
        raise Alarm()

    signal.signal(signal.SIGALRM, alarm)
    builders = {"inspect": _build_inspect, "lm-eval": _build_lm_eval}
    jobs = json.loads(Path(jobs_file).read_text(encoding="utf-8"))
    with open(results_file, "a", encoding="utf-8") as out:
        for job in jobs:
            signal.alarm(job["timeout"])
            try:
                builders[job["framework"]](job)
                result = {"status": "ok", "message": ""}
            except Alarm:
                result = {"status": "hang", "message": f"no answer within {job['timeout']} s"}
            except BaseException as exc:  # noqa: BLE001  (every failure is the row's finding)
                error = find_user_error(exc)
                if _holds(exc, Alarm):  # raised inside an event loop, it may come wrapped
                    result = {"status": "hang", "message": f"no answer within {job['timeout']} s"}
                elif error is not None:
                    result = {"status": "refused", "message": user_message(error)}
                else:
                    result = {"status": "traceback", "message": "".join(traceback.format_exception(exc))}
            finally:
                signal.alarm(0)
            out.write(json.dumps({"id": job["id"], **result}) + "\n")
            out.flush()


if __name__ == "__main__":
    run_loader_jobs(sys.argv[1], sys.argv[2])
