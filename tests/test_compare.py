"""Which model is better: the statistics against closed forms and statsmodels/scipy, and ``ecom-tasks
compare`` end to end over the loopback server (one model run in Inspect, another in lm-eval)."""

from __future__ import annotations

import itertools
import json
import math
import zlib

import lm_eval.models  # noqa: F401  (lm-eval's own models registered before ours)
import numpy as np
import pytest
from helpers import check_ok, finished_lm_eval_results, lm_eval_logged, run_cli
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model
from loopback.openai_server import serve_openai_compatible
from scipy import stats as scipy_stats
from sklearn.metrics import accuracy_score, f1_score

from ecom_tasks.inspect_evals.rair import rair_general
from ecom_tasks.rair.protocol import build_items
from ecom_tasks.rair.rules import load_rules
from ecom_tasks.rair.schema import LEVELS, load_records
from ecom_tasks.report import stats


def _units(values, strata=None, key="acc"):
    ids = tuple(f"u{i:03d}" for i in range(len(values)))
    outcomes = tuple(tuple({key: v} for v in (unit if isinstance(unit, list) else [unit])) for unit in values)
    return stats.Units(ids, outcomes, None if strata is None else tuple(strata))


def _mean_of(key):
    return stats.Measure(lambda outcomes: {key: float(np.mean([o[key] for o in outcomes]))})


# --- the statistics ---------------------------------------------------------------------------------


def test_mcnemar_is_the_exact_binomial_test_on_the_discordant_pairs():
    a = np.array([1] * 10 + [0] * 3 + [1] * 9 + [0] * 8)  # 10 both right, 3 only b, 9 only a, 8 both wrong
    b = np.array([1] * 10 + [1] * 3 + [0] * 9 + [0] * 8)
    by_hand = scipy_stats.binomtest(3, 12, 0.5).pvalue
    assert stats.mcnemar_exact(a, b) == pytest.approx(by_hand, rel=1e-12)
    assert stats.mcnemar_exact(a, a) == 1.0


def test_the_paired_permutation_test_enumerates_every_swap():
    # Eight items: scipy enumerates all 2^8 swaps, so the p-value is exact; count them by hand.
    a = [0.1, 0.4, 0.3, 0.9, 0.5, 0.2, 0.6, 0.8]
    b = [0.3, 0.8, 0.2, 1.0, 0.9, 0.6, 0.7, 0.8]
    diffs = np.subtract(b, a)
    observed = abs(diffs.mean())
    flips = [abs(np.mean(diffs * signs)) for signs in itertools.product((1, -1), repeat=len(diffs))]
    by_hand = np.mean([f >= observed - 1e-12 for f in flips])
    result = stats.compare(_units(a), _units(b), _mean_of("acc"), "acc", n_resamples=10_000)
    assert result.test == "paired_permutation"
    assert result.estimate == pytest.approx(diffs.mean())
    assert result.p_value == pytest.approx(by_hand)


def test_holm_by_hand():
    # sorted 0.01 < 0.03 < 0.04: 3 x 0.01 = 0.03, max(0.03, 2 x 0.03) = 0.06, max(0.06, 1 x 0.04) = 0.06
    adjusted = stats.holm([0.04, 0.01, 0.03, math.nan])
    assert adjusted[:3] == pytest.approx([0.06, 0.03, 0.06])
    assert math.isnan(adjusted[3])


def test_detectable_difference_and_planning_match_the_normal_approximation():
    z = scipy_stats.norm.ppf(0.975) + scipy_stats.norm.ppf(0.80)  # 2.8016: the large-sample paired test
    assert stats.min_detectable(1.0, 40_000) == pytest.approx(z / 200, rel=1e-3)
    needed = stats.units_needed(0.1, 1.0)
    assert (z / 0.1) ** 2 < needed <= (z / 0.1) ** 2 + 3  # the t-test needs a couple more than z's 785
    assert stats.min_detectable(0.0, 50) == 0.0


def test_identical_models_differ_by_exactly_zero_and_are_never_significant():
    rng = np.random.default_rng(3)
    a = _units(list(rng.integers(0, 2, 60)))
    copy = stats.Units(a.ids, a.outcomes)
    for binary in ("acc", None):
        result = stats.compare(a, copy, _mean_of("acc"), "acc", binary_key=binary, n_resamples=500)
        assert (result.estimate, result.ci_low, result.ci_high, result.p_value) == (0.0, 0.0, 0.0, 1.0)


