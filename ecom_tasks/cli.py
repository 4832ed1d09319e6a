"""``ecom-tasks``: list what is installed, validate data, point lm-eval at our tasks, run the demo."""

from __future__ import annotations

import argparse
import collections
import contextlib
import inspect
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TextIO

from ecom_tasks.errors import printable
from ecom_tasks.offline import apply_safe_defaults

#: The demo: every benchmark on the bundled fixtures with the offline baseline.
DEMO_INSPECT_TASKS = (
    "ecom_tasks/monbench_perm",
    "ecom_tasks/rair_general",
    "ecom_tasks/rair_hard",
    "ecom_tasks/rair_visual",
    "ecom_tasks/ecomeval",
    "ecom_tasks/rmir",
    "ecom_tasks/rmir_reason",
)
DEMO_LM_EVAL_TASKS = ("monbench_perm", "rair", "ecomeval_exact")
#: Judge-graded tasks (EcomEval) use the baseline as their grader too (a baseline judge, not a real one).
DEMO_MODEL_ROLES = {"grader": "ecom/baseline"}


def _inspect_objects() -> list[tuple[str, str]]:
    """(kind, name) of every Inspect object our entry point registers."""
    from inspect_ai.util import registry_info

    import ecom_tasks._registry as registry

    found = []
    for value in vars(registry).values():
        try:
            info = registry_info(value)
        except ValueError:  # not an Inspect registry object (a module, a helper)
            continue
        found.append((info.type, info.name))
    return sorted(set(found))


def _lm_eval_entries() -> list[tuple[str, str, str]]:
    """(kind, name, source) of every lm-eval task/group in our and plugins' folders."""
    from lm_eval.tasks import TaskManager

    from ecom_tasks.plugins import contributions

    rows = []
    for plugin, dirs in contributions("ecom_tasks_lm_eval_task_dirs"):
        for folder in dirs:
            manager = TaskManager(include_path=[str(folder)], include_defaults=False)
            groups = set(manager.all_groups)
            names = manager.all_groups + manager.all_subtasks
            rows += [("group" if name in groups else "task", name, f"{plugin}: {folder}") for name in names]
    return rows


def cmd_list(args: argparse.Namespace) -> int:
    from ecom_tasks import plugins

    echo("Plugins (entry-point group 'ecom_tasks'):")
    for name, plugin in plugins.plugin_manager().list_name_plugin():
        echo(f"  {name:<28} {getattr(plugin, '__name__', type(plugin).__name__)}")
    echo("\nInspect (run as: inspect eval ecom_tasks/<task> --model ...):")
    for kind, name in _inspect_objects():
        echo(f"  {kind:<10} {name}")
    echo("\nlm-eval tasks and groups (run with ecom-lm-eval --tasks <name>):")
    for kind, name, source in _lm_eval_entries():
        echo(f"  {kind:<10} {name:<42} [{source}]")
    echo("\nMetrics (computed by every benchmark of their kind; select with -T metrics= / --metadata metrics):")
    for plugin, specs in plugins.contributions("ecom_tasks_metrics"):
        for spec in specs:
            echo(f"  {spec.name:<28} {spec.kind:<12} [{plugin}] {spec.description}")
    echo("\nRetrievers:")
    for plugin, mapping in plugins.contributions("ecom_tasks_retrievers"):
        for name in mapping:
            echo(f"  {name:<28} [{plugin}]")
    echo("\nDatasets (ecom-tasks validate <name> <data>):")
    for plugin, specs in plugins.contributions("ecom_tasks_datasets"):
        for spec in specs:
            echo(f"  {spec.name:<28} [{plugin}] {spec.description}")
    return 0


def cmd_lm_eval_path(args: argparse.Namespace) -> int:
    from ecom_tasks.lm_eval_tasks import TASKS_DIR, task_dirs

    # One path per line: lm-eval's --include_path takes a single folder.
    for folder in task_dirs() if args.all else [str(TASKS_DIR)]:
        echo(folder)
    return 0


def echo(*values: object, file: TextIO | None = None, end: str = "\n", newlines: bool = True) -> None:
    """``print`` with control characters escaped (:func:`~ecom_tasks.errors.printable`; newlines too unless
    ``newlines``): the names and values shown come from files and data a colleague may have named (an ESC there
    would drive the user's terminal, a newline forge a line)."""
    print(printable(" ".join(map(str, values)), newlines=newlines), file=file, end=end)


