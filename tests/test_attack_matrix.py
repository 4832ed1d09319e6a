"""Every ``ecom-tasks`` command and both frameworks' data loaders, attacked as a hostile colleague or a
careless user would on a shared file system (issue 25).

One row per (command, attack), kept as data in :data:`ROWS`: a new command joins by adding rows, and
:func:`test_every_command_has_rows` fails while a command of ``ecom-tasks --help`` (or a benchmark of
``ecom-tasks build --help``) has none. Each row runs its command with a time limit (a hang is a failure)
inside its own sandbox, and asserts:

- nothing outside the folders the command may write changed (the victim folder a planted link points
  at, the inputs, the files beside the output: :func:`attack_helpers.tree_digest` before and after);
- no traceback;
- ``REFUSED``: a non-zero exit and a short message naming the offending file;
- ``OK``: success, and every planted link at a name the command writes is now a regular file
  (replaced, not written through);
- ``SAFE``: either of the two (a planted link may be refused or replaced: files.py's rule).

The frameworks' loaders (an Inspect task built by ``inspect_ai.eval``, an lm-eval task by
``ecom_tasks.lm_eval_tasks.task_manager``) run as one subprocess per framework that builds each
row's task under its own alarm (``attack_helpers.run_loader_jobs``): starting Inspect or lm-eval once
per row would cost most of the matrix's time budget. For the same reason a command's rows call
``ecom_tasks.cli.main`` (what the ``ecom-tasks`` script calls) in the test's process, except one row per
command (:data:`SCRIPT_ROWS`) and the attacks that may kill or hang the interpreter (:data:`OWN_PROCESS_ATTACKS`),
which run the installed script in a subprocess; those run two at a time beside the others, and each test
waits for its own row.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import zlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from fnmatch import fnmatch
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from attack_helpers import (
    DECODING_ATTACKS,
    digest_changes,
    make_fifo,
    make_huge,
    make_immutable,
    make_unwritable,
    names_file,
    plant_symlink,
    poison_eval_samples,
    poison_json_document,
    poison_json_lines,
    release_fifo_readers,
    restore_writable,
    run_command_in_process,
    running_as_root,
    tree_digest,
)
from helpers import TESTS_DIR, finished_lm_eval_results, mark_report_folder, run_cli
from loopback.embeddings_server import serve_embeddings
from loopback.openai_server import serve_openai_compatible

from ecom_tasks.data import fixtures_dir

OK, REFUSED, SAFE = "ok", "refused", "safe"
#: Seconds a row may take; a FIFO row that hangs costs this much, so it is short for them.
TIMEOUT, FIFO_TIMEOUT, BUILD_TIMEOUT, DEMO_TIMEOUT = 90, 45, 180, 400
#: Lines a refusal may print (ecom-tasks shows at most 10 problems of a data file, with a header and warnings).
MESSAGE_LINES = 40
#: Rows run at once (each is a process; the machine has two cores).
WORKERS = 2
#: An lm-eval samples file's time stamp (the judge rows' samples and results names).
STAMP = "2026-01-01T00-00-00.000001"
JUDGED_TASK = "ecomeval_ecom_qa"
#: What kills or hangs Inspect's own reader of a ``.json`` log (a segfault, no end): each command's row. The other
#: decoding attacks take the same refusal (tests/test_inspect_log_checks.py checks each in-process).
LOG_READER_ATTACKS = ("huge_int", "deep_nesting")
#: Attacks whose rows run in a process of their own: what kills Inspect's reader (a segfault) or hangs it in a loop
#: no alarm interrupts, and a working folder of the row's own.
OWN_PROCESS_ATTACKS = ("inspect_json_log:", "inspect_eval_samples:", "hostile_cwd")
#: The row that runs the installed script (its exit code and printed message; a hang ended by a kill) for each
#: command without an own-process row (tests/test_attack_matrix.py::test_every_command_has_rows checks each has one).
SCRIPT_ROWS = {
    "validate:rair-fifo_input",
    "judge:fifo_input:samples",
    "embed-pool:fifo_input:data",
    "demo:output_is_symlink",
}
#: An Inspect log in its ``.json`` format, named as Inspect names it (a folder walk reads such a file as a log).
INSPECT_JSON_LOG = "2026-01-01T00-00-00+00-00_rair-hard_AAAAAAAAAAAAAAAAAAAAAA.json"


@dataclass
class Scenario:
    """What a row's setup prepared: the command line and what to check afterwards."""

    argv: list[str]
    expect: str
    #: The offending paths; the message of a refusal (or, for SAFE, of a success) names one of them.
    names: list[Path] = field(default_factory=list)
    #: Folders (or ``glob`` patterns relative to the sandbox) the command may change; nothing else may.
    writable: list[Path | str] | None = None
    #: Planted links at names the command writes: after a success each must be a regular file.
    replaced: list[Path] = field(default_factory=list)
    #: Files a successful run's report may name the offending file in (besides stdout and stderr).
    named_in: list[Path] = field(default_factory=list)
    #: Row-specific checks after the run (e.g. no grader call was paid for).
    check: Callable[[subprocess.CompletedProcess], None] | None = None
    timeout: float = TIMEOUT
    cwd: Path | None = None
    #: For the frameworks' loader rows: the task to build instead of ``argv``.
    loader: dict | None = None


@dataclass(frozen=True)
class Row:
    command: str  # as ``ecom-tasks --help`` names it, ``build <benchmark>``, or ``<framework> loader``
    attack: str
    setup: Callable[[Sandbox], Scenario]
    slow: bool = False

    @property
    def id(self) -> str:
        return f"{self.command.replace(' ', '-')}:{self.attack}"

    @property
    def in_subprocess(self) -> bool:
        """Whether the row runs the installed ``ecom-tasks`` script; the others call what it calls in the test's
        process (:func:`attack_helpers.run_command_in_process`)."""
        return self.id in SCRIPT_ROWS or self.attack.startswith(OWN_PROCESS_ATTACKS)


# --- the sandbox --------------------------------------------------------------------------------------


