#!/usr/bin/env python
"""Per-sample overhead of our framework integration vs a *bare* task, same samples, same stub model.

Inspect: ``ecom_tasks/monbench`` (our task from ``ecom_tasks.inspect_evals.monbench``:
our Samples, ``monbench_scorer`` with dict-valued scores, the ``monbench_summary``
metric, the ``outcome_mean`` epoch reducer) vs a bare
``inspect_ai.Task`` over the *same* Sample objects with ``generate()`` and the
built-in ``match()`` scorer. Both run on ``ecom/baseline`` (our offline
deterministic model), ``display="none"``, a temp ``log_dir``, default
``max_connections``, one epoch. The wall clock (and process CPU time) of the
``inspect_ai.eval()`` call is measured; building the Task is timed apart.

lm-eval: ``lm_eval.simple_evaluate`` of the four ``monbench_<variant>_<task>`` tasks
(``monbench_perm_<task>`` for design=full, ``monbench_cyclic_<task>`` for cyclic,
``monbench_canonical_<task>`` for canonical) vs the four bare tasks of ``benchmarks/bare_lm_eval_task/`` (same expanded
documents, pre-written to JSONL by this script; built-in ``exact_match`` with
``aggregation: mean``; no custom filter, process_results or aggregation).
Model ``ecom-baseline``, ``bootstrap_iters=0``, one shared TaskManager built
outside the timed region (indexing lm-eval's own task tree takes seconds and is
the same for both).

Repetitions alternate the order (ours/bare, bare/ours, ...) after one untimed
warm-up of each; medians are reported. The machine may be shared: the load
average is printed, and CPU time is reported beside wall time because it is
less sensitive to other processes.

    .venv/bin/python benchmarks/overhead.py            # full design: 2880 samples (40 questions x 72)
    .venv/bin/python benchmarks/overhead.py --quick    # cyclic design: 480 samples
    .venv/bin/python benchmarks/overhead.py --profile  # + one cProfile run of each side
    .venv/bin/python benchmarks/overhead.py --no-live-metrics  # + Inspect runs with score_display=False
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BARE_LM_EVAL_DIR = REPO / "benchmarks" / "bare_lm_eval_task"

# Offline settings must be in place before inspect / lm-eval / datasets are imported.
from ecom_tasks.offline import apply_offline  # noqa: E402

apply_offline()
os.environ.setdefault("TQDM_DISABLE", "1")  # lm-eval's per-task progress bars

import argparse  # noqa: E402
import cProfile  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import platform  # noqa: E402
import pstats  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from importlib.metadata import version  # noqa: E402
from typing import Any  # noqa: E402

TARGET_RATIO = 1.05


# --------------------------------------------------------------------------- timing helpers


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall seconds, process CPU seconds, result) of one call, after a GC pass."""
    gc.collect()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall0, time.process_time() - cpu0, result


def alternate(reps: int, runners: dict[str, Callable[[], Any]], label: str) -> dict[str, dict[str, list[float]]]:
    """Run each side ``reps`` times, alternating which goes first; print each timing."""
    names = list(runners)
    out: dict[str, dict[str, list[float]]] = {n: {"wall": [], "cpu": []} for n in names}
    for rep in range(reps):
        order = names if rep % 2 == 0 else names[::-1]
        for name in order:
            wall, cpu, _ = timed(runners[name])
            out[name]["wall"].append(wall)
            out[name]["cpu"].append(cpu)
            print(f"  [{label}] rep {rep + 1}/{reps} {name:<5} wall {wall:7.2f}s  cpu {cpu:7.2f}s", flush=True)
    return out


def profile_call(fn: Callable[[], Any]) -> pstats.Stats:
    gc.collect()
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        fn()
    finally:
        profiler.disable()
    return pstats.Stats(profiler, stream=io.StringIO())


