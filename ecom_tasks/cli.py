"""``ecom-tasks``: list what is installed, validate data, point lm-eval at our tasks, run the demo."""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

from ecom_tasks.offline import apply_safe_defaults

#: The demo: every benchmark on the bundled fixtures with the offline baseline.
DEMO_INSPECT_TASKS = ("ecom_tasks/monbench_perm", "ecom_tasks/rair_general", "ecom_tasks/rair_hard", "ecom_tasks/rair_visual")
DEMO_LM_EVAL_TASKS = ("monbench_perm", "rair")


def _inspect_objects() -> list[tuple[str, str]]:
    """(kind, name) of every Inspect object our entry point registers."""
    from inspect_ai._util.registry import is_registry_object, registry_info

    import ecom_tasks._registry as registry

    found = []
    for value in vars(registry).values():
        if is_registry_object(value):
            info = registry_info(value)
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
            for name in manager.all_groups + manager.all_subtasks:
                kind = "group" if name in groups else "task"
                rows.append((kind, name, f"{plugin}: {folder}"))
    return rows


def cmd_list(args: argparse.Namespace) -> int:
    from ecom_tasks import plugins

    print("Plugins (entry-point group 'ecom_tasks'):")
    for name, plugin in plugins.plugin_manager().list_name_plugin():
        print(f"  {name:<28} {getattr(plugin, '__name__', type(plugin).__name__)}")
    print("\nInspect (run as: inspect eval ecom_tasks/<task> --model ...):")
    for kind, name in _inspect_objects():
        print(f"  {kind:<10} {name}")
    print("\nlm-eval tasks and groups (run with ecom-lm-eval --tasks <name>):")
    for kind, name, source in _lm_eval_entries():
        print(f"  {kind:<10} {name:<42} [{source}]")
    print("\nMetrics (computed by every benchmark of their kind; select with -T metrics= / --metadata metrics):")
    for plugin, specs in plugins.contributions("ecom_tasks_metrics"):
        for spec in specs:
            print(f"  {spec.name:<28} {spec.kind:<12} [{plugin}] {spec.description}")
    print("\nRetrievers:")
    for plugin, mapping in plugins.contributions("ecom_tasks_retrievers"):
        for name in mapping:
            print(f"  {name:<28} [{plugin}]")
    print("\nDatasets (ecom-tasks validate <name> <data>):")
    for plugin, specs in plugins.contributions("ecom_tasks_datasets"):
        for spec in specs:
            print(f"  {spec.name:<28} [{plugin}] {spec.description}")
    return 0


def cmd_lm_eval_path(args: argparse.Namespace) -> int:
    from ecom_tasks.lm_eval_tasks import TASKS_DIR, task_dirs

    # One path per line: lm-eval's --include_path takes a single folder.
    for folder in task_dirs() if args.all else [str(TASKS_DIR)]:
        print(folder)
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from ecom_tasks.data import DataValidationError
    from ecom_tasks.plugins import datasets

    specs = datasets()
    if args.benchmark not in specs:
        print(f"unknown benchmark {args.benchmark!r}; known: {', '.join(sorted(specs))}", file=sys.stderr)
        return 2
    spec = specs[args.benchmark]
    data = args.data if args.data is not None else (spec.default_data() if spec.default_data else None)
    if data is None:
        print(f"{args.benchmark}: give the data file, folder or Hugging Face id to check", file=sys.stderr)
        return 2
    try:
        records = spec.load(data)
    except DataValidationError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        print(f"INVALID: {len(exc.problems)} problem(s) in {data}", file=sys.stderr)
        return 1
    counts = collections.Counter(
        "/".join(str(getattr(r, f)) for f in ("task", "subset", "split") if hasattr(r, f)) for r in records
    )
    print(f"OK: {len(records)} {args.benchmark} records in {data}")
    for key, count in sorted(counts.items()):
        print(f"  {key:<40} {count}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """Run the bundled suite with the offline baseline in both frameworks and print results."""
    from ecom_tasks.offline import apply_offline

    apply_offline()
    from inspect_ai import eval as inspect_eval

    import ecom_tasks._registry  # noqa: F401  (registers tasks when not pip-installed)

    log_dir = str(Path(args.log_dir).resolve())
    logs = inspect_eval(
        list(DEMO_INSPECT_TASKS), model="ecom/baseline", log_dir=log_dir, display="none", log_level="warning"
    )
    from ecom_tasks.report import by_benchmark, format_table, inspect_rows, lm_eval_rows

    failed = False
    rows: dict[str, dict[str, float]] = {}
    for log in logs:
        if log.status != "success":
            print(f"{log.eval.task} FAILED: {log.error}", file=sys.stderr)
            failed = True
        rows.update(inspect_rows(log))
    print("Inspect: model ecom/baseline on the bundled fixtures")
    for table in by_benchmark(rows).values():
        print(format_table(table), end="\n\n")
    print(f"(logs in {log_dir}; browse with: inspect view --log-dir {log_dir})")

    import lm_eval

    from ecom_tasks.lm_eval_tasks import task_manager

    results = lm_eval.simple_evaluate(
        model="ecom-baseline", tasks=list(DEMO_LM_EVAL_TASKS), task_manager=task_manager(), bootstrap_iters=0
    )
    print("\nlm-eval: model ecom-baseline on the bundled fixtures (same scoring code, same numbers)")
    for table in by_benchmark(lm_eval_rows(results)).values():
        print(format_table(table), end="\n\n")
    return 1 if failed else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ecom-tasks", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="tasks, groups, metrics, retrievers, datasets and plugins").set_defaults(func=cmd_list)
    path = sub.add_parser("lm-eval-path", help="the folder to give lm_eval --include_path")
    path.add_argument("--all", action="store_true", help="also plugin folders, one per line")
    path.set_defaults(func=cmd_lm_eval_path)
    validate = sub.add_parser("validate", help="check a data file against a benchmark schema")
    validate.add_argument("benchmark")
    validate.add_argument("data", nargs="?", help="file, folder or Hugging Face id (default: bundled fixtures)")
    validate.set_defaults(func=cmd_validate)
    demo = sub.add_parser("demo", help="run the bundled fixtures with the offline baseline and print results")
    demo.add_argument("--log-dir", default="logs/demo")
    demo.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> None:
    apply_safe_defaults()
    args = build_parser().parse_args(argv)
    sys.exit(args.func(args))


if __name__ == "__main__":
    main()
