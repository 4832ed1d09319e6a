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
from helpers import PLUGIN_EXAMPLE, check_ok, parse_lm_eval_tables, run_cli

from ecom_tasks import builtin_plugin, hookspecs, plugins
from ecom_tasks.lm_eval_tasks import TASKS_DIR

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
    assert f"  {'cohen_kappa':<28} {'labels':<12} [example] Cohen's kappa (scikit-learn)" in lines
    assert any(line.startswith(f"  {'macro_f1':<28} {'labels':<12} [builtin] ") for line in lines)
    # The built-in tasks are still listed, from the built-in folder.
    assert f"  {'group':<10} {'monbench_perm':<42} [builtin: {TASKS_DIR}]" in lines
    # Without the plugin none of this appears.
    plain = check_ok(run_cli(["ecom-tasks", "list"], cwd=tmp_path)).stdout
    for name in ("ecom_example_plugin", "example_echo", "cohen_kappa"):
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
    # one line naming the task, not lm-eval's traceback
    assert proc.stderr.strip().splitlines() == [
        "ecom-tasks: unknown lm-eval task 'example_echo' (ecom-tasks list shows ours, lm-eval ls tasks all)"
    ]


# --- in-process: a manager with the example plugin registered explicitly -----------


def _fresh_manager(*extra: tuple[object, str]) -> pluggy.PluginManager:
    """Built like ``plugins.plugin_manager()``, with explicit registrations instead of entry points."""
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    manager.register(builtin_plugin, name="builtin")
    for plugin, name in extra:
        manager.register(plugin, name=name)
    return manager


def test_metric_specs_include_the_plugin_metric_after_the_builtins(monkeypatch: pytest.MonkeyPatch) -> None:
    example = _load_example_module()
    manager = _fresh_manager((example, "example"))
    # ``contributions``/``metric_specs`` look the manager up at call time: swap the cached one.
    monkeypatch.setattr(plugins, "plugin_manager", lambda: manager)

    specs = plugins.metric_specs()
    builtin_names = [spec.name for spec in builtin_plugin.ecom_tasks_metrics()]
    assert list(specs) == [*builtin_names, "cohen_kappa"]
    assert specs["cohen_kappa"].compute is example.cohen_kappa
    assert [s.name for s in plugins.select_metrics("labels")] == ["acc2", "acc4", "macro_f1", "cohen_kappa"]
    assert [s.name for s in plugins.select_metrics("labels", "cohen_kappa, acc4")] == ["cohen_kappa", "acc4"]
    assert [s.name for s in plugins.select_metrics("choice_runs")] == ["acc", "acc_ci"]
    with pytest.raises(
        ValueError, match=r"unknown labels metric\(s\) acc; registered for this kind: acc2, acc4, macro_f1, cohen_kappa"
    ):
        plugins.select_metrics("labels", "acc")
    assert [name for name, _ in plugins.contributions("ecom_tasks_metrics")] == ["builtin", "example"]
    assert plugins.lm_eval_task_dirs() == [str(TASKS_DIR), str(PLUGIN_TASKS_DIR)]
    # The suite's own (cached) manager is untouched by the example plugin.
    monkeypatch.undo()
    assert "cohen_kappa" not in plugins.metric_specs()