def test_right_wrong_items_use_mcnemar_and_a_non_mean_metric_does_not():
    a = _units([1, 0, 1, 1, 0, 0, 1, 0, 1, 1])
    b = _units([1, 1, 1, 1, 1, 0, 1, 1, 1, 1])
    assert stats.compare(a, b, _mean_of("acc"), "acc", binary_key="acc", n_resamples=200).test == "mcnemar_exact"
    squared = stats.Measure(lambda outs: {"sq": float(np.mean([o["acc"] for o in outs])) ** 2})
    assert stats.compare(a, b, squared, "sq", binary_key="acc", n_resamples=200).test == "paired_permutation"


def test_different_items_are_refused_with_the_reason():
    with pytest.raises(stats.NotComparable, match="1 only in the first run"):
        stats.common_units(_units([1, 0, 1]), _units([1, 0]))


def test_a_stratified_interval_keeps_every_stratum():
    # A macro mean over two strata, one of them a single item: resampling the pool would often lose it
    # (nan); resampled within strata, every resample has both and the interval is finite.
    values = [1.0] * 9 + [0.0]
    strata = ["big"] * 9 + ["single"]
    units = _units(values, strata)

    def macro(outcomes):
        return {"macro": float(np.mean([np.mean(v) for v in _by_stratum(outcomes).values()]))}

    def _by_stratum(outcomes):
        groups: dict[str, list[float]] = {}
        for o in outcomes:
            groups.setdefault(o["s"], []).append(o["acc"])
        return groups

    tagged = stats.Units(units.ids, tuple(({"acc": v, "s": s},) for v, s in zip(values, strata)), tuple(strata))
    estimate = stats.interval(tagged, stats.Measure(macro), "macro", n_resamples=300)
    assert estimate.estimate == 0.5 and estimate.ci_low == estimate.ci_high == 0.5


def test_clustered_runs_widen_the_interval_over_treating_runs_as_independent():
    # 30 questions x 24 runs where a question is answered the same way in every run: the clusters carry
    # 30 observations of information, not 720.
    rng = np.random.default_rng(7)
    per_question = rng.integers(0, 2, 30)
    clustered = _units([[int(v)] * 24 for v in per_question])
    naive = _units([int(v) for v in per_question for _ in range(24)])
    wide = stats.interval(clustered, _mean_of("acc"), "acc", n_resamples=400)
    narrow = stats.interval(naive, _mean_of("acc"), "acc", n_resamples=400)
    assert wide.estimate == pytest.approx(narrow.estimate)
    assert (wide.ci_high - wide.ci_low) > 3 * (narrow.ci_high - narrow.ci_low)


# --- end to end: two served models, one per framework -------------------------------------------------


def _reply(model: str, user_prompt: str, gold: str) -> str:
    """model-a misses the gold level on a third of the items (by the prompt's crc); model-b on a sixth."""
    digest = zlib.crc32(user_prompt.encode("utf-8"))
    misses = digest % 3 == 0 if model == "model-a" else digest % 6 == 0
    level = LEVELS[(LEVELS.index(gold) + 1) % 4] if misses else gold
    return level if level != "L2" else "[L2-Category Mismatch]"


@pytest.fixture(scope="module")
def items():
    return {
        item.user_prompt: item.target for item in build_items(load_records(subset="general"), rules=load_rules("none"))
    }


