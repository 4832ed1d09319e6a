"""``ecom-tasks compare``: which model is better on each benchmark, and how sure, from both frameworks' per-item
outcomes, grouped into :class:`~ecom_tasks.report.stats.Units` as each benchmark's :data:`DESIGNS` demands."""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ecom_tasks import files
from ecom_tasks.ecomeval import metrics as ecomeval_metrics
from ecom_tasks.ecomeval.judge_run import panel_label
from ecom_tasks.ecomeval.metrics import Outcome
from ecom_tasks.ecomeval.paper_tables import panel_members
from ecom_tasks.ecomeval.schema import CATEGORIES as ECOMEVAL_CATEGORIES
from ecom_tasks.errors import ConfigurationError, EcomTasksError, printable
from ecom_tasks.monbench import metrics as monbench_metrics
from ecom_tasks.monbench.protocol import FORMATS
from ecom_tasks.monbench.schema import TASKS
from ecom_tasks.monbench.scoring import logged_runs
from ecom_tasks.plugins import select_metrics
from ecom_tasks.rair import metrics as rair_metrics
from ecom_tasks.report import stats
from ecom_tasks.report.runs import JUDGED_FILE
from ecom_tasks.results import FIXTURES, INSPECT, SAMPLES_FILE, UNKNOWN_DATA, UNREADABLE, Run
from ecom_tasks.rmir import metrics as rmir_metrics
from ecom_tasks.rmir.metrics import QueryOutcome
from ecom_tasks.scorers.kinds import CHOICE_RUNS, LABELS, RANKING, RUBRIC
from ecom_tasks.scorers.panel import MEDIAN
from ecom_tasks.tables import Column, Row, Table, file_slug


@dataclass(frozen=True)
class Design:
    """How one benchmark's runs are compared."""

    metrics: tuple[str, ...]  # the headline metrics, compared by default
    summarize: Callable[[list[Any]], Mapping[str, float]]  # the outcome records of the chosen units
    unit_field: str  # the lm-eval document field naming a unit (Inspect: the sample id)
    unit: str  # what a unit is, for the tables
    # (logged outcome, the item's fields: Inspect's sample metadata, lm-eval's doc) -> the benchmark's outcome
    # record, for metrics that read the item's groups (category, ...) from its fields, not from Score.value.
    record: Callable[[Mapping[str, Any], Mapping[str, Any]], Any]
    stratum_field: str | None = None  # resampled within (EcomEval: category)
    binary: Mapping[str, str] = field(default_factory=dict)  # metric -> per-unit right/wrong key (McNemar)
    protocol: tuple[str, ...] = ()  # settings that must agree between two compared runs
    # An lm-eval group's value is summarize over its subtasks' pooled units (MonBench: a run averages its tasks);
    # otherwise (RAIR: lm-eval averages the subtasks' values) only its subtasks are compared.
    groups: bool = False


def _rmir_summary(outcomes: list[Any]) -> Mapping[str, float]:
    # The cut-offs a run computed are the keys its outcomes carry (recall@<k>, ndcg@<k>, mrr).
    names = {key for outcome in outcomes[:1] for key in outcome.values}
    return rmir_metrics.summarize(outcomes, [spec.name for spec in select_metrics(RANKING) if spec.name in names])


def _ecomeval_summary(outcomes: list[Any]) -> Mapping[str, float]:
    if any(o is None for o in outcomes):
        raise ValueError("responses without grades (run ecom-tasks judge on them)")
    return ecomeval_metrics.summarize(outcomes, select_metrics(RUBRIC))


