"""EcomEval protocol: records -> what the model is asked (the question as it is, plus its images), after
the variant's selection (``variants.py``) and the user's filters.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ecom_tasks.data import ConfigurationError, parse_flag
from ecom_tasks.ecomeval.parsing import exact_answer
from ecom_tasks.ecomeval.prompts import PROMPT_VERSION
from ecom_tasks.ecomeval.schema import (
    CATEGORIES,
    DIFFICULTIES,
    LANGUAGES,
    EcomEvalRecord,
    canonical_category,
    load_records,
)
from ecom_tasks.ecomeval.tasks import canonical_task, find_task, unlisted_hint
from ecom_tasks.images import DEFAULT_ACCESS, ImageAccess


class NoItemsSelected(ConfigurationError):
    """The data holds no record that the task's filters select."""


@dataclass(frozen=True)
class EcomEvalItem:
    """One record as the model sees it, plus the facts scoring needs."""

    record: EcomEvalRecord
    prompt: str  # the question, unchanged
    images: tuple[str, ...]  # attached after the text as image parts

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def target(self) -> str:
        return self.record.reference

    @property
    def fields(self) -> dict[str, Any]:
        """JSON-friendly facts for scoring and reports (Inspect metadata, lm-eval document columns)."""
        record = self.record
        return {
            "record_id": record.id,
            "category": record.category,
            "task": record.task,
            "language": record.language,
            "difficulty": record.difficulty or "",
            "question": record.question,
            "reference": record.reference,
            "exact_answer": exact_answer(record.reference) or "",
            "image_count": len(record.images),
            "prompt_version": PROMPT_VERSION,
            "source": record.source,
        }


def _names(value: str | Sequence[str] | None, setting: str) -> list[str] | None:
    if value is None or value == "" or value == "all":
        return None
    if not isinstance(value, str | list | tuple):  # a number or a mapping: not names
        raise ConfigurationError(f"{setting} must be a name or a comma list of names, got {value!r:.80}")
    if isinstance(value, str):
        value = value.split(",")
    return [str(v).strip() for v in value if str(v).strip()]


def _check(kind: str, chosen: list[str] | None, allowed: Sequence[str]) -> set[str] | None:
    if chosen is None:
        return None
    unknown = [c for c in chosen if c not in allowed]
    if unknown:
        raise ConfigurationError(
            f"unknown {kind} {', '.join(map(repr, unknown))}; expected one of {', '.join(allowed)}"
        )
    return set(chosen)


def select(
    records: Sequence[EcomEvalRecord],
    *,
    category: str | Sequence[str] | None = None,
    task: str | Sequence[str] | None = None,
    language: str | Sequence[str] | None = None,
    difficulty: str | Sequence[str] | None = None,
    multimodal: bool | str | None = None,
    exact: bool = False,
) -> list[EcomEvalRecord]:
    """The records passing every filter (the README's "Settings"; None or ``all``: no filter); ``exact`` keeps
    text items with an exact-answer reference."""
    categories = _names(category, "category")
    # Any accepted spelling of a listed task selects it (records hold canonical ids); other names as given.
    task_names = _names(task, "task")
    wanted = {
        "category": _check(
            "category", None if categories is None else [canonical_category(c) or c for c in categories], CATEGORIES
        ),
        "language": _check("language", _names(language, "language"), LANGUAGES),
        "difficulty": _check("difficulty", _names(difficulty, "difficulty"), DIFFICULTIES),
        "task": None if task_names is None else {canonical_task(t) for t in task_names},
    }
    modality = None if multimodal in (None, "", "all") else parse_flag(multimodal, "multimodal")
    return [
        r
        for r in records
        if all(chosen is None or getattr(r, name) in chosen for name, chosen in wanted.items())
        and (modality is None or r.multimodal == modality)
        and not (exact and (r.multimodal or exact_answer(r.reference) is None))
    ]


def load_items(
    data: str | None = None, *, image_access: ImageAccess = DEFAULT_ACCESS, **filters: Any
) -> list[EcomEvalItem]:
    """Load and validate ``data`` (bundled fixtures when None; images opened with pillow, read as
    ``image_access`` allows), select with ``filters`` (see :func:`select`), build the items. No item
    selected, or a task name that is neither listed nor in the data, is an error."""
    loaded = load_records(data, check_images=True, image_access=image_access)
    records = select(loaded, **filters)
    tasks = _names(filters.get("task"), "task") or []
    if not records:
        shown = ", ".join(f"{k}={v!r}" for k, v in filters.items() if v not in (None, "", False))
        raise NoItemsSelected(
            f"no EcomEval records in {data or 'the bundled fixtures'} match {shown or 'the selection'}"
            + unlisted_hint(tasks)
        )
    # A name that is no listed task nor a task of the data is a typo: refused, as an unknown language is.
    unknown = [t for t in tasks if find_task(t) is None and t not in {r.task for r in loaded}]
    if unknown:
        raise NoItemsSelected(
            f"task {', '.join(map(repr, unknown))} selects no EcomEval record in {data or 'the bundled fixtures'}"
            + unlisted_hint(unknown)
        )
    items = [EcomEvalItem(record=r, prompt=r.question, images=r.images) for r in records]  # in data order
    present = {item.record.category for item in items}
    named = [canonical_category(c) or c for c in _names(filters.get("category"), "category") or []]
    missing = [slug for slug in named if slug not in present] if filters.get("exact") else []
    if missing:  # a category without exact-answer items leaves ecomeval_exact's score: said, not silent
        logging.getLogger(__name__).warning(
            f"ecomeval_exact: no item of category {', '.join(missing)} in {data or 'the bundled fixtures'} is "
            "selected; skipped: score averages the categories present"
        )
    return items