@contextlib.contextmanager
def _our_warnings_as_lines() -> Iterator[None]:
    """Our loaders' warnings (EcomEval's ignored columns or tasks outside its list, a folder's unread
    sub-folders) as one ``WARNING:`` line each when raised, not as Python's warning quoting a source line
    of ours; other libraries' warnings are shown as Python shows them."""
    show = warnings.showwarning

    def show_ours_briefly(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if category.__module__.startswith("ecom_tasks."):
            echo(f"WARNING: {message}", file=sys.stderr)
        else:
            show(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():  # restores showwarning on leaving
        warnings.showwarning = show_ours_briefly
        yield


def cmd_validate(args: argparse.Namespace) -> int:
    from ecom_tasks import files
    from ecom_tasks.data import DataValidationError, EcomTasksError
    from ecom_tasks.images import DEFAULT_ACCESS, ImageAccess
    from ecom_tasks.names import nearest
    from ecom_tasks.plugins import datasets

    specs = datasets()
    if args.benchmark not in specs:
        meant = nearest(args.benchmark, specs)
        hint = f"; did you mean {meant[0]}?" if meant else ""
        echo(f"unknown benchmark {args.benchmark!r}; known: {', '.join(sorted(specs))}{hint}", file=sys.stderr)
        return 2
    spec = specs[args.benchmark]
    data = args.data if args.data is not None else (spec.default_data() if spec.default_data else None)
    if data is None:
        echo(f"{args.benchmark}: give the data file, folder or Hugging Face id to check", file=sys.stderr)
        return 2
    files.checked_path(data)  # a pasted blob is one short line (short_errors), not echoed whole by INVALID below
    access = ImageAccess.from_options(args.allow_outside_images, args.allow_url_images)
    with _our_warnings_as_lines():
        try:
            # Loaders without image options (MonBench, plugins' that take only the data) are called as before.
            takes_access = "image_access" in inspect.signature(spec.load).parameters
            records = (
                spec.load(data, image_access=access) if access != DEFAULT_ACCESS and takes_access else spec.load(data)
            )
        except EcomTasksError as exc:  # not a DataValidationError: a file refused outside the row reader
            problems = exc.problems if isinstance(exc, DataValidationError) else None
            for line in [str(exc)] if problems is None else problems:
                echo(line, file=sys.stderr)
            how_many = "" if problems is None else f"{len(problems)} problem(s) in "
            echo(f"INVALID: {how_many}{data}", file=sys.stderr)
            return 1
    counts = collections.Counter(
        "/".join(str(getattr(r, f)) for f in ("task", "subset", "split", "table") if hasattr(r, f)) for r in records
    )
    echo(f"OK: {len(records)} {args.benchmark} records in {data}")
    for key, count in sorted(counts.items()):
        echo(f"  {key:<40} {count}")
    return 0


@_our_warnings_as_lines()  # the fixtures' EcomEval item outside its 37 tasks is named in one line
def cmd_demo(args: argparse.Namespace) -> int:
    """Run the bundled suite with the offline baseline in both frameworks and print results."""
    from ecom_tasks.offline import apply_offline

    apply_offline()
    from inspect_ai import eval as inspect_eval

    import ecom_tasks._registry  # noqa: F401  (registers tasks when not pip-installed)
    from ecom_tasks.files import OutputFolder, create_parents
    from ecom_tasks.report import open_report_folder

    # Inspect, lm-eval and the report write below --log-dir: a symlink planted at it or at its
    # sub-folders would send them elsewhere, and an unwritable folder is found before any run.
    create_parents(Path(args.log_dir).absolute())
    output = OutputFolder(Path(args.log_dir).absolute(), what="log folder")
    output.check_writable()
    output.folder("lm-eval")
    # A colleague's report at <log-dir>/report is refused before any run; this demo's own, from a run before, is reused.
    open_report_folder(output.root / "report", option="--log-dir")
    log_dir = str(output.root)
    logs = inspect_eval(
        list(DEMO_INSPECT_TASKS),
        model="ecom/baseline",
        model_roles=dict(DEMO_MODEL_ROLES),
        log_dir=log_dir,
        display="none",
        log_level="warning",
    )
    from ecom_tasks.report import by_benchmark, format_table, inspect_rows, lm_eval_rows, write_report

    failed = False
    rows: dict[str, dict[str, float]] = {}
    for log in logs:
        if log.status != "success":
            echo(f"{log.eval.task} FAILED: {log.error}", file=sys.stderr)
            failed = True
        rows.update(inspect_rows(log))
    echo("Inspect: model ecom/baseline on the bundled fixtures")
    for table in by_benchmark(rows).values():
        echo(format_table(table), end="\n\n")
    echo(f"(logs in {log_dir}; browse with: inspect view --log-dir {log_dir})")

    import lm_eval
    from lm_eval.loggers import EvaluationTracker

    from ecom_tasks.lm_eval_tasks import task_manager

    # Saved as lm_eval --output_path saves it, so the report (and users) can read it back.
    tracker = EvaluationTracker(output_path=str(Path(log_dir) / "lm-eval"))
    results = lm_eval.simple_evaluate(
        model="ecom-baseline",
        tasks=list(DEMO_LM_EVAL_TASKS),
        task_manager=task_manager(include_defaults=False),  # our tasks only: skip lm-eval's 14,000-file index
        bootstrap_iters=0,
        evaluation_tracker=tracker,
    )
    tracker.save_results_aggregated(results=results)
    echo("\nlm-eval: model ecom-baseline on the bundled fixtures (same scoring code, same numbers)")
    for table in by_benchmark(lm_eval_rows(results)).values():
        echo(format_table(table), end="\n\n")
    # The report folder lies beside the logs it reads, never inside an input: name the logs themselves.
    report = write_report([*(log.location for log in logs), Path(log_dir) / "lm-eval"], Path(log_dir) / "report")
    echo(f"Report (the papers' tables with their published rows beside ours): {report.html}")
    if report.notice:
        echo(report.notice)
    return 1 if failed else 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    """EcomEval difficulty labels from several models' Inspect logs (Sec. 3.2)."""
    from ecom_tasks.ecomeval.calibration import (
        calibrate,
        drop_unreliable,
        local_inputs,
        log_grades,
        recorded_data,
        task_table_path,
        task_table_text,
        write_calibrated,
    )
    from ecom_tasks.files import FileRefused, OutputFolder, create_parents
    from ecom_tasks.images import ImageAccess

    def outputs(data: str | None) -> tuple[OutputFolder, Path, OutputFolder, Path]:
        """The output file and the task table, each refused when it is (or lies in) an input, and their
        folders checked writable: before any log is read, and again once the data is known."""
        inputs = local_inputs([*args.logs, data])
        out = Path(args.out)
        table = task_table_path(out, args.tasks_out)
        if table.absolute() == out.absolute():
            raise FileRefused(f"{table}: --tasks-out is the --out file; choose another")
        folders = []
        for path in (out, table):
            folder = OutputFolder(path.parent, inputs=inputs)
            create_parents(path)  # after the input check: a refused output leaves no folder inside an input
            folder.check_target(path.name)
            folder.check_writable()
            folders.append(folder)
        return folders[0], out, folders[1], table

    try:
        if args.out:
            outputs(args.data)
        grades, tasks, recorded = log_grades(list(args.logs))
        # A judge that failed on most of a task's items must not label it from the few it graded.
        grades, dropped = drop_unreliable(grades, tasks, args.judge_failure_threshold)
        items, task_rows = calibrate(grades, tasks)
    except (OSError, ValueError) as exc:
        echo(f"calibrate: {exc}", file=sys.stderr)
        return 2
    for unreliable in dropped:
        echo(f"calibrate: {unreliable}", file=sys.stderr)
    echo(f"{len(grades)} model(s): {', '.join(grades)}; {len(items)} items")
    echo(f"{'task':<40} {'items':>5} {'models':>6} {'score':>7}  difficulty")
    for task, row in task_rows.items():
        score = f"{row.score:.2f}" if row.score is not None else "-"
        echo(f"{task:<40} {row.n_items:>5} {row.n_models:>6} {score:>7}  {row.difficulty or '-'}")
    counts = collections.Counter(row.difficulty or "none (no grade)" for row in items.values())
    echo("items: " + ", ".join(f"{name} {count}" for name, count in sorted(counts.items())))
    if not args.out:
        return 0
    data = args.data
    if data is None:
        if len(recorded) != 1:
            echo(f"calibrate: give --data (the logs record {len(recorded)} data sources: {recorded})", file=sys.stderr)
            return 2
        data = recorded_data(recorded[0])
    try:
        out_folder, out, table_folder, table = outputs(data)
        access = ImageAccess.from_options(args.allow_outside_images, args.allow_url_images)
        written, missing = write_calibrated(data, items, out, image_access=access, output=out_folder)
        table_folder.write_text(table.name, task_table_text(task_rows))
    except FileRefused as exc:
        echo(f"calibrate: {exc}", file=sys.stderr)
        return 2
    echo(
        f"wrote {written} records to {out} ({missing} not in any log: difficulty left empty) and the task table to {table}"
    )
    return 0


def cmd_judge(args: argparse.Namespace) -> int:
    """EcomEval's second stage in lm-eval: grade the responses its samples files hold."""
    from ecom_tasks.ecomeval.judge_run import judge_output

    judged = judge_output(
        args.output_dir,
        args.grader,
        api_bases=args.api_base,
        tasks=args.tasks.split(",") if args.tasks else None,
        cache_dir=args.cache_dir,
        use_cache=not args.no_cache,
        method=args.panel,
        max_tokens=args.grader_max_tokens,
        failure_threshold=args.judge_failure_threshold,
        metrics=args.metrics,
        concurrency=args.concurrency,
        max_attempts=args.max_attempts,
        progress=not args.no_progress,
    )
    unreliable = 0
    for result in judged:
        m = result.metrics
        echo(
            f"{result.samples.task}: {result.items} items, score {m['score']:.2f}, score_multimodal {m['score_multimodal']:.2f}, "
            f"judge_failure_rate {m['judge_failure_rate']:.3f}; {result.grader_calls} grader call(s), {result.cached_calls} from the cache"
        )
        echo(f"  grades:  {result.grades_path}\n  results: {result.results_path}")
        if m["judge_failure_rate"] > args.judge_failure_threshold:
            # The scores stand on the few items graded: say so, and why, instead of exiting 0.
            unreliable += 1
            causes = "; ".join(
                f"{status} x{count} (e.g. {result.failure_details.get(status, '')})"
                for status, count in sorted(result.failures.items(), key=lambda kv: -kv[1])
            )
            echo(
                f"ecom-tasks judge: warning: {result.samples.path}: the judge failed on {result.failed_items} of "
                f"{result.items} items ({m['judge_failure_rate']:.1%}), more than --judge-failure-threshold "
                f"{args.judge_failure_threshold:g}; its scores are marked score_unreliable. Why: {causes}",
                file=sys.stderr,
            )
    return 1 if unreliable else 0


def cmd_report(args: argparse.Namespace) -> int:
    from ecom_tasks.errors import EcomTasksError
    from ecom_tasks.report import parse_formats, write_report

    try:
        formats = parse_formats(args.format)
        result = write_report(
            args.paths, args.out, formats, progress=True, baseline=args.baseline, resamples=args.resamples
        )
    except (EcomTasksError, ValueError, FileNotFoundError) as exc:
        echo(f"report: {exc}", file=sys.stderr)
        return 2
    if result.runs == 0 and result.failed == 0:
        echo(f"report: no Inspect logs or lm-eval results under {', '.join(args.paths)}", file=sys.stderr)
        return 2
    echo(
        f"report: {result.runs} run row(s), {result.failed} unfinished/failed, {result.tables} table(s) in {result.out}"
    )
    if result.notice:
        echo(result.notice)
    for path in result.files:
        if path.suffix in (".html", ".md"):
            echo(f"  {path}")
    for problem in result.problems:
        echo(f"report: {problem}", file=sys.stderr, newlines=False)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """Which model is better, and how sure: intervals and paired comparisons from both frameworks' logs."""
    from ecom_tasks.report import compare, stats
    from ecom_tasks.report.runs import read_runs

    runs, notes, unreadable = compare.model_runs(read_runs(args.paths))
    notes[:0] = unreadable
    if not runs:
        echo(f"compare: no run of ours with per-item outcomes under {', '.join(args.paths)}", file=sys.stderr)
        for note in notes:
            echo(f"  {note}", file=sys.stderr, newlines=False)
        return 2
    comparison = compare.compare_runs(
        runs,
        metric=args.metric,
        baseline=args.baseline,
        n_resamples=args.resamples or stats.N_RESAMPLES,
        seed=stats.SEED if args.seed is None else args.seed,
    )
    comparison.notes[:0] = notes
    echo(compare.format_comparison(comparison))
    if args.plan is not None:
        echo(f"\nunits a paired comparison needs to detect a difference of {args.plan} (80% power, alpha 0.05):")
        for row in compare.units_needed_table(comparison, args.plan):
            needed = row["needed"] if row["needed"] is not None else "- (no spread observed)"
            echo(f"  {row['benchmark']}/{row['task']}/{row['metric']}: {needed} {row['unit']}")
    if args.json:
        echo(f"records: {compare.write_json(args.json, comparison, args.paths)}")
    return 0


def cmd_embed_pool(args: argparse.Namespace) -> int:
    """RMIR: embed a pool into the embedding cache ahead of runs (here, or on a Ray cluster)."""
    from ecom_tasks.images import ImageAccess
    from ecom_tasks.rmir.pool_embedding import embed_pool_ahead

    fill = embed_pool_ahead(
        args.data,
        args.retriever,
        args.retriever_args,
        engine=args.engine,
        split=args.split,
        pool_captions=args.pool_captions,
        image_access=ImageAccess.from_options(args.allow_outside_images, args.allow_url_images),
        address=args.address,
        workers=args.workers,
        num_gpus=args.num_gpus,
        num_cpus=args.num_cpus,
        batch_size=args.batch_size,
        base_urls=args.base_url,
    )
    echo(fill.summary())
    return 0


def construction_pipelines() -> dict[str, ModuleType | Exception]:
    """benchmark -> its construction package (``ecom_tasks.<benchmark>.construction``, exposing
    ``add_build_arguments(parser)`` and ``run_build(args) -> int``), for every benchmark that has one; a
    package that failed to import is its error (``ecom-tasks build <it>`` re-raises it)."""
    import importlib
    import importlib.util
    import pkgutil

    import ecom_tasks

    found: dict[str, ModuleType | Exception] = {}
    for module in sorted(pkgutil.iter_modules(ecom_tasks.__path__), key=lambda m: m.name):
        name = f"ecom_tasks.{module.name}.construction"
        if not module.ispkg or importlib.util.find_spec(name) is None:
            continue
        try:
            package = importlib.import_module(name)
        except Exception as exc:  # a broken pipeline must not take the other commands down: it fails when chosen
            found[module.name] = exc
            continue
        if callable(getattr(package, "add_build_arguments", None)) and callable(getattr(package, "run_build", None)):
            found[module.name] = package
    return found


def cmd_build(args: argparse.Namespace) -> int:
    """Run a benchmark's construction pipeline (its stages over one folder, then its data files)."""
    if isinstance(args.pipeline, Exception):
        raise args.pipeline
    return int(args.pipeline.run_build(args) or 0)


def build_parser() -> argparse.ArgumentParser:
    from ecom_tasks.construction import finite_number
    from ecom_tasks.scorers.judge import failure_share, number_option, positive_whole_number

    def resample_count(value: str) -> int:
        from ecom_tasks.report.stats import MIN_RESAMPLES  # imported only when the option is given (numpy, scipy)

        return int(number_option(int, MIN_RESAMPLES, high=999_999_999)(value))

    parser = argparse.ArgumentParser(prog="ecom-tasks", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="tasks, groups, metrics, retrievers, datasets and plugins").set_defaults(func=cmd_list)
    path = sub.add_parser("lm-eval-path", help="the folder to give lm_eval --include_path")
    path.add_argument("--all", action="store_true", help="also plugin folders, one per line")
    path.set_defaults(func=cmd_lm_eval_path)
    validate = sub.add_parser("validate", help="check a data file against a benchmark schema")
    validate.add_argument("benchmark")
    validate.add_argument("data", nargs="?", help="file, folder or Hugging Face id (default: bundled fixtures)")
    validate.add_argument(
        "--allow-outside-images",
        action="store_true",
        help="read image paths outside the data's folder (refused by default)",
    )
    validate.add_argument(
        "--allow-url-images", action="store_true", help="fetch http(s) image URLs (refused by default)"
    )
    validate.set_defaults(func=cmd_validate)
    demo = sub.add_parser("demo", help="run the bundled fixtures with the offline baseline and print results")
    demo.add_argument("--log-dir", default="logs/demo")
    demo.set_defaults(func=cmd_demo)
    report = sub.add_parser("report", help="the papers' tables and figures from Inspect logs and lm-eval results")
    report.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="Inspect logs (.eval/.json), lm-eval output folders, or folders of them",
    )
    report.add_argument("--out", default="report", help="output folder (default: report)")
    report.add_argument("--format", default="md,csv,html", help="comma-separated: md, csv, html (default: all)")
    report.add_argument("--baseline", metavar="MODEL", help="'Which model is better': a forest plot against MODEL")
    report.add_argument(
        "--resamples",
        type=resample_count,
        help="resamples of the 'Which model is better' intervals (default: as compare)",
    )
    report.set_defaults(func=cmd_report)
    compare = sub.add_parser("compare", help="which model is better, and how sure: intervals and paired tests")
    compare.add_argument("paths", nargs="+", metavar="PATH", help="Inspect logs, lm-eval --log_samples output folders")
    compare.add_argument("--baseline", help="compare every model with this one only (default: every pair)")
    compare.add_argument("--metric", help="compare this metric (default: each benchmark's headline metrics)")
    compare.add_argument("--json", metavar="FILE", help="also write the records as a JSON list")
    # Defaults (None): ecom_tasks.report.stats.N_RESAMPLES and SEED, declared there once.
    compare.add_argument(
        "--resamples",
        type=resample_count,
        help="bootstrap and permutation resamples (default: stats.N_RESAMPLES, 2000)",
    )
    compare.add_argument("--seed", type=int, help="seed of the resampling (recorded; default: stats.SEED)")
    compare.add_argument(
        "--plan",
        type=number_option(float, 0, above=True),
        metavar="DIFF",
        help="also print the units needed to detect a difference DIFF",
    )
    compare.set_defaults(func=cmd_compare)
    calibrate = sub.add_parser("calibrate", help="EcomEval difficulty labels from several models' Inspect logs")
    calibrate.add_argument("logs", nargs="+", help="Inspect logs of EcomEval runs (one or more per model)")
    calibrate.add_argument("--out", help="write the data with a filled difficulty column here (JSON Lines)")
    calibrate.add_argument("--data", help="the data the logs were run on (default: as recorded in the logs)")
    calibrate.add_argument("--tasks-out", help="task-level table (CSV; default: <out stem>.tasks.csv)")
    calibrate.add_argument(
        "--allow-outside-images", action="store_true", help="as -T allow_outside_images=true of the runs"
    )
    calibrate.add_argument(
        "--allow-url-images",
        action="store_true",
        help="as -T allow_url_images=true of the runs (fetched, written as data: URIs)",
    )
    calibrate.add_argument(
        "--judge-failure-threshold",
        type=failure_share,
        default=0.10,
        help="leave out a model's grades of a task when the judge failed on more than this share of them (default 0.10)",
    )
    calibrate.set_defaults(func=cmd_calibrate)
    judge = sub.add_parser(
        "judge", help="EcomEval in lm-eval: grade the responses of ecom-lm-eval --tasks ecomeval --log_samples"
    )
    judge.add_argument("output_dir", help="the --output_path of the lm-eval run (its samples_ecomeval*.jsonl files)")
    judge.add_argument(
        "--grader",
        action="append",
        required=True,
        metavar="MODEL",
        help="a litellm model name (openai/gpt-4.1, anthropic/..., openai/<served name> with --api-base); repeat for a panel",
    )
    judge.add_argument(
        "--api-base",
        action="append",
        default=[],
        metavar="URL",
        help="OpenAI-compatible base URL (e.g. http://127.0.0.1:8000/v1): one for all graders or one per --grader",
    )
    judge.add_argument(
        "--panel", default="median", choices=("median", "majority"), help="a panel's grade of an item (default median)"
    )
    judge.add_argument(
        "--tasks", default=None, help="comma list of the tasks to grade (default: every ecomeval task found)"
    )
    judge.add_argument(
        "--grader-max-tokens",
        type=positive_whole_number,
        default=2048,
        help="output limit of each grader call (default 2048)",
    )
    judge.add_argument(
        "--judge-failure-threshold",
        type=failure_share,
        default=0.10,
        help="failure share (0 to 1) above which score_unreliable is 1 and the command exits 1 (default 0.10)",
    )
    judge.add_argument("--metrics", default=None, help="comma list of rubric metrics (default: all registered)")
    judge.add_argument("--concurrency", type=positive_whole_number, default=8, help="items graded at once (default 8)")
    judge.add_argument(
        "--max-attempts",
        type=positive_whole_number,
        default=6,
        help="attempts per grader call on 429/5xx/connection errors (default 6)",
    )
    judge.add_argument(
        "--cache-dir",
        default=None,
        help="grader reply cache (default $ECOM_TASKS_CACHE/judge, ~/.cache/ecom_tasks/judge)",
    )
    judge.add_argument("--no-cache", action="store_true", help="neither read nor write the reply cache (no resuming)")
    judge.add_argument("--no-progress", action="store_true", help="no progress bar")
    judge.set_defaults(func=cmd_judge)
    embed = sub.add_parser(
        "embed-pool", help="RMIR: embed a pool into the embedding cache ahead of runs (locally or on Ray)"
    )
    embed.add_argument("data", nargs="?", help="RMIR data folder or Hugging Face id (default: bundled fixtures)")
    embed.add_argument("--retriever", required=True, help="a registered embedder, as -T retriever= of the run")
    embed.add_argument("--retriever-args", default=None, help="JSON object, as -T retriever_args= of the run")
    embed.add_argument(
        "--split", default=None, help="as -T split= of the run (its pool rows; default: test when the data has splits)"
    )
    embed.add_argument("--pool-captions", action="store_true", help="as -T pool_captions=true of the run")
    embed.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help="this process, or Ray Data (pip install 'ecom-tasks[ray]')",
    )
    embed.add_argument(
        "--address", default=None, help="Ray cluster address (default: RAY_ADDRESS, else a local Ray instance)"
    )
    embed.add_argument(
        "--workers",
        type=positive_whole_number,
        default=None,
        help="Ray actors, each holding one embedder (default: one per --base-url, else what the cluster holds)",
    )
    embed.add_argument("--num-gpus", type=finite_number, default=None, help="GPUs per Ray actor (0 or more)")
    embed.add_argument("--num-cpus", type=finite_number, default=1.0, help="CPUs per Ray actor (0 or more; default 1)")
    embed.add_argument(
        "--batch-size", type=positive_whole_number, default=256, help="pool items per Ray batch (default 256)"
    )
    embed.add_argument(
        "--base-url",
        action="append",
        default=[],
        help="an OpenAI-compatible embeddings server, repeat for several: Ray actor i uses the (i mod n)-th (overrides retriever_args' base_url)",
    )
    embed.add_argument("--allow-outside-images", action="store_true", help="as -T allow_outside_images=true of the run")
    embed.add_argument("--allow-url-images", action="store_true", help="as -T allow_url_images=true of the run")
    embed.set_defaults(func=cmd_embed_pool)
    builder = sub.add_parser(
        "build", help="build a benchmark's data set with its paper's construction pipeline (resumable Inspect stages)"
    )
    benchmarks = builder.add_subparsers(dest="benchmark", required=True, metavar="BENCHMARK")
    for benchmark, package in construction_pipelines().items():
        doc = f"(cannot be imported: {package})" if isinstance(package, Exception) else package.__doc__
        one = benchmarks.add_parser(benchmark, help=doc.strip().splitlines()[0] if doc else None)
        if not isinstance(package, Exception):
            package.add_build_arguments(one)
        one.set_defaults(func=cmd_build, pipeline=package)
    return parser


def main(argv: list[str] | None = None) -> None:
    from ecom_tasks.user_errors import short_errors

    apply_safe_defaults()
    args = build_parser().parse_args(argv)
    with short_errors():  # bad data or a missing setting: one message, exit 1
        code = args.func(args)
    sys.exit(code)


if __name__ == "__main__":
    main()
