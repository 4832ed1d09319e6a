"""``ecom-tasks judge``: the second stage of EcomEval in lm-eval, grading the responses lm-eval logged.

Stage one is lm-eval itself: ``ecom-lm-eval --tasks ecomeval --log_samples
--output_path OUT`` (or ``--predict_only``) writes
``OUT/<model>/samples_<task>_<stamp>.jsonl``, one line per item with the
document (question, reference, category, language, task, difficulty) and the
response. Stage two reads those files and grades every response with the
grader prompt, the strict parser, the retry and the failure accounting of
Inspect's ``ecomeval_judge`` (``ecomeval.judging``, the same code), through
litellm (``scorers.litellm_judge``), with one grader or a panel
(``scorers.panel``). Each grader call goes through the persistent reply cache
(``scorers.judge_cache``): grading the same outputs again makes no grader
call, and a run that was interrupted resumes where it stopped.

Beside each samples file it writes (``<slug>`` names the grader or panel):

- ``judge_grades_<task>_<stamp>.<slug>.jsonl``: one line per item, in the
  samples file's order: ``doc_id``, ``id``, ``category``, ``language``,
  ``task``, ``difficulty``, ``response``, ``grade`` (0..3, a panel's median
  may be a half grade; null for a judge failure), ``status`` (``ok`` or the
  failure status), ``detail``, ``outcome`` (what the metrics read), and the
  grader's record (``grader``, ``attempts``, ``grader_replies``,
  ``grader_stop_reasons``) or, for a panel, ``panel_method`` and ``graders``
  (each member's record by label);
- ``judge_results_<task>_<stamp>.<slug>.json``: ``metrics`` (the keys of
  Inspect's ``ecomeval_metrics``, computed by the same ``summarize``), the
  graders and settings, the lm-eval model, and how many grader calls were made
  and how many came from the cache. ``ecom-tasks report`` reads it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ecom_tasks.data import ConfigurationError, EcomTasksError
from ecom_tasks.ecomeval.judging import JUDGE_RETRIES, judge_response, judgement_metadata, judgement_outcome
from ecom_tasks.ecomeval.metrics import FAILURE_THRESHOLD, key_name
from ecom_tasks.ecomeval.prompts import GRADER_VERSION
from ecom_tasks.ecomeval.scoring import summarize
from ecom_tasks.ecomeval.variants import VARIANTS
from ecom_tasks.plugins import parse_metric_names, select_metrics
from ecom_tasks.scorers.judge import GRADER_MAX_TOKENS
from ecom_tasks.scorers.judge_cache import ReplyCache
from ecom_tasks.scorers.kinds import RUBRIC
from ecom_tasks.scorers.litellm_judge import INITIAL_BACKOFF, MAX_ATTEMPTS, MAX_CONCURRENCY, litellm_ask
from ecom_tasks.scorers.panel import MEDIAN, check_method

#: lm-eval's per-task samples file: ``samples_<task>_<stamp>.jsonl``.
SAMPLES_FILE = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d\d-\d\dT[\d.\-]+)\.jsonl$")
#: The tasks whose responses the judge grades (the exact-match tasks are scored inside lm-eval).
JUDGED_TASKS = frozenset(name for name, variant in VARIANTS.items() if variant.judged)
GRADES_PREFIX = "judge_grades_"
RESULTS_PREFIX = "judge_results_"


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
    bases = list(api_bases)
    if len(bases) not in (0, 1, len(models)):
        raise ConfigurationError(
            f"--api-base: give one URL for all graders or one per grader ({len(models)}), not {len(bases)}"
        )
    if len(bases) == 1:
        bases = bases * len(models)
    labels = ["grader"] if len(models) == 1 else [f"grader_{i}" for i in range(1, len(models) + 1)]
    return [Grader(label, model, bases[i] if bases else None) for i, (label, model) in enumerate(zip(labels, models))]


def panel_slug(graders: Sequence[Grader], method: str) -> str:
    """A file-name part naming the grader or panel (long ones shortened with a hash)."""
    names = "+".join(key_name(g.model) for g in graders)
    slug = names if len(graders) == 1 else f"panel_{method}_{names}"
    if len(slug) > 80:
        slug = f"{slug[:60]}_{hashlib.sha256(slug.encode()).hexdigest()[:10]}"
    return slug


def panel_label(graders: Sequence[Grader], method: str) -> str:
    """How a report row names the judge: the grader's model, or ``panel median(a, b, c)``."""
    if len(graders) == 1:
        return graders[0].model
    return f"panel {method}({', '.join(g.model for g in graders)})"