DESIGNS: dict[str, Design] = {
    "rair": Design(
        ("acc2", "acc4", "macro_f1"),
        lambda outcomes: rair_metrics.headline(outcomes, select_metrics(LABELS)),
        "id",
        "items",
        binary={"acc2": "acc2", "acc4": "acc4"},
        protocol=("rules", "rules_sha256", "language"),
        # lm-eval logs the outcome record (its numbers beside the item's groups); Inspect, older lm-eval: the numbers
        record=lambda logged, fields: logged.get("numbers", logged),
    ),
    "monbench": Design(
        ("acc",),
        lambda tables: monbench_metrics.headline(np.concatenate(tables), select_metrics(CHOICE_RUNS)),
        "record_id",
        "questions",
        protocol=("shots", "parsing", "strict", "category_weights"),
        # one numeric table of a question's runs (scoring.logged_runs), so a resample concatenates tables
        record=lambda logged, fields: monbench_metrics.outcome_table(logged_runs(logged, fields), TASKS, FORMATS),
        groups=True,
    ),
    "ecomeval": Design(
        ("score", "score_multimodal"),
        _ecomeval_summary,
        "id",
        "items",
        stratum_field="category",
        protocol=("judge", "category", "task", "language", "difficulty", "multimodal"),
        # None: lm-eval's responses, not judged yet
        record=lambda logged, fields: Outcome.of(logged, fields) if "graded" in logged else None,
    ),
    "rmir": Design(
        ("recall@20", "recall@50"),
        _rmir_summary,
        "query_id",
        "queries",
        protocol=("split", "pool_captions", "k"),
        record=lambda logged, fields: QueryOutcome(logged, str(fields.get("category", ""))),
    ),
}


#: What a run records of how it asked and graded, checked for every benchmark wherever both runs record it: another
#: prompt or grader prompt (an older ecom-tasks) is another protocol, not another model.
RECORDED_PROTOCOL = ("prompt_version", "grader_prompt_version", "judge_temperature")


@dataclass
class ModelRun:
    """One model's run of one task with its per-unit outcomes."""

    run: Run
    units: stats.Units
    label: str = ""


def compared_task(run: Any) -> str:
    """The name a run (a ``Run`` or ``MergedRun``) is compared under: lm-eval's task for an Inspect task's setting
    (``rair_hard -T rules=builtin`` is ``rair_hard_builtin_rules``), so one setting pairs across frameworks."""
    task, info = str(run.task), run.info
    if run.framework != INSPECT:
        return task
    source, tasks, category = info.get("rules_source"), info.get("tasks"), str(info.get("category", ""))
    if task in ("rair_general", "rair_hard", "rair_visual", "rair_visual_text") and source not in (None, "none"):
        return f"{task}_builtin_rules" if source == "builtin" else f"{task}_rules_{str(info.get('rules_sha256'))[:8]}"
    if (
        task in ("monbench_perm", "monbench_cyclic", "monbench_canonical")
        and isinstance(tasks, list)
        and len(tasks) == 1
    ):
        return f"{task}_{tasks[0]}"
    if task in ("ecomeval", "ecomeval_exact") and category in ECOMEVAL_CATEGORIES:
        return f"{task}_{category}"
    return task


def model_label(run: Run) -> str:
    """The model as the comparison names it; in RMIR's embed mode the retriever is what is compared."""
    settings = run.settings_dict
    if run.benchmark == "rmir" and settings.get("mode", "embed") == "embed":
        retriever = settings.get("retriever", "?")
        args = settings.get("retriever_args")
        return f"{retriever}({args})" if args else retriever
    if run.benchmark == "rmir":
        return f"{run.model_name} + {settings.get('retriever', '?')}"
    return run.model_name


# --- reading ----------------------------------------------------------------------------------------


def _units(design: Design, rows: Iterable[tuple[str, Mapping[str, Any], Mapping[str, Any]]]) -> stats.Units:
    """Units from (unit id, logged outcome, item fields) rows: a unit's rows (epochs, runs) stay together."""
    grouped: dict[str, list[Any]] = defaultdict(list)
    strata: dict[str, str] = {}  # a unit's first row names its stratum
    for unit_id, logged, fields in rows:
        grouped[unit_id].append(design.record(logged, fields))
        if design.stratum_field is not None:
            strata.setdefault(unit_id, str(fields.get(design.stratum_field)))
    ids = tuple(sorted(grouped))
    with_strata = design.stratum_field is not None
    return stats.Units(
        ids, tuple(tuple(grouped[i]) for i in ids), tuple(strata[i] for i in ids) if with_strata else None
    )


def _inspect_units(run: Run, design: Design) -> stats.Units:
    log = files.read_inspect_log(run.source, inside=run.folder or None)
    rows = []
    for sample in log.samples or []:
        outcome = next((s.value for s in (sample.scores or {}).values() if isinstance(s.value, dict)), None)
        if outcome is None:
            continue  # an unscored sample (an error): not an answer of the model's
        rows.append((str(sample.id), outcome, sample.metadata or {}))
    return _units(design, rows)


