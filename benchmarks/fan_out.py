#!/usr/bin/env python
"""Whole-process CPU of MonBench in Inspect: one Sample per question (ours) vs one Sample per call.

Three ``inspect eval`` processes over the very same model calls, each timed
by the CPU time of the whole child process (``resource.getrusage``):

1. **ours**: ``inspect eval ecom_tasks/monbench_perm --model ecom/baseline``:
   one Sample per question, its 72 runs generated inside it by the
   ``fan_out_generate`` solver, scored and summarized by our scorer and metric;
2. **bare, one Sample per call** (the old design's shape): a bare task whose
   Samples are exactly the prompts of ours' model events, ``generate()`` and
   ``match()``;
3. **bare fan-out**: the same prompts grouped per question, ``fan_out_generate``
   and a constant scorer: the cost of the fan-out itself, without our scoring.

The issue's goal: ours <= 0.4 x bare one-Sample-per-call. Run:

    .venv/bin/python benchmarks/fan_out.py            # the fixtures, full design (1,872 calls)
    .venv/bin/python benchmarks/fan_out.py --reps 3   # medians of three
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
TASK_FILE = HERE / "bare_inspect_tasks.py"


def child_cpu(args: list[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one child process run to completion."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        args, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tempfile.gettempdir()
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def recorded_calls(log_dir: Path) -> list[dict[str, object]]:
    """Every model call of our run, as (question id, system, user), from the log's model events."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    (info,) = list_eval_logs(str(log_dir))
    log = read_eval_log(info)
    calls = []
    for sample in log.samples or []:
        for event in sample.events:
            if event.event == "model":
                system, user = (m.text for m in event.input)
                calls.append({"question": str(sample.id), "system": system, "user": user})
    return calls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1)
    args = parser.parse_args()

    from ecom_tasks.offline import apply_offline

    apply_offline()
    env = dict(os.environ)
    inspect = str(BIN / "inspect")
    common = ["--model", "ecom/baseline", "--display", "none", "--log-level", "warning"]
    results: dict[str, list[float]] = {"ours": [], "bare, one Sample per call": [], "bare fan-out": []}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        for rep in range(args.reps):
            ours_logs = tmp_path / f"ours-{rep}"
            results["ours"].append(
                child_cpu([inspect, "eval", "ecom_tasks/monbench_perm", *common, "--log-dir", str(ours_logs)], env)
            )
            calls_file = tmp_path / "calls.jsonl"
            if rep == 0:
                calls = recorded_calls(ours_logs)
                calls_file.write_text("\n".join(json.dumps(c) for c in calls), encoding="utf-8")
                print(f"{len(calls)} model calls in {len({c['question'] for c in calls})} questions")
            for name, task in (("bare, one Sample per call", "bare_per_call"), ("bare fan-out", "bare_fan_out")):
                results[name].append(
                    child_cpu(
                        [
                            inspect,
                            "eval",
                            f"{TASK_FILE}@{task}",
                            "-T",
                            f"calls={calls_file}",
                            *common,
                            "--log-dir",
                            str(tmp_path / f"{task}-{rep}"),
                        ],
                        env,
                    )
                )
    medians = {name: statistics.median(values) for name, values in results.items()}
    for name, value in medians.items():
        print(f"{name:<28} {value:7.2f} s CPU (whole process; runs: {', '.join(f'{v:.2f}' for v in results[name])})")
    ratio = medians["ours"] / medians["bare, one Sample per call"]
    print(f"ours / bare one Sample per call = {ratio:.3f} (goal <= 0.4)")
    print(f"ours / bare fan-out             = {medians['ours'] / medians['bare fan-out']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