def cumtime(stats: pstats.Stats, path_part: str, func: str) -> tuple[float, int]:
    """Cumulative seconds and primitive call count of functions ``func`` in files containing ``path_part``."""
    total, calls = 0.0, 0
    for (filename, _line, name), (cc, _nc, _tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if name == func and path_part in filename.replace(os.sep, "/"):
            total += ct
            calls += cc
    return total, calls


def total_time(stats: pstats.Stats) -> float:
    return stats.total_tt  # type: ignore[attr-defined]


def print_buckets(title: str, sides: dict[str, pstats.Stats], buckets: dict[str, dict[str, tuple[str, str]]]) -> None:
    """Side-by-side cumulative times of chosen functions (profiled seconds: inflated by cProfile)."""
    print(f"\n{title} (cProfile; absolute times are inflated by the profiler, compare the sides)")
    names = list(sides)
    header = f"  {'where':<52}" + "".join(f"{n:>22}" for n in names)
    print(header)
    print(f"  {'total profiled time':<52}" + "".join(f"{total_time(sides[n]):>20.2f}s " for n in names))
    for label, per_side in buckets.items():
        cells = []
        for n in names:
            spec = per_side.get(n)
            if spec is None:
                cells.append(f"{'-':>22}")
                continue
            seconds, calls = cumtime(sides[n], *spec)
            cells.append(f"{seconds:>12.2f}s ({calls:>6}x)")
        print(f"  {label:<52}" + "".join(cells))


def top_functions(stats: pstats.Stats, pattern: str, limit: int = 12) -> str:
    stream = io.StringIO()
    stats.stream = stream  # type: ignore[attr-defined]
    stats.sort_stats("cumulative").print_stats(pattern, limit)
    lines = [line for line in stream.getvalue().splitlines() if line.strip() and "/" in line]
    return "\n".join("    " + line.replace(str(REPO) + "/", "").replace(sys.prefix + "/lib/", "") for line in lines)


class FunctionTimers:
    """Low-overhead attribution: CPU time of the calling thread spent inside chosen sync functions.

    cProfile inflates code made of many tiny Python calls (e.g. ``statistics.mean``)
    far more than the rest, which skews an ours-vs-bare comparison; wrapping a few
    functions with ``time.thread_time()`` does not. Nested entries are included
    in their parents. Targets are patched where they are looked up at call time
    and restored on exit.
    """

    def __init__(self, targets: dict[str, tuple[Any, str]]):
        self.targets = targets
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self._saved: list[tuple[Any, str, Any]] = []

    def __enter__(self) -> FunctionTimers:
        for label, (owner, name) in self.targets.items():
            original = getattr(owner, name)
            self._saved.append((owner, name, original))
            self.seconds[label], self.calls[label] = 0.0, 0

            def wrapper(*a: Any, __f: Any = original, __label: str = label, **k: Any) -> Any:
                start = time.thread_time()
                try:
                    return __f(*a, **k)
                finally:
                    self.seconds[__label] += time.thread_time() - start
                    self.calls[__label] += 1

            setattr(owner, name, wrapper)
        return self

    def __exit__(self, *exc: Any) -> None:
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)


def inspect_timer_targets() -> dict[str, tuple[Any, str]]:
    import rich.live
    from inspect_ai._eval.task import run as task_run
    from inspect_ai.log._recorders.buffer import database
    from inspect_ai.scorer._reducer import reducer

    import ecom_tasks.inspect_evals.models as ecom_models
    import ecom_tasks.inspect_evals.monbench as inspect_monbench

    # Patched where they are looked up at call time: the names imported into the adapter modules.
    return {
        "model: ecom baseline_reply()": (ecom_models, "baseline_reply"),
        "scorer: our score_reply()": (inspect_monbench, "score_reply"),
        "metrics: eval_results (live + final)": (task_run, "eval_results"),
        "  epoch reducer, dict scores": (reducer, "_compute_dict_stat"),
        "  epoch reducer, scalar scores": (reducer, "_compute_scalar_stat"),
        "  our summarize() (monbench_summary)": (inspect_monbench, "summarize"),
        "sample buffer: sqlite log_events": (database.SampleBufferDatabase, "log_events"),
        "end of run: results table (rich Live.stop)": (rich.live.Live, "stop"),
    }


def print_timer_table(title: str, sides: dict[str, tuple[float, FunctionTimers]]) -> None:
    names = list(sides)
    print(f"\n{title}")
    print(f"  {'where (thread CPU seconds, calls)':<46}" + "".join(f"{n:>20}" for n in names))
    print(f"  {'whole eval() (process CPU)':<46}" + "".join(f"{sides[n][0]:>18.2f}s " for n in names))
    labels = list(next(iter(sides.values()))[1].seconds)
    for label in labels:
        cells = []
        for n in names:
            timers = sides[n][1]
            cells.append(
                f"{timers.seconds[label]:>9.3f}s ({timers.calls[label]:>6}x)" if timers.calls[label] else f"{'-':>20}"
            )
        print(f"  {label:<46}" + "".join(cells))


def med(values: list[float]) -> float:
    return statistics.median(values)


