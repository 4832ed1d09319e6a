"""Variants declared once: the lm-eval YAML agrees with its generator, and a name means one protocol in both frameworks."""

from __future__ import annotations

import importlib

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, get_model

from ecom_tasks.inspect_evals import monbench as inspect_monbench
from ecom_tasks.inspect_evals import rair as inspect_rair
from ecom_tasks.lm_eval_tasks import TASKS_DIR, task_manager
from ecom_tasks.lm_eval_tasks._configs import stale_files
from ecom_tasks.monbench.variants import LM_EVAL_GROUPS as MONBENCH_GROUPS
from ecom_tasks.monbench.variants import VARIANTS as MONBENCH_VARIANTS
from ecom_tasks.rair.variants import LM_EVAL_GROUPS as RAIR_GROUPS
from ecom_tasks.rair.variants import VARIANTS as RAIR_VARIANTS
from ecom_tasks.scorers.inspect_scorers import label_metrics, label_scorer


@pytest.mark.parametrize("benchmark", ["monbench", "rair", "ecomeval"])
def test_checked_in_yaml_is_what_the_generator_writes(benchmark, tmp_path):
    generator = importlib.import_module(f"ecom_tasks.lm_eval_tasks.{benchmark}._generate_configs")
    assert stale_files(TASKS_DIR / benchmark, generator.render()) == []
    # The check is not vacuous: an edited or extra file is reported.
    for name, text in generator.render().items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    first = sorted(generator.render())[-1]
    (tmp_path / first).write_text("task: edited\n", encoding="utf-8")
    (tmp_path / "stray.yaml").write_text("task: stray\n", encoding="utf-8")
    assert stale_files(tmp_path, generator.render()) == [f"differs: {first}", "not generated: stray.yaml"]
    assert generator.main(tmp_path, generator.render, ["--check"]) == 1
    # A file that is not UTF-8 differs (not a crash), and writing replaces it without reading it.
    (tmp_path / first).write_bytes(b"task: \xff\xfe\n")
    assert stale_files(tmp_path, generator.render()) == [f"differs: {first}", "not generated: stray.yaml"]
    assert generator.main(tmp_path, generator.render, []) == 0
    assert stale_files(tmp_path, generator.render()) == []


def test_every_variant_exists_under_its_name_in_each_framework():
    manager = task_manager(include_defaults=False)
    lm_eval_names = set(manager.all_subtasks) | set(manager.all_groups)
    monbench_in_lm_eval = {n for n, v in MONBENCH_VARIANTS.items() if len(v.tasks) == 1} | set(MONBENCH_GROUPS)
    rair_in_lm_eval = {n for n, v in RAIR_VARIANTS.items() if v.in_lm_eval} | set(RAIR_GROUPS)
    assert monbench_in_lm_eval == set(MONBENCH_VARIANTS)  # every MonBench variant in both
    assert {n for n in lm_eval_names if n.startswith("monbench")} == monbench_in_lm_eval
    assert {n for n in lm_eval_names if n.startswith("rair")} == rair_in_lm_eval
    # In Inspect a variant is a task of the papers' tables with -T arguments (rair_hard -T rules=builtin).
    assert {v.inspect_task[0] for v in MONBENCH_VARIANTS.values()} == {
        "monbench_perm",
        "monbench_cyclic",
        "monbench_canonical",
    }
    assert {v.inspect_task[0] for v in RAIR_VARIANTS.values()} == {
        "rair_general",
        "rair_hard",
        "rair_visual",
        "rair_visual_text",
    }
    # lm-eval has no `monbench` task: only Inspect's parametric one carries the bare name.
    assert "monbench" not in lm_eval_names


def _inspect_task(module, variant):
    """The Inspect task that runs ``variant``'s setting."""
    name, args = variant.inspect_task
    return getattr(module, name)(**args)


