"""RAIR protocol: records of one subset -> what a model is asked (README "Prompt"), with the facts scoring needs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ecom_tasks.errors import ConfigurationError
from ecom_tasks.images import DEFAULT_ACCESS, ImageAccess
from ecom_tasks.rair.prompts import PROMPT_VERSION, build_system_prompt, build_user_prompt
from ecom_tasks.rair.rules import RuleSet, gold_dimension, load_rules, provenance
from ecom_tasks.rair.schema import RairRecord, load_records


@dataclass(frozen=True)
class RairItem:
    """One record as a model sees it, plus the facts scoring needs."""

    record: RairRecord
    system_prompt: str
    user_prompt: str
    image: str | None  # attached after the user text (absolute path, data URI or URL)
    fields: dict[str, Any]

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def target(self) -> str:
        return self.record.label


def item_fields(record: RairRecord, *, ruleset: RuleSet | None, image: bool) -> dict[str, Any]:
    """JSON-friendly facts about a sample that scoring and reports need (Inspect metadata, lm-eval columns)."""
    return {
        "record_id": record.id,
        "subset": record.subset,
        "label": record.label,
        "industry": record.industry,
        "intent": record.intent or "",
        "rule_ids": list(record.rule_ids),
        "gold_dimension": gold_dimension(record.rule_ids, ruleset) or "",
        "language": record.language,
        "image_shown": bool(image and record.image),
        "rules_version": provenance(ruleset)["rules_version"],
        "prompt_version": PROMPT_VERSION,
        "source": record.source,
    }


def build_items(records: list[RairRecord], *, rules: RuleSet | None = None, image: bool = False) -> list[RairItem]:
    """Prompts for every record, in data order; each record is asked in its own language."""
    system = {lang: build_system_prompt(lang, rules, image) for lang in dict.fromkeys(r.language for r in records)}
    return [
        RairItem(
            record=record,
            system_prompt=system[record.language],
            user_prompt=build_user_prompt(record, image=image),
            image=record.image if image else None,
            fields=item_fields(record, ruleset=rules, image=image),
        )
        for record in records
    ]


def load_items(
    data: str | None,
    *,
    subset: str,
    rules: str | RuleSet | None = None,
    image: bool = False,
    language: str | None = None,
    image_access: ImageAccess = DEFAULT_ACCESS,
) -> list[RairItem]:
    """The items of one subset of ``data`` (bundled fixtures when None); images that will be sent are decoded first."""
    ruleset = rules if isinstance(rules, RuleSet) or rules is None else load_rules(rules)
    records = load_records(
        data, subset=subset, language=language or None, check_images=image, image_access=image_access
    )
    if not records:
        in_language = f" in language {language!r}" if language else ""
        raise ConfigurationError(
            f"no RAIR records of subset {subset!r}{in_language} in {data or 'the bundled fixtures'}"
        )
    return build_items(records, rules=ruleset, image=image)
