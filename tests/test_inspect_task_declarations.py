"""Every variant is an explicit module-level @task that Inspect's own tools see (issue 18).

The task functions are generated from each benchmark's ``variants.py`` by
``ecom_tasks/inspect_evals/_generate_tasks.py``. These tests check that the
checked-in code is what the generator writes, that each variant's function has
the variant's defaults and the ``-T`` parameters the presets always had, and,
through the real command lines, that ``inspect list tasks`` over the installed
folder finds every task ``ecom-tasks list`` lists and that ``file.py@task`` runs.
"""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import pytest
from helpers import check_ok, run_cli
from inspect_ai import eval as inspect_eval
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.util import registry_info

import ecom_tasks._registry as registry
import ecom_tasks.inspect_evals
from ecom_tasks.inspect_evals import _generate_tasks as generator
from ecom_tasks.inspect_evals import ecomeval, monbench, rair, rmir
from ecom_tasks.monbench.protocol import DESIGNS, parse_formats
from ecom_tasks.rair.schema import load_records as load_rair_records

MODULES = {"ecomeval": ecomeval, "monbench": monbench, "rair": rair, "rmir": rmir}
#: The -T parameters of each benchmark's presets before the tasks were generated (the old _preset
#: functions), in order: the generated functions must keep them.
PARAMETERS = {
    "monbench": ["data", "shots", "split", "category_weights", "metrics", "strict", "max_tokens"],
    "rair": ["rules", "image", "data", "language", "metrics", "max_tokens", "allow_outside_images", "allow_url_images"],
    "rmir": [
        "data",
        "category",
        "split",
        "retriever",
        "retriever_args",
        "pool_captions",
        "mode",
        "k",
        "metrics",
        "search",
        "cache",
        "max_tokens",
        "allow_outside_images",
        "allow_url_images",
    ],
    "ecomeval": [
        "data",
        "category",
        "task",
        "language",
        "difficulty",
        "multimodal",
        "metrics",
        "cache",
        "max_tokens",
        "grader_max_tokens",
        "judge_failure_threshold",
        "allow_outside_images",
        "allow_url_images",
        "graders",
        "panel",
    ],
}
ADAPTERS_DIR = Path(ecom_tasks.inspect_evals.__file__).parent


def test_checked_in_tasks_are_what_the_generator_writes(monkeypatch):
    files = generator.render()
    assert generator.stale_files(files) == []
    assert generator.main(["--check"]) == 0
    # The check is not vacuous: a new variant in a variants table makes its adapter (and the entry
    # point's import list, and eval.yaml) differ until the generator is run.
    family = next(f for f in generator.FAMILIES if f.benchmark == "rair")
    extra = dataclasses.replace(family.variants["rair_hard"], name="rair_hard_extra")
    grown = dataclasses.replace(family, variants={**family.variants, "rair_hard_extra": extra})
    monkeypatch.setattr(generator, "FAMILIES", tuple(grown if f is family else f for f in generator.FAMILIES))
    assert sorted(generator.stale_files(generator.render())) == [
        "ecom_tasks/_registry.py",
        "ecom_tasks/inspect_evals/eval.yaml",
        "ecom_tasks/inspect_evals/rair.py",
    ]
    assert generator.main(["--check"]) == 1


@pytest.mark.parametrize("benchmark", sorted(MODULES))
def test_every_variant_is_a_module_level_task_with_its_defaults(benchmark):
    module = MODULES[benchmark]
    family = next(f for f in generator.FAMILIES if f.benchmark == benchmark)
    source = Path(module.__file__).read_text(encoding="utf-8")
    declared = generator.task_functions(source)
    for name, variant in family.variants.items():
        function = getattr(module, name)
        # A def at module level (what file-based discovery reads), registered under our package.
        assert name in declared and function is module.PRESETS[name]
        assert registry_info(function).name == f"ecom_tasks/{name}"
        assert getattr(registry, name) is function  # imported by the entry point by name
        parameters = inspect.signature(function).parameters
        assert list(parameters) == PARAMETERS[benchmark]
        defaults = {key: p.default for key, p in parameters.items()}
        built = function()
        if benchmark == "rair":
            assert (defaults["rules"], defaults["image"]) == (variant.rules, variant.image)
            assert (built.metadata["subset"], built.metadata["rules_source"], built.metadata["image"]) == (
                variant.subset,
                variant.rules,
                variant.image,
            )
        elif benchmark == "monbench":
            assert built.metadata["tasks"] == list(variant.tasks) and built.metadata["design"] == variant.design
            assert built.metadata["formats"] == list(parse_formats(list(variant.formats)))
            runs = len(DESIGNS[variant.design]) * len(variant.formats)
            assert all(len(sample.metadata["runs"]) == runs for sample in built.dataset)
        elif benchmark == "rmir":
            assert defaults["mode"] == variant.mode == built.metadata["mode"]
        else:
            assert defaults["category"] == variant.category
            assert built.metadata["scoring"] == ("exact match" if variant.exact else "judge")
            assert built.metadata["category"] == (variant.category or "all")