def _lm_eval_rows(path: Path, design: Design, *, judged: bool, inside: Path) -> list[tuple[str, Any, Any]]:
    """(unit id, logged outcome, item fields) of an lm-eval samples file, or of an ``ecom-tasks judge``
    grades file (``judged``), found in the folder ``inside`` (a link planted since that leaves it: refused)."""
    values, problems = files.json_lines(path, inside=inside, max_bytes=files.MAX_LOG_INFLATED_BYTES)
    if problems:
        raise ConfigurationError(str(problems[0]))
    rows = []
    for line, value in values:
        record = value if isinstance(value, dict) else {}  # a line that is no object is refused below
        doc = record if judged else record.get("doc")
        outcome = record.get("outcome") if judged else _first_metric(record)
        if not isinstance(doc, dict) or not isinstance(outcome, dict) or design.unit_field not in doc:
            raise ConfigurationError(f"{path}:{line}: not a sample of ours (no {design.unit_field!r} or outcome)")
        rows.append((str(doc[design.unit_field]), outcome, doc))
    return rows


def _first_metric(sample: Mapping[str, Any]) -> Mapping[str, Any] | None:
    # Every metric of a document carries the same outcome object (OutcomeTask.process_results).
    names = sample.get("metrics")
    value = sample.get(names[0]) if isinstance(names, list) and names and isinstance(names[0], str) else None
    return value if isinstance(value, dict) else None


def model_runs(
    runs: Iterable[Run], *, only: set[tuple[str, str]] | None = None
) -> tuple[list[ModelRun], list[str], list[str]]:
    """Every finished run of ours among ``runs`` (of the (benchmark, task) pairs in ``only``) with its per-unit
    outcomes, a note for each run that cannot take part, and each file that could not be read, with why."""
    found: list[ModelRun] = []
    listing = functools.cache(files.folder_files)  # a folder of several runs' samples files is listed once
    notes: list[str] = []
    unreadable: list[str] = []
    for run in runs:
        design = DESIGNS.get(run.benchmark)
        if run.status == UNREADABLE:
            unreadable.append(run.error if run.source in run.error else f"{run.source}: {run.error}")
            continue
        if only is not None and (run.benchmark, compared_task(run)) not in only:
            continue
        if design is None or run.status != "success":
            if design is not None:
                notes.append(f"{run.source}: {run.task} did not finish ({run.status}); left out")
            continue
        if run.info.get("subtasks") and not design.groups:
            notes.append(f"{run.source}: {run.task} is a group, the mean of its tasks' values; its tasks are compared")
            continue
        try:
            units = (
                _inspect_units(run, design) if run.framework == INSPECT else _lm_eval_run_units(run, design, listing)
            )
        except NoSamples as exc:
            notes.append(str(exc))
            continue
        except EcomTasksError as exc:  # a log or samples file that cannot be read (FileRefused, a bad line)
            unreadable.append(str(exc))
            continue
        if len(units) == 0:
            notes.append(f"{run.source}: {run.task} holds no scored items; left out")
            continue
        try:  # e.g. lm-eval's EcomEval responses not judged yet: no grades to compare
            design.summarize(units.flatten(range(len(units))))
        except (KeyError, ValueError, TypeError) as exc:
            notes.append(f"{run.source}: {run.task} has no scored outcomes to compare ({type(exc).__name__}: {exc})")
            continue
        found.append(ModelRun(run, units, model_label(run)))
    return found, notes, unreadable


class NoSamples(Exception):
    """A run without per-item outcomes (lm-eval without --log_samples)."""


