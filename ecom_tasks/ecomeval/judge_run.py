"""``ecom-tasks judge``: EcomEval's second stage in lm-eval. It grades the responses of lm-eval's samples files
with Inspect's judge code (``ecomeval.judging``) through litellm and the reply cache, after checking every input
and output. The files it writes, their fields and every check: EcomEval's README ("lm-eval: two stages")."""

from __future__ import annotations

import asyncio
import hashlib
import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ecom_tasks import files
from ecom_tasks.ecomeval.judging import (
    Judgement,
    JudgeSettings,
    judge_response,
    judge_status,
    judgement_metadata,
    judgement_values,
    refused_metadata,
    refused_values,
)
from ecom_tasks.ecomeval.metrics import FAILURE_THRESHOLD, Outcome, key_name, summarize
from ecom_tasks.ecomeval.prompts import GRADER_VERSION
from ecom_tasks.ecomeval.variants import VARIANTS
from ecom_tasks.errors import ConfigurationError, DataValidationError, EcomTasksError, Problem, printable
from ecom_tasks.plugins import parse_metric_names, select_metrics
from ecom_tasks.results import SAMPLES_FILE
from ecom_tasks.scorers import context_limit
from ecom_tasks.scorers.judge import (
    GRADER_MAX_TOKENS,
    option_value,
    positive_whole_number,
    server_message,
)
from ecom_tasks.scorers.judge_cache import ReplyCache
from ecom_tasks.scorers.kinds import RUBRIC
from ecom_tasks.scorers.litellm_judge import INITIAL_BACKOFF, MAX_ATTEMPTS, MAX_CONCURRENCY, litellm_ask, retryable
from ecom_tasks.scorers.panel import MEDIAN
from ecom_tasks.user_errors import find_user_error

#: The tasks whose responses the judge grades (the exact-match tasks are scored inside lm-eval).
JUDGED_TASKS = frozenset(name for name, variant in VARIANTS.items() if variant.judged)
GRADES_PREFIX = "judge_grades_"
RESULTS_PREFIX = "judge_results_"
#: How ``ecom-tasks judge`` spells the grader's output limit (named in the judge's failure details).
LIMIT_OPTION = "--grader-max-tokens N"
#: How it spells the options :meth:`JudgeSettings.from_options` checks (named in their errors).
OPTIONS = ("--grader-max-tokens", "--judge-failure-threshold")
#: Fields of an lm-eval document the grades file copies (text, or absent).
DOC_FIELDS = ("id", "category", "language", "task", "difficulty")

Warn = Callable[[str], None]


def warn_stderr(message: str) -> None:
    print(f"ecom-tasks judge: warning: {printable(message)}", file=sys.stderr, flush=True)


class GradingStopped(EcomTasksError):
    """A grader call failed for good (after its retries): the run stops; the cache keeps what was graded."""


@dataclass(frozen=True)
class Grader:
    """One grader: its label (``grader``, or ``grader_<i>`` in a panel), litellm model name, base URL."""

    label: str
    model: str
    api_base: str | None = None


def graders_from(models: Sequence[str], api_bases: Sequence[str] = ()) -> list[Grader]:
    """``--grader`` models with ``--api-base`` URLs: none, one for every grader, or one per grader."""
    models = [m.strip() for m in models if m and m.strip()]
    if not models:
        raise ConfigurationError(
            "ecom-tasks judge needs a grader: --grader MODEL (a litellm model name, e.g. openai/gpt-4.1)"
        )
    if len(set(models)) != len(models):
        raise ConfigurationError(f"a grader is given twice: {models}")
    if len(api_bases) not in (0, 1, len(models)):
        raise ConfigurationError(
            f"--api-base: give one URL for all graders or one per grader ({len(models)}), not {len(api_bases)}"
        )
    bases = [api_bases[i if len(api_bases) > 1 else 0] if api_bases else None for i in range(len(models))]
    labels = ["grader"] if len(models) == 1 else [f"grader_{i}" for i in range(1, len(models) + 1)]
    return [Grader(label, model, base) for label, model, base in zip(labels, models, bases)]


def panel_slug(graders: Sequence[Grader], method: str) -> str:
    """A file-name part naming the grader or panel (long ones shortened with a hash)."""
    names = "+".join(key_name(g.model) for g in graders)
    slug = names if len(graders) == 1 else f"panel_{method}_{names}"
    if len(slug) > 80:
        slug = f"{slug[:60]}_{hashlib.sha256(slug.encode()).hexdigest()[:10]}"
    return slug