def summary_rows(
    n: int, res: dict[str, dict[str, list[float]]], ours: str = "ours", bare: str = "bare"
) -> dict[str, float]:
    o_wall, b_wall = med(res[ours]["wall"]), med(res[bare]["wall"])
    o_cpu, b_cpu = med(res[ours]["cpu"]), med(res[bare]["cpu"])
    return {
        "n": n,
        "ours_wall_s": o_wall,
        "bare_wall_s": b_wall,
        "ours_cpu_s": o_cpu,
        "bare_cpu_s": b_cpu,
        "ours_ms_per_sample": 1000 * o_wall / n,
        "bare_ms_per_sample": 1000 * b_wall / n,
        "diff_ms_per_sample": 1000 * (o_wall - b_wall) / n,
        "ratio_wall": o_wall / b_wall,
        "ratio_cpu": o_cpu / b_cpu,
        "ours_wall_all": res[ours]["wall"],
        "bare_wall_all": res[bare]["wall"],
    }


def print_table(rows: dict[str, dict[str, float]]) -> None:
    print(
        f"\n{'framework':<28}{'samples':>8}{'ours s':>9}{'bare s':>9}{'ours ms/s':>11}{'bare ms/s':>11}"
        f"{'diff ms/s':>11}{'ratio wall':>12}{'ratio cpu':>11}  target<={TARGET_RATIO}"
    )
    for name, r in rows.items():
        verdict = "ok" if r["ratio_wall"] <= TARGET_RATIO else "OVER"
        print(
            f"{name:<28}{int(r['n']):>8}{r['ours_wall_s']:>9.2f}{r['bare_wall_s']:>9.2f}"
            f"{r['ours_ms_per_sample']:>11.3f}{r['bare_ms_per_sample']:>11.3f}{r['diff_ms_per_sample']:>11.3f}"
            f"{r['ratio_wall']:>11.3f}x{r['ratio_cpu']:>10.3f}x  {verdict}"
        )


# --------------------------------------------------------------------------- Inspect


def inspect_benchmark(args: argparse.Namespace, log_dir: str, rows: dict[str, dict[str, float]]) -> dict[str, Any]:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    import ecom_tasks._registry  # noqa: F401  (registers the ecom/ model provider and our tasks)
    from ecom_tasks.inspect_evals.monbench import monbench

    model = "ecom/baseline"

    # The formats of the variant with this design (all three for full and cyclic; label for canonical),
    # so that both frameworks run the same samples.
    from ecom_tasks.monbench.variants import VARIANTS

    formats = {v.design: v.formats for v in VARIANTS.values() if len(v.tasks) > 1}[args.design]

    def build_ours():
        return monbench(design=args.design, formats=",".join(formats))

    def build_bare(ours_task):
        # The very same model calls, one Sample per call (our Samples hold a question's runs).
        from inspect_ai.dataset import MemoryDataset, Sample

        from ecom_tasks.solvers.fan_out import FAN_OUT, run_messages

        samples = [
            Sample(id=f"{sample.id}_{run['key']}", input=run_messages(sample.metadata[FAN_OUT], run), target="A")
            for sample in ours_task.dataset
            for run in sample.metadata[FAN_OUT]["runs"]
        ]
        return Task(dataset=MemoryDataset(samples), solver=generate(), scorer=match(), name="bare_monbench")

    build_wall, _, ours_task = timed(build_ours)
    n = sum(len(sample.metadata["runs"]) for sample in ours_task.dataset)
    print(
        f"\nInspect: design={args.design}, {n} model calls ({len(ours_task.dataset)} questions), model {model}; building our Task took {build_wall:.2f}s"
    )

    def run(task, **extra):
        logs = inspect_eval(task, model=model, display="none", log_dir=log_dir, **extra)
        if logs[0].status != "success":
            raise RuntimeError(f"{task.name}: {logs[0].status} {logs[0].error}")
        return logs[0]

    # Warm-up (imports, registry, first-call costs), untimed.
    warm = monbench(design="canonical", formats="label")
    run(warm)
    run(build_bare(warm))

    tasks: dict[str, Any] = {}

    def ours(**extra):
        return lambda: run(tasks["ours"], **extra)

    def bare(**extra):
        return lambda: run(tasks["bare"], **extra)

    tasks["ours"] = ours_task
    tasks["bare"] = build_bare(ours_task)
    res = alternate(args.inspect_reps, {"ours": ours(), "bare": bare()}, "inspect")
    rows[f"inspect ({args.design})"] = summary_rows(n, res)
    print_table({f"inspect ({args.design})": rows[f"inspect ({args.design})"]})
    if args.no_live_metrics:
        res = alternate(
            args.inspect_reps,
            {"ours": ours(score_display=False), "bare": bare(score_display=False)},
            "inspect, score_display=False",
        )
        rows[f"inspect ({args.design}) no live"] = summary_rows(n, res)

    # Fixed start-up cost of an eval() call: a 1-sample run of each.
    one = monbench(design="canonical", formats="label", task="query_ad_relevance")
    one_bare = build_bare(one)
    fixed = alternate(
        3, {"ours": lambda: run(one, limit=1), "bare": lambda: run(one_bare, limit=1)}, "inspect, 1 sample"
    )
    fixed_cost = {k: med(v["wall"]) for k, v in fixed.items()}

    if args.profile:
        print("  timing selected functions in one more run of each side ...", flush=True)
        breakdown = {}
        for side, fn in (("ours", ours()), ("bare", bare())):
            with FunctionTimers(inspect_timer_targets()) as timers:
                _, cpu, _ = timed(fn)
            breakdown[side] = (cpu, timers)
        print_timer_table("Inspect breakdown (one run each)", breakdown)
        print("  profiling one run of each side with cProfile ...", flush=True)
        prof = {"ours": profile_call(ours()), "bare": profile_call(bare())}
        print_buckets("Inspect profile", prof, INSPECT_BUCKETS)
        print("  top ecom_tasks functions (ours, cumulative):")
        print(top_functions(prof["ours"], "ecom_tasks", 10), flush=True)
    return {"build_ours_s": build_wall, "fixed_eval_s": fixed_cost}