@pytest.mark.parametrize("name", ["monbench_perm", "monbench_cyclic_query_query_intent", "monbench_canonical"])
def test_a_monbench_name_builds_the_same_documents_in_both_frameworks(name):
    variant = MONBENCH_VARIANTS[name]
    samples = list(_inspect_task(inspect_monbench, variant).dataset)
    tasks = [name] if len(variant.tasks) == 1 else MONBENCH_GROUPS[name]
    loaded = task_manager(include_defaults=False).load(tasks)["tasks"]
    docs = [doc for task in tasks for doc in loaded[task].test_docs()]
    # Inspect: one Sample per question, its runs inside; lm-eval: one document per run.
    runs = {
        f"{sample.id}_{run['key']}": [sample.metadata["fan_out"]["systems"][run["system"]], run["user"]]
        for sample in samples
        for run in sample.metadata["fan_out"]["runs"]
    }
    assert sorted(runs) == sorted(d["id"] for d in docs)
    for doc in docs:
        assert runs[doc["id"]] == [doc["system_prompt"], doc["user_prompt"]]


@pytest.mark.parametrize("name", ["rair_general", "rair_hard_builtin_rules", "rair_visual_text"])
def test_a_rair_name_builds_the_same_prompts_in_both_frameworks(name):
    samples = list(_inspect_task(inspect_rair, RAIR_VARIANTS[name]).dataset)
    docs = list(task_manager(include_defaults=False).load([name])["tasks"][name].test_docs())
    assert [s.id for s in samples] == [d["id"] for d in docs]
    for sample, doc in zip(samples, docs):
        assert [m.text for m in sample.input] == [doc["system_prompt"], doc["user_prompt"]]
        assert sample.metadata["rules_version"] == doc["rules_version"]


def test_third_party_task_reuses_the_label_scorer(tmp_path):
    """A relevance task of someone else's scores with our Acc@2 / Acc@K / Macro-F1 without copying code."""
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate
    from sklearn.metrics import accuracy_score, f1_score

    labels = ["bad", "ok", "good"]
    gold = ["bad", "ok", "good", "good", "ok", "bad"]
    replies = ["It is bad.", "Verdict: good", "good", "OK", "no idea", "Bad, not ok"]
    task = Task(
        dataset=[Sample(input=f"item {i}", target=g) for i, g in enumerate(gold)],
        solver=generate(),
        scorer=label_scorer(labels=labels),
        metrics=[label_metrics(positive=["ok", "good"])],
    )
    outputs = [ModelOutput.from_content("mockllm/model", r) for r in replies]
    (log,) = inspect_eval(
        task, model=get_model("mockllm/model", custom_outputs=outputs), log_dir=str(tmp_path), display="none"
    )
    metrics = {k: m.value for k, m in log.results.scores[0].metrics.items()}
    pred = ["bad", "good", "good", "ok", "invalid", "ok"]  # the last label named; "no idea" names none
    assert metrics["acc4"] == accuracy_score(gold, pred) == pytest.approx(2 / 6)
    assert metrics["macro_f1"] == pytest.approx(f1_score(gold, pred, labels=labels, average="macro", zero_division=0))
    side = {"bad": 0, "ok": 1, "good": 1, "invalid": -1}
    assert metrics["acc2"] == accuracy_score([side[g] for g in gold], [side[p] for p in pred]) == pytest.approx(4 / 6)
    assert metrics["invalid_rate"] == pytest.approx(1 / 6) and metrics["n"] == 6


def test_ecomeval_names_and_documents_agree_between_frameworks():
    from ecom_tasks.ecomeval.variants import VARIANTS as ECOMEVAL_VARIANTS
    from ecom_tasks.inspect_evals import ecomeval as inspect_ecomeval

    manager = task_manager(include_defaults=False)
    lm_eval_names = {n for n in set(manager.all_subtasks) | set(manager.all_groups) if n.startswith("ecomeval")}
    # Every name runs in both; lm-eval's judge-graded tasks log the responses for `ecom-tasks judge`.
    in_lm_eval = set(ECOMEVAL_VARIANTS)
    # ecomeval and ecomeval_exact are tasks in both frameworks (not lm-eval groups: see ecomeval/variants.py).
    assert lm_eval_names == in_lm_eval and {"ecomeval", "ecomeval_exact"} <= in_lm_eval
    assert not {n for n in manager.all_groups if n.startswith("ecomeval")}
    assert {v.inspect_task[0] for v in ECOMEVAL_VARIANTS.values()} == {"ecomeval", "ecomeval_exact"}
    loaded = manager.load(sorted(in_lm_eval))["tasks"]
    for name in in_lm_eval:
        samples = list(_inspect_task(inspect_ecomeval, ECOMEVAL_VARIANTS[name]).dataset)
        docs = list(loaded[name].test_docs())
        assert [s.id for s in samples] == [d["id"] for d in docs] and docs
        assert [s.input[0].text for s in samples] == [loaded[name].doc_to_text(d) for d in docs]
    for whole in ("ecomeval_exact", "ecomeval"):
        parts = [
            n
            for n in in_lm_eval
            if n.startswith(f"{whole}_") and (whole == "ecomeval_exact") == n.startswith("ecomeval_exact")
        ]
        per_category = sorted(d["id"] for name in parts for d in loaded[name].test_docs())
        assert per_category == sorted(d["id"] for d in loaded[whole].test_docs())


