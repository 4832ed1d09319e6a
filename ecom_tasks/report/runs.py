"""Inspect logs, lm-eval result folders and ``ecom-tasks judge`` results read into one record,
:class:`~ecom_tasks.results.Run`, and merged (docs/reports.md). Inspect's ``evals_df`` is not used: its
``score_<scorer>_<metric>`` columns cannot be split back into names like ``acc2/industry/fashion_apparel``."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from ecom_tasks import files
from ecom_tasks.ecomeval.judge_run import RESULTS_PREFIX
from ecom_tasks.errors import EcomTasksError
from ecom_tasks.results import (
    BENCHMARKS,
    FIXTURES,
    INSPECT,
    LM_EVAL,
    SAMPLES_FILE,
    SUCCESS,
    UNFINISHED,
    UNKNOWN_DATA,
    UNREADABLE,
    MergedRun,
    Run,
)

#: lm-eval result files; the timestamp ties a results file to its --log_samples files.
RESULTS_FILE = re.compile(r"^results_(?P<stamp>.+)\.json$")
#: ``ecom-tasks judge``'s results of judging an lm-eval run's samples (beside them).
JUDGED_FILE = re.compile(rf"^{re.escape(RESULTS_PREFIX)}.+\.json$")
#: lm-eval task-config metadata keys that say where a config came from, not how it ran.
_LM_EVAL_META_SKIP = frozenset({"version", "config_source"})
#: Task-metadata keys that record the data's identity, first found wins.
_DATA_KEYS = ("data_location", "data")
_DATA_HASH_KEYS = ("data_sha256", "data_hash", "data_revision")


def _is_fixture_path(value: str) -> bool:
    parts = Path(value.replace("\\", "/")).parts
    return any(a == "ecom_tasks" and b == "fixtures" for a, b in zip(parts, parts[1:]))


def describe_data(data_argument: Any, info: Mapping[str, Any], *, argument_recorded: bool) -> str:
    """What a run was run on: ``FIXTURES``; ``<location> (sha256:<12 hex>)`` or ``<location>`` when
    no hash is recorded; ``UNKNOWN_DATA`` when the log does not say (``argument_recorded``: the log
    records the task's ``data`` argument, whose absence then means the bundled fixtures)."""
    location = next((info[k] for k in _DATA_KEYS if isinstance(info.get(k), str) and info[k]), None)
    if location is None and isinstance(data_argument, str) and data_argument:
        location = data_argument
    if location is None:
        return FIXTURES if argument_recorded else UNKNOWN_DATA
    if _is_fixture_path(location):
        return FIXTURES
    digest = next((str(info[k]) for k in _DATA_HASH_KEYS if info.get(k)), "")
    if digest:
        digest = digest.split(":", 1)[1] if ":" in digest else digest
        return f"{location} (sha256:{digest[:12]})"
    return location


def benchmark_of(task: str, metadata: Mapping[str, Any] | None = None) -> str:
    """The benchmark a task belongs to: its metadata's ``benchmark``, else its name's prefix."""
    declared = (metadata or {}).get("benchmark")
    if isinstance(declared, str) and declared:
        return declared
    name = task.split("/")[-1]
    return next((b for b in BENCHMARKS if name == b or name.startswith(b + "_")), "")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _settings(values: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((str(k), _text(v)) for k, v in values.items() if v is not None))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


# --- Inspect -----------------------------------------------------------------------


def inspect_run(log: Any, source: str) -> Run:
    """A :class:`Run` from an Inspect ``EvalLog`` (a header is enough)."""
    spec = log.eval
    task = spec.task.split("/")[-1]
    metrics: dict[str, float] = {}
    if log.results is not None:
        for score in log.results.scores:
            for name, metric in score.metrics.items():
                value = _number(metric.value)
                if value is not None:
                    metrics.setdefault(name, value)
    task_args = spec.task_args or {}
    roles = {role: getattr(model, "model", str(model)) for role, model in (spec.model_roles or {}).items()}
    configured = ((name, getattr(spec.config, name, None)) for name in ("limit", "epochs", "sample_id"))
    config = {name: value for name, value in configured if value is not None}
    settings = {**task_args, **config, **{f"role:{role}": model for role, model in roles.items()}}
    # The message's first line ("error" when it has none).
    error = "" if log.error is None else ((log.error.message or "").strip().splitlines() or ["error"])[0]
    benchmark = benchmark_of(task, spec.metadata)
    recorded = "data" in task_args and benchmark in BENCHMARKS
    return Run(
        benchmark=benchmark,
        task=task,
        framework=INSPECT,
        model=spec.model,
        settings=_settings(settings),
        metrics=metrics,
        status=log.status,
        source=source,
        created=str(spec.created),
        error=error,
        info=dict(spec.metadata or {}),
        roles=roles,
        data=describe_data(task_args.get("data"), spec.metadata or {}, argument_recorded=recorded),
    )


#: Inspect's own rule for a log's file name: any ``.eval``; a ``.json`` named from its ISO timestamp.
_INSPECT_JSON_LOG = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*\.json$")


def _is_inspect_log(path: Path, *, given: bool) -> bool:
    """An Inspect log: a ``.eval`` file, or a ``.json`` one that is not an lm-eval or judge results file
    (named by the user, or found in a folder under Inspect's timestamped name)."""
    if path.suffix == ".eval":
        return True
    if path.suffix != ".json" or RESULTS_FILE.match(path.name) or JUDGED_FILE.match(path.name):
        return False
    return given or bool(_INSPECT_JSON_LOG.match(path.name))


def _tracked(items: Sequence[Any], progress: Any, what: str) -> Iterable[Any]:
    return items if progress is None else progress.track(items, description=what)


def read_inspect_logs(found: Sequence[tuple[Path, bool]], progress: Any = None) -> list[Run]:
    """Every Inspect log (``.eval`` / ``.json``) among the (file, named by the user) pairs, headers only."""
    # A plain absolute path: a file URI would percent-encode the '+' of Inspect's own log names.
    logs = [(str(path.absolute()), _folder(path, given)) for path, given in found if _is_inspect_log(path, given=given)]
    runs = []
    for location, folder in _tracked(logs, progress, "Inspect logs"):
        try:
            log = files.read_inspect_log(location, header_only=True, inside=folder or None)
        except Exception as exc:  # a truncated or foreign file: listed, never silently skipped
            runs.append(_unreadable(location, INSPECT, exc))
        else:
            runs.append(dataclasses.replace(inspect_run(log, location), folder=folder))
    return runs


def _folder(path: Path, given: bool) -> str:
    """The folder a walk found ``path`` in, "" when the user named it: a walked link is read only when it stays in
    its own folder (:func:`ecom_tasks.files.folder_listing`), and so is every later read of it."""
    return "" if given else str(path.absolute().parent)


def _unreadable(location: str, framework: str, exc: BaseException) -> Run:
    # Our own refusals name the file and say why; anything else keeps its exception's name.
    text = str(exc) if isinstance(exc, EcomTasksError) else f"{type(exc).__name__}: {exc}"
    message = (text.strip().splitlines() or [type(exc).__name__])[0]
    return Run("", Path(location).name, framework, "?", (), {}, UNREADABLE, location, error=message)


# --- lm-eval -----------------------------------------------------------------------


def _lm_eval_model(config: Mapping[str, Any]) -> str:
    """``ecom-baseline``; for API/HF models the served model: ``local-chat-completions:Qwen/Qwen3-8B``."""
    name = str(config.get("model", "unknown"))
    args = config.get("model_args") or {}
    if isinstance(args, str):
        args = dict(part.split("=", 1) for part in args.split(",") if "=" in part)
    served = args.get("model") or args.get("pretrained")
    return f"{name}:{served}" if served else name


def lm_eval_runs(results: Mapping[str, Any], source: str) -> list[Run]:
    """One :class:`Run` per task and group of one lm-eval results file (``simple_evaluate``'s dict)."""
    config = results.get("config") or {}
    model = _lm_eval_model(config)
    common: dict[str, Any] = {
        "limit": config.get("limit"),
        "gen_kwargs": config.get("gen_kwargs") or None,
        "system_instruction": results.get("system_instruction"),
        "fewshot_as_multiturn": results.get("fewshot_as_multiturn") or None,
        "apply_chat_template": bool(results.get("chat_template")) or None,
    }
    configs = results.get("configs") or {}
    subtasks = results.get("group_subtasks") or {}
    created = str(results.get("date", ""))

    def task_settings(name: str) -> dict[str, Any]:
        if name in configs:
            task_config = configs[name]
            meta = {k: v for k, v in (task_config.get("metadata") or {}).items() if k not in _LM_EVAL_META_SKIP}
            return {
                **common,
                "num_fewshot": (results.get("n-shot") or {}).get(name),
                **meta,
                "generation_kwargs": task_config.get("generation_kwargs"),
            }
        # A group: the settings its subtasks share; the rest differ by design (subset, task).
        return _shared([task_settings(sub) for sub in subtasks.get(name, [])], common)

    def task_facts(name: str) -> dict[str, Any]:
        task_config = configs.get(name, {})
        return {**(task_config.get("dataset_kwargs") or {}), **(task_config.get("metadata") or {})}

    runs: list[Run] = []
    for section in ("results", "groups"):
        for raw_name, values in (results.get(section) or {}).items():
            name = raw_name.strip(" -")
            if any(run.task == name for run in runs):
                continue
            metrics: dict[str, float] = {}
            for key, value in values.items():
                metric, comma, _filter = key.partition(",")
                number = _number(value)
                if comma and number is not None and not metric.endswith("_stderr"):
                    metrics.setdefault(metric, number)
            info = task_facts(name)
            if name in subtasks:
                # A group's own facts are those all its subtasks share (shots, data, benchmark).
                shared = _shared([task_facts(sub) for sub in subtasks[name]], {})
                info = {**shared, **info, "subtasks": list(subtasks[name])}
            benchmark = benchmark_of(name, info)
            # Our lm-eval tasks default to the fixtures when no ``data`` is given (--metadata).
            ours = benchmark in BENCHMARKS and (name in configs or name in subtasks)
            data = describe_data(info.get("data"), info, argument_recorded=ours)
            runs.append(
                Run(
                    benchmark=benchmark,
                    task=name,
                    framework=LM_EVAL,
                    model=model,
                    settings=_settings(task_settings(name)),
                    metrics=metrics,
                    status=SUCCESS,
                    source=source,
                    created=created,
                    info=info,
                    data=data,
                )
            )
    return runs


def _shared(parts: Sequence[Mapping[str, Any]], default: Mapping[str, Any]) -> dict[str, Any]:
    """What every one of ``parts`` holds alike (``default`` when there are none)."""
    if not parts:
        return dict(default)
    return {k: v for k, v in parts[0].items() if all(p.get(k) == v for p in parts[1:])}


def judged_run(data: Mapping[str, Any], source: str) -> Run:
    """A :class:`Run` from an ``ecom-tasks judge`` results file: the lm-eval run's model and task, the
    judge (a grader or a panel) as its ``grader`` role and a setting, the judged metrics."""
    meta = {k: v for k, v in (data.get("task_config_metadata") or {}).items() if k not in _LM_EVAL_META_SKIP}
    model = _lm_eval_model({"model": data.get("model") or "unknown", "model_args": data.get("model_args")})
    judge = str(data.get("judge") or "?")
    facts = ("panel", "graders", "grader_prompt_version", "judge_failure_threshold", "grades_file")
    info = {**meta, "benchmark": data.get("benchmark"), "scoring": "judge", **{k: data.get(k) for k in facts}}
    metrics = {k: n for k, v in (data.get("metrics") or {}).items() if (n := _number(v)) is not None}
    task = str(data.get("task") or "?")
    return Run(
        benchmark=benchmark_of(task, info),
        task=task,
        framework=LM_EVAL,
        model=model,
        settings=_settings({**meta, "judge": judge, "grader_max_tokens": data.get("grader_max_tokens")}),
        metrics=metrics,
        status=SUCCESS,
        source=source,
        created=str(data.get("date") or ""),
        info=info,
        roles={"grader": judge},
        data=describe_data(meta.get("data"), meta, argument_recorded=True),
    )


def read_lm_eval(found: Sequence[tuple[Path, bool]], progress: Any = None) -> list[Run]:
    """Runs of the lm-eval (and judge) results files among the (file, named by the user) pairs;
    ``--log_samples`` files with no results file beside them (same folder, same timestamp) are runs
    that did not finish."""
    results_files = [(p, given) for p, given in found if RESULTS_FILE.match(p.name) or JUDGED_FILE.match(p.name)]
    finished = {(p.parent, m["stamp"]) for p, _ in results_files if (m := RESULTS_FILE.match(p.name))}
    unfinished = [
        (p, m) for p, _ in found if (m := SAMPLES_FILE.match(p.name)) and (p.parent, m["stamp"]) not in finished
    ]
    runs: list[Run] = []
    for path, given in _tracked(results_files, progress, "lm-eval results"):
        folder = _folder(path, given)
        try:
            # lm-eval writes a metric that does not apply as a bare NaN: read, never written back.
            data = files.read_json(path, inside=folder or None, allow_nan=True, max_bytes=files.MAX_LOG_INFLATED_BYTES)
            if not isinstance(data, dict):
                raise ValueError(f"{path}: a JSON {type(data).__name__}, not an lm-eval results object")
            read = [judged_run(data, str(path))] if JUDGED_FILE.match(path.name) else lm_eval_runs(data, str(path))
            runs += [dataclasses.replace(run, folder=folder) for run in read]
        except (OSError, ValueError, AttributeError, TypeError) as exc:
            runs.append(_unreadable(str(path), LM_EVAL, exc))
    for path, match in unfinished:
        task, model, source = match["task"], path.parent.name, str(path)
        why = "samples file without a results file (the run did not finish)"
        runs.append(Run(benchmark_of(task), task, LM_EVAL, model, (), {}, UNFINISHED, source, match["stamp"], why))
    return runs


# --- both ------------------------------------------------------------------------


def _input_files(items: Sequence[Path]) -> tuple[list[tuple[Path, bool]], list[Run]]:
    """(file, named by the user) for every regular file given or found below a folder given, and an
    unreadable run for each path given that is not a regular file or folder (a FIFO is never opened).
    A folder walk never descends a symlinked folder and skips anything that is not a regular file."""
    found: list[tuple[Path, bool]] = []
    refused: list[Run] = []
    for path in items:
        if path.is_dir():
            listed, left_out = files.folder_listing(path, recursive=True)
            found += [(p, False) for p in listed]
            # What the walk leaves out but is named like a log (a FIFO, a symlink out of the folder) is
            # listed as unreadable, never skipped in silence.
            for entry, exc in left_out:
                if (framework := _named_as_log_of(entry)) is not None:
                    refused.append(_unreadable(str(entry), framework, exc))
            continue
        try:
            found.append((files.regular_file(path), True))
        except files.FileRefused as exc:
            refused.append(_unreadable(str(path), _named_as_log_of(path) or INSPECT, exc))
    return found, refused


def _named_as_log_of(path: Path) -> str | None:
    """The framework whose file ``path`` is named as (lm-eval: a results, samples or judge results file;
    Inspect: an ``.eval``), or None."""
    if any(pattern.match(path.name) for pattern in (RESULTS_FILE, SAMPLES_FILE, JUDGED_FILE)):
        return LM_EVAL
    return INSPECT if path.suffix == ".eval" else None


def read_runs(paths: Iterable[str | Path], *, progress: bool = False) -> list[Run]:
    """Every run under ``paths`` (Inspect logs, lm-eval result folders or files, or folders of both)."""
    items = [Path(p) for p in paths]
    missing = [str(p) for p in items if not p.exists() and not p.is_symlink()]
    if missing:
        raise files.FileRefused(f"no such file or folder: {', '.join(missing)}")
    found, refused = _input_files(items)
    from rich.console import Console
    from rich.progress import Progress

    # On stderr: stdout keeps only where the files went.
    with Progress(console=Console(stderr=True), transient=True) if progress else nullcontext() as bar:
        return refused + read_inspect_logs(found, bar) + read_lm_eval(found, bar)


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def merge_runs(runs: Iterable[Run]) -> tuple[list[MergedRun], list[Run]]:
    """(merged successful runs in first-seen key order, runs that are not ``success``)."""
    by_key: dict[tuple, list[Run]] = {}
    failed: list[Run] = []
    for run in runs:
        if run.status != SUCCESS:
            failed.append(run)
        else:
            by_key.setdefault(run.key, []).append(run)
    merged = []
    for group in by_key.values():
        ordered = sorted(group, key=lambda r: (r.created, r.source))
        latest = ordered[-1]
        disagree = sorted(
            {
                name
                for run in ordered[:-1]
                for name in set(run.metrics) | set(latest.metrics)
                if not _same(run.metrics.get(name, math.nan), latest.metrics.get(name, math.nan))
            }
        )
        merged.append(MergedRun(latest, len(ordered), tuple(r.source for r in ordered), tuple(disagree)))
    return merged, failed