def test_duplicate_or_malformed_metric_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    example = _load_example_module()

    class Clash:
        @hookspecs.hookimpl
        def ecom_tasks_metrics(self):
            return [hookspecs.MetricSpec("cohen_kappa", "labels", lambda data: 0.0)]

    manager = _fresh_manager((example, "example"), (Clash(), "clash"))
    monkeypatch.setattr(plugins, "plugin_manager", lambda: manager)
    with pytest.raises(ValueError) as info:
        plugins.metric_specs()
    assert str(info.value) == "ecom_tasks_metrics: 'cohen_kappa' from plugin 'clash' is already registered by 'example'"

    # Clashing with a built-in name is caught the same way.
    class Shadow:
        @hookspecs.hookimpl
        def ecom_tasks_metrics(self):
            return [hookspecs.MetricSpec("macro_f1", "labels", lambda data: 0.0)]

    monkeypatch.setattr(plugins, "plugin_manager", lambda: _fresh_manager((Shadow(), "shadow")))
    with pytest.raises(
        ValueError, match=r"^ecom_tasks_metrics: 'macro_f1' from plugin 'shadow' is already registered by 'builtin'$"
    ):
        plugins.metric_specs()

    class OldStyle:  # a name -> function mapping, as the hook took before metric kinds
        @hookspecs.hookimpl
        def ecom_tasks_metrics(self):
            return {"my_metric": lambda gold, pred: 0.0}

    monkeypatch.setattr(plugins, "plugin_manager", lambda: _fresh_manager((OldStyle(), "old")))
    with pytest.raises(TypeError, match=r"plugin 'old' returned 'my_metric', not a MetricSpec"):
        plugins.metric_specs()
    with pytest.raises(ValueError, match="unknown kind 'scores'"):
        hookspecs.MetricSpec("x", "scores", lambda data: 0.0)


def test_hookimpl_with_wrong_signature_is_rejected() -> None:
    class Bad:
        @hookspecs.hookimpl
        def ecom_tasks_metrics(self, unexpected):
            return {}

    with pytest.raises(pluggy.PluginValidationError, match="unexpected"):
        _fresh_manager((Bad(), "bad"))


# --- a plugin metric is computed by every benchmark of its kind, in both frameworks -------


def _pairs_from_outcomes(outcomes: list[dict]) -> tuple[list[str], list[str]]:
    """Gold and predicted labels read back from RAIR outcomes (hard, one epoch)."""
    levels, answers = ["L1", "L2", "L3", "L4"], ["L1", "L2", "L3", "L4", "invalid"]
    gold = [levels[int(o["gold"])] for o in outcomes]
    pred = [answers[[int(o[f"pred_{a}"]) for a in answers].index(1)] for o in outcomes]
    return gold, pred


def test_plugin_metric_appears_in_rair_results_in_both_frameworks(tmp_path: Path) -> None:
    from inspect_ai.log import list_eval_logs, read_eval_log
    from sklearn.metrics import cohen_kappa_score

    logs = tmp_path / "logs"
    check_ok(
        run_cli(
            [
                "inspect",
                "eval",
                "ecom_tasks/rair_general",
                "--model",
                "ecom/baseline",
                "--log-dir",
                logs,
                "--display",
                "none",
            ],
            env=PLUGIN_ENV,
            cwd=tmp_path,
        )
    )
    (log_info,) = list_eval_logs(str(logs))
    log = read_eval_log(log_info)
    by_id = {s.id: s.scores["rair_scorer"].value for s in log.samples}
    gold, pred = _pairs_from_outcomes(list(by_id.values()))
    expected = cohen_kappa_score(gold, pred)
    assert 0 < expected < 1  # the baseline is neither perfect nor chance on the fixtures
    inspect_metrics = {k: m.value for score in log.results.scores for k, m in score.metrics.items()}
    assert inspect_metrics["cohen_kappa"] == pytest.approx(expected, abs=1e-12)

    out = tmp_path / "out"
    check_ok(
        run_cli(
            [
                "ecom-lm-eval",
                "--tasks",
                "rair_general",
                "--model",
                "ecom-baseline",
                "--output_path",
                out,
                "--log_samples",
            ],
            env=PLUGIN_ENV,
            cwd=tmp_path,
        )
    )
    (results_file,) = out.rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]["rair_general"]
    assert results["cohen_kappa,none"] == pytest.approx(expected, abs=1e-12)
    (samples_file,) = out.rglob("samples_rair_general_*.jsonl")
    lm_samples = [json.loads(line) for line in samples_file.read_text().splitlines()]
    # Every key holds the whole outcome record: the answer's numbers beside the item's groups.
    lm_by_id = {sample["doc"]["id"]: sample["acc2"]["numbers"] for sample in lm_samples}
    assert _pairs_from_outcomes([lm_by_id[i] for i in by_id]) == (gold, pred)