def _lm_eval_run_units(run: Run, design: Design, listing: Callable[[Path], list[Path]]) -> stats.Units:
    # The results file was read into ``run`` (``report.runs``): its facts name the grades or subtasks.
    source = Path(run.source)
    if JUDGED_FILE.match(source.name):
        grades = source.parent / str(run.info.get("grades_file") or "")
        if not run.info.get("grades_file") or not files.is_inside(grades, source.parent):
            raise NoSamples(f"{source}: names no grades file beside it; left out")
        return _units(design, _lm_eval_rows(grades, design, judged=True, inside=source.parent))
    stamp = source.name.removeprefix("results_").removesuffix(".json")  # RESULTS_FILE's stamp
    subtasks = run.info.get("subtasks") or []  # a group's files are its subtasks'
    samples = [
        path
        for path in listing(source.parent)
        if (m := SAMPLES_FILE.match(path.name))
        and m["stamp"] == stamp
        and (m["task"] == run.task or m["task"] in subtasks)
    ]
    if not samples:
        raise NoSamples(f"{source}: {run.task} has no samples file (run lm-eval with --log_samples to compare it)")
    # A group's subtasks' files are one run: a unit's rows stay together whichever file holds them.
    rows = [row for path in samples for row in _lm_eval_rows(path, design, judged=False, inside=path.parent)]
    if not rows:  # named: an emptied samples file is never passed over in silence
        raise NoSamples(f"{', '.join(map(str, samples))}: {run.task}'s samples file holds no items; left out")
    return _units(design, rows)


# --- comparing --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """One line of the comparison: a model's value (``kind`` "model") or a pair's difference b - a ("pair")."""

    benchmark: str
    task: str
    metric: str
    kind: str
    estimate: float
    ci_low: float
    ci_high: float
    n: int
    unit: str
    model: str | None = None
    a: str | None = None
    b: str | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    test: str | None = None
    min_detectable: float | None = None
    unit_sd: float | None = None
    paper_ci: float | None = None
    framework: str | None = None
    seed: int = stats.SEED
    n_resamples: int = stats.N_RESAMPLES

    def as_json(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if value is not None}


@dataclass
class Comparison:
    records: list[Record] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _check_protocol(design: Design, a: ModelRun, b: ModelRun) -> None:
    """Refuses (:class:`~ecom_tasks.report.stats.NotComparable`) two runs of one task that ran on different data
    or under a different protocol, saying why."""
    sha_a, sha_b = a.run.info.get("data_sha256"), b.run.info.get("data_sha256")
    if sha_a and sha_b and sha_a != sha_b:
        raise stats.NotComparable(f"different data (sha256 {str(sha_a)[:12]}... vs {str(sha_b)[:12]}...)")
    # Locations are spelled differently across frameworks (a hash recorded or not, relative or absolute);
    # beyond the hashes above, the bundled fixtures against other data is what a location tells apart.
    known = UNKNOWN_DATA not in (a.run.data, b.run.data)
    if known and (a.run.data == FIXTURES) != (b.run.data == FIXTURES):
        raise stats.NotComparable(f"different data ({a.run.data} vs {b.run.data})")
    settings_a, settings_b = _protocol(a.run), _protocol(b.run)
    # A task's version numbers are its framework's own (lm-eval's YAML ``version``, Inspect's ``task_version``).
    versions = ("task_version", "version") if a.run.framework == b.run.framework else ()
    for key in (*design.protocol, *RECORDED_PROTOCOL, *versions):
        value_a, value_b = settings_a.get(key), settings_b.get(key)
        if value_a is not None and value_b is not None and value_a != value_b:
            raise stats.NotComparable(f"different {key} ({value_a} vs {value_b})")


def _protocol(run: Run) -> dict[str, str]:
    values = {key: str(value) for key, value in run.info.items() if value not in (None, "")}
    values.update(run.settings_dict)
    # Named as an ecom-tasks judge run names its judge in its grader role (judge_run.panel_label).
    members = panel_members(run)
    if members:
        values["judge"] = panel_label(members, values.get("panel", MEDIAN))
    elif "grader" in run.roles:
        values["judge"] = run.roles["grader"]
    return values


def _distinct_labels(runs: list[ModelRun]) -> None:
    """Give each run of a task a distinct label: the framework is added where a name repeats."""
    counts = Counter(run.label for run in runs)
    for run in runs:
        if counts[run.label] > 1:
            run.label = f"{run.label} ({run.run.framework})"


