"""The oldest inspect-ai and lm-eval that ``pyproject.toml`` allows give the newest versions' numbers.

``.ci/run`` installs the package with those two floors pinned in a second
virtualenv and points ``ECOM_FLOORS_VENV`` at it (installing needs the package
index, which tests never touch); without it this test is skipped. One task per
benchmark runs through each framework's command line in both virtualenvs, and
every status, sample count and metric must agree: the suite checks the numbers
themselves on the newest versions, this checks that the floors reproduce them.

``python tests/test_version_floors.py`` prints the pins (``inspect-ai==X lm-eval==Y``).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO_DIR, check_ok, run_cli
from packaging.requirements import Requirement

FRAMEWORKS = ("inspect-ai", "lm-eval")
#: One task per benchmark (RMIR is Inspect-only and calls no chat model: ``--model none``).
INSPECT_RUNS = (
    (("ecom_tasks/monbench_canonical", "ecom_tasks/rair_general", "ecom_tasks/ecomeval_exact"), "ecom/baseline"),
    (("ecom_tasks/rmir",), "none"),
)
LM_EVAL_TASKS = ("monbench_canonical", "rair_general", "ecomeval_exact")
#: Settings a user gives must reach the tasks: lm-eval 0.4.10-0.4.11 never pass --metadata to a
#: `class:` task (our tasks), so there these would be silently ignored. 3 questions per MonBench
#: task (the fixtures have 10); RAIR with our rules document.
LM_EVAL_METADATA = '{"questions": 3, "rules": "builtin"}'


def floor_pins() -> list[str]:
    """``name==floor`` for each framework, from the ``>=`` bound of its requirement in pyproject.toml."""
    dependencies = tomllib.loads((REPO_DIR / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    pins = {}
    for line in dependencies:
        requirement = Requirement(line)
        if requirement.name in FRAMEWORKS:
            [floor] = [spec.version for spec in requirement.specifier if spec.operator == ">="]
            pins[requirement.name] = f"{requirement.name}=={floor}"
    return [pins[name] for name in FRAMEWORKS]


def inspect_results(log_dir: Path) -> dict[str, dict[str, Any]]:
    from inspect_ai.log import list_eval_logs, read_eval_log

    results = {}
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info, header_only=True)
        metrics = {
            f"{score.name}/{name}": metric.value
            for score in log.results.scores
            for name, metric in score.metrics.items()
        }
        results[log.eval.task] = {"status": log.status, "samples": log.results.completed_samples, **metrics}
    return results


def lm_eval_results(output_path: Path) -> dict[str, dict[str, Any]]:
    import json

    [results_file] = output_path.glob("**/results_*.json")
    data = json.loads(results_file.read_text(encoding="utf-8"))
    results = {}
    for task, values in data["results"].items():
        # Metrics only: each version adds its own bookkeeping keys (alias, sample_len, stderr "N/A").
        results[task] = {key: value for key, value in values.items() if "," in key and "_stderr," not in key}
        results[task]["samples"] = data["n-samples"][task]["effective"] if task in data["n-samples"] else None
    return results


def run_benchmarks(bin_dir: Path, out: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """Each framework's command line from ``bin_dir``, offline and under the network guard."""
    for tasks, model in INSPECT_RUNS:
        check_ok(
            run_cli([str(bin_dir / "inspect"), "eval", *tasks, "--model", model, "--log-dir", str(out / "inspect")])
        )
    check_ok(
        run_cli(
            [
                str(bin_dir / "ecom-lm-eval"),
                "--tasks",
                ",".join(LM_EVAL_TASKS),
                "--model",
                "ecom-baseline",
                "--metadata",
                LM_EVAL_METADATA,
                "--output_path",
                str(out / "lm_eval"),
            ]
        )
    )
    return {"inspect": inspect_results(out / "inspect"), "lm_eval": lm_eval_results(out / "lm_eval")}


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


@pytest.mark.slow
def test_floors_give_the_newest_versions_numbers(tmp_path: Path) -> None:
    venv = os.environ.get("ECOM_FLOORS_VENV")
    if not venv:
        pytest.skip("ECOM_FLOORS_VENV is unset: .ci/run installs the floors and sets it")
    floors_bin = Path(venv).resolve() / "bin"
    installed = subprocess.run(
        [
            str(floors_bin / "python"),
            "-c",
            "import importlib.metadata as m; print(*(f'{n}=={m.version(n)}' for n in ('inspect-ai', 'lm-eval')))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert installed == floor_pins(), "the floors virtualenv does not hold pyproject.toml's floors"

    floors = run_benchmarks(floors_bin, tmp_path / "floors")
    newest = run_benchmarks(Path(sys.executable).parent, tmp_path / "newest")

    assert set(floors["inspect"]) == {task for tasks, _ in INSPECT_RUNS for task in tasks}
    for task, values in newest["inspect"].items():
        assert values["status"] == "success" and values["samples"] > 0, (task, values)
    assert {task for task in newest["lm_eval"] if task in LM_EVAL_TASKS} == set(LM_EVAL_TASKS)
    assert newest["lm_eval"]["monbench_canonical_query_ad_relevance"]["samples"] == 3  # the metadata arrived
    for framework in ("inspect", "lm_eval"):
        assert set(floors[framework]) == set(newest[framework]), framework
        for task, expected in newest[framework].items():
            got = floors[framework][task]
            assert set(got) == set(expected), (framework, task, set(got) ^ set(expected))
            differ = {key: (got[key], value) for key, value in expected.items() if not same(got[key], value)}
            assert not differ, f"{framework} {task}: floors vs newest {differ}"


if __name__ == "__main__":
    print(*floor_pins())
