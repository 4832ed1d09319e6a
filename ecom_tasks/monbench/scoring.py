"""Scoring one MonBench reply and summarizing outcomes: the single place both adapters call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.monbench.metrics import summarize as summarize_outcomes
from ecom_tasks.monbench.parsing import MISMATCH, UNCLOSED_THINK, ParsedAnswer, parse_reply, parse_strict
from ecom_tasks.monbench.protocol import FORMATS, Run
from ecom_tasks.monbench.schema import CATEGORIES, TASKS


def score_reply(
    fields: Mapping[str, Any],
    completion: str | None,
    *,
    strict: bool = False,
    truncated: bool | None = None,
    prompt: Sequence[str] | None = None,
) -> tuple[ParsedAnswer, dict[str, int]]:
    """Parse ``completion`` for the item described by ``fields``; return the parse and the outcome.

    ``strict``: Label+Content replies must have agreeing tags (else wrong); by default the label
    decides. ``mismatch`` counts label/content disagreements in both modes.
    The parse is the careful reading (the headline); the outcome also carries the strict reading
    (``parse_strict``: exactly the requested tags) in ``correct_strict`` and ``invalid_strict``.
    ``truncated``: the reply stopped on the token limit, when the framework knows; otherwise a
    reply cut off inside ``<think>`` counts as truncated.
    ``prompt``: the system and user message sent (default: ``fields``' ``system_prompt`` and
    ``user_prompt`` when it has them); what the reply copies from them is not read.
    """
    if prompt is None and fields.get("system_prompt"):
        prompt = (fields["system_prompt"], fields.get("user_prompt") or "")
    parsed = parse_reply(
        completion,
        fields["format"],
        fields["displayed"],
        strict=strict,
        prompt=prompt,
        truncated=truncated,
    )
    if truncated is None:
        truncated = parsed.status == UNCLOSED_THINK
    category = fields.get("category") or ""
    outcome = {
        "task": TASKS.index(fields["task"]),
        "question": int(fields["question_index"]),
        "ordering": int(fields["ordering"]),
        "format": FORMATS.index(fields["format"]),
        "position": int(fields["target_position"]),
        "category": CATEGORIES.index(category) + 1 if category in CATEGORIES else 0,
        "correct": int(parsed.position is not None and parsed.position == int(fields["target_position"])),
        "invalid": int(parsed.invalid),
        "mismatch": int(parsed.status == MISMATCH or parsed.disagreement),
        "truncated": int(truncated),
    }
    strict_parse = parse_strict(completion, fields["format"], fields["displayed"], strict=strict)
    outcome["correct_strict"] = int(strict_parse.position == int(fields["target_position"]))
    outcome["invalid_strict"] = int(strict_parse.invalid)
    return parsed, outcome


def refused_outcome(fields: Mapping[str, Any]) -> dict[str, int]:
    """The outcome of a run whose prompt the server refused (longer than its context): wrong, and
    neither the model's invalid answer nor a truncated one (the adapters count it apart)."""
    _, outcome = score_reply(fields, None, truncated=False)
    no_answer = {"correct": 0, "invalid": 0, "mismatch": 0, "truncated": 0, "correct_strict": 0, "invalid_strict": 0}
    return {**outcome, **no_answer}


def summarize(
    outcomes: Iterable[Mapping[str, float]],
    specs: Sequence[MetricSpec],
    *,
    category_weights: Mapping[int, float] | None = None,
) -> dict[str, float]:
    """All MonBench metrics with the selected ``choice_runs`` metric specs (see ``metrics.summarize``)."""
    return summarize_outcomes(outcomes, specs, TASKS, FORMATS, category_weights=category_weights)


#: Per-run outcome fields that vary between runs of one question (``<run key>/<field>`` when packed).
RUN_FIELDS = ("position", "correct", "invalid", "mismatch", "truncated", "correct_strict", "invalid_strict")
#: Per-question fields, the same in every run.
QUESTION_FIELDS = ("task", "question", "category")


def pack_question(run_outcomes: Mapping[str, Mapping[str, int]]) -> dict[str, int]:
    """The outcomes of one question's runs (run key -> outcome) as one flat numeric mapping.

    One Inspect Score per question holds every run: flat numbers stay reducible
    across epochs by Inspect's mean (``correct`` becomes the share of epochs right).
    """
    first = next(iter(run_outcomes.values()))
    packed = {field: first[field] for field in QUESTION_FIELDS}
    for key, outcome in run_outcomes.items():
        packed.update({f"{key}/{field}": outcome[field] for field in RUN_FIELDS if field in outcome})
    return packed


def unpack_question(packed: Mapping[str, float]) -> list[dict[str, float]]:
    """The per-run outcomes of a packed question, ready for ``summarize``."""
    runs: dict[str, dict[str, float]] = {}
    for name, value in packed.items():
        key, _, field = name.partition("/")
        if field:
            runs.setdefault(key, {})[field] = value
    out = []
    for key, fields in runs.items():
        run = Run.from_key(key)
        out.append(
            {
                **{field: packed[field] for field in QUESTION_FIELDS},
                "ordering": run.ordering,
                "format": FORMATS.index(run.format),
                **fields,
            }
        )
    return out
