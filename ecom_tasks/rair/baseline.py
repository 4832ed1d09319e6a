"""Baseline responder for RAIR prompts: the share of query terms the item's text holds decides the level (L2's
dimension guessed from the first missing term), in Fig. 9's output form. Images are never looked at: a text-only
lexical baseline should show that on the Visually Salient subset."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ecom_tasks.rair.prompts import FIELD_LABELS, render_answer

_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?|[\u3400-\u9fff]", re.IGNORECASE)
_STOPWORDS = frozenset(
    "a an and are as at be by do for from how i in is it my of on or the to what with without about this that can de 的 了 和 与 用 款".split()
)
#: First uncovered query term -> the dimension it most likely belongs to.
_CUES: dict[str, frozenset[str]] = {
    "Color": frozenset(
        "red blue green white black pink purple yellow orange grey gray brown beige navy burgundy gold silver 红 蓝 绿 白 黑 粉 紫 黄 橙 灰 棕".split()
    ),
    "Season": frozenset("summer winter spring autumn fall thermal 夏 冬 春 秋".split()),
    "Audience": frozenset(
        "women woman men man kids kid children child girls girl boys boy baby ladies 女 男 童 婴".split()
    ),
    "Material": frozenset(
        "cotton leather wool silk linen wood wooden plastic steel glass ceramic bamboo 棉 皮 毛 丝 麻 木".split()
    ),
    "Bundle": frozenset("set pair pack pcs piece pieces bundle 套 对".split()),
    "Store": frozenset("official flagship store shop 旗 舰 店".split()),
    "Style": frozenset("vintage retro slim loose oversized striped floral plaid dotted polka 复 古 修 宽".split()),
    "Function": frozenset("waterproof noise soundproof whitening moisturizing cleaning 防 降 隔".split()),
}
_SPEC = re.compile(r"^\d+(?:ml|l|g|kg|cm|mm|m|w|v|gb|tb|inch|in|寸)?$")
_YEAR = re.compile(r"^(?:19|20)\d\d$")


def _stem(word: str) -> str:
    word = word.casefold()
    if len(word) > 4 and word.endswith("es") and not word.endswith("ses"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def terms(text: str) -> list[str]:
    """Query/item terms in order, stemmed, without stopwords or repeats."""
    stemmed = (_stem(match.group(0)) for match in _WORD.finditer(text))
    return list(dict.fromkeys(term for term in stemmed if term not in _STOPWORDS))


def _last_value(text: str, label: str) -> str | None:
    matches = re.findall(rf"^{re.escape(label)}[ \t]*(.*)$", text, flags=re.MULTILINE)
    return matches[-1].strip() if matches else None


def read_prompt(messages: Sequence[tuple[str, str]]) -> tuple[str, dict[str, str]] | None:
    """The language and the query/item fields of the last RAIR input in the conversation."""
    text = "\n".join(t for _, t in messages)
    for language, labels in FIELD_LABELS.items():
        values = {field: _last_value(text, label) for field, label in labels.items()}
        if values["query"] is not None and values["title"] is not None:
            return language, {field: value or "" for field, value in values.items()}
    return None


def guess_dimension(term: str, position: int, n_terms: int) -> str:
    for dimension, cues in _CUES.items():
        if term in cues:
            return dimension
    if _YEAR.match(term):
        return "Year"
    if _SPEC.match(term):
        return "Specification"
    # The last word of an English query is usually its head noun: the product type.
    return "Category" if position == n_terms - 1 else "Attributes"


def _coverage(fields: dict[str, str]) -> tuple[list[str], list[str], list[str]]:
    """The query's terms, those the item's title, shop, CPV and SKU hold, and those they miss."""
    query = terms(fields["query"])
    item = set(terms(" ".join(fields[k] for k in ("title", "shop_name", "cpv", "sku"))))
    return query, [t for t in query if t in item], [t for t in query if t not in item]


def judge(fields: dict[str, str]) -> tuple[str, str | None, str]:
    """(level, L2 dimension or None, reasoning) from query-term coverage."""
    query, covered, missing = _coverage(fields)
    coverage = len(covered) / len(query) if query else 0.0
    reasoning = (
        f"Query terms: {', '.join(query) or '-'}. Found in the item: {', '.join(covered) or '-'}. "
        f"Missing: {', '.join(missing) or '-'}. Coverage {len(covered)}/{len(query)}."
    )
    if not query:
        return "L3", None, reasoning
    if coverage == 1.0:
        return "L4", None, reasoning
    if coverage >= 0.6:
        return "L3", None, reasoning
    if coverage > 0:
        first = missing[0]
        return "L2", guess_dimension(first, query.index(first), len(query)), reasoning
    return "L1", None, reasoning


def respond_rair(messages: Sequence[tuple[str, str]]) -> str | None:
    """Answer a RAIR prompt in the Fig. 9 form (``<think>...</think>`` then the level), else None."""
    construction = respond_rair_construction(messages)
    if construction is not None:
        return construction
    found = read_prompt(messages)
    if found is None:
        return None
    language, fields = found
    level, dimension, reasoning = judge(fields)
    return render_answer(level, dimension, reasoning, language)


# --- the construction stages' prompts (ecom_tasks/rair/construction) -----------------------------

_QUESTION = re.compile(
    r"\?\s*$|^(?:how|what|why|which|where|when|is|are|can|does|do|should)\b|怎么|如何|什么|为什么|是不是|吗\s*$",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"\b(?:without|non|no|not)\b|\w-free\b|\bfree of\b|不含|无添加|不要|免", re.IGNORECASE)
_RELATION = re.compile(
    r"\b(?:alternatives?|substitutes?|dupes?|vs|versus|cheaper than|better than|instead of|similar to)\b|平替|替代|代替",
    re.IGNORECASE,
)
_SCENARIO = re.compile(
    r"\b(?:gifts?|ideas?|keep|stop|prevent|reduce|outfit for|present for)\b|送|礼物|神器", re.IGNORECASE
)
_MODEL_CODE = re.compile(r"^[a-z]*\d+[a-z0-9]*$", re.IGNORECASE)
#: Query terms naming what an image shows (the visual-necessity heuristic).
_VISUAL_DIMENSIONS = ("Color", "Style", "Bundle", "Material", "Season")
_FIELD = re.compile(r"^(Query|Title|Shop|CPV|SKU|Annotator's level):[ \t]*(.*)$", re.MULTILINE)
_LISTED_RULE = re.compile(r"^- (\S+) \[(L[1-4]), ([A-Za-z]+)\]:", re.MULTILINE)


def classify_query(query: str) -> str:
    """Fig. 11's class of a query from surface cues: a question (QA), an exclusion (NC), a relation to
    another product (ER), a scenario (SS), a bare model code (DJ), four or more terms (MA), else Other."""
    text = query.strip()
    for cue, intent in ((_QUESTION, "QA"), (_NEGATION, "NC"), (_RELATION, "ER"), (_SCENARIO, "SS")):
        if cue.search(text):
            return intent
    query_terms = terms(text)
    if 1 <= len(query_terms) <= 2 and any(_MODEL_CODE.match(t) and any(c.isdigit() for c in t) for t in query_terms):
        return "DJ"
    if len(query_terms) >= 4:
        return "MA"
    return "Other"


def visual_need(fields: dict[str, str]) -> int:
    """1 when a query term that names something visible (colour, pattern, cut, set size, material,
    season) is missing from the item's text, so only the image can settle it; else 0."""
    query, _, missing = _coverage(fields)
    return int(any(guess_dimension(t, query.index(t), len(query)) in _VISUAL_DIMENSIONS for t in missing))


