"""EcomEval's canonical record, its validation and loading, and the judge meta-eval's gold cases. Fields,
accepted spellings of values and columns, and the checks: EcomEval's README ("Data", "The 37 tasks")."""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ecom_tasks import files
from ecom_tasks.data import (
    DataValidationError,
    Problem,
    Row,
    choice,
    collect_records,
    fixtures_dir,
    is_blank,
    load_validated,
    require_text,
    validate_records,
)
from ecom_tasks.ecomeval.tasks import find_task
from ecom_tasks.errors import DataWarning
from ecom_tasks.images import DEFAULT_ACCESS, ImageAccess, resolve_image
from ecom_tasks.provenance import fixtures_location

#: The six categories (Sec. 3.1), slug -> the name the paper's tables use, in the paper's order.
CATEGORY_NAMES = {
    "ecom_qa": "Ecom QA",
    "shopping_concepts": "Shopping Concept",
    "user_understanding": "User Understanding",
    "shopping_reasoning": "Shopping Reasoning",
    "ecom_generation": "Ecom Generative Ability",
    "ecom_multimodal": "Ecom Multimodal",
}
CATEGORIES = tuple(CATEGORY_NAMES)
#: Display names the paper uses (text, Table 2, App. D) -> slug; matched case-insensitively.
CATEGORY_ALIASES: dict[str, str] = {
    **{name: slug for slug, name in CATEGORY_NAMES.items()},
    **dict.fromkeys(("Ecom Question Answering", "E-commerce QA"), "ecom_qa"),
    "Shopping Concepts": "shopping_concepts",
    **dict.fromkeys(("Ecom Generation", "Generation Ability"), "ecom_generation"),
}
LANGUAGE_NAMES = {
    "en": "English",
    "zh": "Chinese",
    "id": "Indonesian",
    "vi": "Vietnamese",
    "th": "Thai",
    "ms": "Malay",
    "pt": "Portuguese",
}
LANGUAGES = tuple(LANGUAGE_NAMES)
DIFFICULTIES = ("easy", "medium", "hard")
#: The category whose items are image questions (Table 4's eight tasks); every item of it has an image.
MULTIMODAL_CATEGORY = "ecom_multimodal"
#: The five text categories (Table 2), whose category means ``score`` averages.
TEXT_CATEGORIES = tuple(c for c in CATEGORIES if c != MULTIMODAL_CATEGORY)

#: The record's fields, and the other spellings of their columns (normalised: case-folded, runs of
#: spaces, hyphens and underscores as one "_"), the paper's first.
COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("question_id", "item_id", "qid"),
    "category": ("primary_category", "task_category"),
    "task": ("task_name", "subtask"),
    "language": ("lang",),
    "question": ("prompt", "input"),
    "reference": ("reference_answer", "correct_answer", "gold_answer", "ground_truth"),
    "images": ("input_image", "input_images", "image", "image_paths"),
    "difficulty": ("difficulty_level", "difficulty_label", "level"),
}
#: Columns that are known and carried along (by ``calibrate --out``) but not read: our fixtures'
#: provenance, a hub split, the score ``calibrate`` writes.
KEPT_COLUMNS = ("origin", "split", "difficulty_score")
_COLUMN_FIELD = {alias: name for name, aliases in COLUMN_ALIASES.items() for alias in (name, *aliases)}


class IgnoredColumnsWarning(DataWarning):
    """Columns of an EcomEval data source that no field reads (shown by ``ecom-tasks validate``)."""


class UnknownTasksWarning(DataWarning):
    """Task names outside EcomEval's 37 (kept as given; shown by ``ecom-tasks validate``)."""


def column_key(column: str) -> str:
    """``"Difficulty Level"`` -> ``"difficulty_level"``: how column names are compared."""
    return re.sub(r"[\s_\-]+", "_", str(column).strip().casefold()).strip("_")


def column_field(column: str) -> str | None:
    """The record field a column fills (``"difficulty level"`` -> ``"difficulty"``), else None."""
    return _COLUMN_FIELD.get(column_key(column))


def canonical_row(row: Row, problems: list[Problem]) -> Row:
    """``row`` with its columns renamed to the record's fields; two non-empty columns for one field
    are a problem."""
    values: dict[str, Any] = {}
    given: dict[str, str] = {}
    for column, value in row.values.items():
        field = column_field(column)
        if field is None:
            continue
        if field in given and not is_blank(value) and not is_blank(values.get(field)):
            problems.append(
                Problem(row.source, row.index, field, f"given twice, by columns {given[field]!r} and {column!r}")
            )
            continue
        if field not in given or is_blank(values.get(field)):
            values[field], given[field] = value, column
    return Row(row.source, row.index, values)


def ignored_columns(rows: Iterable[Row]) -> dict[str, list[str]]:
    """Source -> the columns of its rows that no field reads and that are not :data:`KEPT_COLUMNS`."""
    found: dict[str, dict[str, None]] = {}
    for row in rows:
        for column in row.values:
            if column_field(column) is None and column_key(column) not in KEPT_COLUMNS:
                found.setdefault(row.source, {})[str(column)] = None
    return {source: list(columns) for source, columns in found.items()}


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