def panel_label(models: Sequence[str], method: str) -> str:
    """How a run names its judge: the one grader's model, or ``panel median(a, b, c)``."""
    return models[0] if len(models) == 1 else f"panel {method}({', '.join(models)})"


@dataclass
class SamplesFile:
    """A samples file found under ``root``, the folder (or file) the user named."""

    path: Path
    task: str
    stamp: str
    root: Path | None = None

    @property
    def lm_eval_results(self) -> Path:
        return self.path.parent / f"results_{self.stamp}.json"


def _samples_file(path: Path, wanted: set[str], root: Path) -> SamplesFile | None:
    """``path`` as a samples file of a ``wanted`` task (None: another file)."""
    match = SAMPLES_FILE.match(path.name)
    if match is None or match.group("task") not in wanted:
        return None
    return SamplesFile(path, match.group("task"), match.group("stamp"), root)


def find_samples(output_dir: str | os.PathLike[str], tasks: Sequence[str] | None = None) -> list[SamplesFile]:
    """The samples files of the judged EcomEval tasks under ``output_dir`` (``tasks``: only these)."""
    root = files.checked_path(Path(output_dir).expanduser())
    wanted = set(tasks) if tasks else set(JUDGED_TASKS)
    unknown = sorted(wanted - JUDGED_TASKS)
    if unknown:
        raise ConfigurationError(
            f"not a judged EcomEval task: {', '.join(unknown)}; judged tasks: {', '.join(sorted(JUDGED_TASKS))}"
        )
    if not os.path.exists(root):  # os.path: False, not an error, for what cannot be looked at either
        raise ConfigurationError(f"no such folder: {root}")
    if not os.path.isdir(root):
        found = _samples_file(root, wanted, root.parent)
        if found is not None:
            files.regular_file(root)  # a FIFO, socket or device with a samples file's name: refused by name
        return [] if found is None else [found]
    # Real sub-folders are walked (a symlinked one is not); an entry with a samples file's name that is not a
    # regular file in its folder (a FIFO, a link leaving the folder) is refused by name.
    listed, refused = files.folder_listing(
        root, recursive=True, match=lambda path: _samples_file(path, wanted, root) is not None
    )
    if refused:
        raise refused[0][1]
    return [found for path in listed if (found := _samples_file(path, wanted, root)) is not None]


@dataclass(frozen=True)
class Item:
    """One logged sample: its line in the samples file (its identity), lm-eval's doc_id, the document
    and the response."""

    line: int
    doc_id: int
    doc: dict[str, Any]
    response: str