@dataclass
class SamplesFile:
    path: Path
    task: str
    stamp: str

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def lm_eval_results(self) -> Path:
        return self.folder / f"results_{self.stamp}.json"

    def outputs(self, slug: str) -> tuple[Path, Path]:
        stem = f"{self.task}_{self.stamp}.{slug}"
        return self.folder / f"{GRADES_PREFIX}{stem}.jsonl", self.folder / f"{RESULTS_PREFIX}{stem}.json"


def find_samples(output_dir: str | os.PathLike[str], tasks: Sequence[str] | None = None) -> list[SamplesFile]:
    """The samples files of the judged EcomEval tasks under ``output_dir`` (``tasks``: only these)."""
    root = Path(output_dir)
    if not root.exists():
        raise ConfigurationError(f"no such folder: {root}")
    wanted = set(tasks) if tasks else JUDGED_TASKS
    unknown = sorted(wanted - JUDGED_TASKS)
    if unknown:
        raise ConfigurationError(
            f"not a judged EcomEval task: {', '.join(unknown)}; judged tasks: {', '.join(sorted(JUDGED_TASKS))}"
        )
    found = []
    for path in sorted(root.rglob("samples_*.jsonl") if root.is_dir() else [root]):
        match = SAMPLES_FILE.match(path.name)
        if match and match.group("task") in wanted:
            found.append(SamplesFile(path, match.group("task"), match.group("stamp")))
    return found


def read_samples(samples: SamplesFile) -> list[tuple[int, dict[str, Any], str]]:
    """(doc_id, document, response) of every logged item, in doc_id order."""
    items = []
    with samples.path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                sample = json.loads(line)
                doc = sample["doc"]
                response = sample.get("filtered_resps", sample.get("resps"))
                while isinstance(response, list):
                    response = response[0] if response else ""
                doc["question"], doc["reference"]  # noqa: B018  (an EcomEval document has both)
                items.append((int(sample["doc_id"]), doc, "" if response is None else str(response)))
            except (ValueError, KeyError, TypeError, IndexError) as exc:
                raise ConfigurationError(
                    f"{samples.path}:{number}: not an lm-eval sample of an EcomEval task ({type(exc).__name__}: {exc})"
                ) from None
    return sorted(items, key=lambda item: item[0])


@dataclass
class JudgedFile:
    samples: SamplesFile
    grades_path: Path
    results_path: Path
    metrics: dict[str, float]
    items: int
    grader_calls: int = 0
    cached_calls: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def _lm_eval_run(samples: SamplesFile) -> dict[str, Any]:
    """What the lm-eval results file beside the samples says about the run (model, settings)."""
    if not samples.lm_eval_results.is_file():
        return {}
    try:
        data = json.loads(samples.lm_eval_results.read_text(encoding="utf-8"))
    except ValueError:
        return {}
    config = data.get("config") or {}
    return {
        "model": config.get("model"),
        "model_args": config.get("model_args"),
        "model_name": data.get("model_name"),
        "lm_eval_version": data.get("lm_eval_version"),
        "date": data.get("date"),
        "task_config_metadata": ((data.get("configs") or {}).get(samples.task) or {}).get("metadata"),
        "lm_eval_results_file": samples.lm_eval_results.name,
    }