def test_rair_preset_parameters_still_override_with_task_args(tmp_path):
    """-T values reach the task as before: rules and language change what is built."""
    built = rair.rair_general(rules="builtin", language="zh")
    assert built.metadata["rules_source"] == "builtin" and built.metadata["language"] == "zh"
    zh = [r.id for r in load_rair_records(subset="general", language="zh")]
    assert [s.id for s in built.dataset] == zh and zh


def _inspect_list_tasks(folder: str) -> dict[str, str]:
    """``inspect list tasks <folder>`` (relative to the installed package's parent, as Inspect wants it): name -> file."""
    proc = run_cli(["inspect", "list", "tasks", folder], cwd=ADAPTERS_DIR.parent.parent, timeout=120)
    return {line.rsplit("@", 1)[1]: line.rsplit("@", 1)[0] for line in check_ok(proc).stdout.split()}


@pytest.mark.slow
def test_inspect_list_tasks_over_the_installed_folder_lists_every_task_of_ecom_tasks_list():
    ours = check_ok(run_cli(["ecom-tasks", "list"], timeout=120)).stdout
    section = ours.split("\nInspect", 1)[1].split("\nlm-eval", 1)[0]
    registered = {
        line.split()[1].removeprefix("ecom_tasks/") for line in section.splitlines() if line.split()[:1] == ["task"]
    }
    # The evaluation tasks: every variant of every benchmark, the parametric monbench, the judge meta-eval.
    evaluation = {name for m in MODULES.values() for name in m.PRESETS} | {"monbench", "ecomeval_judge_meta"}
    assert len(evaluation) == 40
    in_folder = _inspect_list_tasks("ecom_tasks/inspect_evals")
    assert set(in_folder) == evaluation
    assert all(
        name in MODULES[Path(path).stem].__dict__ for name, path in in_folder.items()
    )  # each in its benchmark's file
    # Tasks registered elsewhere in the package (the benchmarks' construction stages) are module-level
    # @task functions too: over the installed package, Inspect finds exactly what ecom-tasks list lists.
    assert registered >= evaluation
    assert set(_inspect_list_tasks("ecom_tasks")) == registered


@pytest.mark.slow
def test_a_task_runs_from_its_file_with_task_args(tmp_path):
    """inspect eval <installed folder>/rair.py@rair_general --model ecom/baseline -T ...: the same run as
    the registered ecom_tasks/rair_general with the same arguments."""
    logs = tmp_path / "file"
    proc = run_cli(
        [
            "inspect",
            "eval",
            f"{ADAPTERS_DIR / 'rair.py'}@rair_general",
            "--model",
            "ecom/baseline",
            "-T",
            "rules=builtin",
            "--log-dir",
            str(logs),
            "--display",
            "none",
        ],
        cwd=tmp_path,
        timeout=300,
    )
    check_ok(proc)
    [info] = list_eval_logs(str(logs))
    log = read_eval_log(info)
    assert log.status == "success" and log.eval.task == "rair_general"
    assert log.eval.task_args["rules"] == "builtin" and log.eval.metadata["rules_source"] == "builtin"
    [registered] = inspect_eval(
        "ecom_tasks/rair_general",
        model="ecom/baseline",
        task_args={"rules": "builtin"},
        log_dir=str(tmp_path / "registered"),
        display="none",
    )
    assert [s.id for s in log.samples] == [s.id for s in registered.samples]
    assert len(log.samples) == len(load_rair_records(subset="general"))

    def metrics(run):
        return {f"{s.name}/{k}": m.value for s in run.results.scores for k, m in s.metrics.items()}

    assert metrics(log) == metrics(registered) and metrics(log)["rair_scorer/macro_f1"] > 0


def test_tasks_keep_their_prefix_when_the_checkout_is_on_sys_path():
    """A script run from the repo root (or `python -m pytest`) has the checkout first on sys.path.
    A build backend that writes ``ecom_tasks.egg-info`` there (setuptools did) made Inspect read that
    metadata, take the package for an unregistered folder and drop the ``ecom_tasks/`` prefix."""
    import subprocess
    import sys

    from helpers import REPO_DIR

    code = (
        "import sys; assert sys.path[0] == ''\n"
        "from inspect_ai.util import registry_info\n"
        "from ecom_tasks.inspect_evals.rair import rair_hard\n"
        "print(registry_info(rair_hard).name)"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO_DIR, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ecom_tasks/rair_hard"
    assert not (REPO_DIR / "ecom_tasks.egg-info").exists(), "a stale setuptools build: delete ecom_tasks.egg-info"