def choose_rules(system: str, fields: dict[str, str], label: str) -> list[str]:
    """The listed rules of the annotator's level on the dimension the coverage judge blames; the first
    listed rule of that level when none is on it; none for L4."""
    listed = _LISTED_RULE.findall(system)
    if label == "L4" or not listed:
        return []
    _, dimension, _ = judge(fields)
    same_level = [(rule_id, dim) for rule_id, level, dim in listed if level == label]
    on_dimension = [rule_id for rule_id, dim in same_level if dim == (dimension or "Category")]
    return on_dimension[:1] or [rule_id for rule_id, _ in same_level[:1]]


def respond_rair_construction(messages: Sequence[tuple[str, str]]) -> str | None:
    """Answer the construction stages' prompts (intent, visual necessity, rules), else None."""
    from ecom_tasks.rair.construction.prompts import INTENT_VERSION, ITEM_FIELDS, RULES_VERSION, VISUAL_VERSION

    system = "\n".join(t for role, t in messages if role == "system")
    user = "\n".join(t for role, t in messages if role == "user")
    found = {name: value.strip() for name, value in _FIELD.findall(user)}
    fields = {field: found.get(name, "") for field, name in ITEM_FIELDS}
    if f"[{INTENT_VERSION}]" in system:
        return f"<think>Surface cues of the query.</think>\n<answer>{classify_query(fields['query'])}</answer>"
    if f"[{VISUAL_VERSION}]" in system:
        return f"\\boxed{{{visual_need(fields)}}}"
    if f"[{RULES_VERSION}]" in system:
        rules = choose_rules(system, fields, found.get("Annotator's level", ""))
        return f"Rule IDs: {', '.join(rules) or 'none'}"
    return None