@pytest.mark.slow
def test_compare_two_models_across_frameworks_over_http(tmp_path, items):
    def policy(body):
        user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        text = user if isinstance(user, str) else "".join(p.get("text", "") for p in user)
        return _reply(body["model"], text, items[text])

    with serve_openai_compatible(policy) as server:
        inspect_logs = tmp_path / "inspect"
        model = get_model("openai-api/vllm/model-a", base_url=server.base_url, api_key="k", memoize=False)
        (log,) = inspect_eval([rair_general()], model=model, log_dir=str(inspect_logs), display="none")
        assert log.status == "success", log.error
        for name in ("model-a", "model-b"):
            lm_eval_logged(
                f"model={name},base_url={server.chat_completions_url}", ["rair_general"], tmp_path / "lm-eval" / name
            )

    gold = list(items.values())
    pred = {m: [_reply(m, p, g).strip("[]").split("-")[0] for p, g in items.items()] for m in ("model-a", "model-b")}
    truth = {
        "acc4": accuracy_score(gold, pred["model-b"]) - accuracy_score(gold, pred["model-a"]),
        "macro_f1": f1_score(gold, pred["model-b"], labels=list(LEVELS), average="macro", zero_division=0)
        - f1_score(gold, pred["model-a"], labels=list(LEVELS), average="macro", zero_division=0),
    }
    assert truth["acc4"] > 0

    out = tmp_path / "records" / "new" / "compare.json"  # its missing folders are made
    proc = check_ok(
        run_cli(
            [
                "ecom-tasks",
                "compare",
                str(inspect_logs),
                str(tmp_path / "lm-eval"),
                "--json",
                str(out),
                "--resamples",
                "299",  # enough for the interval's check; each resample re-summarizes every metric (time)
            ],
            cwd=tmp_path,
        )
    )
    assert "rair / rair_general / acc4" in proc.stdout
    records = json.loads(out.read_text(encoding="utf-8"))
    pairs = {(r["a"], r["b"], r["metric"]): r for r in records if r["kind"] == "pair"}
    for metric, difference in truth.items():
        pair = pairs[("model-a (inspect)", "model-b", metric)]
        assert pair["estimate"] == pytest.approx(difference, abs=1e-12)
        assert pair["ci_low"] <= difference <= pair["ci_high"]
        assert pair["n"] == len(items) and 0 <= pair["p_value"] <= pair["p_adjusted"] <= 1
        assert {"seed", "n_resamples"} <= set(pair)
        # model-a ran in both frameworks: the same replies, a difference of exactly 0, never significant
        same = pairs[("model-a (inspect)", "model-a (lm-eval)", metric)]
        assert (same["estimate"], same["ci_low"], same["ci_high"], same["p_value"]) == (0.0, 0.0, 0.0, 1.0)
    assert pairs[("model-a (inspect)", "model-b", "acc4")]["test"] == "mcnemar_exact"
    assert pairs[("model-a (inspect)", "model-b", "macro_f1")]["test"] == "paired_permutation"
    models = {(r["model"], r["metric"]): r for r in records if r["kind"] == "model"}
    assert models[("model-b", "acc4")]["estimate"] == pytest.approx(accuracy_score(gold, pred["model-b"]))
    identical = [line for line in proc.stdout.splitlines() if "model-a (lm-eval) - model-a (inspect)" in line]
    assert len(identical) == 3 and not any("*" in line for line in identical)  # acc2, acc4, macro_f1

    baseline = check_ok(
        run_cli(
            [
                "ecom-tasks",
                "compare",
                str(inspect_logs),
                str(tmp_path / "lm-eval"),
                "--baseline",
                "model-b",
                "--metric",
                "acc4",
                "--resamples",
                "200",
            ],
            cwd=tmp_path,
        )
    )
    assert baseline.stdout.count(" - model-b ") == 2  # both model-a runs against model-b only


def test_runs_pair_by_their_data_not_by_how_a_framework_spells_its_location():
    from ecom_tasks.report.compare import ModelRun, compare_runs
    from ecom_tasks.results import FIXTURES, Run
    from ecom_tasks.rmir.metrics import QueryOutcome

    def run(model: str, framework: str, data: str, info: dict) -> ModelRun:
        record = Run("rmir", "rmir", framework, model, (), {}, "success", f"{model}.log", info=info, data=data)
        values = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
        units = stats.Units(
            tuple(f"q{i}" for i in range(6)),
            tuple((QueryOutcome({"recall@20": v, "failed": 0}, "functional"),) for v in values),
        )
        return ModelRun(record, units, model)

    inspect_run = run("a", "inspect", "mine.jsonl (sha256:abcdef123456)", {"data_sha256": "abcdef123456"})
    same_file = run("b", "lm-eval", "/home/me/mine.jsonl", {})
    result = compare_runs([inspect_run, same_file], metric="recall@20", n_resamples=50)
    assert [r.kind for r in result.records].count("pair") == 1 and not result.refused
    fixtures = run("c", "lm-eval", FIXTURES, {})
    other_hash = run("d", "inspect", "mine.jsonl (sha256:999999999999)", {"data_sha256": "999999999999"})
    refused = compare_runs([inspect_run, fixtures, other_hash], metric="recall@20", n_resamples=50).refused
    assert len(refused) == 3 and all("different data" in line for line in refused)