INSPECT_BUCKETS = {
    "model generate (ecom/baseline)": {
        "ours": ("ecom_tasks/inspect_evals/models.py", "generate"),
        "bare": ("ecom_tasks/inspect_evals/models.py", "generate"),
    },
    "scorer: monbench_scorer / match()": {
        "ours": ("ecom_tasks/inspect_evals/monbench.py", "score"),
        "bare": ("inspect_ai/scorer/_common.py", "score"),
    },
    "metrics: eval_results (live + final)": {
        "ours": ("inspect_ai/_eval/task/results.py", "eval_results"),
        "bare": ("inspect_ai/_eval/task/results.py", "eval_results"),
    },
    "  of which epoch reducers (reducer.reduce)": {
        "ours": ("inspect_ai/scorer/_reducer/reducer.py", "reduce"),
        "bare": ("inspect_ai/scorer/_reducer/reducer.py", "reduce"),
    },
    "    dict-valued scores: _compute_dict_stat": {
        "ours": ("inspect_ai/scorer/_reducer/reducer.py", "_compute_dict_stat"),
        "bare": ("inspect_ai/scorer/_reducer/reducer.py", "_compute_dict_stat"),
    },
    "    scalar scores: _compute_scalar_stat": {
        "ours": ("inspect_ai/scorer/_reducer/reducer.py", "_compute_scalar_stat"),
        "bare": ("inspect_ai/scorer/_reducer/reducer.py", "_compute_scalar_stat"),
    },
    "  of which our monbench_summary metric": {"ours": ("ecom_tasks/inspect_evals/monbench.py", "compute")},
    "per-sample log writing (log_sample)": {
        "ours": ("inspect_ai/_eval/task/run.py", "log_sample"),
        "bare": ("inspect_ai/_eval/task/run.py", "log_sample"),
    },
    "live sample buffer (sqlite log_events)": {
        "ours": ("inspect_ai/log/_recorders/buffer/database.py", "log_events"),
        "bare": ("inspect_ai/log/_recorders/buffer/database.py", "log_events"),
    },
    "end-of-run results table (rich Live.stop)": {"ours": ("rich/live.py", "stop"), "bare": ("rich/live.py", "stop")},
}


# --------------------------------------------------------------------------- lm-eval


