"""Every command in every README and docs page runs as written, or at least names things that exist.

Each ``bash`` code block of README.md, the pages under docs/ and the benchmarks' READMEs is split
into commands (``\\`` continuations joined, comments and ``VAR=value``
prefixes dropped). For every command:

- static checks (fast, always): ``inspect eval ecom_tasks/<task>`` names a
  registered task and every ``-T name=`` is a parameter of it; ``inspect
  score --scorer ecom_tasks/<name>`` names a registered scorer; ``ecom-lm-eval``
  / ``lm_eval --tasks`` name tasks or groups lm-eval finds; every ``--option``
  is one the command's ``--help`` lists; ``--metadata`` is JSON; ``ecom-tasks``
  sub-commands parse with their options.
- a run (slow): commands that need nothing but this checkout — the offline
  models (``ecom/baseline``, ``none``, ``ecom-baseline``) and no placeholder
  (``...``, ``path/to/``, a file that does not exist) — are run as written in
  an empty folder, offline and under the network guard, and must exit 0.

README.md is a front page (at most 200 lines, opening with the two commands
``.ci/run`` relies on, linking every docs page), and every relative link of
these files reaches an existing file and heading.
"""

from __future__ import annotations

import functools
import inspect as pyinspect
import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import REPO_DIR, check_ok, run_cli

README = REPO_DIR / "README.md"
DOCS_PAGES = sorted((REPO_DIR / "docs").glob("*.md"))
DOCS = [README, *DOCS_PAGES, *sorted((REPO_DIR / "ecom_tasks").glob("*/README.md"))]
OFFLINE_MODELS = {"ecom/baseline", "none", "ecom-baseline"}
# Commands a README shows for the reader's own machine, never run here.
NOT_RUN = {
    "python3",
    "pip",
    "pytest",
    ".venv/bin/pip",
    ".venv/bin/pytest",
    ".venv/bin/ecom-tasks",
    ".venv/bin/ruff",
    ".venv/bin/inspect-evals-lint",
}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class Command:
    doc: str
    line: int
    argv: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}: {' '.join(self.argv)}"


_INLINE_COMMAND = re.compile(r"(?<!`)`((?:inspect (?:eval|score)|ecom-lm-eval|lm_eval|ecom-tasks) [^`\n]+)`(?!`)")


def _commands(path: Path) -> list[Command]:
    text = path.read_text(encoding="utf-8")
    out: list[Command] = []
    # commands quoted in the prose count as much as those in code blocks
    outside_blocks = re.sub(r"^```.*?^```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S | re.M)
    for match in _INLINE_COMMAND.finditer(outside_blocks):
        # `<that folder>`-style placeholders stand for one word
        words = [w for w in shlex.split(re.sub(r"<[^<>]+>", "PLACEHOLDER", match.group(1))) if w not in ("...", "…")]
        out.append(Command(str(path.relative_to(REPO_DIR)), text[: match.start()].count("\n") + 1, tuple(words)))
    for block in re.finditer(r"^```bash\n(.*?)^```", text, re.S | re.M):
        first_line = text[: block.start()].count("\n") + 2
        lines = block.group(1).split("\n")
        index = 0
        while index < len(lines):
            start = index
            joined = lines[index]
            while joined.rstrip().endswith("\\") and index + 1 < len(lines):
                index += 1
                joined = joined.rstrip()[:-1] + " " + lines[index]
            index += 1
            words = shlex.split(joined, comments=True)
            # a && b: each part is a command of its own
            part: list[str] = []
            for word in [*words, "&&"]:
                if word != "&&":
                    part.append(word)
                    continue
                while part and _ASSIGNMENT.match(part[0]):
                    part.pop(0)
                if part:
                    out.append(Command(str(path.relative_to(REPO_DIR)), first_line + start, tuple(part)))
                part = []
    return out


ALL_COMMANDS = [command for doc in DOCS for command in _commands(doc)]


def _options(argv: tuple[str, ...]) -> dict[str, list[str]]:
    """``-T a=1 --model x --flag`` -> {"-T": ["a=1"], "--model": ["x"], "--flag": [""]}."""
    out: dict[str, list[str]] = {}
    index = 0
    while index < len(argv):
        word = argv[index]
        if word.startswith("-"):
            name, eq, value = word.partition("=")
            if not eq and index + 1 < len(argv) and not argv[index + 1].startswith("-"):
                value = argv[index + 1]
                index += 1
            out.setdefault(name, []).append(value)
        index += 1
    return out


def _positional(argv: tuple[str, ...], flags_without_value: set[str] = frozenset()) -> list[str]:
    out, index = [], 0
    while index < len(argv):
        word = argv[index]
        if word.startswith("-"):
            if (
                "=" not in word
                and word not in flags_without_value
                and index + 1 < len(argv)
                and not argv[index + 1].startswith("-")
            ):
                index += 1
        else:
            out.append(word)
        index += 1
    return out


@functools.cache
def _help(*args: str) -> str:
    return check_ok(run_cli([*args, "--help"])).stdout


@functools.cache
def _lm_eval_names(include_defaults: bool = False) -> frozenset[str]:
    """The tasks and groups of our folders (with lm-eval's own ~14,000, read in about 12 s, if asked)."""
    from ecom_tasks.lm_eval_tasks import task_manager

    return frozenset(task_manager(include_defaults=include_defaults).all_tasks)


def _registry_object(name: str):
    import ecom_tasks._registry as registry

    return getattr(registry, name, None)


def _check_options_known(command: Command, help_text: str) -> None:
    for option in _options(command.argv):
        if option.startswith("--"):
            assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", help_text), (
                f"{command}: unknown option {option}"
            )