def compare_runs(
    runs: Sequence[ModelRun],
    *,
    metric: str | None = None,
    baseline: str | None = None,
    n_resamples: int = stats.N_RESAMPLES,
    seed: int = stats.SEED,
) -> Comparison:
    """Every model's interval and every pair's paired difference, per benchmark, task and metric."""
    result = Comparison()
    if metric:  # a name no run's metrics hold would give a table of blanks for every task
        held = {key for r in runs for key in DESIGNS[r.run.benchmark].summarize(r.units.flatten(range(len(r.units))))}
        if metric not in held:
            raise ConfigurationError(f"--metric {metric!r} is no metric of these runs: {', '.join(sorted(held))}")
    by_task: dict[tuple[str, str], list[ModelRun]] = defaultdict(list)
    for run in runs:
        by_task[(run.run.benchmark, compared_task(run.run))].append(run)
    for (benchmark, task), task_runs in sorted(by_task.items()):
        design = DESIGNS[benchmark]
        task_runs = _latest_per_model(task_runs, result.notes, f"{benchmark}/{task}")
        _distinct_labels(task_runs)
        task_runs.sort(key=lambda r: r.label)
        measure = stats.Measure(design.summarize)
        for name in (metric,) if metric else design.metrics:

            def record(kind: str, value: stats.Estimate, **more: Any) -> Record:
                interval = (value.estimate, value.ci_low, value.ci_high, value.n)
                where = (benchmark, task, name, kind, *interval, design.unit)  # noqa: B023 (called in this iteration)
                return Record(*where, seed=seed, n_resamples=n_resamples, **more)

            for run in task_runs:
                estimate = stats.interval(
                    run.units, measure, name, binary_key=design.binary.get(name), n_resamples=n_resamples, seed=seed
                )
                paper_ci = measure.all(run.units, "acc_ci") if benchmark == "monbench" and name == "acc" else None
                result.records.append(
                    record("model", estimate, model=run.label, paper_ci=paper_ci, framework=run.run.framework)
                )
            done: list[Record] = []
            for a, b in _pairs(task_runs, baseline):
                try:
                    _check_protocol(design, a, b)
                    diff = stats.compare(
                        a.units,
                        b.units,
                        measure,
                        name,
                        binary_key=design.binary.get(name),
                        n_resamples=n_resamples,
                        seed=seed,
                    )
                except stats.NotComparable as exc:
                    message = f"{benchmark}/{task}: {a.label} and {b.label} not compared: {exc}"
                    if message not in result.refused:
                        result.refused.append(message)
                    continue
                details = {k: getattr(diff, k) for k in ("p_value", "test", "min_detectable", "unit_sd")}
                done.append(record("pair", diff, a=a.label, b=b.label, **details))
            adjusted = stats.holm([r.p_value if r.p_value is not None else math.nan for r in done])
            result.records += [replace(r, p_adjusted=p) for r, p in zip(done, adjusted)]
    if baseline and not any(r.kind == "pair" for r in result.records) and runs:
        known = sorted({r.label for r in runs})
        if baseline not in known:
            raise ConfigurationError(f"--baseline {baseline!r} is not a model of these runs: {', '.join(known)}")
    return result


def _latest_per_model(runs: list[ModelRun], notes: list[str], where: str) -> list[ModelRun]:
    latest: dict[tuple[str, str], ModelRun] = {}
    for run in sorted(runs, key=lambda r: r.run.created):
        key = (run.label, run.run.framework)
        if key in latest:
            notes.append(f"{where}: {run.label} ran more than once; the latest run is compared")
        latest[key] = run
    return list(latest.values())


def _pairs(runs: list[ModelRun], baseline: str | None) -> list[tuple[ModelRun, ModelRun]]:
    if baseline is None:
        return list(itertools.combinations(runs, 2))
    base = [r for r in runs if r.label == baseline or r.run.model_name == baseline]
    return [(base[0], other) for other in runs if base and other is not base[0]]


def units_needed_table(comparison: Comparison, difference: float) -> list[dict[str, Any]]:
    """For each benchmark, task and metric: the units (items, questions) a paired comparison needs to
    detect ``difference`` with 80% power at alpha 0.05, from the largest per-unit SD the pairs showed."""
    rows = []
    spread: dict[tuple[str, str, str, str], float] = {}
    for record in comparison.records:
        if record.kind == "pair" and record.unit_sd is not None and math.isfinite(record.unit_sd):
            key = (record.benchmark, record.task, record.metric, record.unit)
            spread[key] = max(spread.get(key, 0.0), record.unit_sd)
    for (benchmark, task, metric, unit), unit_sd in sorted(spread.items()):
        needed = stats.units_needed(difference, unit_sd) if unit_sd > 0 else None
        where = {"benchmark": benchmark, "task": task, "metric": metric}
        rows.append({**where, "difference": difference, "unit_sd": unit_sd, "needed": needed, "unit": unit})
    return rows


