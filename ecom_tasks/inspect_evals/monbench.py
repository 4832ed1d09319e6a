"""MonBench in Inspect: the tasks, the scorer and the metric (thin; the benchmark is in ``ecom_tasks.monbench``).

Tasks, parameters, metrics, reference numbers and deviations are in ``ecom_tasks/monbench/README.md``.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value, metric, scorer
from inspect_ai.solver import TaskState

from ecom_tasks.data import ConfigurationError, parse_flag
from ecom_tasks.files import parse_json
from ecom_tasks.inspect_evals._task_parameters import parameters_of
from ecom_tasks.monbench.metrics import RunOutcome
from ecom_tasks.monbench.prompts import PROMPT_VERSION
from ecom_tasks.monbench.protocol import Run, load_items, parse_formats, parse_shots
from ecom_tasks.monbench.schema import CATEGORIES, LETTERS, TASKS
from ecom_tasks.monbench.scoring import pack_question, refused_outcome, score_reply, summarize, unpack_question
from ecom_tasks.monbench.variants import MAX_TOKENS, TASK_VERSION
from ecom_tasks.plugins import select_metrics
from ecom_tasks.provenance import fixtures_location, task_metadata
from ecom_tasks.scorers.context_limit import CONTEXT_EXCEEDED
from ecom_tasks.scorers.inspect_scorers import TRUNCATED_STOP_REASONS, context_exceeded_reply, outcome_mean
from ecom_tasks.scorers.kinds import CHOICE_RUNS
from ecom_tasks.scorers.settings import metric_names, shown
from ecom_tasks.solvers.fan_out import FAN_OUT, fan_out_generate, fan_out_replies, fan_out_spec


@metric
def monbench_summary(category_weights: dict[str, float] | None = None, metrics: list[str] | None = None) -> Metric:
    """MonBench's metrics (README "Metrics"). The runs' numbers come from ``Score.value`` (every run of a
    question, packed: epoch reduction and re-scoring work), the question's groups (task, category) from
    the sample's metadata, which Inspect keeps through epoch reduction."""
    specs = select_metrics(CHOICE_RUNS, metrics)
    weights = {int(k): float(v) for k, v in (category_weights or {}).items()}

    def compute(scores: list[SampleScore]) -> Value:
        scored = [(s.score.value, s.sample_metadata or {}) for s in scores if isinstance(s.score.value, dict)]
        outcomes = [run for value, question in scored for run in unpack_question(value, question)]
        return summarize(outcomes, specs, category_weights=weights)

    return compute


@scorer(metrics=[monbench_summary()])
def monbench_scorer(strict: bool = False) -> Scorer:
    """Score every run of a MonBench question: only the requested tags count; invalid replies are
    wrong and counted. Both readings of every reply: the careful one (what a careful human grader
    accepts, the headline) and the strict one (exactly the requested tags, the ``_strict`` metrics).
    ``strict``: a Label+Content reply is right only when both tags name the right option."""

    async def score(state: TaskState, target: Target) -> Score:
        replies = fan_out_replies(state)
        spec = state.metadata[FAN_OUT]
        sent = {run["key"]: (spec["systems"][run["system"]], run["user"]) for run in spec["runs"]}
        outcomes: dict[str, RunOutcome] = {}
        answers: dict[str, str] = {}
        refused: dict[str, str] = {}
        for key, run in state.metadata["runs"].items():
            reply = replies[key]
            fields = {**state.metadata, **run, **vars(Run.from_key(key))}  # the question, the run, ordering, format
            message = context_exceeded_reply(reply["completion"], reply["stop_reason"])
            if message is not None:  # the server's error, not the model's answer: wrong and counted apart
                outcomes[key], answers[key], refused[key] = refused_outcome(fields), CONTEXT_EXCEEDED, message
                continue
            truncated = reply["stop_reason"] in TRUNCATED_STOP_REASONS
            parsed, outcomes[key] = score_reply(
                fields, reply["completion"], strict=strict, truncated=truncated, prompt=sent[key]
            )
            answers[key] = LETTERS[parsed.position] if parsed.position is not None else parsed.status
        right = sum(o["correct"] for o in outcomes.values())
        explanation = ", ".join(f"{key}: {answer}" for key, answer in answers.items())
        if refused:
            explanation += f"; {len(refused)} run(s) refused by the server: {next(iter(refused.values()))}"
        return Score(
            value=pack_question(outcomes),
            answer=f"{right}/{len(outcomes)} runs right",
            explanation=explanation,
            metadata={"answers": answers},
        )

    return score


