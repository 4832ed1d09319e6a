"""MonBench canonical record, its validation and loading."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ecom_tasks import files
from ecom_tasks.data import Problem, Row, choice, fixtures_dir, is_blank, load_validated, require_text, validate_records
from ecom_tasks.errors import ConfigurationError

TASKS = ("query_ad_relevance", "product_co_purchase", "query_product_relation", "query_query_intent")
SPLITS = ("fewshot", "validation", "test")
LETTERS = ("A", "B", "C", "D")

#: The closed answer vocabularies of the two relation tasks (paper Tables 4, 6, 10).
#: Their choices must be a permutation of these labels; the Content format lists them.
RELATION_LABELS: dict[str, tuple[str, ...]] = {
    "query_product_relation": ("ExactMatch", "Substitute", "Complement", "Irrelevant"),
    "query_query_intent": ("Narrowing", "Complement", "Irrelevant", "Substitute"),
}
#: The relation labels as a model answering in Chinese names them (the careful reading reads them as the label).
RELATION_LABELS_ZH: dict[str, tuple[str, ...]] = {
    "ExactMatch": ("完全匹配", "精确匹配", "精准匹配", "完全一致"),
    "Substitute": ("替代", "替代品", "可替代", "替换", "替代关系"),
    "Complement": ("互补", "互补品", "互补关系", "配套"),
    "Irrelevant": ("不相关", "无关", "无关联", "不相干"),
    "Narrowing": ("细化", "缩小", "缩小范围", "具体化", "细化关系"),
}

#: The 22 query categories of the paper's Table 7 (1-based ids in that order).
CATEGORIES = tuple(
    "Vehicles|Family & Community|Real Estate|Business & Industrial|Beauty & Personal Care|Occasions & Gifts|"
    "Internet & Telecom|Home & Garden|Food & Groceries|Health|Finance|Arts & Entertainment|Sports & Fitness|"
    "Hobbies & Leisure|Jobs & Education|Travel & Tourism|Law & Government|Computers & Consumer Electronics|"
    "Dining & Nightlife|Apparel|News, Media & Publications|Retailers & General Merchandise".split("|")
)


@dataclass(frozen=True)
class MonBenchRecord:
    id: str
    task: str
    split: str
    question: str
    choices: tuple[str, str, str, str]
    answer: int  # index into choices
    category: str | None = None
    source: str = ""  # file:row, for messages


def _choices(row: Row, problems: list[Problem]) -> list[str]:
    def refuse(message: str, field: str = "choices") -> list[str]:
        problems.append(Problem(row.source, row.index, field, message))
        return []

    value = row.values.get("choices")
    if value is None and all(letter in row.values for letter in LETTERS):
        value = [row.values[letter] for letter in LETTERS]  # CSV-friendly A/B/C/D columns
    if isinstance(value, str):
        value, problem = files.json_problem(value)  # CSV cells hold the list as JSON
        if problem is not None:
            return refuse("not a list (nor a JSON list)")
    if not isinstance(value, (list, tuple)):
        return refuse("missing or not a list")
    if len(value) != 4:
        return refuse(f"needs exactly 4 choices, got {len(value)}")
    out = [choice.strip() if isinstance(choice, str) else "" for choice in value]
    if "" in out:
        return refuse("empty or not a string", f"choices[{out.index('')}]")
    if len({c.casefold() for c in out}) != 4:
        return refuse("choices must be distinct")
    return out


_MAX_DIGITS = 100


def _whole(value: Any) -> Any:
    """A whole number written as a float (CSV columns with gaps load as floats) or in digits, as an int.
    Digits int() refuses (``²``, thousands of them in a hostile cell) stay text, reported as the value."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdecimal() and len(value.strip()) <= _MAX_DIGITS:
        return int(value.strip())
    return value


def _answer(row: Row, problems: list[Problem]) -> int:
    value = row.values.get("answer")
    if isinstance(value, str) and value.strip().upper() in LETTERS:
        return LETTERS.index(value.strip().upper())
    value = None if isinstance(value, bool) else _whole(value)
    if isinstance(value, int) and 0 <= value <= 3:
        return value
    problems.append(Problem(row.source, row.index, "answer", f"must be 0-3 or A-D, got {value!r}"))
    return -1


def category_field(row: Row, problems: list[Problem]) -> str | None:
    """Table 7's category: its name or its 1-based id; None when blank."""
    value = row.values.get("category")
    if is_blank(value):
        return None
    value = _whole(value)
    if isinstance(value, int) and 1 <= value <= len(CATEGORIES):
        return CATEGORIES[value - 1]
    if isinstance(value, str) and value.strip() in CATEGORIES:
        return value.strip()
    problems.append(Problem(row.source, row.index, "category", f"not one of the 22 query categories: {value!r}"))
    return None


def _record(row: Row, record_id: str, problems: list[Problem]) -> MonBenchRecord:
    def problem(field: str, message: str) -> None:
        problems.append(Problem(row.source, row.index, field, message))

    task = choice(row, "task", TASKS, problems)
    split = choice(row, "split", SPLITS, problems)
    question = require_text(row, "question", problems)
    choices = _choices(row, problems)
    answer = _answer(row, problems)
    category = category_field(row, problems)
    if choices and task in RELATION_LABELS and sorted(choices) != sorted(RELATION_LABELS[task]):
        problem("choices", f"{task} choices must be the labels {', '.join(RELATION_LABELS[task])}")
    return MonBenchRecord(
        id=record_id,
        task=task,
        split=split,
        question=question,
        choices=tuple(choices),  # type: ignore[arg-type]
        answer=answer,
        category=category,
        source=f"{row.source}:{row.index}",
    )


def validate_rows(rows: list[Row]) -> list[MonBenchRecord]:
    """Canonical records from raw rows; raises DataValidationError listing every problem."""
    return validate_records(rows, _record)


def load_records(
    data: str | os.PathLike[str] | None = None,
    *,
    split: str | None = "test",
    tasks: tuple[str, ...] | list[str] | None = None,
) -> list[MonBenchRecord]:
    """Validated MonBench records of one split (``None``: all), bundled fixtures by default."""
    if split is not None and split not in SPLITS:
        raise ConfigurationError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    for task in tasks or ():
        if task not in TASKS:
            raise ConfigurationError(f"unknown MonBench task {task!r}; expected one of {', '.join(TASKS)}")
    records = load_validated(data if data is not None else fixtures_dir("monbench"), validate_rows)
    return [r for r in records if (split is None or r.split == split) and (not tasks or r.task in tasks)]