def _atomic_write(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


async def judge_file(
    samples: SamplesFile,
    graders: Sequence[Grader],
    *,
    cache: ReplyCache | None,
    method: str = MEDIAN,
    max_tokens: int = GRADER_MAX_TOKENS,
    failure_threshold: float = FAILURE_THRESHOLD,
    metrics: str | None = None,
    concurrency: int = MAX_CONCURRENCY,
    max_attempts: int = MAX_ATTEMPTS,
    initial_backoff: float = INITIAL_BACKOFF,
    progress: bool = True,
) -> JudgedFile:
    """Grade one samples file and write its grades and results files (see the module docstring)."""
    from tqdm import tqdm

    method = check_method(method)
    specs = select_metrics(RUBRIC, parse_metric_names(metrics))
    items = read_samples(samples)
    asks = {}
    for grader in graders:
        ask = litellm_ask(
            grader.model,
            api_base=grader.api_base,
            max_concurrency=concurrency,
            max_attempts=max_attempts,
            initial_backoff=initial_backoff,
        )
        asks[grader.label] = cache.wrap(ask, grader=grader.model, version=GRADER_VERSION) if cache is not None else ask
    before = (cache.hits, cache.misses) if cache is not None else (0, 0)
    names = {g.label: g.model for g in graders}
    gate = asyncio.Semaphore(max(1, concurrency))
    judged: dict[int, Any] = {}
    bar = tqdm(total=len(items), desc=f"judge {samples.task}", unit="item", disable=not progress)

    async def one(doc_id: int, doc: dict[str, Any], response: str) -> None:
        async with gate:
            judged[doc_id] = await judge_response(
                asks, doc, response, names=names, method=method, max_tokens=max_tokens, retries=JUDGE_RETRIES
            )
        bar.update(1)

    try:
        async with asyncio.TaskGroup() as group:
            for doc_id, doc, response in items:
                group.create_task(one(doc_id, doc, response))
    except BaseExceptionGroup as failed:
        first = failed.exceptions[0]
        raise GradingStopped(
            f"{samples.path.name}: a grader call failed for good ({type(first).__name__}: {first}); {len(judged)} of {len(items)} "
            "items were graded and every reply received is cached: run the same command again to grade the rest"
        ) from first
    finally:
        bar.close()
    lines, outcomes = [], []
    for doc_id, doc, response in items:
        judgement = judged[doc_id]
        outcome = judgement_outcome(doc, judgement)
        outcomes.append(outcome)
        record = {
            "doc_id": doc_id,
            **{key: doc.get(key) for key in ("id", "category", "language", "task", "difficulty")},
            "response": response,
            **judgement_metadata(judgement),
            "outcome": outcome,
        }
        lines.append(json.dumps(record, ensure_ascii=False))
    summary = summarize(outcomes, specs, failure_threshold)
    slug = panel_slug(graders, method)
    grades_path, results_path = samples.outputs(slug)
    _atomic_write(grades_path, "".join(line + "\n" for line in lines))
    hits, misses = (cache.hits - before[0], cache.misses - before[1]) if cache is not None else (0, 0)
    results = {
        "benchmark": "ecomeval",
        "framework": "lm-eval",
        "task": samples.task,
        "samples_file": samples.path.name,
        "grades_file": grades_path.name,
        **_lm_eval_run(samples),
        "judge": panel_label(graders, method),
        "graders": [{"label": g.label, "model": g.model, "api_base": g.api_base} for g in graders],
        "panel": method if len(graders) > 1 else None,
        "grader_prompt_version": GRADER_VERSION,
        "judge_temperature": 0.0,
        "judge_retries": JUDGE_RETRIES,
        "grader_max_tokens": max_tokens,
        "judge_failure_threshold": failure_threshold,
        "metrics_selected": metrics or "all",
        "grader_calls": misses if cache is not None else None,
        "cached_calls": hits if cache is not None else None,
        "metrics": summary,
    }
    _atomic_write(results_path, json.dumps(results, ensure_ascii=False, indent=2, allow_nan=True) + "\n")
    return JudgedFile(samples, grades_path, results_path, summary, len(items), misses, hits)


def judge_output(
    output_dir: str | os.PathLike[str],
    models: Sequence[str],
    *,
    api_bases: Sequence[str] = (),
    tasks: Sequence[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    use_cache: bool = True,
    **options: Any,
) -> list[JudgedFile]:
    """Grade every judged EcomEval samples file under ``output_dir`` (see :func:`judge_file`)."""
    graders = graders_from(models, api_bases)
    found = find_samples(output_dir, tasks)
    if not found:
        raise ConfigurationError(
            f"no samples of {', '.join(sorted(tasks or JUDGED_TASKS))} under {output_dir}: run ecom-lm-eval --tasks ecomeval "
            "--log_samples --output_path DIR (or --predict_only) first"
        )
    cache = ReplyCache(cache_dir) if use_cache else None
    return [asyncio.run(judge_file(samples, graders, cache=cache, **options)) for samples in found]