def test_an_inspect_run_of_a_variants_setting_is_compared_under_the_variants_name():
    """ecom-tasks compare pairs runs of one setting: an Inspect run of ``rair_hard -T rules=builtin`` with
    lm-eval's ``rair_hard_builtin_rules``, and never with ``rair_hard`` without rules."""
    from ecom_tasks.report.compare import compared_task
    from ecom_tasks.results import INSPECT, LM_EVAL, Run

    def run(framework, task, info):
        benchmark = task.split("_")[0]
        return Run(benchmark, task, framework, "m", (), {}, "success", "x", info=info)

    from ecom_tasks.ecomeval.variants import VARIANTS as ECOMEVAL_VARIANTS
    from ecom_tasks.inspect_evals import ecomeval as inspect_ecomeval

    benchmarks = (
        (inspect_monbench, MONBENCH_VARIANTS),
        (inspect_rair, RAIR_VARIANTS),
        (inspect_ecomeval, ECOMEVAL_VARIANTS),
    )
    for module, variants in benchmarks:
        for variant in variants.values():
            built = _inspect_task(module, variant)
            assert compared_task(run(INSPECT, variant.inspect_task[0], built.metadata)) == variant.name
            assert compared_task(run(LM_EVAL, variant.name, {})) == variant.name
    # A user's rules file: its own name, by the file's hash.
    ruled = run(INSPECT, "rair_hard", {"rules_source": "/x/rules.json", "rules_sha256": "abcdef0123"})
    assert compared_task(ruled) == "rair_hard_rules_abcdef01"
    # A log from when each setting was an Inspect task keeps its name.
    older = run(INSPECT, "monbench_perm_query_ad_relevance", {"tasks": ["query_ad_relevance"], "design": "full"})
    assert compared_task(older) == "monbench_perm_query_ad_relevance"
    assert (
        compared_task(run(INSPECT, "rair_hard_builtin_rules", {"rules_source": "builtin"})) == "rair_hard_builtin_rules"
    )


def test_monbench_tables_place_an_inspect_run_by_the_tasks_it_ran():
    """``monbench_cyclic -T task=query_query_intent`` is a row of that task, as lm-eval's
    ``monbench_cyclic_query_query_intent`` is; without ``task`` every task."""
    from ecom_tasks.monbench.paper_tables import _dims
    from ecom_tasks.results import INSPECT, LM_EVAL, MergedRun, Run

    def merged(framework, task, info):
        return MergedRun(Run("monbench", task, framework, "m", (), {}, "success", "x", info=info), 1, ("x",))

    one = _inspect_task(inspect_monbench, MONBENCH_VARIANTS["monbench_cyclic_query_query_intent"]).metadata
    every = _inspect_task(inspect_monbench, MONBENCH_VARIANTS["monbench_cyclic"]).metadata
    assert _dims(merged(INSPECT, "monbench_cyclic", one))[1] == ("query_query_intent",)
    assert _dims(merged(INSPECT, "monbench_cyclic", every))[1] == tuple(every["tasks"]) and len(every["tasks"]) == 4
    lm_eval = _dims(merged(LM_EVAL, "monbench_cyclic_query_query_intent", {"shots": 0}))
    assert _dims(merged(INSPECT, "monbench_cyclic", one)) == lm_eval