# --- showing ----------------------------------------------------------------------------------------


def _number(value: float | None, digits: int = 4) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _mark(p_adjusted: float | None) -> str:
    """Significance after Holm's adjustment: * < 0.05, ** < 0.01, *** < 0.001."""
    if p_adjusted is None or not math.isfinite(p_adjusted):
        return ""
    return "***" if p_adjusted < 0.001 else "**" if p_adjusted < 0.01 else "*" if p_adjusted < 0.05 else ""


def by_metric(comparison: Comparison) -> list[tuple[tuple[str, str, str], list[Record], list[Record]]]:
    """Per (benchmark, task, metric), in the order compared: its model records best first (nan last), its pairs."""
    groups: dict[tuple[str, str, str], list[Record]] = defaultdict(list)
    for record in comparison.records:
        groups[(record.benchmark, record.task, record.metric)].append(record)
    return [
        (
            key,
            sorted((r for r in records if r.kind == "model"), key=_best_first),
            [r for r in records if r.kind == "pair"],
        )
        for key, records in groups.items()
    ]


def _best_first(record: Record) -> tuple[bool, float]:
    return not math.isfinite(record.estimate), -record.estimate if math.isfinite(record.estimate) else 0


def _method(benchmark: str, record: Record, separator: str = "; ") -> str:
    """How a metric's intervals were computed."""
    stratified = ", stratified by category" if DESIGNS[benchmark].stratum_field else ""
    resamples = f"{record.n_resamples} resamples, seed {record.seed}"
    return f"95% expanded percentile bootstrap over {record.unit}{stratified}{separator}{resamples}"


def format_comparison(comparison: Comparison) -> str:
    """The comparison as terminal tables: per benchmark, task and metric the models ranked with their
    intervals, then every pair's difference b - a with its interval, p-values and what the run detects."""
    blocks: list[str] = []
    for (benchmark, task, metric), models, pairs in by_metric(comparison):
        lines = [f"{benchmark} / {task} / {metric}  ({_method(benchmark, models[0])})"]
        paper = any(r.paper_ci is not None for r in models)
        header = f"  {'rank':<5}{'model':<40}{'value':>9}  {'95% CI':<19}{'n':>6}"
        lines.append(header + ("  paper's interval over runs (±)" if paper else ""))
        for rank, r in enumerate(models, 1):
            ci = f"[{_number(r.ci_low)}, {_number(r.ci_high)}]"
            extra = f"  {_number(r.paper_ci)}" if paper else ""
            lines.append(f"  {rank:<5}{r.model:<40}{_number(r.estimate):>9}  {ci:<19}{r.n:>6}{extra}")
        if pairs:
            lines.append(
                f"  {'pair (b - a)':<45}{'diff':>9}  {'95% CI':<21}{'p':>7}{'p_holm':>8}  {'test':<19}{'detectable':>10}"
            )
            for r in pairs:
                ci = f"[{_number(r.ci_low)}, {_number(r.ci_high)}]"
                name = f"{r.b} - {r.a}"
                lines.append(
                    f"  {name:<45}{_number(r.estimate):>9}  {ci:<21}{_number(r.p_value, 3):>7}"
                    f"{_number(r.p_adjusted, 3):>8}{_mark(r.p_adjusted):<3}{r.test or '':<18}{_number(r.min_detectable):>10}"
                )
        blocks.append("\n".join(lines))
    text = "\n\n".join(blocks)
    notes = [f"not compared: {line}" for line in comparison.refused] + comparison.notes
    if notes:
        text += "\n\n" + "\n".join(printable(note, newlines=False) for note in notes)  # one line each
    legend = (
        "\n\n* p_holm < 0.05, ** < 0.01, *** < 0.001 (Holm over the pairs of a metric); detectable: the smallest "
        "difference this many units detect with 80% power at alpha 0.05"
    )
    return text + (legend if any(r.kind == "pair" for r in comparison.records) else "")