def monbench_dataset(
    tasks: tuple[str, ...] | list[str],
    design: str = "full",
    formats: str | list[str] | tuple[str, ...] | None = None,
    shots: int = 0,
    data: str | None = None,
    split: str = "test",
) -> MemoryDataset:
    """One Sample per question (id = the record's id) holding all of its runs; the
    ``fan_out_generate`` solver asks them. The Sample's input is its first run."""
    items = load_items(data, tasks=tasks, split=split, design=design, formats=formats, shots=shots)
    samples = []
    # Question-major (record ids are unique): a question's runs are together, in run order.
    for _, group in itertools.groupby(items, key=lambda item: item.record.id):
        runs = list(group)
        first = runs[0]
        spec = fan_out_spec(
            {item.run.format: item.system_prompt for item in runs},
            [(item.run.key, item.run.format, item.user_prompt) for item in runs],
        )
        samples.append(
            Sample(
                id=first.record.id,
                input=[ChatMessageSystem(content=first.system_prompt), ChatMessageUser(content=first.user_prompt)],
                target=first.record.choices[first.record.answer],
                metadata={
                    **{key: first.fields[key] for key in ("record_id", "task", "question_index", "category")},
                    "runs": {
                        item.run.key: {"displayed": list(item.displayed), "target_position": item.target_position}
                        for item in runs
                    },
                    FAN_OUT: spec,
                },
            )
        )
    name = f"monbench_{'_'.join(tasks) if len(tasks) == 1 else 'all'}_{design}"
    return MemoryDataset(samples, name=name, location=str(data or fixtures_location("monbench")))


def _weights(category_weights: str | dict[str, Any] | None) -> dict[str, float] | None:
    if not category_weights:
        return None
    # A -T value from the command line: strict JSON (files' limits), then category number -> weight >= 0.
    mapping = (
        parse_json(category_weights, "category_weights") if isinstance(category_weights, str) else category_weights
    )
    try:
        weights = {str(int(k)): float(v) for k, v in mapping.items()}
        valid = all(1 <= int(k) <= len(CATEGORIES) and math.isfinite(w) and w >= 0 for k, w in weights.items())
    except (AttributeError, TypeError, ValueError):  # not a mapping, or a key or weight that is no number
        valid = False
    if not valid:
        raise ConfigurationError(
            f"category_weights must be a JSON object of category numbers (1-{len(CATEGORIES)}, Table 7) to weights >= 0 "
            f'(e.g. {{"1": 0.5, "2": 0.5}}), '
            f"got {category_weights!r}"
        )
    return weights


def monbench_task(
    *,
    task: str = "all",
    design: str = "full",
    formats: str | None = None,
    shots: int = 0,
    data: str | None = None,
    split: str = "test",
    category_weights: str | None = None,
    metrics: str | None = None,
    strict: bool = False,
    max_tokens: int | None = MAX_TOKENS,
) -> Task:
    """MonBench's one task builder; every parameter is a ``-T`` setting of the tasks below. ``task``: ``all``
    or one of the four tasks; ``design``: ``full``, ``cyclic`` or ``canonical``; ``formats``: a comma list
    of ``label``, ``content``, ``label_content`` (default all three)."""
    if task != "all" and task not in TASKS:
        raise ConfigurationError(f"unknown MonBench task {shown(task)}; expected 'all' or one of {', '.join(TASKS)}")
    names = metric_names(CHOICE_RUNS, metrics)
    shots = parse_shots(shots)
    strict = parse_flag(strict, "strict")
    tasks = TASKS if task == "all" else (task,)
    weights = _weights(category_weights)
    chosen_formats = parse_formats(formats)
    return Task(
        dataset=monbench_dataset(tasks, design, formats, shots, data, split),
        solver=fan_out_generate(),
        scorer=monbench_scorer(strict=strict),
        metrics=[monbench_summary(category_weights=weights, metrics=names)],
        config=GenerateConfig(temperature=0.0, max_tokens=max_tokens),
        version=TASK_VERSION,
        epochs=Epochs(1, outcome_mean()),
        # The log's eval.metadata: the few-shot count decides which Table 2 a run compares with.
        metadata=task_metadata(
            "monbench",
            task_version=TASK_VERSION,
            prompt_version=PROMPT_VERSION,
            data=data,
            tasks=list(tasks),
            design=design,
            formats=list(chosen_formats),
            shots=shots,
            strict=strict,
            split=split,
            category_weights=weights,
        ),
    )


@task
@parameters_of(monbench_task)
def monbench(**params: Any) -> Task:
    """MonBench with every setting a parameter (defaults: ``monbench_perm``'s)."""
    return monbench_task(**params)


@task
@parameters_of(monbench_task, "design")
def monbench_perm(**params: Any) -> Task:
    """MonBench, full protocol: 24 option orderings x 3 return formats = 72 runs per question (Table 2)."""
    return monbench_task(design="full", **params)


@task
@parameters_of(monbench_task, "design")
def monbench_cyclic(**params: Any) -> Task:
    """MonBench, 4 cyclic option rotations x 3 return formats = 12 runs per question."""
    return monbench_task(design="cyclic", **params)


@task
@parameters_of(monbench_task, "design", "formats")
def monbench_canonical(**params: Any) -> Task:
    """MonBench, options in data order, Label format: one run per question."""
    return monbench_task(design="canonical", formats="label", **params)