def _check_inspect_eval(command: Command) -> None:
    argv = command.argv
    _check_options_known(command, _help("inspect", argv[1]))  # eval or eval-set
    targets = [w for w in _positional(argv[2:]) if not _ASSIGNMENT.match(w)]
    assert targets, f"{command}: no task"
    for target in targets:
        if ".py@" in target:  # a file-based task: <folder>/rair.py@rair_general
            file_name, _, task_name = target.rpartition("/")[2].partition("@")
            module = REPO_DIR / "ecom_tasks" / "inspect_evals" / file_name
            assert module.exists(), f"{command}: no adapter module {file_name}"
            assert re.search(rf"^@task\b.*\n(?:@.*\n)*def {re.escape(task_name)}\(", module.read_text(), re.M), (
                f"{command}: {file_name} declares no module-level @task {task_name}"
            )
            continue
        assert target.startswith("ecom_tasks/"), f"{command}: {target} lacks the ecom_tasks/ prefix"
        task = _registry_object(target.removeprefix("ecom_tasks/"))
        assert task is not None and callable(task), f"{command}: no task {target}"
        params = pyinspect.signature(task).parameters
        for setting in _options(argv).get("-T", []):
            name = setting.partition("=")[0]
            assert name in params, f"{command}: {target} has no parameter {name!r} (has {sorted(params)})"


def _check_inspect_score(command: Command) -> None:
    _check_options_known(command, _help("inspect", "score"))
    scorers = _options(command.argv).get("--scorer", [])
    assert scorers, f"{command}: `inspect score` on our logs needs --scorer ecom_tasks/<scorer>"
    for scorer in scorers:
        assert scorer.startswith("ecom_tasks/") and callable(_registry_object(scorer.removeprefix("ecom_tasks/"))), (
            f"{command}: no scorer {scorer}"
        )


def _check_lm_eval(command: Command) -> None:
    _check_options_known(command, _help(command.argv[0], "run"))  # the options of lm-eval's default command
    options = _options(command.argv)
    for names in options.get("--tasks", []):
        for name in names.split(","):
            assert name in _lm_eval_names() or name in _lm_eval_names(include_defaults=True), (
                f"{command}: lm-eval finds no task or group {name!r}"
            )
    for metadata in options.get("--metadata", []):
        assert isinstance(json.loads(metadata), dict), f"{command}: --metadata is not a JSON object"


def _check_ecom_tasks(command: Command) -> None:
    from ecom_tasks.cli import build_parser

    argv = [w for w in command.argv[1:] if w != "..."]
    subcommands = next(a for a in build_parser()._subparsers._group_actions).choices  # noqa: SLF001
    if len(argv) == 1:  # a mention in the prose (`ecom-tasks report`): the sub-command must exist
        assert argv[0] in subcommands, f"{command}: no sub-command {argv[0]!r}"
        return
    try:
        build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse's way to say no
        raise AssertionError(f"{command}: does not parse (exit {exc.code})") from None