class Sandbox:
    """One row's folders: ``victim`` (what a planted link points at), ``inputs``, ``out``, ``cache``."""

    def __init__(self, root: Path, shared: SharedInputs, row: Row) -> None:
        self.root, self.shared, self.row = root, shared, row
        self.victim = root / "victim"
        self.inputs = root / "in"
        self.out = root / "out"
        self.cache = root / "cache"
        self.logs = root / "inspect-logs"
        self.cwd = root / "cwd"
        for folder in (self.victim, self.inputs, self.cwd):
            folder.mkdir(parents=True)
        (self.victim / "shell_rc").write_text("export PATH=/usr/bin:/bin\n", encoding="utf-8")
        (self.victim / "secret.json").write_text('{"token": "do not touch"}\n', encoding="utf-8")
        shutil.copytree(fixtures_dir("ecomeval") / "images", self.victim / "images")

    @property
    def target(self) -> Path:
        """An existing victim file a planted link points at."""
        return self.victim / "shell_rc"

    @property
    def dangling(self) -> Path:
        """A victim path that does not exist (a write through a link to it creates a file there)."""
        return self.victim / "absent.png"

    def victim_folder(self, name: str) -> Path:
        folder = self.victim / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "keep.txt").write_text(f"victim folder {name}\n", encoding="utf-8")
        return folder

    def copy(self, source: Path, name: str | None = None) -> Path:
        """``source`` (a file or folder) copied into the inputs, links kept as links."""
        target = self.inputs / (name or source.name)
        if source.is_dir():
            shutil.copytree(source, target, symlinks=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
        return target

    def fixture(self, benchmark: str) -> Path:
        return self.copy(fixtures_dir(benchmark), benchmark)

    def link_out(self, folder: Path, name: str) -> Path:
        """``folder/name`` moved into the victim folder and replaced by a link to it: a sub-folder
        pointing out of the folder the user named (its files are real, so following it works)."""
        moved = self.victim / f"linked-{name}"
        shutil.move(folder / name, moved)
        (folder / name).symlink_to(moved, target_is_directory=True)
        return folder / name

    def env(self) -> dict[str, str]:
        return {"ECOM_TASKS_CACHE": str(self.cache), "INSPECT_LOG_DIR": str(self.logs)}


# --- shared inputs, built once per module and on first use ------------------------------------------


class SharedInputs:
    """Inputs several rows copy (Inspect logs, finished builds, a filled embedding cache) and the
    loopback servers; each is made once, when a row first asks for it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._made: dict[str, object] = {}
        self.grader = serve_openai_compatible(lambda body: "Compared with the reference.\nFinal Score: 2")
        self.embedder = serve_embeddings(_embedding)

    def close(self) -> None:
        self.grader.close()
        self.embedder.close()

    def _once(self, key: str, make: Callable[[], object]):
        with self._lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._made:
                self._made[key] = make()
            return self._made[key]

    def _run(self, argv: list[str], **kwargs) -> subprocess.CompletedProcess:
        proc = run_cli(argv, timeout=BUILD_TIMEOUT, **kwargs)
        assert proc.returncode == 0, (
            f"building a shared input failed: {argv}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
        return proc

    def inspect_log(self, name: str) -> Path:
        """A finished Inspect log of the offline baseline (``ecomeval``: its multimodal items;
        ``rair``: rair_hard), for calibrate and report."""

        def make() -> Path:
            folder = self.root / f"log-{name}"
            task = {"ecomeval": ["ecom_tasks/ecomeval", "-T", "multimodal=true"], "rair": ["ecom_tasks/rair_hard"]}
            self._run(
                [
                    "inspect",
                    "eval",
                    *task[name],
                    "--model",
                    "ecom/baseline",
                    "--model-role",
                    "grader=ecom/baseline",
                    "--log-dir",
                    str(folder),
                    "--display",
                    "none",
                ]
            )
            [log] = folder.glob("*.eval")
            return log

        return self._once(f"log-{name}", make)

    def build(self, benchmark: str) -> Path:
        """A finished ``ecom-tasks build <benchmark>`` folder of the offline baseline."""

        def make() -> Path:
            out = self.root / f"build-{benchmark}"
            self._run(build_argv(benchmark, out), env={"ECOM_TASKS_CACHE": str(self.root / "build-cache")})
            return out

        return self._once(f"build-{benchmark}", make)

    def embedding_cache(self) -> tuple[Path, Path]:
        """An embedding cache filled by ``embed-pool`` on the bundled RMIR fixtures, and the folder
        (relative to it) of this embedder's files."""

        def make() -> tuple[Path, Path]:
            cache = self.root / "embedding-cache"
            self._run(embed_argv(fixtures_dir("rmir"), self.embedder), env={"ECOM_TASKS_CACHE": str(cache)})
            [meta] = cache.rglob("embedder.json")
            return cache, meta.parent.relative_to(cache)

        return self._once("embedding-cache", make)


def _embedding(item) -> list[float]:
    return [float(len(item.text) % 7 + 1), float(sum(map(len, item.images)) % 11 + 1), 1.0, 0.5]


# --- command lines ------------------------------------------------------------------------------------


def build_argv(benchmark: str, out: Path, **inputs: Path) -> list[str]:
    argv = ["ecom-tasks", "build", benchmark, "--out", str(out), "--model", "ecom/baseline", "--display", "none"]
    if benchmark == "rmir":
        argv.append("--captions")  # the baseline's queries need the captions to keep a positive
    for option, path in inputs.items():
        argv += [f"--{option}", str(path)]
    return argv


def embed_argv(data: Path, server, model: str = "attack-embedder") -> list[str]:
    args = json.dumps({"base_url": server.base_url, "model": model, "batch_size": 8})
    return ["ecom-tasks", "embed-pool", str(data), "--retriever", "openai_embeddings", "--retriever-args", args]


def requests_for(server, model: str) -> int:
    return sum(1 for body in list(server.requests) if body.get("model") == model)


def no_requests(server, model: str) -> Callable[[subprocess.CompletedProcess], None]:
    def check(proc: subprocess.CompletedProcess) -> None:
        assert requests_for(server, model) == 0, f"{requests_for(server, model)} paid request(s) before the refusal"

    return check


# --- rows: commands that read nothing the user names ---------------------------------------------------


def hostile_cwd(*argv: str) -> Callable[[Sandbox], Scenario]:
    """Run where every name a careless command might write is a link to the victim: nothing changes."""

    def setup(box: Sandbox) -> Scenario:
        for name in ("logs", "report", "lm-eval", "output", ".cache"):
            plant_symlink(box.cwd / name, box.victim)
        plant_symlink(box.cwd / "results.json", box.target)
        return Scenario(["ecom-tasks", *argv], OK, writable=[], cwd=box.cwd)

    return setup


# --- rows: data inputs (validate and the frameworks' loaders) ----------------------------------------

#: benchmark -> (data given to the command, the JSON Lines file attacked, whether the data has images/).
DATA_LAYOUT = {
    "rair": ("rair.jsonl", "rair.jsonl", True),
    "ecomeval": ("ecomeval_fixtures.jsonl", "ecomeval_fixtures.jsonl", True),
    "monbench": ("monbench.jsonl", "monbench.jsonl", False),
    "rmir": (".", "queries.jsonl", True),
}
#: Inspect: benchmark -> (task, model, model roles); lm-eval: benchmark -> task or group.
INSPECT_TASKS = {
    "rair": ("ecom_tasks/rair_general", "ecom/baseline", None),
    "ecomeval": ("ecom_tasks/ecomeval", "ecom/baseline", {"grader": "ecom/baseline"}),
    "monbench": ("ecom_tasks/monbench_perm", "ecom/baseline", None),
    "rmir": ("ecom_tasks/rmir", "none", None),
}
LM_EVAL_TASKS = {"rair": "rair", "ecomeval": "ecomeval_exact", "monbench": "monbench_perm"}


def data_attacks(benchmark: str) -> list[str]:
    images = DATA_LAYOUT[benchmark][2]
    # Where the data is a folder, a table in it may be a link out of it, or a folder.
    in_folder = ["input_file_symlink", "folder_input", "symlink_loop"] if DATA_LAYOUT[benchmark][0] == "." else []
    return ["fifo_input", *(["input_subfolder_symlink"] if images else []), *in_folder, *DECODING_ATTACKS]


def attacked_data(box: Sandbox, benchmark: str, attack: str) -> tuple[Path, Scenario]:
    """The bundled data of ``benchmark`` copied and attacked: (data argument, scenario sans argv)."""
    folder = box.fixture(benchmark)
    given, attacked, _ = DATA_LAYOUT[benchmark]
    data, target = (folder / given).resolve(), folder / attacked
    if attack == "fifo_input":
        names = [make_fifo(target)]
    elif attack == "input_subfolder_symlink":
        names = [box.link_out(folder, "images"), *sorted(folder.glob("*.jsonl"))]
    elif attack == "input_file_symlink":  # a colleague's table (valid: following the link would load it)
        names = [plant_symlink(target, Path(shutil.copy2(target, box.victim / target.name)))]
    elif attack == "symlink_loop":  # a link to itself: following it fails (ELOOP), resolving it raised RuntimeError
        names = [plant_symlink(target, Path(target.name))]
    elif attack == "folder_input":
        target.unlink()
        target.mkdir()
        names = [target, folder]  # RMIR names the folder that lacks the table
    else:
        names = [poison_json_lines(target, attack)]
    timeout = FIFO_TIMEOUT if attack == "fifo_input" else TIMEOUT
    return data, Scenario([], REFUSED, names=names, writable=[box.logs, box.cache], timeout=timeout)


def validate_row(benchmark: str, attack: str) -> Row:
    def setup(box: Sandbox) -> Scenario:
        data, scenario = attacked_data(box, benchmark, attack)
        scenario.argv = ["ecom-tasks", "validate", benchmark, str(data)]
        return scenario

    return Row("validate", f"{benchmark}-{attack}", setup)


def loader_row(framework: str, benchmark: str, attack: str) -> Row:
    def setup(box: Sandbox) -> Scenario:
        data, scenario = attacked_data(box, benchmark, attack)
        if framework == "inspect":
            task, model, roles = INSPECT_TASKS[benchmark]
            scenario.loader = {"task": task, "model": model, "model_roles": roles, "log_dir": str(box.logs)}
        else:
            scenario.loader = {"task": LM_EVAL_TASKS[benchmark]}
        scenario.loader.update(framework=framework, data=str(data), timeout=int(scenario.timeout))
        return scenario

    return Row(f"{framework} loader", f"{benchmark}-{attack}", setup)


# --- rows: report -------------------------------------------------------------------------------------


def report_inputs(box: Sandbox) -> Path:
    runs = box.inputs / "runs"
    runs.mkdir()
    for name in ("ecomeval", "rair"):
        shutil.copy2(box.shared.inspect_log(name), runs / f"{name}-run.eval")
    return runs


def report_row(attack: str, prepare: Callable[[Sandbox, Path], Scenario]) -> Row:
    def setup(box: Sandbox) -> Scenario:
        runs = report_inputs(box)
        scenario = prepare(box, runs)
        if box.out.is_dir() and not box.out.is_symlink() and any(box.out.iterdir()):
            mark_report_folder(box.out)  # what the row planted stands in an earlier report's folder
        if not scenario.argv:
            scenario.argv = ["ecom-tasks", "report", str(runs), "--out", str(box.out)]
        # Figures and pages only where the row looks at them: matplotlib is most of a report's time.
        if "--format" not in scenario.argv:
            scenario.argv += ["--format", "md,csv,html" if scenario.expect != REFUSED and not scenario.check else "csv"]
        if scenario.writable is None:
            scenario.writable = [box.out]
        return scenario

    return Row("report", attack, setup)


def output_link_at(name: str) -> Callable[[Sandbox, Any], Scenario]:
    """A symlink planted at the output ``name`` inside the output folder: replaced, never written through."""

    def prepare(box: Sandbox, _inputs: Any) -> Scenario:
        return Scenario([], OK, replaced=[plant_symlink(box.out / name, box.target)])

    return prepare


def folder_at(where: Callable[[Sandbox, Any], Path], *, graded: bool = False) -> Callable[[Sandbox, Any], Scenario]:
    """A colleague's folder (a file in it) where the command writes a file: refused by name, the folder
    and its file kept. ``where``: the path, from the row's sandbox and inputs; ``graded``: a judge row,
    refused before its grader is paid."""

    def prepare(box: Sandbox, inputs: Any) -> Scenario:
        keep = where(box, inputs) / "keep.txt"
        keep.parent.mkdir(parents=True)
        keep.write_text("a colleague's notes\n", encoding="utf-8")

        def check(proc: subprocess.CompletedProcess) -> None:
            assert list(keep.parent.iterdir()) == [keep] and keep.read_text(encoding="utf-8") == "a colleague's notes\n"
            if graded:
                no_requests(box.shared.grader, inputs["model"])(proc)

        return Scenario([], REFUSED, names=[keep.parent], check=check)

    return prepare


def in_out(name: str) -> Callable[[Sandbox, Any], Path]:
    return lambda box, _inputs: box.out / name


def loop_at(where: Callable[[Sandbox, Any], Path]) -> Callable[[Sandbox, Any], Scenario]:
    """A symlink to itself where the command writes a file: replaced, or refused by name (never a traceback)."""

    def prepare(box: Sandbox, inputs: Any) -> Scenario:
        link = plant_symlink(where(box, inputs), Path(where(box, inputs).name))
        return Scenario([], SAFE, names=[link], replaced=[link])

    return prepare


def report_out_is_loop(box: Sandbox, runs: Path) -> Scenario:
    return Scenario([], REFUSED, names=[plant_symlink(box.out, Path(box.out.name))], writable=[])


def report_loop_in_folder(box: Sandbox, runs: Path) -> Scenario:
    """A link to itself among the runs (a sub-folder down): left out and named, the other runs reported."""
    loop = plant_symlink(runs / "sub" / "loop.eval", Path("loop.eval"))
    return Scenario([], SAFE, names=[loop], named_in=[box.out / "report.md"])


def report_dangling_plot(box: Sandbox, runs: Path) -> Scenario:
    return Scenario([], OK, replaced=[plant_symlink(box.out / "plots" / "rair_confusion.png", box.dangling)])


def report_linked_subfolder(box: Sandbox, runs: Path) -> Scenario:
    link = plant_symlink(box.out / "csv", box.victim_folder("tables"))
    return Scenario([], REFUSED, names=[link])


def report_out_is_link(box: Sandbox, runs: Path) -> Scenario:
    link = plant_symlink(box.out, box.victim_folder("reports"))
    return Scenario([], REFUSED, names=[link], writable=[])


def report_out_is_input_file(box: Sandbox, runs: Path) -> Scenario:
    log = runs / "rair-run.eval"
    return Scenario(["ecom-tasks", "report", str(runs), "--out", str(log)], REFUSED, names=[log], writable=[])


def report_out_is_input_folder(box: Sandbox, runs: Path) -> Scenario:
    return Scenario(["ecom-tasks", "report", str(runs), "--out", str(runs)], REFUSED, names=[runs], writable=[])


def report_out_below_missing_folders(box: Sandbox, runs: Path) -> Scenario:
    """--out's missing parent folders are made only outside the inputs: none is left in them."""
    out = runs / "new" / "deep" / "report"
    return Scenario(["ecom-tasks", "report", str(runs), "--out", str(out)], REFUSED, names=[out], writable=[])


def report_fifo_argument(box: Sandbox, runs: Path) -> Scenario:
    fifo = make_fifo(box.inputs / "results_2026-01-01T00-00-00.000001.json")
    argv = ["ecom-tasks", "report", str(runs), str(fifo), "--out", str(box.out)]
    return Scenario(argv, SAFE, names=[fifo], named_in=[box.out / "report.md"], timeout=FIFO_TIMEOUT)


def report_fifo_in_folder(box: Sandbox, runs: Path) -> Scenario:
    # Found by a folder walk, which reads regular files only (files.folder_files): never opened, named
    # as unreadable in the report beside the other runs, which are reported.
    (runs / "lm" / "shop-model").mkdir(parents=True)
    fifo = make_fifo(runs / "lm" / "shop-model" / f"results_{STAMP}.json")
    return Scenario([], SAFE, names=[fifo], named_in=[box.out / "report.md"], timeout=FIFO_TIMEOUT)


def report_linked_input_folder(box: Sandbox, runs: Path) -> Scenario:
    elsewhere = box.victim_folder("colleague-runs")
    # The colleague's run is the only EcomEval run: walked, it would be a run row of its own.
    shutil.move(runs / "ecomeval-run.eval", elsewhere / "victim-run.eval")
    plant_symlink(runs / "shared", elsewhere)

    def check(proc: subprocess.CompletedProcess) -> None:
        written = [p for p in box.out.rglob("*") if p.is_file() and p.suffix in (".md", ".csv", ".html")]
        walked = [p for p in written if "victim-run" in p.read_text(encoding="utf-8", errors="replace")]
        assert not walked, f"the linked folder {runs / 'shared'} was walked: {walked}"

    return Scenario([], OK, check=check)


def report_markup_in_file_name(box: Sandbox, runs: Path) -> Scenario:
    """A file named like a log whose name is markup (not a log: listed as unreadable, by its name)."""
    bad = runs / '"><img src=x onerror=alert(1)>.eval'
    bad.write_text("not a log\n", encoding="utf-8")

    def check(proc: subprocess.CompletedProcess) -> None:
        page = (box.out / "report.html").read_text(encoding="utf-8")
        attributes: set[str] = set()
        parser = HTMLParser()
        parser.handle_starttag = lambda tag, attrs: attributes.update(name for name, _ in attrs)  # type: ignore[method-assign]
        parser.feed(page)
        assert "&lt;img src=x onerror=alert(1)&gt;.eval" in page and "onerror" not in attributes

    argv = ["ecom-tasks", "report", str(runs), "--out", str(box.out), "--format", "html"]
    return Scenario(argv, SAFE, names=[bad], named_in=[box.out / "report.html"], check=check)


def linked_log(box: Sandbox, runs: Path) -> Path:
    """The only EcomEval run moved to the victim folder, a link to it left among the runs."""
    elsewhere = box.victim_folder("colleague-runs") / "ecomeval-run.eval"
    shutil.move(runs / "ecomeval-run.eval", elsewhere)
    return plant_symlink(runs / "ecomeval-run.eval", elsewhere)


def report_linked_log(box: Sandbox, runs: Path) -> Scenario:
    link = linked_log(box, runs)

    def check(proc: subprocess.CompletedProcess) -> None:
        rows = (box.out / "csv" / "runs.csv").read_text(encoding="utf-8").splitlines()
        assert not [row for row in rows if row.startswith("success,ecomeval,")], "the linked log was read"

    return Scenario([], SAFE, names=[link], named_in=[box.out / "csv" / "runs.csv"], check=check)


def report_out_is_file(box: Sandbox, runs: Path) -> Scenario:
    box.out.write_text("notes a colleague keeps here\n", encoding="utf-8")
    return Scenario([], REFUSED, names=[box.out], writable=[])


def report_unwritable(box: Sandbox, runs: Path) -> Scenario:
    return Scenario([], REFUSED, names=[make_unwritable(box.out)], writable=[])


def report_decoding(attack: str) -> Callable[[Sandbox, Path], Scenario]:
    def prepare(box: Sandbox, runs: Path) -> Scenario:
        folder = runs / "lm" / "shop-model"
        folder.mkdir(parents=True)
        bad = poison_json_document(folder / f"results_{STAMP}.json", attack)
        return Scenario([], SAFE, names=[bad], named_in=[box.out / "report.md"])

    return prepare


def report_json_log(attack: str) -> Callable[[Sandbox, Path], Scenario]:
    """A hostile ``.json`` Inspect log beside the runs: Inspect reads its header with a streaming parser
    that killed the process on a 5,000-digit integer (SIGSEGV) and never finished deep nesting."""

    def prepare(box: Sandbox, runs: Path) -> Scenario:
        bad = poison_json_document(runs / INSPECT_JSON_LOG, attack)
        return Scenario([], SAFE, names=[bad], named_in=[box.out / "report.md"])

    return prepare


def refused_unread(path: Path, *also: Path) -> Callable[[subprocess.CompletedProcess], None]:
    """The check that ``path`` (a sparse file over the bound) was refused by its size, not read and found bad."""

    def check(proc: subprocess.CompletedProcess) -> None:
        shown = proc.stdout + proc.stderr + "".join(p.read_text(encoding="utf-8") for p in also if p.is_file())
        assert f"{path.name}: larger than" in shown, f"{path} was not refused by its size:\n{shown[-2000:]}"

    return check


def report_huge(name: str) -> Callable[[Sandbox, Path], Scenario]:
    """A sparse file one byte over the bound, as an lm-eval results file or a ``.json`` Inspect log in the runs."""

    def prepare(box: Sandbox, runs: Path) -> Scenario:
        (runs / "lm" / "shop-model").mkdir(parents=True)
        bad = make_huge(runs / name)
        report = box.out / "report.md"
        return Scenario([], SAFE, names=[bad], named_in=[report], check=refused_unread(bad, report))

    return prepare


def report_colleague_folder(box: Sandbox) -> Scenario:
    """A colleague's report (unmarked, the names a report writes) at ``--out``: refused, every file kept."""
    runs = report_inputs(box)
    (box.out / "csv").mkdir(parents=True)
    (box.out / "report.md").write_text("# their findings\n", encoding="utf-8")
    (box.out / "csv" / "runs.csv").write_text("status,model\nsuccess,theirs\n", encoding="utf-8")
    argv = ["ecom-tasks", "report", str(runs), "--out", str(box.out), "--format", "csv"]
    return Scenario(argv, REFUSED, names=[box.out], writable=[])


# --- rows: compare ------------------------------------------------------------------------------------


def compare_row(attack: str, prepare: Callable[[Sandbox, Path], Scenario]) -> Row:
    def setup(box: Sandbox) -> Scenario:
        runs = box.inputs / "runs"
        runs.mkdir()
        shutil.copy2(box.shared.inspect_log("rair"), runs / "rair-run.eval")
        scenario = prepare(box, runs)
        if not scenario.argv:
            scenario.argv = ["ecom-tasks", "compare", str(runs), "--json", str(box.out / "comparison.json")]
        scenario.argv += ["--resamples", "100"]
        if scenario.writable is None:
            scenario.writable = [box.out]
        return scenario

    return Row("compare", attack, setup)


def compare_link_at_json(box: Sandbox, runs: Path) -> Scenario:
    return Scenario([], OK, replaced=[plant_symlink(box.out / "comparison.json", box.target)])


def compare_json_is_input(box: Sandbox, runs: Path) -> Scenario:
    log = runs / "rair-run.eval"
    return Scenario(["ecom-tasks", "compare", str(runs), "--json", str(log)], REFUSED, names=[log, runs], writable=[])


def compare_json_in_linked_folder(box: Sandbox, runs: Path) -> Scenario:
    link = plant_symlink(box.out / "linked", box.victim_folder("comparisons"))
    argv = ["ecom-tasks", "compare", str(runs), "--json", str(link / "comparison.json")]
    return Scenario(argv, REFUSED, names=[link])


def compare_fifo_argument(box: Sandbox, runs: Path) -> Scenario:
    fifo = make_fifo(box.inputs / f"samples_rair_hard_{STAMP}.jsonl")
    argv = ["ecom-tasks", "compare", str(runs), str(fifo), "--json", str(box.out / "comparison.json")]
    return Scenario(argv, SAFE, names=[fifo], timeout=FIFO_TIMEOUT)


def compare_linked_input_folder(box: Sandbox, runs: Path) -> Scenario:
    elsewhere = box.victim_folder("colleague-runs")
    shutil.copy2(box.shared.inspect_log("ecomeval"), elsewhere / "victim-run.eval")
    plant_symlink(runs / "shared", elsewhere)

    def check(proc: subprocess.CompletedProcess) -> None:
        assert "ecomeval" not in proc.stdout, f"the linked folder {runs / 'shared'} was walked:\n{proc.stdout[-2000:]}"

    return Scenario([], OK, check=check)


def compare_linked_log(box: Sandbox, runs: Path) -> Scenario:
    shutil.copy2(box.shared.inspect_log("ecomeval"), runs / "ecomeval-run.eval")
    link = linked_log(box, runs)

    def check(proc: subprocess.CompletedProcess) -> None:
        assert "ecomeval / " not in proc.stdout, (
            f"the linked log was compared:\n{proc.stdout[-2000:]}"
        )  # a table's title

    return Scenario([], SAFE, names=[link], check=check)


def compare_unwritable(box: Sandbox, runs: Path) -> Scenario:
    folder = make_unwritable(box.out / "records")
    argv = ["ecom-tasks", "compare", str(runs), "--json", str(folder / "comparison.json")]
    return Scenario(argv, REFUSED, names=[folder])


def finished_lm_eval_run(runs: Path) -> Path:
    """An lm-eval run folder whose results file says rair_hard finished, so compare reads its samples file."""
    return finished_lm_eval_results(runs / "lm" / "shop-model", "rair_hard", STAMP).parent


def compare_decoding(attack: str) -> Callable[[Sandbox, Path], Scenario]:
    def prepare(box: Sandbox, runs: Path) -> Scenario:
        folder = finished_lm_eval_run(runs)
        (folder / f"samples_rair_hard_{STAMP}.jsonl").write_text("", encoding="utf-8")
        bad = poison_json_lines(folder / f"samples_rair_hard_{STAMP}.jsonl", attack)
        return Scenario([], SAFE, names=[bad])

    return prepare


def compare_json_log(attack: str) -> Callable[[Sandbox, Path], Scenario]:
    def prepare(box: Sandbox, runs: Path) -> Scenario:
        return Scenario([], SAFE, names=[poison_json_document(runs / INSPECT_JSON_LOG, attack)])

    return prepare


def compare_huge_json_log(box: Sandbox, runs: Path) -> Scenario:
    bad = make_huge(runs / INSPECT_JSON_LOG)
    return Scenario([], SAFE, names=[bad], check=refused_unread(bad))


def compare_huge_lm_eval_samples(box: Sandbox, runs: Path) -> Scenario:
    """lm-eval's per-item samples file, one byte over the bound of a file read whole: refused by its size."""
    bad = make_huge(finished_lm_eval_run(runs) / f"samples_rair_hard_{STAMP}.jsonl")
    return Scenario([], SAFE, names=[bad], check=refused_unread(bad))


def compare_eval_samples(attack: str) -> Callable[[Sandbox, Path], Scenario]:
    """A finished ``.eval`` log whose samples (read in full, not by the header) hold the attack."""

    def prepare(box: Sandbox, runs: Path) -> Scenario:
        bad = poison_eval_samples(Path(shutil.copy2(runs / "rair-run.eval", runs / "rair-tampered.eval")), attack)
        return Scenario([], SAFE, names=[bad])

    return prepare


# --- rows: calibrate ----------------------------------------------------------------------------------


def calibrate_row(attack: str, prepare: Callable[[Sandbox, dict], Scenario]) -> Row:
    def setup(box: Sandbox) -> Scenario:
        folder = box.fixture("ecomeval")
        paths = {
            "log": box.copy(box.shared.inspect_log("ecomeval"), "ecomeval-run.eval"),
            "data": folder / "ecomeval_fixtures.jsonl",
            "out": box.out / "calibrated.jsonl",
            "folder": folder,
        }
        scenario = prepare(box, paths)
        if not scenario.argv:
            scenario.argv = ["ecom-tasks", "calibrate", str(paths["log"]), "--data", str(paths["data"])]
            scenario.argv += ["--out", str(paths["out"])]
        if scenario.writable is None:
            scenario.writable = [box.out]
        return scenario

    return Row("calibrate", attack, setup)


def calibrate_dangling_image(box: Sandbox, paths: dict) -> Scenario:
    link = plant_symlink(box.out / "images" / "mug.png", box.dangling)
    return Scenario([], SAFE, names=[link], replaced=[link])


def calibrate_colleague_image(box: Sandbox, paths: dict) -> Scenario:
    """A different picture of a colleague's where the copy of the data's image goes: an error, not
    overwritten (EcomEval README, "Difficulty calibration")."""
    theirs = box.out / "images" / "mug.png"
    theirs.parent.mkdir(parents=True)
    shutil.copy2(paths["folder"] / "images" / "knife.png", theirs)

    def check(proc: subprocess.CompletedProcess) -> None:
        assert theirs.read_bytes() == (paths["folder"] / "images" / "knife.png").read_bytes()

    return Scenario([], REFUSED, names=[theirs], check=check)


def calibrate_linked_subfolder(box: Sandbox, paths: dict) -> Scenario:
    link = plant_symlink(box.out / "images", box.victim_folder("pictures"))
    return Scenario([], REFUSED, names=[link])


def calibrate_out_is_data(box: Sandbox, paths: dict) -> Scenario:
    argv = ["ecom-tasks", "calibrate", str(paths["log"]), "--data", str(paths["data"]), "--out", str(paths["data"])]
    return Scenario(argv, REFUSED, names=[paths["data"]], writable=[box.out])


def calibrate_out_is_data_by_another_name(box: Sandbox, paths: dict) -> Scenario:
    """The data under another name (a hard link here; another spelling on a case-insensitive file system)."""
    other_name = paths["data"].with_name("DATA-" + paths["data"].name)
    os.link(paths["data"], other_name)
    argv = ["ecom-tasks", "calibrate", str(paths["log"]), "--data", str(paths["data"]), "--out", str(other_name)]
    return Scenario(argv, REFUSED, names=[other_name], writable=[box.out])


def calibrate_tasks_out_is_data(box: Sandbox, paths: dict) -> Scenario:
    argv = ["ecom-tasks", "calibrate", str(paths["log"]), "--data", str(paths["data"])]
    argv += ["--out", str(paths["out"]), "--tasks-out", str(paths["data"])]
    return Scenario(argv, REFUSED, names=[paths["data"]], writable=[box.out])


def calibrate_out_is_log(box: Sandbox, paths: dict) -> Scenario:
    argv = ["ecom-tasks", "calibrate", str(paths["log"]), "--data", str(paths["data"]), "--out", str(paths["log"])]
    return Scenario(argv, REFUSED, names=[paths["log"]], writable=[box.out])


def calibrate_fifo(which: str) -> Callable[[Sandbox, dict], Scenario]:
    def prepare(box: Sandbox, paths: dict) -> Scenario:
        return Scenario([], REFUSED, names=[make_fifo(paths[which])], timeout=FIFO_TIMEOUT)

    return prepare


def calibrate_folder_log(box: Sandbox, paths: dict) -> Scenario:
    paths["log"].unlink()
    paths["log"].mkdir()
    return Scenario([], REFUSED, names=[paths["log"]])


def calibrate_linked_images(box: Sandbox, paths: dict) -> Scenario:
    return Scenario([], REFUSED, names=[box.link_out(paths["folder"], "images"), paths["data"]])


def calibrate_derived_table(attack: str) -> Callable[[Sandbox, dict], Scenario]:
    """At the task table's name derived from --out (never named by the user): a colleague's CSV, or a link to
    one: refused before any log is read, kept."""

    def prepare(box: Sandbox, paths: dict) -> Scenario:
        table = box.out / "calibrated.tasks.csv"
        box.out.mkdir()
        if attack == "symlink":
            return Scenario([], REFUSED, names=[plant_symlink(table, box.target)], writable=[])
        table.write_text("task,owner\nshop,alice\n", encoding="utf-8")
        return Scenario([], REFUSED, names=[table], writable=[])

    return prepare


def calibrate_unwritable(box: Sandbox, paths: dict) -> Scenario:
    return Scenario([], REFUSED, names=[make_unwritable(box.out)], writable=[])


def calibrate_decoding(attack: str) -> Callable[[Sandbox, dict], Scenario]:
    def prepare(box: Sandbox, paths: dict) -> Scenario:
        return Scenario([], REFUSED, names=[poison_json_lines(paths["data"], attack)])

    return prepare


def calibrate_json_log(attack: str) -> Callable[[Sandbox, dict], Scenario]:
    def prepare(box: Sandbox, paths: dict) -> Scenario:
        bad = poison_json_document(box.inputs / INSPECT_JSON_LOG.replace("rair-hard", "ecomeval"), attack)
        argv = ["ecom-tasks", "calibrate", str(bad), "--data", str(paths["data"]), "--out", str(paths["out"])]
        return Scenario(argv, REFUSED, names=[bad])

    return prepare


# --- rows: judge --------------------------------------------------------------------------------------


def samples_lines(count: int = 4) -> str:
    """lm-eval samples of EcomEval's text items, each answered with its reference."""
    from ecom_tasks.ecomeval.schema import load_records

    records = [r for r in load_records() if not r.multimodal][:count]
    lines = []
    for number, record in enumerate(records):
        doc = {
            "id": record.id,
            "question": record.question,
            "reference": record.reference,
            "category": record.category,
            "language": record.language,
            "task": record.task,
            "difficulty": record.difficulty or "",
        }
        lines.append(json.dumps({"doc_id": number, "doc": doc, "filtered_resps": [record.reference]}) + "\n")
    return "".join(lines)


def judge_row(attack: str, prepare: Callable[[Sandbox, dict], Scenario]) -> Row:
    def setup(box: Sandbox) -> Scenario:
        model = f"judge-{zlib.crc32(box.row.id.encode())}"  # the row's own grader name: its requests are countable
        folder = box.out / "lm" / "shop-model"
        folder.mkdir(parents=True)
        samples = folder / f"samples_{JUDGED_TASK}_{STAMP}.jsonl"
        samples.write_text(samples_lines(), encoding="utf-8")
        slug = model.replace("-", "_")
        paths = {
            "out": box.out / "lm",
            "folder": folder,
            "samples": samples,
            "grades": folder / f"judge_grades_{JUDGED_TASK}_{STAMP}.openai_{slug}.jsonl",
            "results": folder / f"judge_results_{JUDGED_TASK}_{STAMP}.openai_{slug}.json",
            "lm_eval_results": folder / f"results_{STAMP}.json",
            "cache": box.root / "judge-cache",
            "cache_file": box.root / "judge-cache" / "replies.jsonl",
            "model": model,
        }
        scenario = prepare(box, paths)
        scenario.argv = ["ecom-tasks", "judge", str(paths["out"]), "--grader", f"openai/{model}"]
        scenario.argv += ["--api-base", box.shared.grader.base_url, "--cache-dir", str(paths["cache"]), "--no-progress"]
        if scenario.writable is None:  # the samples stay as they were: only the judge's own files may appear
            scenario.writable = [
                paths["cache"],
                "out/lm/shop-model/judge_grades_*",
                "out/lm/shop-model/judge_results_*",
            ]
        return scenario

    return Row("judge", attack, setup)


def judge_link_at(which: str) -> Callable[[Sandbox, dict], Scenario]:
    def prepare(box: Sandbox, paths: dict) -> Scenario:
        return Scenario([], OK, replaced=[plant_symlink(paths[which], box.target)])

    return prepare


def judge_link_at_old_temporary(box: Sandbox, paths: dict) -> Scenario:
    # The name the judge once wrote its grades to before renaming them: a fixed name anyone could plant.
    plant_symlink(paths["grades"].with_name(f".{paths['grades'].name}.tmp"), box.target)
    return Scenario([], OK)


def judge_link_at_cache(box: Sandbox, paths: dict) -> Scenario:
    link = plant_symlink(paths["cache"] / "replies.jsonl", box.target)
    return Scenario([], SAFE, names=[link], replaced=[link])


def judge_cache_linked_to_samples(box: Sandbox, paths: dict) -> Scenario:
    """The reply cache a hard link to the samples file (one file, two names): appending replies would write into
    the samples; refused before any grader call."""
    paths["cache"].mkdir()
    os.link(paths["samples"], paths["cache_file"])
    check = no_requests(box.shared.grader, paths["model"])
    return Scenario([], REFUSED, names=[paths["cache_file"]], check=check, writable=[])


def judge_linked_model_folder(box: Sandbox, paths: dict) -> Scenario:
    elsewhere = box.victim_folder("colleague-lm-eval")
    shutil.move(paths["samples"], elsewhere / paths["samples"].name)
    shutil.rmtree(paths["folder"])
    link = plant_symlink(paths["folder"], elsewhere)
    return Scenario([], REFUSED, names=[link, paths["out"]])


def judge_fifo(which: str) -> Callable[[Sandbox, dict], Scenario]:
    def prepare(box: Sandbox, paths: dict) -> Scenario:
        paths[which].parent.mkdir(parents=True, exist_ok=True)
        fifo = make_fifo(paths[which])
        expect = SAFE if which == "lm_eval_results" else REFUSED
        return Scenario([], expect, names=[fifo], timeout=FIFO_TIMEOUT)

    return prepare


def judge_unwritable_cache(box: Sandbox, paths: dict) -> Scenario:
    cache = make_unwritable(paths["cache"])
    return Scenario([], REFUSED, names=[cache], check=no_requests(box.shared.grader, paths["model"]), writable=[])


def judge_unwritable_output(box: Sandbox, paths: dict) -> Scenario:
    if not running_as_root():
        make_unwritable(paths["folder"])
    elif not make_immutable(paths["folder"]):  # root writes into a read-only folder; not into an immutable one
        pytest.skip("root writes into a read-only folder, and this file system refuses chattr +i")
    check = no_requests(box.shared.grader, paths["model"])
    return Scenario([], REFUSED, names=[paths["folder"], paths["grades"]], check=check, writable=[paths["cache"]])


def judge_decoding(attack: str) -> Callable[[Sandbox, dict], Scenario]:
    def prepare(box: Sandbox, paths: dict) -> Scenario:
        bad = poison_json_lines(paths["samples"], attack)
        return Scenario([], REFUSED, names=[bad], check=no_requests(box.shared.grader, paths["model"]))

    return prepare


def judge_huge(which: str) -> Callable[[Sandbox, dict], Scenario]:
    def prepare(box: Sandbox, paths: dict) -> Scenario:
        paths[which].parent.mkdir(parents=True, exist_ok=True)
        bad = make_huge(paths[which])
        if which == "lm_eval_results":  # only names the run: the grades go on
            return Scenario([], SAFE, names=[bad], named_in=[paths["results"]], check=refused_unread(bad))
        unread, unpaid = refused_unread(bad), no_requests(box.shared.grader, paths["model"])

        def check(proc: subprocess.CompletedProcess) -> None:
            unread(proc)
            unpaid(proc)

        return Scenario([], REFUSED, names=[bad], check=check)

    return prepare


def judge_deep_lm_eval_results(box: Sandbox, paths: dict) -> Scenario:
    bad = poison_json_document(paths["lm_eval_results"], "deep_nesting")
    return Scenario([], SAFE, names=[bad], named_in=[paths["results"]])


# --- rows: embed-pool ---------------------------------------------------------------------------------


def embed_row(attack: str, prepare: Callable[[Sandbox, dict], Scenario]) -> Row:
    def setup(box: Sandbox) -> Scenario:
        data = box.fixture("rmir")
        paths = {"data": data, "pool": data / "pool.jsonl", "model": "attack-embedder"}
        scenario = prepare(box, paths)
        if not scenario.argv:
            scenario.argv = embed_argv(data, box.shared.embedder, paths["model"])
        if scenario.writable is None:
            scenario.writable = [box.cache]
        return scenario

    return Row("embed-pool", attack, setup)


def filled_cache(box: Sandbox) -> Path:
    """The shared filled cache copied as this row's cache; returns this embedder's folder in it."""
    cache, folder = box.shared.embedding_cache()
    shutil.copytree(cache, box.cache, symlinks=True)
    return box.cache / folder


def embed_link_at_meta(box: Sandbox, paths: dict) -> Scenario:
    folder = filled_cache(box)
    shutil.rmtree(folder)
    link = plant_symlink(folder / "embedder.json", box.target)
    return Scenario([], SAFE, names=[link], replaced=[link])


def embed_linked_cache_folder(box: Sandbox, paths: dict) -> Scenario:
    folder = filled_cache(box)
    shutil.rmtree(folder)
    link = plant_symlink(folder, box.victim_folder("embeddings"))
    return Scenario([], REFUSED, names=[link])


def embed_fifo_shard(box: Sandbox, paths: dict) -> Scenario:
    folder = filled_cache(box)
    shard = sorted(folder.rglob("*.npz"))[0]
    return Scenario([], SAFE, names=[make_fifo(shard)], timeout=FIFO_TIMEOUT)


def embed_folder_pool(box: Sandbox, paths: dict) -> Scenario:
    paths["pool"].unlink()
    paths["pool"].mkdir()
    return Scenario([], REFUSED, names=[paths["pool"], paths["data"]])


def embed_folder_meta(box: Sandbox, paths: dict) -> Scenario:
    """A folder where the filled cache keeps its embedder's record: never removed, the run named it."""
    meta = filled_cache(box) / "embedder.json"
    meta.unlink()
    keep = meta / "keep.txt"
    meta.mkdir()
    keep.write_text("a colleague's notes\n", encoding="utf-8")

    def check(proc: subprocess.CompletedProcess) -> None:
        assert keep.read_text(encoding="utf-8") == "a colleague's notes\n"

    return Scenario([], SAFE, names=[meta], check=check)


def embed_fifo_pool(box: Sandbox, paths: dict) -> Scenario:
    return Scenario([], REFUSED, names=[make_fifo(paths["pool"])], timeout=FIFO_TIMEOUT)


def embed_linked_images(box: Sandbox, paths: dict) -> Scenario:
    return Scenario([], REFUSED, names=[box.link_out(paths["data"], "images"), paths["pool"]])


def embed_unwritable_cache(box: Sandbox, paths: dict) -> Scenario:
    model = f"embedder-{zlib.crc32(box.row.id.encode())}"
    argv = embed_argv(paths["data"], box.shared.embedder, model)
    check = no_requests(box.shared.embedder, model)
    return Scenario(argv, REFUSED, names=[make_unwritable(box.cache)], check=check, writable=[])


def embed_decoding(attack: str) -> Callable[[Sandbox, dict], Scenario]:
    def prepare(box: Sandbox, paths: dict) -> Scenario:
        return Scenario([], REFUSED, names=[poison_json_lines(paths["pool"], attack)])

    return prepare


def embed_nan_resources(box: Sandbox, paths: dict) -> Scenario:
    """Ray resources Ray refuses only after the pool is loaded: refused by the option's type, nothing sent."""
    model = f"embedder-{zlib.crc32(box.row.id.encode())}"
    argv = [*embed_argv(paths["data"], box.shared.embedder, model), "--engine", "ray", "--num-gpus", "nan"]
    return Scenario(argv, REFUSED, names=[Path("--num-gpus")], check=no_requests(box.shared.embedder, model))


def embed_cache_in_data(box: Sandbox, paths: dict) -> Scenario:
    """The data folder holds the cache folder ($ECOM_TASKS_CACHE): refused before any embedding, nothing written."""
    for entry in paths["data"].iterdir():
        shutil.move(entry, box.root / entry.name)
    model = f"embedder-{zlib.crc32(box.row.id.encode())}"
    argv = embed_argv(box.root, box.shared.embedder, model)
    return Scenario(argv, REFUSED, names=[box.cache], check=no_requests(box.shared.embedder, model), writable=[])


def build_cache_in_seeds(box: Sandbox, paths: dict) -> Scenario:
    """$ECOM_TASKS_CACHE a link into the seed folder: the seed index's cache is refused before the first stage."""
    box.cache.symlink_to(paths["folder"] / "cache", target_is_directory=True)
    argv = build_argv("rmir", paths["out"], seeds=paths["folder"])

    def check(_: subprocess.CompletedProcess) -> None:
        assert not (paths["out"] / "logs").exists(), "a stage ran"

    return Scenario(argv, REFUSED, names=[box.cache], check=check, writable=[box.out])


def build_nan_option(benchmark: str, option: str) -> Callable[[Sandbox, dict], Scenario]:
    """A NaN a later stage, or the assembly after every model call, refused: refused by the option's type."""

    def prepare(box: Sandbox, paths: dict) -> Scenario:
        argv = [*build_argv(benchmark, paths["out"], **{paths["option"]: paths["input"]}), option, "nan"]
        return Scenario(argv, REFUSED, names=[Path(option)], writable=[])

    return prepare


# --- rows: build <benchmark> --------------------------------------------------------------------------

#: benchmark -> (input option, bundled fixture folder, input file in it, whether it has images/).
BUILD_INPUTS = {
    "monbench": ("pairs", "monbench_build", "pairs.jsonl", False),
    "rair": ("candidates", "rair_build", "candidates.jsonl", True),
    "rmir": ("seeds", "rmir", "seeds.jsonl", True),
}


def build_row(benchmark: str, attack: str, prepare: Callable[[Sandbox, dict], Scenario], slow: bool = False) -> Row:
    option, fixture, name, _ = BUILD_INPUTS[benchmark]

    def setup(box: Sandbox) -> Scenario:
        folder = box.copy(fixtures_dir(fixture), fixture)
        paths = {"folder": folder, "input": folder / name, "out": box.out / "build", "option": option}
        scenario = prepare(box, paths)
        if not scenario.argv:
            scenario.argv = build_argv(benchmark, paths["out"], **{option: paths["input"]})
        if scenario.writable is None:
            scenario.writable = [box.out, box.cache, box.logs]
        scenario.timeout = min(scenario.timeout, FIFO_TIMEOUT) if attack.startswith("fifo") else BUILD_TIMEOUT
        return scenario

    return Row(f"build {benchmark}", attack, setup, slow)


def finished_build(box: Sandbox, paths: dict, benchmark: str) -> tuple[Path, list[str]]:
    """A copy of the shared finished build at this row's ``--out``, and the command that resumes it
    (the bundled input, as the shared build was made with)."""
    shutil.copytree(box.shared.build(benchmark), paths["out"], symlinks=True)
    return paths["out"], build_argv(benchmark, paths["out"])


def resumed_link_at(benchmark: str, name: str, target: str = "file") -> Callable[[Sandbox, dict], Scenario]:
    def prepare(box: Sandbox, paths: dict) -> Scenario:
        out, argv = finished_build(box, paths, benchmark)
        link = plant_symlink(out / name, box.target if target == "file" else box.dangling)
        return Scenario(argv, OK, replaced=[link])

    return prepare


def first_image(box: Sandbox, benchmark: str) -> str:
    return "data/images/" + sorted(p.name for p in (box.shared.build(benchmark) / "data" / "images").iterdir())[0]


def resumed_dangling_image(benchmark: str) -> Callable[[Sandbox, dict], Scenario]:
    def prepare(box: Sandbox, paths: dict) -> Scenario:
        return resumed_link_at(benchmark, first_image(box, benchmark), "dangling")(box, paths)

    return prepare


def resumed_linked_subfolder(benchmark: str, name: str) -> Callable[[Sandbox, dict], Scenario]:
    """A finished build whose ``name`` sub-folder is a link to a victim folder holding the same files
    (``data -> elsewhere`` once made a re-run delete the linked ``images/``)."""

    def prepare(box: Sandbox, paths: dict) -> Scenario:
        out, argv = finished_build(box, paths, benchmark)
        return Scenario(argv, REFUSED, names=[box.link_out(out / Path(name).parent, Path(name).name)])

    return prepare


def resumed_json_log(benchmark: str, attack: str) -> Callable[[Sandbox, dict], Scenario]:
    """A hostile ``.json`` log among a finished build's first stage's logs: Inspect's eval_set reads every
    log's header there with a parser that killed the build (SIGSEGV on a 5,000-digit integer)."""

    def prepare(box: Sandbox, paths: dict) -> Scenario:
        out, argv = finished_build(box, paths, benchmark)
        [stage] = out.glob("logs/1_*")
        return Scenario(argv, REFUSED, names=[poison_json_document(stage / INSPECT_JSON_LOG, attack)])

    return prepare


def build_out_is_link(box: Sandbox, paths: dict) -> Scenario:
    return Scenario([], REFUSED, names=[plant_symlink(paths["out"], box.victim_folder("builds"))], writable=[])


def build_out_is(which: str) -> Callable[[Sandbox, dict], Scenario]:
    """``--out`` equal to the input file, the input's folder (given as the input), or inside it."""

    def prepare(box: Sandbox, paths: dict) -> Scenario:
        given = paths["folder"] if which in ("folder", "inside") else paths["input"]
        out = paths["folder"] / "build" if which == "inside" else given
        argv = build_argv(box.row.command.split()[1], out, **{paths["option"]: given})
        return Scenario(argv, REFUSED, names=[out, given], writable=[])

    return prepare


def build_fifo(option: str | None = None) -> Callable[[Sandbox, dict], Scenario]:
    def prepare(box: Sandbox, paths: dict) -> Scenario:
        if option is None:
            return Scenario([], REFUSED, names=[make_fifo(paths["input"])])
        fifo = make_fifo(box.inputs / f"{option}.json")
        argv = build_argv(box.row.command.split()[1], paths["out"], **{paths["option"]: paths["input"], option: fifo})
        return Scenario(argv, REFUSED, names=[fifo])

    return prepare


def build_folder_rules(box: Sandbox, paths: dict) -> Scenario:
    rules = box.inputs / "rules.json"
    rules.mkdir()
    argv = build_argv("rair", paths["out"], candidates=paths["input"], rules=rules)
    return Scenario(argv, REFUSED, names=[rules])


def build_linked_images(box: Sandbox, paths: dict) -> Scenario:
    return Scenario([], REFUSED, names=[box.link_out(paths["folder"], "images"), paths["input"]])


def build_unwritable(box: Sandbox, paths: dict) -> Scenario:
    return Scenario([], REFUSED, names=[make_unwritable(paths["out"])], writable=[box.logs, box.cache])


def build_decoding(attack: str) -> Callable[[Sandbox, dict], Scenario]:
    def prepare(box: Sandbox, paths: dict) -> Scenario:
        return Scenario([], REFUSED, names=[poison_json_lines(paths["input"], attack)])

    return prepare


def build_copies_images(box: Sandbox, paths: dict) -> Scenario:
    """A build with the default --images: each built image is a file of its own, never the input's (a hard link
    made editing one in place edit the candidates' image)."""
    inputs = {(p.stat().st_dev, p.stat().st_ino) for p in (paths["folder"] / "images").iterdir()}

    def check(proc: subprocess.CompletedProcess) -> None:
        built = sorted((paths["out"] / "data" / "images").iterdir())
        assert built and not [p for p in built if (p.stat().st_dev, p.stat().st_ino) in inputs or p.stat().st_nlink > 1]

    return Scenario([], OK, check=check)


def build_rows(benchmark: str) -> list[Row]:
    writes = {
        "monbench": ["data/monbench.jsonl", "work/votes.jsonl", "work/questions.jsonl"],
        "rair": ["data/rair.jsonl", "work/decisions.jsonl"],
        "rmir": ["data/queries.jsonl", "data/pool.jsonl", "work/generated.jsonl"],
    }[benchmark]
    images = BUILD_INPUTS[benchmark][3]
    linked = "data/images" if benchmark == "rair" else "data"
    rows = [
        *(build_row(benchmark, f"symlink_at:{name}", resumed_link_at(benchmark, name), slow=True) for name in writes),
        build_row(benchmark, f"output_subfolder_symlink:{linked}", resumed_linked_subfolder(benchmark, linked), True),
        build_row(benchmark, "output_is_symlink", build_out_is_link),
        build_row(benchmark, "output_is_input", build_out_is("file")),
        build_row(benchmark, "fifo_input", build_fifo()),
        build_row(benchmark, "unwritable_output", build_unwritable),
        build_row(benchmark, f"folder_at:{writes[0]}", folder_at(lambda box, paths: paths["out"] / writes[0])),
        *(
            build_row(benchmark, f"inspect_json_log:{attack}", resumed_json_log(benchmark, attack))
            for attack in LOG_READER_ATTACKS[:1]  # one per build: every stage's folder goes through one check
        ),
        *(build_row(benchmark, attack, build_decoding(attack)) for attack in DECODING_ATTACKS),
    ]
    if images:
        rows += [
            build_row(benchmark, "dangling_symlink_at_image", resumed_dangling_image(benchmark), slow=True),
            build_row(benchmark, "input_subfolder_symlink", build_linked_images),
        ]
    if benchmark == "rair":
        rows.append(build_row(benchmark, "hard_link_to_input:images", build_copies_images, slow=True))
        rows.append(build_row(benchmark, "fifo_input:rules", build_fifo("rules")))
        rows.append(build_row(benchmark, "folder_input:rules", build_folder_rules))
    if benchmark != "rmir":  # a temperature the rule stage (rair) or the votes refused only at their stage
        option = {"rair": "--rule-temperature", "monbench": "--temperature"}[benchmark]
        rows.append(
            build_row(benchmark, f"nan_option:{option[2:].replace('-', '_')}", build_nan_option(benchmark, option))
        )
    if benchmark == "rmir":  # a seeds folder is an input folder: the build may not land in it
        rows += [
            build_row(benchmark, "output_is_input_folder", build_out_is("folder")),
            build_row(benchmark, "output_inside_input", build_out_is("inside")),
            build_row(benchmark, "output_inside_input:cache", build_cache_in_seeds),
        ]
    return rows


# --- rows: demo ---------------------------------------------------------------------------------------


def demo_row(attack: str, prepare: Callable[[Sandbox], tuple[Path, list[Path]]]) -> Row:
    def setup(box: Sandbox) -> Scenario:
        log_dir, names = prepare(box)
        argv = ["ecom-tasks", "demo", "--log-dir", str(log_dir)]
        return Scenario(argv, REFUSED, names=names, writable=[box.out, box.cache, box.logs], timeout=DEMO_TIMEOUT)

    return Row("demo", attack, setup, slow=True)


def demo_log_dir_is_link(box: Sandbox) -> tuple[Path, list[Path]]:
    link = plant_symlink(box.out, box.victim_folder("logs"))
    return link, [link]


def demo_unwritable(box: Sandbox) -> tuple[Path, list[Path]]:
    return make_unwritable(box.out), [box.out]


def demo_colleague_report(box: Sandbox) -> Scenario:
    """A colleague's report at <log-dir>/report: refused before any run, kept (the demo's own is reused)."""
    theirs = box.out / "report" / "report.md"
    theirs.parent.mkdir(parents=True)
    theirs.write_text("# their findings\n", encoding="utf-8")
    argv = ["ecom-tasks", "demo", "--log-dir", str(box.out)]
    writable = [box.out / "lm-eval", box.cache, box.logs]
    return Scenario(argv, REFUSED, names=[theirs.parent], writable=writable, timeout=DEMO_TIMEOUT)


def demo_linked_subfolders(box: Sandbox) -> tuple[Path, list[Path]]:
    report = plant_symlink(box.out / "report", box.victim_folder("report"))
    lm_eval = plant_symlink(box.out / "lm-eval", box.victim_folder("lm-eval"))
    return box.out, [report, lm_eval]


# --- the matrix ---------------------------------------------------------------------------------------

ROWS: list[Row] = [
    Row("list", "hostile_cwd", hostile_cwd("list")),
    Row("lm-eval-path", "hostile_cwd", hostile_cwd("lm-eval-path", "--all")),
    *(validate_row(b, attack) for b in DATA_LAYOUT for attack in data_attacks(b)),
    *(loader_row("inspect", b, attack) for b in INSPECT_TASKS for attack in data_attacks(b)),
    *(loader_row("lm-eval", b, attack) for b in LM_EVAL_TASKS for attack in data_attacks(b)),
    *(report_row(f"symlink_at:{name}", output_link_at(name)) for name in ("report.md", "report.html", "csv/runs.csv")),
    report_row("dangling_symlink_at_image", report_dangling_plot),
    report_row("output_subfolder_symlink", report_linked_subfolder),
    report_row("output_is_symlink", report_out_is_link),
    report_row("output_is_input", report_out_is_input_file),
    report_row("output_is_input_folder", report_out_is_input_folder),
    report_row("output_inside_input:missing_folders", report_out_below_missing_folders),
    report_row("fifo_input", report_fifo_argument),
    report_row("fifo_input:in_folder", report_fifo_in_folder),
    report_row("input_subfolder_symlink", report_linked_input_folder),
    report_row("output_is_file", report_out_is_file),
    report_row("symlink_loop:output", report_out_is_loop),
    report_row("symlink_loop:report.md", loop_at(in_out("report.md"))),
    report_row("symlink_loop:in_folder", report_loop_in_folder),
    report_row("folder_at:csv/runs.csv", folder_at(in_out("csv/runs.csv"))),
    report_row("markup_in_file_name", report_markup_in_file_name),
    report_row("input_file_symlink", report_linked_log),
    report_row("unwritable_output", report_unwritable),
    Row("report", "colleague_folder_at_out", report_colleague_folder),
    *(report_row(attack, report_decoding(attack)) for attack in DECODING_ATTACKS),
    *(report_row(f"inspect_json_log:{attack}", report_json_log(attack)) for attack in LOG_READER_ATTACKS),
    report_row("huge_file:lm_eval_results", report_huge(f"lm/shop-model/results_{STAMP}.json")),
    report_row("huge_file:inspect_json_log", report_huge(INSPECT_JSON_LOG)),
    compare_row("symlink_at:json", compare_link_at_json),
    compare_row("output_is_input", compare_json_is_input),
    compare_row("output_is_symlink", compare_json_in_linked_folder),
    compare_row("fifo_input", compare_fifo_argument),
    compare_row("input_subfolder_symlink", compare_linked_input_folder),
    compare_row("unwritable_output", compare_unwritable),
    compare_row("folder_at:json", folder_at(in_out("comparison.json"))),
    compare_row("symlink_loop:json", loop_at(in_out("comparison.json"))),
    compare_row("input_file_symlink", compare_linked_log),
    *(compare_row(attack, compare_decoding(attack)) for attack in DECODING_ATTACKS),
    *(compare_row(f"inspect_json_log:{attack}", compare_json_log(attack)) for attack in LOG_READER_ATTACKS),
    compare_row("huge_file:inspect_json_log", compare_huge_json_log),
    compare_row("huge_file:lm_eval_samples", compare_huge_lm_eval_samples),
    *(
        compare_row(f"inspect_eval_samples:{attack}", compare_eval_samples(attack))
        for attack in ("deep_nesting", "huge_int")
    ),
    calibrate_row("symlink_at:out", output_link_at("calibrated.jsonl")),
    calibrate_row("symlink_at:tasks_out", calibrate_derived_table("symlink")),
    calibrate_row("colleague_file_at:tasks_out", calibrate_derived_table("colleague")),
    calibrate_row("dangling_symlink_at_image", calibrate_dangling_image),
    calibrate_row("colleague_file_at:image", calibrate_colleague_image),
    calibrate_row("output_subfolder_symlink", calibrate_linked_subfolder),
    calibrate_row("output_is_input", calibrate_out_is_data),
    calibrate_row("output_is_input:tasks_out", calibrate_tasks_out_is_data),
    calibrate_row("output_is_input:another_name", calibrate_out_is_data_by_another_name),
    calibrate_row("output_is_input:log", calibrate_out_is_log),
    calibrate_row("fifo_input:data", calibrate_fifo("data")),
    calibrate_row("fifo_input:log", calibrate_fifo("log")),
    calibrate_row("folder_input:log", calibrate_folder_log),
    calibrate_row("input_subfolder_symlink", calibrate_linked_images),
    calibrate_row("unwritable_output", calibrate_unwritable),
    calibrate_row("folder_at:out", folder_at(in_out("calibrated.jsonl"))),
    calibrate_row("symlink_loop:out", loop_at(lambda box, paths: paths["out"])),
    calibrate_row("folder_at:tasks_out", folder_at(in_out("calibrated.tasks.csv"))),
    *(calibrate_row(attack, calibrate_decoding(attack)) for attack in DECODING_ATTACKS),
    *(calibrate_row(f"inspect_json_log:{attack}", calibrate_json_log(attack)) for attack in LOG_READER_ATTACKS),
    judge_row("symlink_at:grades", judge_link_at("grades")),
    judge_row("symlink_at:results", judge_link_at("results")),
    judge_row("symlink_at:old_temporary_name", judge_link_at_old_temporary),
    judge_row("symlink_at:cache", judge_link_at_cache),
    judge_row("hard_link_to_input:cache", judge_cache_linked_to_samples),
    judge_row("output_subfolder_symlink", judge_linked_model_folder),
    judge_row("fifo_input:samples", judge_fifo("samples")),
    judge_row("fifo_input:cache", judge_fifo("cache_file")),
    judge_row("fifo_input:lm_eval_results", judge_fifo("lm_eval_results")),
    judge_row("unwritable_cache", judge_unwritable_cache),
    judge_row("unwritable_output", judge_unwritable_output),
    judge_row("folder_at:grades", folder_at(lambda box, paths: paths["grades"], graded=True)),
    judge_row("folder_at:results", folder_at(lambda box, paths: paths["results"], graded=True)),
    *(judge_row(attack, judge_decoding(attack)) for attack in DECODING_ATTACKS),
    judge_row("deep_nesting:lm_eval_results", judge_deep_lm_eval_results),
    *(judge_row(f"huge_file:{which}", judge_huge(which)) for which in ("samples", "lm_eval_results", "cache_file")),
    embed_row("symlink_at:embedder.json", embed_link_at_meta),
    embed_row("output_subfolder_symlink", embed_linked_cache_folder),
    embed_row("fifo_input:cache_shard", embed_fifo_shard),
    embed_row("fifo_input:data", embed_fifo_pool),
    embed_row("folder_input:data", embed_folder_pool),
    embed_row("folder_at:embedder.json", embed_folder_meta),
    embed_row("input_subfolder_symlink", embed_linked_images),
    embed_row("unwritable_cache", embed_unwritable_cache),
    embed_row("output_inside_input", embed_cache_in_data),
    embed_row("nan_option:num_gpus", embed_nan_resources),
    *(embed_row(attack, embed_decoding(attack)) for attack in DECODING_ATTACKS),
    *(row for benchmark in BUILD_INPUTS for row in build_rows(benchmark)),
    demo_row("output_is_symlink", demo_log_dir_is_link),
    demo_row("unwritable_output", demo_unwritable),
    demo_row("output_subfolder_symlink", demo_linked_subfolders),
    Row("demo", "colleague_folder_at:report", demo_colleague_report, slow=True),
]
ROW_IDS = {row.id: row for row in ROWS}
assert len(ROW_IDS) == len(ROWS), "two rows share an id"


# --- running rows -------------------------------------------------------------------------------------


@dataclass
class Outcome:
    scenario: Scenario
    box: Sandbox
    proc: subprocess.CompletedProcess | None  # None: the row hung
    changes: list[str]


def _skip_for(box: Sandbox, scenario: Scenario) -> Callable[[str], bool]:
    folders = [Path(p).absolute() for p in scenario.writable or [] if not isinstance(p, str)]
    patterns = [p for p in scenario.writable or [] if isinstance(p, str)]

    def skip(relative: str) -> bool:
        path = box.root / relative
        return any(path == f or f in path.parents for f in folders) or any(fnmatch(relative, p) for p in patterns)

    return skip


def _digest(box: Sandbox, skip: Callable[[str], bool]) -> dict[str, str]:
    return {path: what for path, what in tree_digest(box.root).items() if not skip(path)}


def _run_command(row: Row, scenario: Scenario, box: Sandbox) -> subprocess.CompletedProcess | None:
    if not row.in_subprocess:
        assert scenario.cwd is None, f"{row.id}: a working folder of its own needs a subprocess"
        try:
            return run_command_in_process(scenario.argv, box.env(), scenario.timeout)
        finally:
            release_fifo_readers(box.root)
    try:
        return run_cli(scenario.argv, env=box.env(), cwd=scenario.cwd, timeout=scenario.timeout)
    except subprocess.TimeoutExpired:
        return None


def _prepare(row: Row, shared: SharedInputs, root: Path) -> tuple[Sandbox, Scenario, Callable, dict]:
    box = Sandbox(root / re.sub(r"[^A-Za-z0-9_.-]+", "_", row.id), shared, row)
    scenario = row.setup(box)
    skip = _skip_for(box, scenario)
    return box, scenario, skip, _digest(box, skip)


def run_row(row: Row, shared: SharedInputs, root: Path) -> Outcome:
    box, scenario, skip, before = _prepare(row, shared, root)
    proc = _run_command(row, scenario, box)
    changes = digest_changes(before, _digest(box, skip))
    return Outcome(scenario, box, proc, changes)


def run_loader_rows(rows: list[Row], shared: SharedInputs, root: Path) -> dict[str, Outcome | BaseException]:
    """One subprocess builds every row's task of one framework, each under its own alarm."""
    prepared, results = {}, {}
    for row in rows:
        try:
            prepared[row.id] = _prepare(row, shared, root)
        except BaseException as exc:  # noqa: BLE001  (reported by the row's own test)
            results[row.id] = exc
    jobs = [{"id": rid, **scenario.loader} for rid, (_, scenario, _, _) in prepared.items()]
    jobs_file, results_file = root / f"jobs-{rows[0].command}.json", root / f"results-{rows[0].command}.jsonl"
    jobs_file.write_text(json.dumps(jobs), encoding="utf-8")
    results_file.write_text("", encoding="utf-8")
    budget = sum(job["timeout"] for job in jobs) + 60
    try:
        # Its own cache and log folders: the environment of this process is a row's while that row runs in it.
        env = {"ECOM_TASKS_CACHE": str(root / f"cache-{rows[0].command}"), "INSPECT_LOG_DIR": str(root / "logs")}
        argv = ["python", str(TESTS_DIR / "attack_helpers.py"), jobs_file, results_file]
        batch = run_cli(argv, env=env, timeout=budget)
    except subprocess.TimeoutExpired:
        batch = None
    done = {}
    for line in results_file.read_text(encoding="utf-8").splitlines():
        done[json.loads(line)["id"]] = json.loads(line)
    for rid, (box, scenario, skip, before) in prepared.items():
        result = done.get(rid)
        if result is None or result["status"] == "hang":
            proc = None
        else:
            code = {"ok": 0, "refused": 1}.get(result["status"], 1)
            proc = subprocess.CompletedProcess(["loader", rid], code, "", result["message"])
        if result is None and batch is not None:
            proc = subprocess.CompletedProcess(["loader", rid], batch.returncode, batch.stdout, batch.stderr)
        results[rid] = Outcome(scenario, box, proc, digest_changes(before, _digest(box, skip)))
    return results


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    inputs = SharedInputs(tmp_path_factory.mktemp("attack-shared"))
    yield inputs
    inputs.close()


@dataclass
class Rows:
    """Where the rows run: the subprocess rows and the loader batches as futures, started at once and run
    ``WORKERS`` at a time, while the tests wait for theirs in order; the other rows in their test (the main
    thread: their time limit is an alarm)."""

    shared: SharedInputs
    root: Path
    futures: dict[str, Future]


@pytest.fixture(scope="module")
def outcomes(request, shared, tmp_path_factory):
    root = tmp_path_factory.mktemp("attack-rows")
    selected = [
        item.callspec.params["row"]
        for item in request.session.items
        if item.module is sys.modules[__name__] and "row" in getattr(getattr(item, "callspec", None), "params", {})
    ]
    futures: dict[str, Future] = {}
    pool = ThreadPoolExecutor(max_workers=WORKERS)
    loaders: dict[str, list[Row]] = {}
    for row in selected:
        if row.command.endswith(" loader"):
            loaders.setdefault(row.command, []).append(row)
    for rows in loaders.values():
        batch = pool.submit(run_loader_rows, rows, shared, root)
        for row in rows:
            futures[row.id] = batch
    for row in selected:
        if row.id not in futures and row.in_subprocess:
            futures[row.id] = pool.submit(run_row, row, shared, root)
    yield Rows(shared, root, futures)
    pool.shutdown(wait=True, cancel_futures=True)
    restore_writable(root)


def _outcome(rows: Rows, row: Row) -> Outcome:
    if row.id not in rows.futures:
        return run_row(row, rows.shared, rows.root)
    result = rows.futures[row.id].result()
    if isinstance(result, dict):
        result = result[row.id]
    if isinstance(result, BaseException):
        raise result
    return result


def _named(paths: list[Path], *texts: str) -> bool:
    return any(names_file(text, path) for text in texts for path in paths)


def _short_message_line(paths: list[Path], text: str) -> str | None:
    for line in text.splitlines():
        if _named(paths, line):
            return line
    return None


@pytest.mark.parametrize(
    "row", [pytest.param(row, id=row.id, marks=[pytest.mark.slow] if row.slow else []) for row in ROWS]
)
def test_attack(row: Row, outcomes):
    outcome = _outcome(outcomes, row)
    scenario, proc = outcome.scenario, outcome.proc
    assert proc is not None, f"{row.id}: no exit within {scenario.timeout} s (a hang)"
    output = (
        f"exit code {proc.returncode}\n--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}"
    )
    assert not outcome.changes, f"{row.id}: changed outside the output folder:\n" + "\n".join(outcome.changes[:20])
    assert "Traceback" not in proc.stdout + proc.stderr, f"{row.id}: a traceback\n{output}"
    refused = proc.returncode != 0
    if scenario.expect == OK or (scenario.expect == SAFE and not refused):
        assert not refused, f"{row.id}: expected success\n{output}"
        for path in scenario.replaced:
            assert path.is_file() and not path.is_symlink(), f"{row.id}: {path} is still a link (not replaced)"
        if scenario.expect == SAFE and scenario.names and not scenario.replaced:
            reports = [p.read_text(encoding="utf-8", errors="replace") for p in scenario.named_in if p.is_file()]
            assert _named(scenario.names, proc.stdout, proc.stderr, *reports), (
                f"{row.id}: succeeded without naming {scenario.names[0]} (skipped silently?)\n{output}"
            )
    else:
        assert refused, f"{row.id}: expected a refusal (non-zero exit)\n{output}"
        line = _short_message_line(scenario.names, proc.stderr + "\n" + proc.stdout)
        assert line is not None, f"{row.id}: the message names none of {[str(p) for p in scenario.names]}\n{output}"
        assert len(line) <= 600, f"{row.id}: not a short message: {line[:1000]}"
        said = [text for text in proc.stderr.splitlines() if text.strip()]
        assert len(said) <= MESSAGE_LINES, f"{row.id}: {len(said)} lines on stderr, not a short message\n{output}"
    if scenario.check is not None:
        scenario.check(proc)


# --- every command has rows ---------------------------------------------------------------------------


def help_commands(text: str) -> list[str]:
    """The sub-commands an argparse help lists under its positional arguments (4-space indented)."""
    found, inside = [], False
    for line in text.splitlines():
        if line.startswith("positional arguments:"):
            inside = True
        elif inside and line and not line.startswith(" "):
            break
        elif inside and (match := re.match(r"^    ([a-z][\w-]*)\b", line)):
            found.append(match.group(1))
    return found


def test_every_command_has_rows():
    top = run_cli(["ecom-tasks", "--help"], timeout=TIMEOUT)
    builds = run_cli(["ecom-tasks", "build", "--help"], timeout=TIMEOUT)
    assert top.returncode == 0 and builds.returncode == 0
    benchmarks = help_commands(builds.stdout)
    commands = [c for c in help_commands(top.stdout) if c != "build"] + [f"build {b}" for b in benchmarks]
    assert "judge" in commands and "build rmir" in commands, f"help not parsed: {commands}"
    covered = {row.command for row in ROWS}
    missing = [c for c in [*commands, "inspect loader", "lm-eval loader"] if c not in covered]
    assert not missing, f"commands without a row in the attack matrix: {missing}"
    # Each command's script runs once at least: the console script, its exit code and printed message.
    scripted = {row.command for row in ROWS if row.in_subprocess}
    unscripted = [c for c in commands if c not in scripted]
    assert not unscripted, f"commands whose script no row runs: {unscripted}"
    # Every benchmark's data is attacked through validate and both frameworks' loaders.
    from ecom_tasks.plugins import datasets

    for benchmark in datasets():
        for command in ("validate", "inspect loader"):
            assert any(r.command == command and r.attack.startswith(f"{benchmark}-") for r in ROWS), (
                command,
                benchmark,
            )
    lm_eval_benchmarks = {p.parent.name for p in (fixtures_dir("rair").parents[1] / "lm_eval_tasks").glob("*/utils.py")}
    assert lm_eval_benchmarks == set(LM_EVAL_TASKS), (
        f"lm-eval task folders {lm_eval_benchmarks} vs rows {set(LM_EVAL_TASKS)}"
    )