def test_runs_asked_with_another_prompt_or_task_version_are_not_paired():
    # Logs of an older ecom-tasks whose prompt, grader prompt or task changed measure another protocol: the
    # difference would mix the change into the model's. Versions pair within a framework (their numbering).
    from ecom_tasks.report.compare import ModelRun, compare_runs
    from ecom_tasks.results import Run
    from ecom_tasks.rmir.metrics import QueryOutcome

    def run(model: str, framework: str, info: dict) -> ModelRun:
        record = Run("rmir", "rmir", framework, model, (), {}, "success", f"{model}.log", info=info, data="d.jsonl")
        units = stats.Units(
            tuple(f"q{i}" for i in range(6)),
            tuple((QueryOutcome({"recall@20": v, "failed": 0}, "functional"),) for v in [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]),
        )
        return ModelRun(record, units, model)

    now = {"prompt_version": "rmir-reason-1", "task_version": "2.1.0"}
    a, b = run("a", "inspect", now), run("b", "inspect", now)
    assert [r.kind for r in compare_runs([a, b], metric="recall@20", n_resamples=50).records].count("pair") == 1
    for key, older in [("prompt_version", "rmir-reason-0"), ("task_version", "2.0.0")]:
        result = compare_runs([a, run("old", "inspect", {**now, key: older})], metric="recall@20", n_resamples=50)
        assert result.refused == [f"rmir/rmir: a and old not compared: different {key} ({now[key]} vs {older})"]
        assert not [r for r in result.records if r.kind == "pair"]
    lm_eval = run("c", "lm-eval", {"version": 1.0})  # another framework's numbering: not compared with 2.1.0
    assert [r.kind for r in compare_runs([a, lm_eval], metric="recall@20", n_resamples=50).records].count("pair") == 1


@pytest.mark.parametrize(
    "line", ["[1]", '"text"', "3", '{"doc": {"id": "a"}, "metrics": 5}', '{"doc": {"id": "a"}, "metrics": [["x"]]}']
)
def test_a_samples_line_that_is_no_object_is_refused_with_its_place(tmp_path, line):
    """A hostile --log_samples file whose line is JSON but not an object, or names its metrics with no list of
    names: its run is left out and the file named with the line (it crashed with AttributeError or TypeError
    before), like a line that lacks the unit's field."""
    from ecom_tasks.report.compare import model_runs
    from ecom_tasks.report.runs import read_runs

    stamp = "2026-01-01T00-00-00.000000"
    finished_lm_eval_results(tmp_path, "rair_general", stamp)
    samples = tmp_path / f"samples_rair_general_{stamp}.jsonl"
    samples.write_text(line + "\n", encoding="utf-8")
    runs, _, unreadable = model_runs(read_runs([tmp_path]))
    assert runs == [] and len(unreadable) == 1 and unreadable[0].startswith(f"{samples}:1: not a sample of ours")


def test_a_rair_group_is_left_out_for_its_subtasks_its_value_being_their_mean_not_the_pooled_items(tmp_path):
    """lm-eval's ``rair`` group reports the unweighted mean of its subtasks' Acc@2, Acc@4 and Macro-F1; its
    pooled items give other numbers (the demo: Acc@4 0.4203 pooled against the group's 0.3706), which compare
    ranked and differenced under the group's name. The group is left out with a note; its subtasks are compared."""
    from ecom_tasks.report.compare import compare_runs, model_runs
    from ecom_tasks.report.runs import read_runs

    results = lm_eval_logged("", ["rair"], tmp_path, model="ecom-baseline")
    samples = results["samples"]
    subtasks = results["group_subtasks"]["rair"]
    group = results["results"]["rair"]["acc4,none"]
    assert group == pytest.approx(np.mean([results["results"][t]["acc4,none"] for t in subtasks]))
    pooled = [s["acc4"]["numbers"]["acc4"] for t in subtasks for s in samples[t]]
    assert not math.isclose(float(np.mean(pooled)), group, abs_tol=1e-3)  # the two differ on these items

    runs, notes, unreadable = model_runs(read_runs([tmp_path]))
    assert sorted(r.run.task for r in runs) == sorted(subtasks) and not unreadable
    assert any("rair is a group" in note for note in notes)
    records = compare_runs(runs, metric="acc4", n_resamples=50).records
    assert {r.task: r.estimate for r in records} == pytest.approx(
        {t: results["results"][t]["acc4,none"] for t in subtasks}
    )


def test_a_metric_no_run_holds_is_refused_by_name_not_shown_as_blank_tables():
    # `--metric recall@2O` (a letter O) printed every task's table with '-' for every value and exited 0.
    from ecom_tasks.errors import ConfigurationError
    from ecom_tasks.report.compare import ModelRun, compare_runs
    from ecom_tasks.results import Run
    from ecom_tasks.rmir.metrics import QueryOutcome

    units = stats.Units(
        tuple(f"q{i}" for i in range(4)),
        tuple((QueryOutcome({"recall@20": v, "failed": 0}, "functional"),) for v in (1.0, 0.0, 1.0, 1.0)),
    )
    run = ModelRun(Run("rmir", "rmir", "inspect", "m", (), {}, "success", "m.log"), units, "m")
    with pytest.raises(ConfigurationError, match=r"--metric 'recall@2O' is no metric of these runs: .*recall@20"):
        compare_runs([run], metric="recall@2O", n_resamples=20)
    (record,) = compare_runs([run], metric="recall@20", n_resamples=20).records
    assert record.estimate == pytest.approx(0.75)


