"""The input of MonBench's Query-Ad Relevance construction: query-ad pairs with their human label (the
columns: MonBench README, "Building Query-Ad Relevance questions"); problems read ``file:row:field``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from dataclasses import dataclass

from ecom_tasks.data import Problem, Row, is_blank, load_rows, require_text, validate_records
from ecom_tasks.monbench.construction.prompts import IRRELEVANT, RELEVANT
from ecom_tasks.monbench.schema import category_field

_HUMAN = {
    "relevant": RELEVANT,
    "irrelevant": IRRELEVANT,
    "1": RELEVANT,
    "0": IRRELEVANT,
    "true": RELEVANT,
    "false": IRRELEVANT,
}


@dataclass(frozen=True)
class AdPair:
    id: str
    query: str
    ad: str
    human: str  # relevant | irrelevant
    location: str = ""
    market: str = ""
    category: str | None = None
    position: int = 0  # order in the file: ties between equally hard ads go to the earlier one

    @property
    def query_key(self) -> str:
        """The question this pair belongs to: sha256 of query, location and market."""
        text = "\x1f".join((self.query.casefold(), self.location.casefold(), self.market.casefold()))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _human(row: Row, problems: list[Problem]) -> str:
    value = row.values.get("human_label")
    key = str(value).strip().casefold() if not is_blank(value) else ""
    if key not in _HUMAN:
        problems.append(Problem(row.source, row.index, "human_label", f"must be relevant or irrelevant, got {value!r}"))
        return ""
    return _HUMAN[key]


def _pair(row: Row, pair_id: str, problems: list[Problem]) -> AdPair:
    return AdPair(
        id=pair_id,
        query=require_text(row, "query", problems),
        ad=require_text(row, "ad", problems),
        human=_human(row, problems),
        location=require_text(row, "location", problems, optional=True),
        market=require_text(row, "market", problems, optional=True),
        category=category_field(row, problems),
    )


def load_pairs(data: str | os.PathLike[str]) -> list[AdPair]:
    """Validated pairs of a JSONL/CSV/Parquet file; raises DataValidationError listing every problem."""
    return [dataclasses.replace(p, position=i) for i, p in enumerate(validate_records(load_rows(data), _pair))]
