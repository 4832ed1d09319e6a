"""Prompts of RAIR's construction stages (Sec. 4.2-4.4, App. E Figs. 11-12), in our own words: the instructions a
system message whose first line names the stage's version (runs record it, the offline baseline recognises it)."""

from __future__ import annotations

from collections.abc import Sequence

from ecom_tasks import files
from ecom_tasks.rair.rules import Rule
from ecom_tasks.rair.schema import INTENTS, RairRecord

INTENT_VERSION = "rair-build-intent/1"
VISUAL_VERSION = "rair-build-visual/1"
RULES_VERSION = "rair-build-rules/1"

#: The seven classes of Fig. 11: the six hard intents (schema.INTENTS) and Other.
OTHER = "Other"
INTENT_CLASSES = (*INTENTS, OTHER)
INTENT_NAMES = {
    "DJ": "Domain Jargon",
    "ER": "Entity Relationship",
    "SS": "Solution Seeking",
    "QA": "Question Answering",
    "NC": "Negative Constraints",
    "MA": "Multi-Attribute",
    OTHER: "Other",
}


def _instructions(name: str, version: str) -> str:
    """A stage's system message: its version tag, then ``prompt_texts/<name>.txt`` (without the file's final newline)."""
    text = files.package_text("ecom_tasks.rair.construction", f"prompt_texts/{name}.txt")
    return f"[{version}] " + text.removesuffix("\n")


INTENT_SYSTEM = _instructions("intent", INTENT_VERSION)
VISUAL_SYSTEM = _instructions("visual", VISUAL_VERSION)
RULES_SYSTEM_HEAD = _instructions("rules", RULES_VERSION)

#: Labels of the user message's fields (distinct from the evaluation prompt's, which the baseline reads).
ITEM_FIELDS = (("query", "Query"), ("title", "Title"), ("shop_name", "Shop"), ("cpv", "CPV"), ("sku", "SKU"))


def item_text(record: RairRecord) -> str:
    return "\n".join(f"{label}: {getattr(record, field)}" for field, label in ITEM_FIELDS)


def intent_user(query: str) -> str:
    return f"Query: {query}"


def visual_user(record: RairRecord) -> str:
    """The item's text; the image follows it as an image part."""
    return item_text(record) + "\nImage:"


def rules_system(rules: Sequence[Rule], label: str, language: str = "en") -> str:
    """The instructions and the rules that can accompany ``label`` (one per line: id [level, dimension])."""
    lines = [f"- {r.id} [{r.level}, {r.dimension}]: {r.text.get(language) or r.text['en']}" for r in rules]
    return f"{RULES_SYSTEM_HEAD}\n\nRules for items judged {label}:\n" + "\n".join(lines)


def rules_user(record: RairRecord) -> str:
    return f"{item_text(record)}\nAnnotator's level: {record.label}"


#: What a voter whose reply could not be read is told (one more ask; see scorers.judge.run_judge),
#: and what one cut off by its length limit is told, in a fresh conversation.
INTENT_REMINDER = "Your reply could not be read as one class. Reply again with only the class code inside <answer></answer>, for example <answer>SS</answer>."
INTENT_LIMIT_REMINDER = "Keep your reply short: your previous reply was cut off at its length limit. Give at most two sentences of reasoning, then the class code inside <answer></answer>."
VISUAL_REMINDER = "Your reply could not be read. Reply with only \\boxed{1} or \\boxed{0}."
VISUAL_LIMIT_REMINDER = "Your previous reply was cut off at its length limit. Reply with only \\boxed{1} or \\boxed{0}."
RULES_REMINDER = "Your reply had no readable last line. Reply again, ending with one line 'Rule IDs: ID-1, ID-2' or 'Rule IDs: none'."
RULES_LIMIT_REMINDER = "Keep your reply short: your previous reply was cut off at its length limit. Reply with only one line 'Rule IDs: ID-1, ID-2' or 'Rule IDs: none'."