def test_a_run_selects_its_metrics_in_both_frameworks(tmp_path: Path) -> None:
    from inspect_ai.log import list_eval_logs, read_eval_log

    logs = tmp_path / "logs"
    check_ok(
        run_cli(
            [
                "inspect",
                "eval",
                "ecom_tasks/rair_hard",
                "--model",
                "ecom/baseline",
                "--log-dir",
                logs,
                "--display",
                "none",
                "-T",
                "metrics=cohen_kappa,macro_f1",
            ],
            env=PLUGIN_ENV,
            cwd=tmp_path,
        )
    )
    (log_info,) = list_eval_logs(str(logs))
    log = read_eval_log(log_info, header_only=True)
    summary = log.results.scores[0].metrics
    keys = [k for k in summary if "/" not in k]
    assert {"cohen_kappa_strict", "macro_f1_strict"} <= set(keys)  # the strict reading beside (issue 27)
    assert [k for k in keys if not k.endswith("_strict")] == [
        "cohen_kappa",
        "macro_f1",
        "invalid_rate",
        "truncated_rate",
        "context_exceeded_rate",
        "n",
        "l2_dim_acc",
    ]
    assert "cohen_kappa/intent/DJ" in summary and "acc2/intent/DJ" not in summary
    assert log.eval.task_args["metrics"] == ["cohen_kappa", "macro_f1"]  # inspect splits -T a,b into a list

    out = tmp_path / "out"
    check_ok(
        run_cli(
            [
                "ecom-lm-eval",
                "--tasks",
                "rair_hard",
                "--model",
                "ecom-baseline",
                "--output_path",
                out,
                "--metadata",
                json.dumps({"metrics": "cohen_kappa,macro_f1"}),
            ],
            env=PLUGIN_ENV,
            cwd=tmp_path,
        )
    )
    (results_file,) = out.rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]["rair_hard"]
    headline = [k.split(",")[0] for k in results if "," in k and "/" not in k and "_stderr" not in k]
    # lm-eval passes no stop reason: no truncated_rate there (the report shows it as unknown).
    assert {"cohen_kappa_strict", "macro_f1_strict"} <= set(headline)
    careful = [k for k in headline if not k.endswith("_strict")]
    assert careful == ["cohen_kappa", "macro_f1", "invalid_rate", "context_exceeded_rate", "n", "l2_dim_acc"]
    assert results["macro_f1,none"] == pytest.approx(summary["macro_f1"].value)
    assert results["cohen_kappa,none"] == pytest.approx(summary["cohen_kappa"].value)
    # An unknown name is a clear error naming what is registered.
    proc = run_cli(
        ["ecom-lm-eval", "--tasks", "rair_hard", "--model", "ecom-baseline", "--metadata", '{"metrics": "kappa"}'],
        cwd=tmp_path,
    )
    assert proc.returncode != 0
    assert "unknown labels metric(s) kappa; registered for this kind: acc2, acc4, macro_f1" in proc.stderr


# --- a third-party RMIR embedder, registered through the ecom_tasks_retrievers hook ------------