def _json_kind(value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"the number {value}"
    return {type(None): "null", bool: "a boolean", str: "text", list: "an array"}.get(type(value), "an object")


def _item(source: str, line: int, sample: Any, problems: list[Problem]) -> Item | None:
    """The item of one samples line, or None with its problems added (every one, not just the first)."""

    def problem(field_name: str, message: str) -> None:
        problems.append(Problem(source, line, field_name, message))

    if not isinstance(sample, dict):
        problem("-", f"{_json_kind(sample)} where an lm-eval sample (a JSON object) is expected")
        return None
    count = len(problems)
    doc_id = sample.get("doc_id")
    if not isinstance(doc_id, int) or isinstance(doc_id, bool) or doc_id < 0:
        problem("doc_id", f"a document number (a whole number from 0) is expected, got {_json_kind(doc_id)}")
    doc = sample.get("doc")
    if not isinstance(doc, dict):
        problem("doc", f"an object is expected, got {_json_kind(doc)}: not an lm-eval sample of an EcomEval task")
        return None
    for key in ("question", "reference", *DOC_FIELDS):
        required = key in ("question", "reference")  # the other fields may be absent or null
        if required and key not in doc:
            problem(f"doc.{key}", "missing: not an lm-eval sample of an EcomEval task")
        elif (required or doc.get(key) is not None) and not isinstance(doc[key], str):
            problem(f"doc.{key}", f"text is expected, got {_json_kind(doc[key])}")
    name = "filtered_resps" if "filtered_resps" in sample else "resps"
    response = sample.get(name)
    while isinstance(response, list):  # lm-eval nests a response in lists (per filter, per repeat)
        response = response[0] if response else ""
    if name not in sample:
        problem("filtered_resps", "missing: no response (the samples of lm-eval --log_samples hold filtered_resps)")
    elif response is not None and not isinstance(response, str):
        problem(name, f"a response (text, or a list of texts) is expected, got {_json_kind(response)}")
    if len(problems) > count or not isinstance(doc_id, int):  # a bad doc_id was reported above
        return None
    return Item(line, doc_id, doc, response or "")


def read_samples(samples: SamplesFile) -> list[Item]:
    """Every logged item of ``samples``, in doc_id order; every problem of the file at once, as
    ``file:line:field`` (:class:`DataValidationError`), before anything is graded."""
    source = str(samples.path)
    values, problems = files.json_lines(samples.path, inside=samples.root, max_bytes=files.MAX_LOG_INFLATED_BYTES)
    items: list[Item] = []
    first_line: dict[int, int] = {}
    for line, sample in values:
        item = _item(source, line, sample, problems)
        if item is None:
            continue
        if item.doc_id in first_line:  # a second line of one document would share the first one's grade
            said = f"doc_id {item.doc_id} is also the doc_id of line {first_line[item.doc_id]}; lm-eval writes one line per document, so these two cannot both be graded"
            problems.append(Problem(source, line, "doc_id", said))
            continue
        first_line[item.doc_id] = line
        items.append(item)
    if not values and not problems:
        problems.append(Problem(source, 0, "-", "no samples: the file is empty"))
    if problems:
        raise DataValidationError(problems)
    return sorted(items, key=lambda item: item.doc_id)


#: What the judge's results copy from the lm-eval results file: field -> the JSON types it may have.
_LM_EVAL_FIELDS: dict[str, tuple[type, ...]] = {
    "model_name": (str,),
    "lm_eval_version": (str,),
    "date": (str, int, float),
}


def lm_eval_run(samples: SamplesFile, warn: Warn = warn_stderr) -> dict[str, Any]:
    """What the lm-eval results file beside the samples says about the run (model, settings). A file
    that cannot be read, or a field of the wrong type, is left out with a warning (it only names the
    run; the grades do not depend on it)."""
    path = samples.lm_eval_results
    if not os.path.lexists(path):
        return {}
    left_out = f"left out of the judge's {RESULTS_PREFIX}*.json"
    try:
        data = files.read_json(path, inside=samples.root, max_bytes=files.MAX_LOG_INFLATED_BYTES)
    except EcomTasksError as exc:
        warn(f"{exc}; the lm-eval results file is {left_out}")
        return {}
    if not isinstance(data, dict):
        warn(f"{path}: {_json_kind(data)} where lm-eval's results (a JSON object) are expected; {left_out}")
        return {}

    def typed(value: Any, where: str, kinds: tuple[type, ...] = (dict,)) -> Any:
        if value is None or (isinstance(value, kinds) and not isinstance(value, bool)):
            return value
        warn(f"{path}:0:{where}: {_json_kind(value)} is not what lm-eval writes here; {left_out}")
        return None

    config = typed(data.get("config"), "config") or {}
    task_config = (
        typed((typed(data.get("configs"), "configs") or {}).get(samples.task), f"configs.{samples.task}") or {}
    )
    metadata = typed(task_config.get("metadata"), f"configs.{samples.task}.metadata") or None
    return {
        "model": typed(config.get("model"), "config.model", (str,)),
        "model_args": typed(config.get("model_args"), "config.model_args", (str, dict)),
        **{key: typed(data.get(key), key, kinds) for key, kinds in _LM_EVAL_FIELDS.items()},
        "task_config_metadata": metadata,
        "lm_eval_results_file": path.name,
    }


@dataclass
class Prepared:
    """A samples file read and checked, its lm-eval run, and where its outputs go: all known before
    the first grader call."""

    samples: SamplesFile
    items: list[Item]
    lm_eval: dict[str, Any]
    output: files.OutputFolder
    grades_name: str
    results_name: str


def prepare(samples: SamplesFile, slug: str, warn: Warn = warn_stderr) -> Prepared:
    """Read and check ``samples`` and its lm-eval results file, and check that its outputs can be
    written (the folder writable, no folder at an output name): nothing paid for is lost to a bad file."""
    items = read_samples(samples)
    run = lm_eval_run(samples, warn)
    inputs = [samples.path] + ([samples.lm_eval_results] if run else [])
    output = files.OutputFolder(samples.path.parent, inputs=inputs, what="lm-eval output folder")
    output.check_writable()
    stem = f"{samples.task}_{samples.stamp}.{slug}"
    grades_name, results_name = f"{GRADES_PREFIX}{stem}.jsonl", f"{RESULTS_PREFIX}{stem}.json"
    for name in (grades_name, results_name):
        path = output.check_target(name)  # a link planted there is replaced by the rename, never followed
        if path.is_dir() and not path.is_symlink():
            raise files.FileRefused(f"{path}: a folder where the judge writes its output; not replaced")
    return Prepared(samples, items, run, output, grades_name, results_name)


@dataclass
class JudgedFile:
    samples: SamplesFile
    grades_path: Path
    results_path: Path
    metrics: dict[str, float]
    items: int
    grader_calls: int = 0
    cached_calls: int = 0
    #: Items the judge failed on; the graders' failures by status, and the detail of the first of each.
    failed_items: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    failure_details: dict[str, str] = field(default_factory=dict)


def _failure_causes(judged: Sequence[Judgement | None]) -> tuple[int, Counter[str], dict[str, str]]:
    """The items the judge failed on, each failed grader's status on each of them, and a detail per status."""
    counts: Counter[str] = Counter()
    details: dict[str, str] = {}
    failed = [j for j in judged if j is not None and j.grade is None]
    for judgement in failed:
        causes = [judge_status(result)[1:] for result in judgement.panel.results.values()]
        if judgement.is_panel:
            causes = [(status, detail) for status, detail in causes if status != "ok"] or [
                (judgement.status, judgement.detail)
            ]
        for status, detail in causes:
            counts[status] += 1
            details.setdefault(status, detail)
    return len(failed), counts, details


async def grade_prepared(
    prepared: Prepared,
    graders: Sequence[Grader],
    *,
    cache: ReplyCache | None,
    settings: JudgeSettings,
    metrics: str | None = None,
    concurrency: int = MAX_CONCURRENCY,
    max_attempts: int = MAX_ATTEMPTS,
    initial_backoff: float = INITIAL_BACKOFF,
    progress: bool = True,
) -> JudgedFile:
    """Grade one prepared samples file with ``settings`` (checked by the caller) and write its grades and
    results files (see the module docstring)."""
    from tqdm import tqdm

    samples, items = prepared.samples, prepared.items
    specs = select_metrics(RUBRIC, parse_metric_names(metrics))
    calls: dict[str, Any] = dict(
        max_concurrency=concurrency, max_attempts=max_attempts, initial_backoff=initial_backoff
    )
    asks = {}
    for g in graders:
        ask = litellm_ask(g.model, api_base=g.api_base, **calls)
        asks[g.label] = (
            ask if cache is None else cache.wrap(ask, grader=g.model, version=GRADER_VERSION, api_base=g.api_base)
        )
    before = (cache.hits, cache.misses) if cache is not None else (0, 0)
    names = {g.label: g.model for g in graders}
    gate = asyncio.Semaphore(max(1, concurrency))
    judged: list[Judgement | None] = [None] * len(items)  # by position: a line is its own item
    bar = tqdm(total=len(items), desc=f"judge {samples.task}", unit="item", disable=not progress)

    async def one(index: int, item: Item) -> None:
        async with gate:
            judged[index] = await judge_response(
                asks,
                item.doc,
                item.response,
                names=names,
                method=settings.method,
                max_tokens=settings.max_tokens,
                limit_option=LIMIT_OPTION,
            )
        bar.update(1)

    # A question the evaluated model's server refused (longer than its context) left no response to grade.
    refusals = [context_limit.from_reply(item.response) for item in items]
    bar.update(sum(r is not None for r in refusals))
    try:
        async with asyncio.TaskGroup() as group:
            for index, item in enumerate(items):
                if refusals[index] is None:
                    group.create_task(one(index, item))
    except BaseExceptionGroup as failed:
        own = find_user_error(failed)
        if own is not None:
            raise own from None  # e.g. the cache file replaced by a link mid-run: its own message, no "run again"
        graded = sum(j is not None for j in judged)
        raise _stopped(samples, failed.exceptions[0], graded, refusals.count(None), cache) from None
    finally:
        bar.close()
    labels = [g.label for g in graders]
    lines, values, outcomes = [], [], []
    for item, judgement, refused in zip(items, judged, refusals):
        if judgement is None:  # refused by the evaluated model's server: as Inspect's ecomeval_judge scores it
            numbers, grading = refused_values(labels), refused_metadata(str(refused), labels)
        else:
            numbers, grading = judgement_values(judgement), judgement_metadata(judgement)
        values.append(numbers)
        outcomes.append(Outcome.of(numbers, item.doc, labels))
        record = {
            "doc_id": item.doc_id,
            "line": item.line,
            **{key: item.doc.get(key) for key in DOC_FIELDS},
            "response": item.response,
            **grading,
            "outcome": numbers,
        }
        lines.append(files.dumps_strict(record, ensure_ascii=False) + "\n")
    summary = {
        **summarize(outcomes, specs, settings.failure_threshold),
        context_limit.RATE: context_limit.rate(values),
    }
    failed_items, failures, details = _failure_causes(judged)
    prepared.output.write_lines(prepared.grades_name, lines)
    hits, misses = (cache.hits - before[0], cache.misses - before[1]) if cache is not None else (0, 0)
    results = {
        "benchmark": "ecomeval",
        "framework": "lm-eval",
        "task": samples.task,
        "samples_file": samples.path.name,
        "grades_file": prepared.grades_name,
        **prepared.lm_eval,
        **settings.record(
            judge=panel_label([g.model for g in graders], settings.method),
            graders=[{"label": g.label, "model": g.model, "api_base": g.api_base} for g in graders],
            panel=settings.method if len(graders) > 1 else None,
        ),
        "judge_failures": dict(failures),
        "metrics_selected": metrics or "all",
        "grader_calls": misses if cache is not None else None,
        "cached_calls": hits if cache is not None else None,
        "metrics": summary,
    }
    prepared.output.write_lines(
        prepared.results_name, [files.dumps_strict(results, ensure_ascii=False, indent=2) + "\n"]
    )
    paths = (prepared.output.path(prepared.grades_name), prepared.output.path(prepared.results_name))
    return JudgedFile(samples, *paths, summary, len(items), misses, hits, failed_items, dict(failures), details)


def _stopped(
    samples: SamplesFile, error: BaseException, graded: int, total: int, cache: ReplyCache | None
) -> GradingStopped:
    """Why a run stopped on a grader call that failed for good, and what running again will do."""
    said = server_message(error)
    head = f"{samples.path.name}: a grader call failed for good ({type(error).__name__}: {said}); {graded} of {total} items were graded"
    if cache is None:
        return GradingStopped(f"{head}, none kept (--no-cache): run the command again to grade every item")
    then = (
        "run the same command again to grade the rest"
        if retryable(error)
        else "the server refused the request, so fix what it says, then run the same command to grade the rest"
    )
    return GradingStopped(f"{head} and every reply received is cached: {then}")


def judge_output(
    output_dir: str | os.PathLike[str],
    models: Sequence[str],
    *,
    api_bases: Sequence[str] = (),
    tasks: Sequence[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    use_cache: bool = True,
    method: str = MEDIAN,
    max_tokens: int = GRADER_MAX_TOKENS,
    failure_threshold: float = FAILURE_THRESHOLD,
    concurrency: int = MAX_CONCURRENCY,
    max_attempts: int = MAX_ATTEMPTS,
    warn: Warn = warn_stderr,
    **options: Any,
) -> list[JudgedFile]:
    """Grade every judged EcomEval samples file under ``output_dir`` (see :func:`grade_prepared`).
    Every file is read and checked, and every output and the cache checked writable, before the first
    grader call."""
    settings = JudgeSettings.from_options(max_tokens, method, failure_threshold, spelled=OPTIONS)
    concurrency = option_value("--concurrency", positive_whole_number, concurrency)
    max_attempts = option_value("--max-attempts", positive_whole_number, max_attempts)
    graders = graders_from(models, api_bases)
    found = find_samples(output_dir, tasks)
    if not found:
        raise ConfigurationError(
            f"no samples of {', '.join(sorted(tasks or JUDGED_TASKS))} under {output_dir}: run ecom-lm-eval --tasks ecomeval "
            "--log_samples --output_path DIR (or --predict_only) first"
        )
    cache = ReplyCache(cache_dir) if use_cache else None
    slug = panel_slug(graders, settings.method)
    prepared = [prepare(samples, slug, warn) for samples in found]
    if cache is not None:
        cache.check_writable()
    run = dict(settings=settings, concurrency=concurrency, max_attempts=max_attempts, **options)
    return [asyncio.run(grade_prepared(p, graders, cache=cache, **run)) for p in prepared]