def _task(row: Row, category: str, problems: list[Problem], unknown: dict[str, list[str]]) -> str:
    """The canonical id of the row's task; a name outside the list as given (noted in ``unknown``)."""
    value = require_text(row, "task", problems)
    if not value:
        return ""
    found = find_task(value)
    if found is None:
        unknown.setdefault(value, []).append(f"{row.source}:{row.index}")
        return value
    if category and found.category != category:
        problems.append(
            Problem(
                row.source,
                row.index,
                "task",
                f"{value!r} (task {found.id}) is of category {found.category} in EcomEval's list, not {category}",
            )
        )
    return found.id


def _difficulty(row: Row, problems: list[Problem]) -> str | None:
    value = row.values.get("difficulty")
    if is_blank(value):
        return None
    if not isinstance(value, str) or value.strip().casefold() not in DIFFICULTIES:
        expected = f"expected one of {', '.join(DIFFICULTIES)} or null"
        problems.append(Problem(row.source, row.index, "difficulty", f"unknown difficulty {value!r}; {expected}"))
        return None
    return value.strip().casefold()


def _images(row: Row, problems: list[Problem], check: bool, access: ImageAccess = DEFAULT_ACCESS) -> tuple[str, ...]:
    value = row.values.get("images")
    if is_blank(value):
        return ()
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            value, problem = files.json_problem(text)  # CSV cells hold the list as JSON
            if problem is not None:
                problems.append(Problem(row.source, row.index, "images", "starts with '[' but is not a JSON list"))
                return ()
        else:
            value = [text]
    if value is not None and hasattr(value, "tolist"):  # numpy arrays from Parquet
        value = value.tolist()
    if isinstance(value, dict) or hasattr(value, "save"):  # one hub image (a feature dict or a PIL image)
        value = [value]
    if not isinstance(value, (list, tuple)):
        problems.append(
            Problem(row.source, row.index, "images", f"must be a list of images, got {type(value).__name__}")
        )
        return ()
    found = [resolve_image(v, row, f"images[{i}]", problems, check=check, access=access) for i, v in enumerate(value)]
    return tuple(image for image in found if image is not None)


def validate_rows(
    rows: list[Row], *, check_images: bool = True, image_access: ImageAccess = DEFAULT_ACCESS
) -> list[EcomEvalRecord]:
    """Canonical records from raw rows (see the module docstring); raises DataValidationError listing every
    problem. ``check_images``: open every image file with pillow (missing or unreadable: a problem)."""
    for source, columns in ignored_columns(rows).items():
        warnings.warn(
            IgnoredColumnsWarning(f"{source}: ignored column(s) not read by ecomeval: {', '.join(columns)}"),
            stacklevel=2,
        )

    unknown: dict[str, list[str]] = {}  # task outside the list -> its rows

    def record(row: Row, record_id: str, problems: list[Problem]) -> EcomEvalRecord:
        category = choice(row, "category", CATEGORIES, problems, _CATEGORY_LOOKUP)
        before = len(problems)
        images = _images(row, problems, check_images, image_access)
        if category == MULTIMODAL_CATEGORY and not images and len(problems) == before:
            problems.append(
                Problem(row.source, row.index, "images", f"an {MULTIMODAL_CATEGORY} item needs an image (none given)")
            )
        return EcomEvalRecord(
            id=record_id,
            category=category,
            task=_task(row, category, problems, unknown),
            language=choice(row, "language", LANGUAGES, problems, _LANGUAGE_LOOKUP),
            question=require_text(row, "question", problems),
            reference=require_text(row, "reference", problems),
            images=images,
            difficulty=_difficulty(row, problems),
            source=f"{row.source}:{row.index}",
        )

    problems: list[Problem] = []  # first every field given by two columns, then the rows' own problems
    renamed = [canonical_row(row, problems) for row in rows]
    records = collect_records(renamed, record, problems)
    if unknown:  # one warning naming each task outside the list once, with its items
        named = "; ".join(
            f"{name!r} ({len(places)} item{'s' if len(places) > 1 else ''}, first at {places[0]})"
            for name, places in unknown.items()
        )
        warnings.warn(UnknownTasksWarning(f"task(s) outside EcomEval's 37, kept as given: {named}"), stacklevel=2)
    if problems:
        raise DataValidationError(problems)
    return records


def load_records(
    data: str | os.PathLike[str] | None = None, *, check_images: bool = True, image_access: ImageAccess = DEFAULT_ACCESS
) -> list[EcomEvalRecord]:
    """Validated EcomEval records (bundled fixtures by default); the whole source is validated."""
    return load_validated(
        data if data is not None else fixture_file(),
        validate_rows,
        check_images=check_images,
        image_access=image_access,
    )


def fixture_file():
    """The bundled records: the file, not its folder (whose ``judge_meta/`` holds another data set)."""
    return fixtures_dir("ecomeval") / "ecomeval_fixtures.jsonl"


#: The data location a run on the bundled fixtures records (its dataset location and ``metadata["data"]``).
FIXTURES_LOCATION = fixtures_location("ecomeval")


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
        kind = choice(row, "kind", CASE_KINDS, problems)
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
