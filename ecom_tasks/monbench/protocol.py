"""MonBench robustness protocol: a *run* is one (option ordering, return format) pair applied to every question of a
task. Orderings are numbered in ``itertools.permutations`` order: ``p0`` is the canonical order in every design."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from ecom_tasks.data import ConfigurationError, read_whole_number
from ecom_tasks.monbench.prompts import build_system_prompt, build_user_prompt, render_answer
from ecom_tasks.monbench.schema import LETTERS, TASKS, MonBenchRecord, load_records

ORDERINGS: tuple[tuple[int, ...], ...] = tuple(itertools.permutations(range(4)))
FORMATS = ("label", "content", "label_content")
#: The four cyclic rotations: each original option visits each position exactly once.
CYCLIC_ORDERINGS = tuple(ORDERINGS.index(tuple((i + s) % 4 for i in range(4))) for s in range(4))
DESIGNS = {"full": tuple(range(len(ORDERINGS))), "cyclic": CYCLIC_ORDERINGS, "canonical": (0,)}
SHOTS = (0, 1, 5)


@dataclass(frozen=True)
class Run:
    ordering: int  # index into ORDERINGS
    format: str

    @property
    def key(self) -> str:
        return f"p{self.ordering}_{self.format}"

    @classmethod
    def from_key(cls, key: str) -> Run:
        """``Run.from_key("p5_label_content") == Run(5, "label_content")``."""
        ordering, _, fmt = key.partition("_")
        if not ordering.startswith("p") or not ordering[1:].isdigit() or fmt not in FORMATS:
            raise ValueError(f"not a run key: {key!r}")
        return cls(int(ordering[1:]), fmt)


def runs_for(design: str = "full", formats: tuple[str, ...] | list[str] | str | None = None) -> list[Run]:
    """The runs of a design, in a fixed order (ordering-major)."""
    if not isinstance(design, str) or design not in DESIGNS:  # a list is not hashable: no raw TypeError
        raise ConfigurationError(f"unknown design {design!r}; expected one of {', '.join(DESIGNS)}")
    chosen = parse_formats(formats)
    return [Run(o, f) for o in DESIGNS[design] for f in chosen]


def parse_formats(formats: tuple[str, ...] | list[str] | str | None) -> tuple[str, ...]:
    if formats is None or formats == "all":
        return FORMATS
    if isinstance(formats, str):
        formats = [f.strip() for f in formats.split(",") if f.strip()]
    if not isinstance(formats, list | tuple):  # a number or a mapping: not names
        raise ConfigurationError(f"formats must be a comma list of {', '.join(FORMATS)}, got {formats!r:.80}")
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ConfigurationError(
            f"formats: unknown return format(s) {unknown}; expected a subset of {', '.join(FORMATS)}"
        )
    return tuple(f for f in FORMATS if f in formats)


@dataclass(frozen=True)
class MonBenchItem:
    """One question under one run: what the model sees and what counts as right."""

    record: MonBenchRecord
    question_index: int  # position of the question in the evaluated set (for consistency)
    run: Run
    system_prompt: str
    user_prompt: str
    displayed: tuple[str, ...]  # the four choices in displayed order
    target_position: int  # where the correct choice is displayed (0 = A)

    @property
    def id(self) -> str:
        return f"{self.record.id}_{self.run.key}"

    @property
    def target_letter(self) -> str:
        return LETTERS[self.target_position]

    @property
    def target_answer(self) -> str:
        """The correct reply in this run's format (used by scripted models and tests)."""
        return render_answer(self.run.format, self.target_position, self.displayed)

    @property
    def fields(self) -> dict[str, Any]:
        """JSON-friendly facts that scoring needs (Inspect metadata, lm-eval doc columns)."""
        return {
            "record_id": self.record.id,
            "task": self.record.task,
            "question_index": self.question_index,
            "ordering": self.run.ordering,
            "format": self.run.format,
            "displayed": list(self.displayed),
            "target_position": self.target_position,
            "category": self.record.category or "",
        }


def parse_shots(value: int | str | None) -> int:
    """The few-shot count from a task setting (``-T shots=5``, JSON metadata): 0, 1 or 5 (Sec. 3.4, App. C)."""
    shots = 0 if value is None else read_whole_number(value, 0)
    if shots not in SHOTS:
        raise ConfigurationError(f"MonBench shots must be one of {', '.join(map(str, SHOTS))}, got {value!r:.80}")
    return shots


def expand(
    records: list[MonBenchRecord],
    runs: list[Run],
    *,
    fewshot: list[MonBenchRecord] | None = None,
    shots: int | str = 0,
) -> list[MonBenchItem]:
    """Every record under every run, question-major; a task's few-shot examples are its first ``shots`` of ``fewshot``."""
    count = parse_shots(shots)
    system_cache: dict[tuple[str, str], str] = {}
    items = []
    for question_index, record in enumerate(records):
        for run in runs:
            key = (record.task, run.format)
            if key not in system_cache:
                pool = [r for r in fewshot or [] if r.task == record.task]
                if len(pool) < count:
                    raise ConfigurationError(
                        f"{count}-shot needs {count} few-shot records of {record.task}, the data has {len(pool)}"
                    )
                system_cache[key] = build_system_prompt(record.task, run.format, pool[:count])
            order = ORDERINGS[run.ordering]
            shown = tuple(record.choices[i] for i in order)
            items.append(
                MonBenchItem(
                    record=record,
                    question_index=question_index,
                    run=run,
                    system_prompt=system_cache[key],
                    user_prompt=build_user_prompt(record.question, shown),
                    displayed=shown,
                    target_position=order.index(record.answer),
                )
            )
    return items


def build_items(
    records: list[MonBenchRecord],
    *,
    tasks: tuple[str, ...] | list[str] = TASKS,
    split: str = "test",
    design: str = "full",
    formats: tuple[str, ...] | list[str] | str | None = None,
    shots: int | str = 0,
) -> list[MonBenchItem]:
    """The evaluated split of ``tasks`` under the design's runs, few-shot examples from the ``fewshot`` split."""
    if split not in ("validation", "test"):
        raise ConfigurationError(f"evaluate the 'test' or 'validation' split, not {split!r}")
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        raise ConfigurationError(f"unknown MonBench task(s) {', '.join(unknown)}; expected any of {', '.join(TASKS)}")
    evaluated = [r for r in records if r.split == split and r.task in tasks]
    if not evaluated:
        raise ConfigurationError(f"no MonBench records for {', '.join(tasks)} in split {split!r}")
    fewshot = [r for r in records if r.split == "fewshot"]
    return expand(evaluated, runs_for(design, formats), fewshot=fewshot, shots=shots)


def load_items(data: str | None, **variant: Any) -> list[MonBenchItem]:
    """Load and validate ``data`` (bundled fixtures when None), then ``build_items(records, **variant)``."""
    records = load_records(data, split=None)
    try:
        return build_items(records, **variant)
    except ConfigurationError as exc:  # a setting the data cannot serve (unknown design, too few few-shot records...)
        raise ConfigurationError(f"{exc} (data: {data or 'the bundled fixtures'})") from exc