def test_no_difference_is_called_detectable_on_fewer_units_than_any_test_can_reject_on():
    # On 5 units the tests' smallest p-value is 2 / 2^5 = 0.0625 (every unit favouring b): nothing is detectable
    # at alpha 0.05, yet the t-test's power said 0.50 was, and --plan asked for 3 units where 6 are the fewest.
    from statsmodels.stats.power import TTestPower

    assert scipy_stats.binomtest(5, 5).pvalue > 0.05 > scipy_stats.binomtest(6, 6).pvalue
    extreme = stats.compare(_units([0] * 5), _units([1] * 5), _mean_of("acc"), "acc", binary_key="acc")
    flips = stats.compare(_units([0.0] * 5), _units([0.2, 0.4, 0.1, 0.3, 0.5]), _mean_of("acc"), "acc")
    assert extreme.p_value == flips.p_value == pytest.approx(0.0625)
    assert math.isnan(extreme.min_detectable) and math.isnan(flips.min_detectable)
    assert math.isnan(stats.min_detectable(0.3, 5)) and stats.min_detectable(0.3, 6) > 0
    assert TTestPower().solve_power(1.0 / 0.3, nobs=None, alpha=0.05, power=0.8) < 3
    assert stats.units_needed(1.0, 0.3) == 6


def test_ecomeval_runs_graded_by_different_panels_or_a_panel_and_one_judge_are_not_paired():
    # Inspect grades with the grader_<n> roles when there are any (scorers.inspect_judge.panel_models); only the
    # grader role was read, so one judge against a panel of others, or two different panels, were differenced.
    from ecom_tasks.ecomeval.metrics import Outcome
    from ecom_tasks.report.compare import ModelRun, compare_runs
    from ecom_tasks.results import Run

    def run(model: str, roles: dict, info: dict | None = None) -> ModelRun:
        record = Run(
            "ecomeval", "ecomeval", "inspect", model, (), {}, "success", f"{model}.eval", roles=roles, info=info or {}
        )
        grades = [3, 1, 2, 0, 3, 2] if model == "a" else [3, 3, 2, 1, 3, 3]
        outcomes = tuple((Outcome(g, 1.0, "shopping_concepts", task="t"),) for g in grades)
        return ModelRun(
            record, stats.Units(tuple(f"i{i}" for i in range(6)), outcomes, ("shopping_concepts",) * 6), model
        )

    one = run("a", {"grader": "openai/gpt-4.1"})
    panel = run("b", {"grader": "openai/gpt-4.1", "grader_1": "x/judge-1", "grader_2": "x/judge-2"})
    other_panel = run("c", {"grader_1": "x/judge-1", "grader_2": "x/judge-3"})
    result = compare_runs([one, panel, other_panel], metric="score", n_resamples=20)
    assert not [r for r in result.records if r.kind == "pair"]
    assert len(result.refused) == 3 and all("different judge" in line for line in result.refused)
    same = run("d", {"grader_2": "x/judge-2", "grader_1": "x/judge-1"})  # the same panel, roles in another order
    assert [r.kind for r in compare_runs([panel, same], metric="score", n_resamples=20).records].count("pair") == 1
    # -T graders=... names the panel (models, or roles) instead of the roles: the same panel pairs, another does not.
    named = run("e", {"grader": "openai/gpt-4.1"}, {"graders": "x/judge-1,x/judge-2", "panel": "median"})
    by_role = run("f", {"grader": "openai/gpt-4.1", "j": "x/judge-1"}, {"graders": "j,x/judge-3"})
    result = compare_runs([panel, named, by_role], metric="score", n_resamples=20)
    assert [(r.a, r.b) for r in result.records if r.kind == "pair"] == [("b", "e")]
    assert len(result.refused) == 2 and all("different judge" in line for line in result.refused)


@pytest.mark.parametrize("command", ["compare", "report"])
def test_too_few_resamples_are_refused_before_anything_is_read(command, tmp_path, capsys):
    from ecom_tasks.cli import main

    # 98 resamples put a 95% interval's ends on the first or second value from each end of the distribution.
    with pytest.raises(SystemExit) as exit_info:
        main([command, str(tmp_path / "no-such-log"), "--resamples", str(stats.MIN_RESAMPLES - 1)])
    assert exit_info.value.code == 2
    assert "--resamples: must be a whole number from 99 to" in capsys.readouterr().err
