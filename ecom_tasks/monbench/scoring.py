"""Scoring one MonBench reply and summarizing outcomes: the single place both adapters call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.monbench.metrics import RUN_NUMBERS, RunOutcome
from ecom_tasks.monbench.metrics import summarize as summarize_outcomes
from ecom_tasks.monbench.parsing import MISMATCH, UNCLOSED_THINK, ParsedAnswer, parse_reply, parse_strict
from ecom_tasks.monbench.protocol import FORMATS, Run
from ecom_tasks.monbench.schema import CATEGORIES, TASKS
from ecom_tasks.scorers.context_limit import CONTEXT_EXCEEDED


def score_reply(
    fields: Mapping[str, Any],
    completion: str | None,
    *,
    strict: bool = False,
    truncated: bool | None = None,
    prompt: Sequence[str] | None = None,
) -> tuple[ParsedAnswer, RunOutcome]:
    """The careful reading of ``completion`` (the headline) and the run's outcome, which holds the strict reading
    (exactly the requested tags) in ``*_strict``. ``strict``: Label+Content tags must agree (by default the label
    decides); ``truncated``: None when the framework does not know (then a reply cut off inside ``<think>`` is);
    ``prompt``: the messages sent (default: ``fields``' prompts), whose copies are not read."""
    if prompt is None and fields.get("system_prompt"):
        prompt = (fields["system_prompt"], fields.get("user_prompt") or "")
    parsed = parse_reply(
        completion, fields["format"], fields["displayed"], strict=strict, prompt=prompt, truncated=truncated
    )
    strict_parse = parse_strict(completion, fields["format"], fields["displayed"], strict=strict)
    truncated = parsed.status == UNCLOSED_THINK if truncated is None else truncated
    return parsed, _outcome(fields, parsed, strict_parse, truncated)


def refused_outcome(fields: Mapping[str, Any]) -> RunOutcome:
    """The outcome of a run whose prompt the server refused (longer than its context): wrong, and
    neither the model's invalid answer nor a truncated one (counted in ``context_exceeded``)."""
    no_answer = ParsedAnswer(None, CONTEXT_EXCEEDED)
    return _outcome(fields, no_answer, no_answer, truncated=False)


def _outcome(fields: Mapping[str, Any], parsed: ParsedAnswer, strict: ParsedAnswer, truncated: bool) -> RunOutcome:
    target = int(fields["target_position"])
    return RunOutcome(
        task=fields["task"],
        question=fields["record_id"],
        category=fields.get("category") or "",
        ordering=int(fields["ordering"]),
        format=fields["format"],
        position=target,
        correct=int(parsed.position == target),
        invalid=int(parsed.invalid),
        mismatch=int(parsed.status == MISMATCH or parsed.disagreement),
        truncated=int(truncated),
        correct_strict=int(strict.position == target),
        invalid_strict=int(strict.invalid),
        context_exceeded=int(parsed.status == CONTEXT_EXCEEDED),
    )


def summarize(
    outcomes: Iterable[RunOutcome], specs: Sequence[MetricSpec], *, category_weights: Mapping[int, float] | None = None
) -> dict[str, float]:
    """All MonBench metrics with the selected ``choice_runs`` metric specs (see ``metrics.summarize``).
    ``category_weights``: traffic shares by Table 7's 1-based category id."""
    weights = {CATEGORIES[i - 1]: w for i, w in (category_weights or {}).items() if 1 <= i <= len(CATEGORIES)}
    return summarize_outcomes(outcomes, specs, TASKS, FORMATS, category_weights=weights)


def pack_question(runs: Mapping[str, RunOutcome]) -> dict[str, float]:
    """The numbers of one question's runs (run key -> outcome) as one Inspect ``Score.value``: flat, so
    Inspect's epoch reduction takes their mean (``correct`` becomes the share of epochs right). The run
    key in ``<run key>/<number>`` (``p5_label/correct``) says which of the question's runs a number belongs
    to; the question's groups are not in here but in its sample's metadata (:func:`unpack_question`)."""
    numbers = {key: cast(Mapping[str, float], outcome) for key, outcome in runs.items()}  # RUN_NUMBERS are floats
    return {f"{key}/{name}": values[name] for key, values in numbers.items() for name in RUN_NUMBERS if name in values}


def unpack_question(packed: Mapping[str, Any], question: Mapping[str, Any]) -> list[RunOutcome]:
    """The run outcomes of one question: the numbers of its (possibly epoch-reduced) ``Score.value``,
    the groups from ``question``, its sample's metadata (or lm-eval document)."""
    numbers: dict[str, dict[str, float]] = {}
    for name, value in packed.items():
        key, _, number = name.partition("/")
        if number:  # logs of version 2.1 also hold the groups, as numbers, without a run key: not read
            numbers.setdefault(key, {})[number] = value
    groups = {"task": question["task"], "question": question["record_id"], "category": question.get("category") or ""}
    return [
        cast(RunOutcome, {**groups, "ordering": run.ordering, "format": run.format, **values})
        for run, values in ((Run.from_key(key), values) for key, values in numbers.items())
    ]


def logged_runs(logged: Mapping[str, Any], fields: Mapping[str, Any]) -> list[RunOutcome]:
    """The run outcomes of a logged outcome: an Inspect ``Score.value`` packs a question's runs (the groups
    in the sample's metadata, ``fields``); lm-eval logs one run's outcome, groups included (as numbers in
    task version 2.1: task and format read back here; the rest of them a comparison does not read)."""
    if any("/" in key for key in logged):
        return unpack_question(logged, fields)
    if isinstance(logged["task"], str):
        return [cast(RunOutcome, logged)]
    return [cast(RunOutcome, {**logged, "task": TASKS[int(logged["task"])], "format": FORMATS[int(logged["format"])]})]
