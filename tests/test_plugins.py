"""Third-party plugins: discovery through the ``ecom_tasks`` entry points, and merging.

``tests/plugin_example`` is laid out like a site-packages folder holding one
installed distribution (``ecom_example_plugin`` + its ``.dist-info``), so
putting it on ``PYTHONPATH`` "installs" the plugin for a subprocess. The pytest
process itself never has it on ``sys.path``: the cached plugin manager of the
suite stays free of it.
"""

from __future__ import annotations

import importlib.util
import json
import types
from pathlib import Path

import pluggy
import pytest

from ecom_tasks import builtin_plugin, hookspecs, plugins
from ecom_tasks.lm_eval_tasks import TASKS_DIR
from helpers import PLUGIN_EXAMPLE, check_ok, parse_lm_eval_tables, run_cli

PLUGIN_ENV = {"PYTHONPATH": str(PLUGIN_EXAMPLE)}
PLUGIN_TASKS_DIR = PLUGIN_EXAMPLE / "ecom_example_plugin" / "lm_eval_tasks"


def _load_example_module() -> types.ModuleType:
    """Import the example plugin from its file, without touching ``sys.path``."""
    init = PLUGIN_EXAMPLE / "ecom_example_plugin" / "__init__.py"
    spec = importlib.util.spec_from_file_location(
        "ecom_example_plugin", init, submodule_search_locations=[str(init.parent)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_entry_point_discovered_from_pythonpath() -> None:
    code = (
        "import importlib.metadata as m, json; "
        "print(json.dumps(sorted([e.name, e.value, e.dist.name, e.dist.version] "
        "for e in m.entry_points(group='ecom_tasks'))))"
    )
    without = json.loads(check_ok(run_cli(["python", "-c", code])).stdout)
    with_plugin = json.loads(check_ok(run_cli(["python", "-c", code], env=PLUGIN_ENV)).stdout)
    assert ["example", "ecom_example_plugin", "ecom-example-plugin", "0.1.0"] not in without
    assert ["builtin", "ecom_tasks.builtin_plugin", "ecom-tasks", "0.1.0"] in without
    assert with_plugin == sorted([*without, ["example", "ecom_example_plugin", "ecom-example-plugin", "0.1.0"]])


def test_list_shows_plugin_contributions(tmp_path: Path) -> None:
    out = check_ok(run_cli(["ecom-tasks", "list"], env=PLUGIN_ENV, cwd=tmp_path)).stdout
    lines = out.splitlines()
    assert f"  {'example':<28} ecom_example_plugin" in lines
    assert f"  {'builtin':<28} ecom_tasks.builtin_plugin" in lines
    assert f"  {'task':<10} {'example_echo':<42} [example: {PLUGIN_TASKS_DIR}]" in lines
    assert f"  {'example_exact_match':<28} [example]" in lines
    assert f"  {'accuracy':<28} [builtin]" in lines
    # The built-in tasks are still listed, from the built-in folder.
    assert f"  {'group':<10} {'monbench':<42} [builtin: {TASKS_DIR}]" in lines
    # Without the plugin none of this appears.
    plain = check_ok(run_cli(["ecom-tasks", "list"], cwd=tmp_path)).stdout
    for name in ("ecom_example_plugin", "example_echo", "example_exact_match"):
        assert name not in plain


def test_lm_eval_path_all_includes_plugin_folder(tmp_path: Path) -> None:
    out = check_ok(run_cli(["ecom-tasks", "lm-eval-path", "--all"], env=PLUGIN_ENV, cwd=tmp_path)).stdout
    assert out.splitlines()[0] == str(TASKS_DIR)
    assert str(PLUGIN_TASKS_DIR) in out.splitlines()[1:]


def test_plugin_task_runs_in_ecom_lm_eval(tmp_path: Path) -> None:
    proc = check_ok(
        run_cli(
            ["ecom-lm-eval", "--tasks", "example_echo", "--model", "ecom-baseline", "--output_path", tmp_path / "out"],
            env=PLUGIN_ENV,
            cwd=tmp_path,
        )
    )
    table = parse_lm_eval_tables(proc.stdout)
    # The baseline answers A, B, A for golds A, B, C: 2 of 3 (see the plugin's utils.DOCS).
    assert table["Tasks"] == {"example_echo": {"example_exact_match": "0.6667"}}
    assert "|example_echo|      1|none  |     0|example_exact_match|↑  |0.6667|±  |0.3333|" in proc.stdout
    (results_file,) = (tmp_path / "out").rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]["example_echo"]
    assert results["example_exact_match,none"] == pytest.approx(2 / 3)
    assert results["sample_len"] == 3


def test_plugin_task_unknown_without_plugin(tmp_path: Path) -> None:
    proc = run_cli(["ecom-lm-eval", "--tasks", "example_echo", "--model", "ecom-baseline"], cwd=tmp_path)
    assert proc.returncode != 0
    assert "ValueError: Tasks not found: example_echo" in proc.stderr


# --- in-process: a manager with the example plugin registered explicitly -----------


def _fresh_manager(*extra: tuple[object, str]) -> pluggy.PluginManager:
    """Built like ``plugins.plugin_manager()``, with explicit registrations instead of entry points."""
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    manager.register(builtin_plugin, name="builtin")
    for plugin, name in extra:
        manager.register(plugin, name=name)
    return manager


def test_metrics_merge_sees_plugin_metric(monkeypatch: pytest.MonkeyPatch) -> None:
    example = _load_example_module()
    manager = _fresh_manager((example, "example"))
    # ``contributions``/``metrics`` look the manager up at call time: swap the cached one.
    monkeypatch.setattr(plugins, "plugin_manager", lambda: manager)

    merged = plugins.metrics()
    builtin_names = list(builtin_plugin.ecom_tasks_metrics())
    assert list(merged) == [*builtin_names, "example_exact_match"]
    assert merged["example_exact_match"] is example.example_exact_match
    assert merged["example_exact_match"]("C", "<Label>C</Label>") == 1.0
    assert merged["example_exact_match"]("C", "<Label>A</Label>") == 0.0
    assert merged["example_exact_match"]("C", "lol") == 0.0
    assert [name for name, _ in plugins.contributions("ecom_tasks_metrics")] == ["builtin", "example"]
    assert plugins.lm_eval_task_dirs() == [str(TASKS_DIR), str(PLUGIN_TASKS_DIR)]
    # The suite's own (cached) manager is untouched by the example plugin.
    monkeypatch.undo()
    assert "example_exact_match" not in plugins.metrics()


def test_duplicate_metric_name_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    example = _load_example_module()

    class Clash:
        @hookspecs.hookimpl
        def ecom_tasks_metrics(self):
            return {"example_exact_match": lambda gold, reply: 0.0}

    manager = _fresh_manager((example, "example"), (Clash(), "clash"))
    monkeypatch.setattr(plugins, "plugin_manager", lambda: manager)
    with pytest.raises(ValueError) as info:
        plugins.metrics()
    assert str(info.value) == "ecom_tasks_metrics: 'example_exact_match' from plugin 'clash' is already registered"

    # Clashing with a built-in name is caught the same way.
    class Shadow:
        @hookspecs.hookimpl
        def ecom_tasks_metrics(self):
            return {"accuracy": lambda gold, reply: 0.0}

    monkeypatch.setattr(plugins, "plugin_manager", lambda: _fresh_manager((Shadow(), "shadow")))
    with pytest.raises(ValueError, match=r"^ecom_tasks_metrics: 'accuracy' from plugin 'shadow' is already registered$"):
        plugins.metrics()


def test_hookimpl_with_wrong_signature_is_rejected() -> None:
    class Bad:
        @hookspecs.hookimpl
        def ecom_tasks_metrics(self, unexpected):
            return {}

    with pytest.raises(pluggy.PluginValidationError, match="unexpected"):
        _fresh_manager((Bad(), "bad"))