def lm_eval_benchmark(args: argparse.Namespace, work: str, rows: dict[str, dict[str, float]]) -> dict[str, Any]:
    for name in ("lm-eval", "lm_eval", "lm_eval.evaluator", "lm_eval.tasks", "lm_eval.api.task"):
        logging.getLogger(name).setLevel(logging.ERROR)
    import lm_eval

    from ecom_tasks.lm_eval_tasks import task_manager
    from ecom_tasks.lm_eval_tasks.monbench.utils import load_docs
    from ecom_tasks.monbench.schema import TASKS
    from ecom_tasks.monbench.variants import VARIANTS

    # Our lm-eval task names fix the design: monbench_perm_<task> (full), monbench_cyclic_<task>, ...
    variant = {v.design: name for name, v in VARIANTS.items() if len(v.tasks) > 1}[args.design]
    ours_names = {task: f"{variant}_{task}" for task in TASKS}

    def load_ours(task: str):
        """Our documents for one task, exactly as the task's YAML asks for them (its dataset_kwargs)."""
        v = VARIANTS[ours_names[task]]
        return load_docs(list(v.tasks), design=v.design, formats=list(v.formats))

    docs_dir = Path(work) / "bare_docs"
    docs_dir.mkdir()
    n = 0
    for task in TASKS:
        docs = load_ours(task)["test"]
        n += len(docs)
        with (docs_dir / f"{task}.jsonl").open("w", encoding="utf-8") as handle:
            for doc in docs:
                handle.write(json.dumps(doc, ensure_ascii=False) + "\n")

    tm_wall, _, tm = timed(
        lambda: task_manager(
            include_defaults=False, include_path=[str(BARE_LM_EVAL_DIR)], metadata={"docs_dir": str(docs_dir)}
        )
    )
    print(
        f"\nlm-eval: design={args.design}, {n} documents, model ecom-baseline; one shared TaskManager (include_defaults=False: lm-eval's own task tree is not indexed) built in {tm_wall:.2f}s, untimed"
    )
    task_names = {"ours": [ours_names[t] for t in TASKS], "bare": [f"bare_monbench_{t}" for t in TASKS]}
    last: dict[str, Any] = {}

    def run(side: str):
        def go():
            results = lm_eval.simple_evaluate(
                model="ecom-baseline", tasks=task_names[side], task_manager=tm, bootstrap_iters=0
            )
            last[side] = results
            return results

        return go

    run("ours")()
    run("bare")()  # warm-up
    res = alternate(args.lm_eval_reps, {"ours": run("ours"), "bare": run("bare")}, "lm-eval")
    rows[f"lm-eval ({args.design})"] = summary_rows(n, res)
    print_table({f"lm-eval ({args.design})": rows[f"lm-eval ({args.design})"]})

    # Sanity: both sides score the same replies the same way (acc == exact_match per task).
    agree = []
    for task in TASKS:
        ours_acc = last["ours"]["results"][ours_names[task]]["acc,none"]
        bare_acc = float(last["bare"]["results"][f"bare_monbench_{task}"]["exact_match,none"])
        agree.append((task, ours_acc, bare_acc))

    # Dataset construction on its own: our expansion from the records vs reading the pre-expanded JSONL.
    from importlib import util as import_util

    spec = import_util.spec_from_file_location("bare_lm_eval_utils", BARE_LM_EVAL_DIR / "utils.py")
    bare_utils = import_util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(bare_utils)  # type: ignore[union-attr]
    build = alternate(
        3,
        {
            "ours": lambda: [load_ours(t) for t in TASKS],
            "bare": lambda: [bare_utils.load_docs(t, docs_dir=str(docs_dir)) for t in TASKS],
        },
        "lm-eval dataset build only",
    )
    if args.profile:
        print("  profiling one run of each side ...", flush=True)
        prof = {"ours": profile_call(run("ours")), "bare": profile_call(run("bare"))}
        print_buckets("lm-eval profile", prof, LM_EVAL_BUCKETS)
        print("  top ecom_tasks functions (ours, cumulative):")
        print(top_functions(prof["ours"], "ecom_tasks", 10), flush=True)
    return {
        "taskmanager_s": tm_wall,
        "agree": agree,
        "dataset_build_s": {k: med(v["wall"]) for k, v in build.items()},
    }


