"""EcomEval (Shopee's: 6 categories, 37 tasks, 7 languages) canonical record, its validation and loading.

One record is one question with its reference answer. Fields:

``id``; ``category``: one of :data:`CATEGORIES` (the paper's display names,
e.g. "Ecom Question Answering" or "Ecom Generative Ability", are mapped, see
:data:`CATEGORY_ALIASES`); ``task``: free text from the data (the release's
37 task names, e.g. ``brand_knowledge``); ``language``: one of
:data:`LANGUAGES` (codes; English names are mapped); ``question``: the whole
prompt, with its own instructions; ``reference``: the reference answer (not
empty); ``images``: a list of paths (relative to the data file), ``data:``
URIs or http(s) URLs, may be empty (CSV cells hold it as a JSON list, a
single string is one image); ``difficulty``: ``easy`` | ``medium`` |
``hard`` | null. Other columns are ignored.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from ecom_tasks.data import (
    Problem,
    Row,
    fixtures_dir,
    is_blank,
    load_validated,
    require_text,
    validate_records,
)
from ecom_tasks.images import resolve_image

#: The six categories (Sec. 3.1), as slugs, in the paper's order.
CATEGORIES = (
    "ecom_qa",
    "shopping_concepts",
    "user_understanding",
    "shopping_reasoning",
    "ecom_generation",
    "ecom_multimodal",
)
#: Display names the paper uses (text, Table 2, App. D) -> slug; matched case-insensitively.
CATEGORY_ALIASES: dict[str, str] = {
    **dict.fromkeys(("Ecom Question Answering", "Ecom QA", "E-commerce QA"), "ecom_qa"),
    **dict.fromkeys(("Shopping Concepts", "Shopping Concept"), "shopping_concepts"),
    **dict.fromkeys(("User Understanding",), "user_understanding"),
    **dict.fromkeys(("Shopping Reasoning",), "shopping_reasoning"),
    **dict.fromkeys(("Ecom Generation", "Ecom Generative Ability", "Generation Ability"), "ecom_generation"),
    **dict.fromkeys(("Ecom Multimodal",), "ecom_multimodal"),
}
CATEGORY_NAMES = {
    "ecom_qa": "Ecom QA",
    "shopping_concepts": "Shopping Concept",
    "user_understanding": "User Understanding",
    "shopping_reasoning": "Shopping Reasoning",
    "ecom_generation": "Ecom Generative Ability",
    "ecom_multimodal": "Ecom Multimodal",
}
LANGUAGES = ("en", "zh", "id", "vi", "th", "ms", "pt")
LANGUAGE_NAMES = {
    "en": "English",
    "zh": "Chinese",
    "id": "Indonesian",
    "vi": "Vietnamese",
    "th": "Thai",
    "ms": "Malay",
    "pt": "Portuguese",
}
DIFFICULTIES = ("easy", "medium", "hard")

_CATEGORY_LOOKUP = {slug: slug for slug in CATEGORIES}
_CATEGORY_LOOKUP.update({name.casefold(): slug for name, slug in CATEGORY_ALIASES.items()})
_LANGUAGE_LOOKUP = {code: code for code in LANGUAGES}
_LANGUAGE_LOOKUP.update({name.casefold(): code for code, name in LANGUAGE_NAMES.items()})


@dataclass(frozen=True)
class EcomEvalRecord:
    id: str
    category: str
    task: str
    language: str
    question: str
    reference: str
    images: tuple[str, ...]  # absolute file paths, data: URIs or http(s) URLs
    difficulty: str | None
    source: str = ""  # file:row, for messages

    @property
    def multimodal(self) -> bool:
        return bool(self.images)


def canonical_category(value: str) -> str | None:
    """The slug of a category slug or display name (any case), else None."""
    return _CATEGORY_LOOKUP.get(value.strip().casefold())


def _lookup(row: Row, field: str, table: dict[str, str], allowed: tuple[str, ...], problems: list[Problem]) -> str:
    value = require_text(row, field, problems)
    if not value:
        return ""
    found = table.get(value.casefold())
    if found is None:
        problems.append(Problem(row.source, row.index, field, f"unknown {field} {value!r}; expected one of {', '.join(allowed)}"))
        return ""
    return found


def _difficulty(row: Row, problems: list[Problem]) -> str | None:
    value = row.values.get("difficulty")
    if is_blank(value):
        return None
    if not isinstance(value, str) or value.strip().casefold() not in DIFFICULTIES:
        problems.append(
            Problem(row.source, row.index, "difficulty", f"unknown difficulty {value!r}; expected one of {', '.join(DIFFICULTIES)} or null")
        )
        return None
    return value.strip().casefold()


def _images(row: Row, problems: list[Problem], check: bool) -> tuple[str, ...]:
    value = row.values.get("images")
    if is_blank(value):
        return ()
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)  # CSV cells hold the list as JSON
            except json.JSONDecodeError:
                problems.append(Problem(row.source, row.index, "images", "starts with '[' but is not a JSON list"))
                return ()
        else:
            value = [text]
    if not isinstance(value, (list, tuple)):
        problems.append(Problem(row.source, row.index, "images", f"must be a list of images, got {type(value).__name__}"))
        return ()
    found = [resolve_image(v, row, f"images[{i}]", problems, check=check) for i, v in enumerate(value)]
    return tuple(image for image in found if image is not None)


def validate_rows(rows: list[Row], *, check_images: bool = True) -> list[EcomEvalRecord]:
    """Canonical records from raw rows; raises DataValidationError listing every problem.

    ``check_images``: open every image file with pillow (missing or unreadable: a problem).
    """

    def record(row: Row, record_id: str, problems: list[Problem]) -> EcomEvalRecord:
        return EcomEvalRecord(
            id=record_id,
            category=_lookup(row, "category", _CATEGORY_LOOKUP, CATEGORIES, problems),
            task=require_text(row, "task", problems),
            language=_lookup(row, "language", _LANGUAGE_LOOKUP, LANGUAGES, problems),
            question=require_text(row, "question", problems),
            reference=require_text(row, "reference", problems),
            images=_images(row, problems, check_images),
            difficulty=_difficulty(row, problems),
            source=f"{row.source}:{row.index}",
        )

    return validate_records(rows, record)


def load_records(data: str | os.PathLike[str] | None = None, *, check_images: bool = True) -> list[EcomEvalRecord]:
    """Validated EcomEval records (bundled fixtures by default); the whole source is validated."""
    return load_validated(data if data is not None else fixtures_dir("ecomeval"), validate_rows, check_images=check_images)


# --- the judge meta-eval's gold set ------------------------------------------------------------

#: Kinds of gold case: the paper's App. D verdicts, our adversarial responses, our controls.
CASE_KINDS = ("paper", "adversarial", "control")


@dataclass(frozen=True)
class JudgeCase:
    """A (question, reference, response) the grader must grade ``expected_grade`` (0..3)."""

    id: str
    kind: str
    question: str
    reference: str
    response: str  # may be empty (an adversarial case)
    expected_grade: int
    source: str = ""


def _expected_grade(row: Row, problems: list[Problem]) -> int:
    value = row.values.get("expected_grade")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 3:
        problems.append(Problem(row.source, row.index, "expected_grade", f"must be a whole number 0..3, got {value!r}"))
        return -1
    return value


def validate_judge_rows(rows: list[Row]) -> list[JudgeCase]:
    def case(row: Row, case_id: str, problems: list[Problem]) -> JudgeCase:
        kind = require_text(row, "kind", problems)
        if kind and kind not in CASE_KINDS:
            problems.append(Problem(row.source, row.index, "kind", f"unknown kind {kind!r}; expected one of {', '.join(CASE_KINDS)}"))
        response = row.values.get("response")
        if not isinstance(response, str):
            problems.append(Problem(row.source, row.index, "response", "must be a string (may be empty)"))
            response = ""
        return JudgeCase(
            id=case_id,
            kind=kind,
            question=require_text(row, "question", problems),
            reference=require_text(row, "reference", problems),
            response=response,
            expected_grade=_expected_grade(row, problems),
            source=f"{row.source}:{row.index}",
        )

    return validate_records(rows, case)


def load_judge_cases(data: str | os.PathLike[str] | None = None) -> list[JudgeCase]:
    """The judge meta-eval's gold cases (bundled: App. D plus our adversarial and control cases)."""
    return load_validated(data if data is not None else fixtures_dir("ecomeval") / "judge_meta", validate_judge_rows)
