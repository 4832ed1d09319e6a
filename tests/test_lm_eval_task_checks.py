"""lm-eval's own task checks, run on every lm-eval task and task folder of ours.

lm-eval's CI checks each new or changed task with ``tests/test_tasks.py`` (class ``BaseTasks``)
and finds those tasks with ``tests/utils.py``'s YAML ``parser``. Neither file ships in the
wheel; these tests re-implement their checks (read at lm-evaluation-harness commit 4e7e0d47f,
the tree lm-eval 0.4.13 was released from; there is no 0.4.13 tag) and say which check each
mirrors. Where ours can say more (our tasks are all ``generate_until`` with a test split), they
do. Findings and what was done about them: ``ecom_tasks/lm_eval_tasks/README.md``.

The folder README each lm-eval task folder carries (lm-eval's ``templates/new_yaml_task/README.md``)
is checked here too, and that regenerating the YAML leaves it in place.
"""

from __future__ import annotations

import importlib
import re
import shutil
from functools import cache
from itertools import islice
from pathlib import Path

import pytest
import yaml

from ecom_tasks.lm_eval_tasks import TASKS_DIR, task_manager

#: lm-eval's ``limit`` fixture in tests/test_tasks.py: every check reads the first 10 documents.
LIMIT = 10


@cache
def _manager():
    return task_manager(include_defaults=False)


def _our_tasks() -> list[str]:
    return sorted(_manager().all_subtasks)


@cache
def _task(name: str):
    """One task object per name, made as tests/test_tasks.py's ``task_class`` makes it (TaskManager.load)."""
    return _manager().load([name])["tasks"][name]


def _first_docs(task) -> list[dict]:
    # tests/test_tasks.py: test docs when the task has them, else validation docs.
    return list(islice(task.test_docs() if task.has_test_docs() else task.validation_docs(), LIMIT))


FOLDERS = sorted(p for p in TASKS_DIR.iterdir() if p.is_dir() and any(p.glob("*.yaml")))


def test_every_benchmark_folder_is_checked():
    assert [p.name for p in FOLDERS] == ["ecomeval", "monbench", "rair"]
    assert {name.split("_")[0] for name in _our_tasks()} == {"ecomeval", "monbench", "rair"}


# --- tests/test_tasks.py BaseTasks -----------------------------------------------------------