LM_EVAL_BUCKETS = {
    "whole simple_evaluate": {
        "ours": ("lm_eval/evaluator.py", "simple_evaluate"),
        "bare": ("lm_eval/evaluator.py", "simple_evaluate"),
    },
    "dataset: our load_docs (expand) / bare load_docs (JSONL)": {
        "ours": ("ecom_tasks/lm_eval_tasks/monbench/utils.py", "load_docs"),
        "bare": ("bare_lm_eval_task/utils.py", "load_docs"),
    },
    "  of which load_records (datasets.load_dataset)": {"ours": ("ecom_tasks/monbench/schema.py", "load_records")},
    "requests: build_all_requests (prompt rendering)": {
        "ours": ("lm_eval/api/task.py", "build_all_requests"),
        "bare": ("lm_eval/api/task.py", "build_all_requests"),
    },
    "  of which jinja Template compile (description)": {
        "ours": ("jinja2/environment.py", "from_string"),
        "bare": ("jinja2/environment.py", "from_string"),
    },
    "model generate_until (ecom-baseline)": {
        "ours": ("ecom_tasks/lm_eval_tasks/models.py", "generate_until"),
        "bare": ("ecom_tasks/lm_eval_tasks/models.py", "generate_until"),
    },
    "filters (apply_filters)": {
        "ours": ("lm_eval/api/task.py", "apply_filters"),
        "bare": ("lm_eval/api/task.py", "apply_filters"),
    },
    "per-doc process_results": {
        "ours": ("ecom_tasks/scorers/lm_eval.py", "process_results"),  # OutcomeTask's own
        "bare": ("lm_eval/api/task.py", "process_results"),
    },
    "  of which our score_reply": {"ours": ("ecom_tasks/monbench/scoring.py", "score_reply")},
    "aggregation (_compute_task_aggregations)": {
        "ours": ("lm_eval/evaluator_utils.py", "_compute_task_aggregations"),
        "bare": ("lm_eval/evaluator_utils.py", "_compute_task_aggregations"),
    },
    "  of which our summarize() calls": {"ours": ("ecom_tasks/monbench/metrics.py", "summarize")},
}


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="design=cyclic (480 samples) instead of full (2880)")
    parser.add_argument(
        "--design", choices=("full", "cyclic", "canonical"), help="MonBench design (default: full; cyclic with --quick)"
    )
    parser.add_argument(
        "--inspect-reps", type=int, default=2, help="timed runs per side (default 2: ours-bare, bare-ours)"
    )
    parser.add_argument("--lm-eval-reps", type=int, default=5)
    parser.add_argument("--skip-inspect", action="store_true")
    parser.add_argument("--skip-lm-eval", action="store_true")
    parser.add_argument("--no-live-metrics", action="store_true", help="also time Inspect with score_display=False")
    parser.add_argument("--profile", action="store_true", help="cProfile one run of each side and show where time goes")
    parser.add_argument("--json", help="write the measurements to this file")
    args = parser.parse_args(argv)
    args.design = args.design or ("cyclic" if args.quick else "full")

    load = os.getloadavg()
    print(
        f"ecom-tasks overhead benchmark  {datetime.datetime.now():%Y-%m-%d %H:%M}  python {platform.python_version()}  "
        f"cores {os.cpu_count()}  load avg {load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f}  "
        f"inspect-ai {version('inspect-ai')}  lm-eval {version('lm-eval')}"
    )
    rows: dict[str, dict[str, float]] = {}
    extra: dict[str, Any] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ecom-bench-") as work:
        if not args.skip_inspect:
            extra["inspect"] = inspect_benchmark(args, os.path.join(work, "logs"), rows)
        if not args.skip_lm_eval:
            extra["lm_eval"] = lm_eval_benchmark(args, work, rows)

    print("\n==== summary (medians)")
    print_table(rows)
    if "inspect" in extra:
        info = extra["inspect"]
        f = info["fixed_eval_s"]
        print(
            f"\nInspect fixed cost of one eval() call (1 sample): ours {f['ours']:.2f}s, bare {f['bare']:.2f}s; "
            f"building our Task (load + expand + Samples): {info['build_ours_s']:.2f}s (not in the eval() timings)"
        )
    if "lm_eval" in extra:
        info = extra["lm_eval"]
        b = info["dataset_build_s"]
        print(
            f"lm-eval dataset build alone (4 tasks): ours load_docs {b['ours']:.3f}s vs bare JSONL {b['bare']:.3f}s "
            f"(inside the simple_evaluate timings)"
        )
        print("lm-eval sanity, acc (ours) vs exact_match (bare) per task:")
        for task, ours_acc, bare_acc in info["agree"]:
            print(
                f"  {task:<26} {ours_acc:.4f} {bare_acc:.4f} {'same' if abs(ours_acc - bare_acc) < 1e-9 else 'DIFFERENT'}"
            )
    print(f"\ntotal benchmark time {time.perf_counter() - started:.0f}s")
    if args.json:
        payload = {
            "rows": rows,
            "args": vars(args),
            "load_avg": load,
            "inspect": extra.get("inspect", {}),
            "lm_eval": extra.get("lm_eval", {}),
        }
        Path(args.json).write_text(json.dumps(payload, indent=2, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
