"""RMIR protocol: queries -> what is embedded (or what the model is asked first), with the facts scoring needs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ecom_tasks.errors import ConfigurationError
from ecom_tasks.images import DEFAULT_ACCESS, ImageAccess
from ecom_tasks.rmir.prompts import PROMPT_VERSION, build_reason_prompt
from ecom_tasks.rmir.schema import QueryRecord, RmirData, load_data, select_queries
from ecom_tasks.rmir.variants import parse_mode


@dataclass(frozen=True)
class RmirItem:
    """One query: the reason-then-embed prompt (shown with the query image) and the scoring facts."""

    record: QueryRecord
    prompt: str
    fields: dict[str, Any]

    @property
    def id(self) -> str:
        return self.record.id


def item_fields(record: QueryRecord, mode: str) -> dict[str, Any]:
    """JSON-friendly facts scoring needs (Inspect metadata)."""
    return {
        "query_id": record.id,
        "category": record.category,
        "query_text": record.query_text,
        "query_image": record.query_image,
        "positives": list(record.positives),
        "mode": mode,
        "prompt_version": PROMPT_VERSION,
        "source": record.source,
    }


def load_items(
    data: str | None = None,
    *,
    category: str | None = None,
    split: str | None = None,
    mode: str = "embed",
    check_images: bool = True,
    image_access: ImageAccess = DEFAULT_ACCESS,
) -> tuple[RmirData, list[RmirItem]]:
    """The validated data of one split (bundled fixtures when None; see ``schema.load_data``) and the
    items of ``category`` (all when None)."""
    loaded = load_data(data, split=split, check_images=check_images, image_access=image_access)
    queries = select_queries(loaded, category)
    if not queries:
        where = f"split {loaded.split!r} of " if loaded.split else ""
        raise ConfigurationError(f"no RMIR queries of category {category!r} in {where}{data or 'the bundled fixtures'}")
    mode = parse_mode(mode)
    return loaded, [RmirItem(q, build_reason_prompt(q.query_text), item_fields(q, mode)) for q in queries]