def test_plugin_embedder_runs_rmir(tmp_path: Path) -> None:
    import numpy as np
    from inspect_ai.log import list_eval_logs, read_eval_log

    from ecom_tasks.rmir.embedders import EmbedInput
    from ecom_tasks.rmir.schema import load_data

    out = check_ok(run_cli(["ecom-tasks", "list"], env=PLUGIN_ENV, cwd=tmp_path)).stdout.splitlines()
    assert f"  {'word_hash':<28} [example]" in out and f"  {'lexical':<28} [builtin]" in out
    logs = tmp_path / "logs"
    check_ok(
        run_cli(
            [
                "inspect",
                "eval",
                "ecom_tasks/rmir",
                "-T",
                "retriever=word_hash",
                "-T",
                'retriever_args={"dim": 32}',
                "--model",
                "none",
                "--log-dir",
                logs,
                "--display",
                "none",
            ],
            env={**PLUGIN_ENV, "ECOM_TASKS_CACHE": str(tmp_path / "cache")},
            cwd=tmp_path,
        )
    )
    (info,) = list_eval_logs(str(logs))
    log = read_eval_log(info)
    assert log.status == "success", log.error
    metrics = {k: m.value for s in log.results.scores for k, m in s.metrics.items()}
    # By hand from the plugin's own vectors: cosine, stable sort, positives in the top 20 / positives.
    embedder = _load_example_module().WordHashEmbedder(dim=32)
    data = load_data()

    def unit(rows):
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms == 0, 1, norms)

    pool = unit(embedder.embed([EmbedInput(text=p.description) for p in data.pool], "pool"))
    recalls = []
    for q in data.queries:
        query = unit(embedder.embed([EmbedInput(text=q.query_text)], "query"))[0]
        if not query.any():
            recalls.append(0.0)
            continue
        ranked = [data.pool[i].id for i in np.argsort(-(pool @ query), kind="stable")[:20]]
        recalls.append(len(set(ranked) & set(q.positives)) / len(q.positives))
    assert metrics["recall@20"] == pytest.approx(float(np.mean(recalls)), abs=1e-6)
    assert log.samples[0].scores["rmir_scorer"].metadata["pool_embedded"] == 26


def test_duplicate_retriever_name_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    class Clash:
        @hookspecs.hookimpl
        def ecom_tasks_retrievers(self):
            return {"lexical": lambda: None}

    monkeypatch.setattr(plugins, "plugin_manager", lambda: _fresh_manager((Clash(), "clash")))
    with pytest.raises(
        ValueError, match=r"^ecom_tasks_retrievers: 'lexical' from plugin 'clash' is already registered by 'builtin'$"
    ):
        plugins.retrievers()
    example = _load_example_module()
    monkeypatch.setattr(plugins, "plugin_manager", lambda: _fresh_manager((example, "example")))
    assert list(plugins.retrievers()) == [
        "lexical",
        "openai_embeddings",
        "open_clip",
        "sentence_transformers",
        "word_hash",
    ]


def test_plugin_dataset_named_like_ours_is_an_error_naming_both(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """A plugin registering ``rair`` must not silently replace our validator (as for metrics)."""
    from ecom_tasks.cli import main as ecom_tasks_cli
    from ecom_tasks.data import ConfigurationError

    class Clash:
        @hookspecs.hookimpl
        def ecom_tasks_datasets(self):
            return [hookspecs.DatasetSpec("rair", "a lenient rair", load=lambda data: [])]

    monkeypatch.setattr(plugins, "plugin_manager", lambda: _fresh_manager((Clash(), "clash")))
    message = "ecom_tasks_datasets: 'rair' from plugin 'clash' is already registered by 'builtin'"
    with pytest.raises(ConfigurationError) as info:
        plugins.datasets()
    assert str(info.value) == message
    # ecom-tasks validate says so in one line and fails, instead of validating with the plugin's loader.
    with pytest.raises(SystemExit) as exited:
        ecom_tasks_cli(["validate", "rair"])
    assert exited.value.code == 1
    assert capsys.readouterr().err.splitlines() == [f"ecom-tasks: {message}"]

    class Other:
        @hookspecs.hookimpl
        def ecom_tasks_datasets(self):
            return [hookspecs.DatasetSpec("rair_extra", "another data set", load=lambda data: [])]

    monkeypatch.setattr(plugins, "plugin_manager", lambda: _fresh_manager((Other(), "other")))
    assert list(plugins.datasets()) == ["monbench", "rair", "ecomeval", "rmir", "rair_extra"]
    assert plugins.datasets()["rair"].description.startswith("RAIR query-item records")