class TestLmEvalTaskChecks:
    @pytest.mark.parametrize("name", _our_tasks())
    def test_download(self, name):
        # BaseTasks.test_download: download with the task's own dataset_kwargs gives a dataset.
        task = _task(name)
        task.download(task.config.dataset_kwargs)
        assert task.dataset is not None
        assert list(task.dataset) == ["test"]

    @pytest.mark.parametrize("name", _our_tasks())
    def test_splits(self, name):
        # test_has_{training,validation,test}_docs are booleans; test_check_*_docs: a split that
        # has docs is named in the config. Ours: the test split only (no few-shot split in lm-eval).
        task = _task(name)
        assert (task.has_training_docs(), task.has_validation_docs(), task.has_test_docs()) == (False, False, True)
        assert task.config.test_split == "test"
        assert task.config.training_split is None and task.config.validation_split is None

    @pytest.mark.parametrize("name", _our_tasks())
    def test_should_decontaminate(self, name):
        # BaseTasks.test_should_decontaminate: a bool; if True a decontamination query is configured.
        # Ours: False (no decontamination query; our documents are prompts, not n-gram-able passages).
        task = _task(name)
        assert task.should_decontaminate() is False
        assert task.config.doc_to_decontamination_query is None

    @pytest.mark.parametrize("name", _our_tasks())
    def test_doc_to_text(self, name):
        # BaseTasks.test_doc_to_text: strings for the first 10 docs, and no trailing whitespace when
        # the target delimiter is whitespace. Ours: non-empty, and the delimiter is "" (a chat reply).
        task = _task(name)
        docs = _first_docs(task)
        assert not task.multiple_input
        texts = [task.doc_to_text(doc) for doc in docs]
        assert all(isinstance(text, str) and text.strip() for text in texts)
        assert task.config.target_delimiter == ""
        if task.config.target_delimiter.isspace():
            assert not any(text[-1].isspace() for text in texts)

    @pytest.mark.parametrize("name", _our_tasks())
    def test_output_type_and_targets(self, name):
        # BaseTasks.test_create_choices and test_doc_to_target check multiple_choice tasks only
        # (choices a list of strings, targets int/str). Every task of ours is generate_until, so
        # neither applies; we check what does: each target is a non-empty string.
        task = _task(name)
        assert task.config.output_type == "generate_until"
        assert task.OUTPUT_TYPE == "generate_until"
        targets = [task.doc_to_target(doc) for doc in _first_docs(task)]
        assert all(isinstance(t, str) and t.strip() for t in targets)

    @pytest.mark.parametrize("name", _our_tasks())
    def test_build_all_requests(self, name):
        # BaseTasks.test_build_all_requests: rank=1, limit=10, world_size=1 builds instances
        # (lm-eval slices docs[1:10]: nine). Ours: exactly those nine, in document order.
        task = _task(name)
        task.build_all_requests(rank=1, limit=LIMIT, world_size=1)
        assert task.instances is not None
        docs = _first_docs(task)
        assert [inst.doc for inst in task.instances] == docs[1:LIMIT]

    @pytest.mark.parametrize("name", _our_tasks())
    def test_construct_requests(self, name):
        # BaseTasks.test_construct_requests: one request per document for the first 10 documents,
        # so a task needs at least 10. Ours: each is a generate_until request whose context is the
        # document's text (lm-eval 0.5's base Task returned None here and skipped every document).
        task = _task(name)
        docs = _first_docs(task)
        assert len(docs) == LIMIT, f"{name} has {len(docs)} documents, lm-eval's check wants {LIMIT}"
        requests = [task.construct_requests(doc=doc, ctx=task.doc_to_text(doc)) for doc in docs]
        assert len(requests) == LIMIT
        for doc, request in zip(docs, requests):
            assert request is not None and request.request_type == "generate_until"
            assert request.arguments[0] == task.doc_to_text(doc)
            assert request.arguments[1]["do_sample"] is False

    @pytest.mark.parametrize("name", _our_tasks())
    def test_task_name(self, name):
        # TestNewTasksElseDefault names each case by task.config.task.
        assert _task(name).config.task == name


# --- tests/utils.py parser and lm-eval's task index ---------------------------------------------


class _TagsAsText(yaml.SafeLoader):
    """Reads ``!function x`` as the text ``x``, as lm-eval's loader does with resolve_func=False."""


_TagsAsText.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def _yaml_files() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in folder.iterdir() if p.suffix == ".yaml")


def test_every_yaml_file_is_a_task_or_group_for_lm_evals_parser():
    # tests/utils.py parser: every changed *.yaml is read and config["task"] looked up (a KeyError
    # for a file without it, as our old `_*_template.yaml` files were); a str is a task, a list a
    # group named by config["group"]. Templates are `_default_template_yaml`, which it never reads.
    names = []
    for path in _yaml_files():
        config = yaml.load(path.read_text(encoding="utf-8"), Loader=_TagsAsText)  # noqa: S506 (a SafeLoader)
        assert "task" in config, f"{path.name}: no 'task' key"
        if isinstance(config["task"], str):
            names.append(config["task"])
        else:
            assert isinstance(config["task"], list) and isinstance(config.get("group"), str), path.name
            names.append(config["group"])
    assert len(names) == len(set(names))
    # lm-eval's index (TaskManager) finds every one of them, and nothing else of ours.
    assert sorted(names) == sorted(_manager().all_tasks)
    assert all((folder / "_default_template_yaml").is_file() for folder in FOLDERS)
    assert not [p for folder in FOLDERS for p in folder.glob("*template*.yaml")]


# --- the folder README (lm-eval's templates/new_yaml_task/README.md) -----------------------------

README_SECTIONS = (
    "## Paper",
    "Title: `",
    "Abstract:",
    "Homepage:",
    "### Citation",
    "### Groups, Tags, and Tasks",
    "#### Groups",
    "#### Tags",
    "#### Tasks",
    "### Checklist",
    "### Changelog",
)