def _tool(command: Command) -> str:
    return Path(command.argv[0]).name


@pytest.mark.parametrize("command", ALL_COMMANDS, ids=str)
def test_readme_command_names_what_exists(command: Command) -> None:
    tool, argv = _tool(command), command.argv
    if tool == "inspect" and argv[1:2] in (("eval",), ("eval-set",)):
        _check_inspect_eval(command)
    elif tool == "inspect" and argv[1:2] == ("score",):
        _check_inspect_score(command)
    elif tool in ("ecom-lm-eval", "lm_eval"):
        _check_lm_eval(command)
    elif tool == "ecom-tasks":
        _check_ecom_tasks(command)
    else:
        assert command.argv[0] in NOT_RUN, f"{command}: a command this test does not know; teach it"


def _runnable(command: Command) -> bool:
    argv, options = command.argv, _options(command.argv)
    if (
        command.argv[0] in NOT_RUN
        or "..." in argv
        or any(s in w for w in argv for s in ("path/to/", "$(", "http://", "https://"))
    ):
        return False
    models = options.get("--model", [])
    roles = [v.partition("=")[2] for v in options.get("--model-role", [])]
    if not models or not set(models + roles) <= OFFLINE_MODELS:
        return False
    for setting in options.get("-T", []):
        value = setting.partition("=")[2]
        if value.endswith((".jsonl", ".csv", ".parquet", ".md")) and not (REPO_DIR / value).exists():
            return False
    return _tool(command) in ("inspect", "ecom-lm-eval")


RUNNABLE = [command for command in ALL_COMMANDS if _runnable(command)]


def test_the_readmes_have_runnable_commands() -> None:
    """A guard against a parser change that would quietly run nothing below."""
    assert len(RUNNABLE) >= 8, [str(c) for c in RUNNABLE]


def _python_blocks() -> list[tuple[str, str]]:
    out = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for block in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
            line = text[: block.start()].count("\n") + 2
            out.append((f"{doc.relative_to(REPO_DIR)}:{line}", block.group(1)))
    return out


PYTHON_BLOCKS = _python_blocks()


@pytest.mark.parametrize("where,code", PYTHON_BLOCKS, ids=[where for where, _ in PYTHON_BLOCKS])
def test_readme_python_compiles(where: str, code: str) -> None:
    compile(code, where, "exec")


@pytest.mark.slow
@pytest.mark.parametrize(
    "where,code",
    # a block that names the reader's own things (my_samples, my_package) is a sketch, not a program
    [(w, c) for w, c in PYTHON_BLOCKS if "my_" not in c],
    ids=[w for w, c in PYTHON_BLOCKS if "my_" not in c],
)
def test_readme_python_runs(where: str, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(code, where, "exec"), {"__name__": "__readme__"})


def run_as_written(command: Command, folder: Path) -> None:
    """``command`` run in ``folder``, offline and under the network guard; it must exit 0."""
    argv = list(command.argv)
    if _tool(command) == "inspect":
        argv += ["--log-dir", str(folder / "logs"), "--display", "none"]
    check_ok(run_cli([_tool(command), *argv[1:]], cwd=folder))


#: The runs of ``inspect eval`` commands are tests/test_readme_inspect_runs.py's: the runs are most of this file's
#: time, and a file runs on one worker of ``pytest -n``.
INSPECT_RUNS = [command for command in RUNNABLE if _tool(command) == "inspect"]


@pytest.mark.slow
@pytest.mark.parametrize("command", [command for command in RUNNABLE if command not in INSPECT_RUNS], ids=str)
def test_readme_command_runs_offline(command: Command, tmp_path: Path) -> None:
    run_as_written(command, tmp_path)


# --- task names quoted in the prose ---------------------------------------------------

_NAME = re.compile(r"`((?:ecom_tasks/)?(?:monbench|rair|ecomeval|rmir)(?:_[a-z0-9_<>]+)?)`")


