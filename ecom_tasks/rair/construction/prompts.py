"""Prompts of RAIR's construction stages (Sec. 4.2-4.4, App. E Figs. 11-12), in our own words.

Each stage sends the instructions as a system message (identical for every item, so provider prompt
caching applies) and the item as a user message. The system message's first line names the stage and
its version: the offline baseline recognises a stage by it, and runs record the version.
"""

from __future__ import annotations

from collections.abc import Sequence

from ecom_tasks.rair.rules import Rule
from ecom_tasks.rair.schema import RairRecord

INTENT_VERSION = "rair-build-intent/1"
VISUAL_VERSION = "rair-build-visual/1"
RULES_VERSION = "rair-build-rules/1"

#: The seven classes of Fig. 11: the six hard intents (schema.INTENTS) and Other.
OTHER = "Other"
INTENT_CLASSES = ("DJ", "ER", "SS", "QA", "NC", "MA", OTHER)
INTENT_NAMES = {
    "DJ": "Domain Jargon",
    "ER": "Entity Relationship",
    "SS": "Solution Seeking",
    "QA": "Question Answering",
    "NC": "Negative Constraints",
    "MA": "Multi-Attribute",
    OTHER: "Other",
}

INTENT_SYSTEM = f"""[{INTENT_VERSION}] Hard-query intent classification.

You sort e-commerce search queries by what it takes to understand them. Read the query and put it in exactly one of these seven classes:

DJ (Domain Jargon): a model number, code name, nickname or trade term that only domain knowledge turns into a product type (for example "4090" means a graphics card).
ER (Entity Relationship): the query wants a product through its relation to another product: a substitute, a dupe, a comparison ("better than", "cheaper than").
SS (Solution Seeking): the query describes a situation, goal or problem and names no concrete product ("keep the cat off the sofa", "present for a new dad"). A plain product with a size or colour is not SS.
QA (Question Answering): the query is a question: how to do something, what something is, whether two things are related.
NC (Negative Constraints): the query rules something out: an ingredient, feature or property the item must not have ("without", "free of", "non-", "no").
MA (Multi-Attribute): the query names a product and several hard constraints on different attributes at once (brand, colour, size, material, audience, season ...), all of which must hold.
Other: an ordinary product query that fits none of the classes above.

Decide whether understanding the query needs outside knowledge (DJ, ER), inference (SS, QA, NC) or checking several conditions together (MA). Reason inside <think></think>, then give only the class code inside <answer></answer>, for example <answer>NC</answer> or <answer>Other</answer>."""

VISUAL_SYSTEM = f"""[{VISUAL_VERSION}] Visual necessity assessment.

You check e-commerce relevance cases: a search query and one item (title, shop, CPV attributes, SKU and the item's main image). Decide whether the relevance judgement for this pair can only be settled by looking at the image.

Answer 1 only when both hold:
- the item's text (title, shop, CPV, SKU) leaves the judgement open: an attribute the query asks for is missing, vague or contradictory in the text;
- the image shows that attribute (a colour, pattern, cut, shape, number of pieces, a character ...) clearly enough to settle the judgement.
Answer 0 when the text alone settles it (whether the item is relevant or not), or when the text leaves it open and the image does not settle it either.

Compare what the query asks for with what the text states, then check what the image adds. Your reply must be only the answer in the form \\boxed{{1}} or \\boxed{{0}}."""

RULES_SYSTEM_HEAD = f"""[{RULES_VERSION}] Rule pre-annotation.

An annotator has judged how relevant an e-commerce item is to a search query, on the levels L1 (irrelevant) to L4 (perfect match). Below are the relevance rules that can accompany that judgement. Name every rule that describes this query-item pair: the attributes the item meets, misses or contradicts, as the rules word them. Name only rules from the list, by their ids.

End your reply with one line of the form
Rule IDs: ID-1, ID-2
or, when no rule applies,
Rule IDs: none"""

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