def _names_in_folder(folder: Path) -> set[str]:
    names = set()
    for path in folder.glob("*.yaml"):
        config = yaml.load(path.read_text(encoding="utf-8"), Loader=_TagsAsText)  # noqa: S506
        names.add(config["task"] if isinstance(config["task"], str) else config["group"])
    return names


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_folder_readme_follows_lm_evals_template(folder):
    text = (folder / "README.md").read_text(encoding="utf-8")
    positions = [text.find(section) for section in README_SECTIONS]
    assert -1 not in positions, [s for s, p in zip(README_SECTIONS, positions) if p == -1]
    assert positions == sorted(positions), "sections out of the template's order"
    # The citation is one BibTeX entry with a title and authors.
    bibtex = re.search(r"```bibtex\n(@\w+\{[^,\n]+,\n.*?\n\})\n```", text, re.S)
    assert bibtex, "no ```bibtex block"
    assert re.search(r"^\s*title\s*=", bibtex.group(1), re.M) and re.search(r"^\s*author\s*=", bibtex.group(1), re.M)
    assert bibtex.group(1).count("{") == bibtex.group(1).count("}")
    # Every task and group of the folder is listed, and nothing that is not one of ours.
    listing = text[text.index("### Groups, Tags, and Tasks") : text.index("### Checklist")]
    listed = set(re.findall(r"`([a-z0-9_]+)`", listing))
    names = _names_in_folder(folder)
    assert names <= listed, sorted(names - listed)
    known = set(_manager().all_tasks) | {"rair_visual"}  # Inspect-only names the README mentions as such
    assert {n for n in listed if n.startswith(folder.name)} <= known
    # The changelog reaches the version the YAML carries.
    version = yaml.load((folder / "_default_template_yaml").read_text(encoding="utf-8"), Loader=_TagsAsText)[
        "metadata"
    ]["version"]
    changelog = text[text.index("### Changelog") :]
    assert f"version {version}" in changelog


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_regenerating_keeps_the_readme(folder, tmp_path):
    generator = importlib.import_module(f"ecom_tasks.lm_eval_tasks.{folder.name}._generate_configs")
    copy = tmp_path / folder.name
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "stale_task.yaml").write_text(
        "task: stale_task\n", encoding="utf-8"
    )  # the generator removes its own leftovers
    assert generator.main(copy, generator.render, []) == 0
    assert not (copy / "stale_task.yaml").exists()
    assert (copy / "README.md").read_bytes() == (folder / "README.md").read_bytes()
    assert generator.main(copy, generator.render, ["--check"]) == 0


# --- private lm-eval imports ----------------------------------------------------------------------

PACKAGE = TASKS_DIR.parent


def test_only_one_module_imports_a_private_lm_eval_module():
    private = re.compile(r"^\s*(?:from|import)\s+lm_eval(?:\.\w+)*\._\w+", re.M)
    importers = sorted(
        str(p.relative_to(PACKAGE.parent))
        for p in PACKAGE.rglob("*.py")
        if private.search(p.read_text(encoding="utf-8"))
    )
    assert importers == ["ecom_tasks/lm_eval_tasks/_lm_eval_private.py"]
    # And no private attribute of lm-eval's task objects (Task.aggregation() is the public one).
    assert not [p for p in PACKAGE.rglob("*.py") if "_aggregation_list" in p.read_text(encoding="utf-8")]


def test_the_public_entry_point_takes_the_steps_we_split():
    """``lm_eval.__main__.cli_evaluate`` is setup_logging, HarnessCLI(), parse_args(), execute(args):
    if lm-eval adds a step, ``parsed_command_line`` (and ecom-lm-eval) must take it too."""
    import ast
    import inspect

    import lm_eval.__main__

    body = ast.parse(inspect.getsource(lm_eval.__main__.cli_evaluate)).body[0].body
    steps = [ast.unparse(node.value) for node in body if not isinstance(getattr(node, "value", None), ast.Constant)]
    assert steps == ["setup_logging()", "HarnessCLI()", "parser.parse_args()", "parser.execute(args)"]