@functools.cache
def _known_names() -> frozenset[str]:
    import ecom_tasks._registry as registry

    inspect_names = {name for name in dir(registry) if not name.startswith("_")}
    return frozenset(inspect_names | _lm_eval_names())


def _quoted_names() -> list[tuple[str, str]]:
    out = []
    for doc in DOCS:
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for match in _NAME.finditer(line):
                out.append((f"{doc.relative_to(REPO_DIR)}:{number}", match.group(1)))
    return out


QUOTED_NAMES = _quoted_names()


@pytest.mark.parametrize("where,name", QUOTED_NAMES, ids=[f"{w} {n}" for w, n in QUOTED_NAMES])
def test_task_names_in_the_prose_exist(where: str, name: str) -> None:
    """`rair_rules` in a README while the group is `rair_builtin_rules` sends a reader nowhere."""
    bare = name.removeprefix("ecom_tasks/")
    if bare in {"monbench", "rair", "ecomeval", "rmir"} and not name.startswith("ecom_tasks/"):
        return  # the benchmark's own name
    # `<name>_builtin_rules`, `monbench_<variant>_<task>`: some real name must fit the pattern
    pattern = re.compile(
        "^" + re.sub(r"<[^>]+>", "[a-z0-9_]+", re.escape(bare).replace(r"\<", "<").replace(r"\>", ">")) + "$"
    )
    assert any(pattern.match(known) for known in _known_names()), (
        f"{where}: `{name}` names no task, group or registered object"
    )


# --- the front page and the links ---------------------------------------------------------

FRESH_MACHINE_DEMO = 'python3 -m venv .venv && .venv/bin/pip install -e ".[plots]" && .venv/bin/ecom-tasks demo'
TEST_COMMAND = (
    'python3 -m venv .venv && .venv/bin/pip install -q -e ".[test]" && .venv/bin/pytest -q -n auto --dist loadfile'
)


def test_readme_is_a_front_page() -> None:
    """At most 200 lines, opening with the demo and the test command; the rest lives under docs/."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200, f"README.md has {len(text.splitlines())} lines; move sections to docs/"
    blocks = [block.strip() for block in re.findall(r"^```bash\n(.*?)^```", text, re.S | re.M)]
    assert blocks[:2] == [FRESH_MACHINE_DEMO, TEST_COMMAND]
    assert text.index("```bash") < text.index("\n## "), "the two commands come before any section"
    assert TEST_COMMAND in (REPO_DIR / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_readme_links_every_docs_page() -> None:
    linked = {(README.parent / target).resolve() for target, _ in _links(README)}
    assert DOCS_PAGES and not [page.name for page in DOCS_PAGES if page.resolve() not in linked]


def _outside_code(text: str) -> str:
    """The text with fenced blocks blanked (a ``# comment`` in a bash block is no heading) and inline code dropped."""
    text = re.sub(r"^```.*?^```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def _links(path: Path) -> list[tuple[str, str]]:
    """(file, anchor) of every relative markdown link; file is '' for a link within the page."""
    out = []
    for match in re.finditer(r"\]\(([^)\s]+)\)", _outside_code(path.read_text(encoding="utf-8"))):
        target = match.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        out.append((file, anchor))
    return out


def _github_anchors(path: Path) -> set[str]:
    """The ids GitHub gives a page's headings: lower case, punctuation dropped, spaces to hyphens, repeats -1, -2."""
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    seen: dict[str, int] = {}
    anchors = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


LINKS = [(doc, file, anchor) for doc in DOCS for file, anchor in _links(doc)]


@pytest.mark.parametrize(
    "doc,file,anchor",
    LINKS,
    ids=[f"{doc.relative_to(REPO_DIR)}->{file}#{anchor}" for doc, file, anchor in LINKS],
)
def test_relative_links_reach_a_file_and_heading(doc: Path, file: str, anchor: str) -> None:
    target = (doc.parent / file).resolve() if file else doc
    assert target.exists(), f"{doc.relative_to(REPO_DIR)}: {file} does not exist"
    if anchor and target.suffix == ".md":
        assert anchor in _github_anchors(target), (
            f"{doc.relative_to(REPO_DIR)}: {target.relative_to(REPO_DIR)} has no heading #{anchor}"
        )