def write_json(path: str | Path, comparison: Comparison, inputs: Sequence[str | Path]) -> Path:
    """The records as a JSON list (strict JSON: nan is null), written beside nothing it reads."""
    target = Path(path)
    out = files.OutputFolder(target.parent if str(target.parent) else ".", inputs=inputs)
    files.create_parents(out.root / target.name)  # made once the file is known to lie outside every input
    return out.write_text(target.name, files.dumps_strict([r.as_json() for r in comparison.records], indent=2) + "\n")


# --- in the report ----------------------------------------------------------------------------------

#: How a benchmark's headline values display in the report (``ecom_tasks.tables.Table.display``).
DISPLAY = {"rair": "percent", "monbench": "percent", "ecomeval": "score", "rmir": "percent"}


def report_tables(comparison: Comparison, baseline: str | None = None) -> list[Table]:
    """The "Which model is better" tables of the report, per benchmark, task and metric with two or more
    models: the models ranked with their intervals, the matrix of paired differences (row - column, Holm
    marks), every pair's test in detail, and with ``baseline`` a forest plot of every model against it."""
    tables: list[Table] = []
    for (benchmark, task, metric), models, pairs in by_metric(comparison):
        if len(models) < 2:
            continue
        display = DISPLAY.get(benchmark, "fraction")
        first = models[0]
        design = _method(benchmark, first, ", ")
        slug = f"better_{file_slug(task)}_{file_slug(metric)}"
        unit = Column("n", first.unit, display="count")
        paper = [Column("paper_ci", "paper's ± over runs")] if any(r.paper_ci is not None for r in models) else []
        columns = [*_interval_columns(metric), unit, *paper]
        rows = [_row(r, r.model, f"rank {rank}", r.framework, columns) for rank, r in enumerate(models, 1)]
        table = functools.partial(Table, benchmark, display=display)
        title = f"Which model is better: {task}, {metric}"
        tables.append(table(slug, title, columns, rows, note=f"Models ranked by {metric}; {design}."))
        if not pairs:
            continue
        matrix_rows: dict[str, Row] = {}
        for r in pairs:
            row = matrix_rows.setdefault(r.b or "", Row(r.b or "", "b", "", {}, comparison=True))
            row.cells[r.a or ""] = r.estimate
            row.marks[r.a or ""] = _mark(r.p_adjusted)
        tables.append(
            table(
                f"{slug}_pairs",
                f"Paired differences: {task}, {metric} (row − column)",
                [Column(a, f"− {a}") for a in dict.fromkeys(r.a or "" for r in pairs)],
                list(matrix_rows.values()),
                note="Each cell is the row model's value minus the column model's on the items both ran. "
                "* Holm-adjusted p < 0.05, ** < 0.01, *** < 0.001 (over the pairs of this metric).",
            )
        )
        columns = [
            *_interval_columns("b − a"),
            Column("p_value", "p", display="fraction"),
            Column("p_adjusted", "p (Holm)", display="fraction"),
            Column("min_detectable", "detectable at 80% power"),
            unit,
        ]
        tables.append(
            table(
                f"{slug}_tests",
                f"Paired tests: {task}, {metric}",
                columns,
                [_row(r, f"{r.b} − {r.a}", r.test, "", columns) for r in pairs],
                note=f"{design}; tests: exact McNemar (per-item right or wrong) or a paired permutation test. "
                "'Detectable': the smallest difference this many units detect with 80% power at alpha 0.05.",
            )
        )
        if baseline is not None:
            against = [r for r in pairs if r.a == baseline or (r.a or "").startswith(f"{baseline} (")]
            if against:
                columns = _interval_columns("b − baseline")
                tables.append(
                    table(
                        f"{slug}_forest",
                        f"Against {against[0].a}: {task}, {metric}",
                        columns,
                        [_row(r, r.b, "vs baseline", "", columns) for r in against],
                        note=f"Every model minus the baseline, with its 95% interval ({design}).",
                        plot="forest",
                    )
                )
    return tables


def _interval_columns(header: str) -> list[Column]:
    return [Column("estimate", header, headline=True), Column("ci_low", "95% CI low"), Column("ci_high", "95% CI high")]


def _row(record: Record, model: str | None, setting: str | None, source: str | None, columns: Sequence[Column]) -> Row:
    """A comparison row of the report: ``record``'s values of the ``columns`` it holds."""
    cells = {column.key: float(value) for column in columns if (value := getattr(record, column.key)) is not None}
    return Row(model or "", setting or "", source or "", cells, comparison=True)
