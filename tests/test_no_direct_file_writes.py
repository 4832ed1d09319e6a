"""Outside ecom_tasks/files.py, the package never writes, renames, copies or deletes a file itself
(issue 25): every write goes through ``files.OutputFolder`` (exclusive temporary file, atomic rename,
never through a symlink), so a new command cannot reopen the holes one by one.

The scan reads the code with Python's ``ast``: a word in a string, a docstring or a comment is no hit,
and names imported under another name (``from shutil import rmtree as wipe``) are followed. It names
``file:line`` for every hit.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ecom_tasks"
#: The one module allowed to touch the file system for writing.
EXEMPT = {"files.py"}

#: Fully qualified functions that write, rename, copy, link or delete a path.
WRITING_FUNCTIONS = {
    *(f"os.{name}" for name in ("open", "replace", "rename", "renames", "remove", "unlink", "rmdir", "removedirs")),
    *(f"os.{name}" for name in ("link", "symlink", "truncate", "mkdir", "makedirs", "mkfifo")),
    *(f"shutil.{name}" for name in ("copy", "copy2", "copyfile", "copytree", "copymode", "copystat", "move", "rmtree")),
    "tempfile.mkstemp",
    "tempfile.NamedTemporaryFile",
    *(f"numpy.{name}" for name in ("save", "savez", "savez_compressed", "savetxt")),
}
#: Methods that write or delete whatever object they are called on (a ``Path``, mostly).
WRITING_METHODS = {"unlink", "rmdir", "touch", "symlink_to", "hardlink_to", "mkdir"}
#: Methods that write to their first argument unless it is an in-memory buffer.
SAVING_METHODS = {"savefig", "save"}
BUFFERS = {"io.BytesIO", "io.StringIO"}
OPENERS = {"open", "io.open", "os.fdopen", "gzip.open", "bz2.open", "lzma.open", "codecs.open", "tarfile.open"}


def _imports(tree: ast.AST) -> dict[str, str]:
    """Local name -> qualified name for every import in the module (``np`` -> ``numpy``)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _qualified(node: ast.expr, imports: dict[str, str]) -> str | None:
    """``os.path.join`` for an expression naming it through the module's imports, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([imports.get(node.id, node.id), *reversed(parts)])


def _is_module_call(call: ast.Call, imports: dict[str, str]) -> bool:
    """Whether ``call`` calls a function of an imported module (``PIL.Image.open(fp, mode)``), not a
    method of an object (``path.open(mode)``)."""
    node = call.func
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in imports


def _buffer_names(tree: ast.AST, imports: dict[str, str]) -> set[str]:
    """Names bound to an in-memory buffer (``buffer = io.BytesIO()``, ``with io.BytesIO() as png``)."""
    names = set()

    def is_buffer(value: ast.expr | None) -> bool:
        return isinstance(value, ast.Call) and _qualified(value.func, imports) in BUFFERS

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and is_buffer(node.value):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.withitem) and is_buffer(node.context_expr):
            if isinstance(node.optional_vars, ast.Name):
                names.add(node.optional_vars.id)
    return names


def _mode(call: ast.Call, position: int) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "mode":
            return keyword.value
    return call.args[position] if len(call.args) > position else None


def _writing_mode(mode: ast.expr | None) -> str | None:
    """What is wrong with an ``open`` mode: a writing mode, or one the scan cannot read."""
    if mode is None:
        return None
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return f"mode {mode.value!r}" if set(mode.value) & set("wax+") else None
    return "a mode that is not a literal (cannot tell it reads)"


def direct_writes(source: str, filename: str = "<code>") -> list[tuple[int, str]]:
    """``(line, what)`` for every direct file write, rename, copy, link or deletion in ``source``."""
    tree = ast.parse(source, filename)
    imports = _imports(tree)
    buffers = _buffer_names(tree, imports)
    hits = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _qualified(node.func, imports)
        method = node.func.attr if isinstance(node.func, ast.Attribute) else None
        positional = len(node.args)
        what = None
        if name in WRITING_FUNCTIONS:
            what = f"{name}()"
        elif name in OPENERS or method == "open":
            # open(path, mode), Path.open(mode), os.fdopen(fd, mode), gzip.open(path, mode)
            problem = _writing_mode(_mode(node, 1 if name in OPENERS or _is_module_call(node, imports) else 0))
            what = f"{name or method}() with {problem}" if problem else None
        elif method in WRITING_METHODS:
            what = f".{method}()"
        elif method in ("write_text", "write_bytes") and positional < 2:
            what = f".{method}() of a path"  # files.OutputFolder.write_text(name, text) takes two
        elif method == "rename" and positional == 1:
            what = ".rename()"
        elif method == "replace" and positional == 1 and not node.keywords:
            what = ".replace() of a path"  # str.replace takes two arguments
        elif method in SAVING_METHODS and node.args:
            target = node.args[0]
            in_memory = (isinstance(target, ast.Name) and target.id in buffers) or (
                isinstance(target, ast.Call) and _qualified(target.func, imports) in BUFFERS
            )
            what = None if in_memory else f".{method}() to a path"
        if what is not None:
            hits.append((node.lineno, what))
    return sorted(hits)


def test_no_direct_file_writes_outside_files_py():
    hits = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative in EXEMPT:
            continue
        for line, what in direct_writes(path.read_text(encoding="utf-8"), str(path)):
            hits.append(f"ecom_tasks/{relative}:{line}: {what}")
    assert not hits, (
        f"{len(hits)} direct file write(s) outside ecom_tasks/files.py (use files.OutputFolder):\n" + "\n".join(hits)
    )


def test_the_scan_finds_every_kind_of_write_and_nothing_in_text():
    code = '''
"""Docstring: open(path, "w"), os.replace(a, b), shutil.rmtree(x) are words here."""
import io
import os
import numpy as np
from pathlib import Path
from shutil import rmtree as wipe
from tempfile import NamedTemporaryFile

def writes(path: Path, text: str):
    # a comment: path.unlink()
    open(path, "w")                      # 12
    open(path, mode="a", encoding="utf-8")
    open(path, "rb")                     # reading: no hit
    open(path)                           # reading: no hit
    path.open("x")                       # 16
    path.open(encoding="utf-8")          # reading: no hit
    os.open(path, os.O_RDONLY)           # 18
    os.replace(path, "b")
    os.rename(path, "b")
    wipe(path)                           # 21
    path.unlink(missing_ok=True)
    path.parent.rmdir()
    path.write_text(text, encoding="utf-8")
    path.write_bytes(b"")                # 25
    np.savez(path, a=1)
    NamedTemporaryFile(dir=path)
    text.replace("a", "b")               # str.replace: no hit
    path.replace("other")                # 29
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png") # in memory: no hit
    figure.savefig(path)                 # 32
    output.write_text("name.jsonl", text)  # files.OutputFolder: no hit
    x = "os.remove(path)"
    open(path, mode)                     # 35: a mode the scan cannot read
'''
    assert [line for line, _ in direct_writes(code)] == [12, 13, 16, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 29, 32, 35]
