"""Reading RAIR's construction replies (as :func:`ecom_tasks.construction.reply_region` says): one vote per reply, or
an abstention with why, never a guess."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ecom_tasks.construction import (
    AMBIGUOUS,
    ANSWERED,
    LINE_START,
    NO_ANSWER,
    Prompt,
    Vote,
    last_marked,
    offered_as_alternatives,
    reply_region,
)
from ecom_tasks.data import read_whole_number
from ecom_tasks.rair.construction.prompts import (
    INTENT_CLASSES,
    INTENT_NAMES,
    INTENT_SYSTEM,
    OTHER,
    RULES_SYSTEM_HEAD,
    VISUAL_SYSTEM,
)

# --- hard-query intent (Fig. 11) --------------------------------------------------------

_ANSWER_TAG = re.compile(r"<\s*answer\s*>(.*?)<\s*/\s*answer\s*>", re.IGNORECASE | re.DOTALL)
_MARKER = re.compile(
    LINE_START
    + r"(?:final\s+answer|answer|intent|category|class(?:ification)?|最终答案|答案|类别|意图)\s*\**\s*[:：]\s*(.+)$",
    re.IGNORECASE | re.MULTILINE,
)
_NAMES_ZH = {
    "领域术语": "DJ",
    "行业黑话": "DJ",
    "实体关系": "ER",
    "解决方案": "SS",
    "问答": "QA",
    "否定约束": "NC",
    "多属性": "MA",
    "其他": OTHER,
}
# A class named only to be set aside: "not NC", "rather than SS", "instead of MA", "不是NC".
_SET_ASIDE = re.compile(
    r"(?:\bnot|\brather\s+than|\binstead\s+of|\bas\s+opposed\s+to|不是|而非|并非)\s*(?:an?\s+|the\s+)?$", re.IGNORECASE
)
# The same, read backwards from the class in the reversed text (the same strings, each reversed): matched where the class
# starts, not searched for in all the text before it (a reply of thousands of negated classes was quadratic).
_SET_ASIDE_BACKWARDS = re.compile(
    r"(?:\s+(?:n?a|eht))?\s*(?:(?:ton|naht\s+rehtar|fo\s+daetsni|ot\s+desoppo\s+sa)\b|是不|非而|非并)", re.IGNORECASE
)


def _asserted(text: str, pattern: str, flags: int = 0) -> bool:
    """Whether ``pattern`` occurs in ``text`` other than right after a negation (:data:`_SET_ASIDE`)."""
    backwards = text[::-1]
    return any(
        not _SET_ASIDE_BACKWARDS.match(backwards, len(text) - m.start()) for m in re.finditer(pattern, text, flags)
    )


#: (pattern, regex flags, class) of every way a reply names a class: its English name in any case, its code
#: in capitals (Other has only its name), its Chinese names.
_SPELLINGS = [
    *((rf"(?<![A-Za-z]){re.escape(name)}(?![A-Za-z])", re.IGNORECASE, code) for code, name in INTENT_NAMES.items()),
    *((rf"(?<![A-Za-z]){code}(?![A-Za-z])", 0, code) for code in INTENT_CLASSES if code != OTHER),
    *((re.escape(name), 0, code) for name, code in _NAMES_ZH.items()),
]


def _classes_named(text: str) -> list[str]:
    """Every class ``text`` asserts (codes in capitals, English and Chinese names, Fig. 11's numbers)."""
    found = list(dict.fromkeys(code for pattern, flags, code in _SPELLINGS if _asserted(text, pattern, flags)))
    bare = text.strip().strip("().[]*` ")
    if not found and (number := read_whole_number(bare, 1, len(INTENT_CLASSES))) is not None:
        found.append(INTENT_CLASSES[number - 1])  # "(5)": Fig. 11 numbers the classes
    if not found and bare.casefold() in {c.casefold() for c in INTENT_CLASSES}:
        found.append(next(c for c in INTENT_CLASSES if c.casefold() == bare.casefold()))
    return found


_INTENT_ANSWERS = re.compile(
    _ANSWER_TAG.pattern
    + "".join(f"|(?<![A-Za-z]){re.escape(name)}(?![A-Za-z])" for name in INTENT_NAMES.values())
    + "".join(f"|(?<![A-Za-z])(?-i:{code})(?![A-Za-z])" for code in INTENT_CLASSES),
    re.IGNORECASE | re.DOTALL,
)


def parse_intent(reply: str | None, *, prompt: Prompt = None) -> Vote:
    """The class of the last ``<answer>`` tag, else of the last ``Answer:``-style line, else of a
    reply that is one short line; a tag or line naming two classes, or two tags offered as
    alternatives, is ``ambiguous``. ``prompt``: the texts sent (default: the stage's instructions)."""
    region, status = reply_region(reply, (INTENT_SYSTEM,) if prompt is None else prompt, _INTENT_ANSWERS)
    if region is None:
        return Vote(None, status)
    tags = list(_ANSWER_TAG.finditer(region))
    if offered_as_alternatives(region, tags):
        return Vote(None, AMBIGUOUS)
    answer = tags[-1].group(1) if tags else last_marked(region, _MARKER, 40)
    named = _classes_named(answer) if answer is not None else []
    return Vote(named[0]) if len(named) == 1 else Vote(None, AMBIGUOUS if named else NO_ANSWER)


# --- visual necessity (Fig. 12) ---------------------------------------------------------

_BOXED = re.compile(r"\\boxed\s*\{\s*\[?\s*([^{}\[\]]*?)\s*\]?\s*\}")
_BINARY = {"1": 1, "0": 0, "yes": 1, "no": 0}


def parse_visual(reply: str | None, *, prompt: Prompt = None) -> Vote:
    """1 or 0 from the last ``\\boxed{...}`` (``\\boxed{[1]}`` too), else from a reply that is only
    the digit; anything else (two boxes offered as alternatives too) abstains. ``prompt``: the texts
    sent (default: the stage's instructions)."""
    region, status = reply_region(reply, (VISUAL_SYSTEM,) if prompt is None else prompt, _BOXED)
    if region is None:
        return Vote(None, status)
    matches = list(_BOXED.finditer(region))
    if offered_as_alternatives(region, matches):
        return Vote(None, AMBIGUOUS)
    boxed = [m.group(1) for m in matches]
    if boxed:
        value = _BINARY.get(boxed[-1].strip().casefold())
        return Vote(value) if value is not None else Vote(None, NO_ANSWER)
    bare = region.strip().strip("[]().*` ")
    return Vote(_BINARY[bare]) if bare in ("0", "1") else Vote(None, NO_ANSWER)


# --- rule pre-annotation (Eq. 4) --------------------------------------------------------

_RULE_LINE = re.compile(LINE_START + r"rule\s*ids?\s*\**\s*[:：]\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_NONE = {"none", "no", "n/a", "-", "无", "没有", "[]", "none."}
_SPLIT = re.compile(r"[,，;；、\s]+")


def parse_rule_ids(reply: str | None, allowed: Iterable[str], *, prompt: Prompt = None) -> Vote:
    """The rule ids on the last ``Rule IDs:`` line, spelled as in ``allowed`` (case-insensitive); ids
    not in ``allowed`` are dropped and listed in ``unknown``. ``none`` is a vote for no rule (an empty
    tuple); a reply without the line abstains. ``prompt``: the texts sent (default: the stage's
    instructions)."""
    region, status = reply_region(reply, (RULES_SYSTEM_HEAD,) if prompt is None else prompt, _RULE_LINE)
    if region is None:
        return Vote(None, status)
    lines = _RULE_LINE.findall(region)
    if not lines:
        return Vote(None, NO_ANSWER)
    content = lines[-1].strip().strip("`*").strip()
    if content.casefold() in _NONE:
        return Vote(())
    lookup = {rule_id.casefold(): rule_id for rule_id in allowed}
    tokens = [token for raw in _SPLIT.split(content.strip("[]")) if (token := raw.strip("[]()`*.\"'"))]
    named = [(token, lookup.get(token.casefold())) for token in tokens]
    # an id named to be set aside ("COLOR-01 (not BRAND-01)", "except BRAND-01") is not chosen
    set_aside = {i + 1 for i, token in enumerate(tokens) if token.casefold() in ("not", "except", "excluding")}
    chosen = dict.fromkeys(
        rule_id for i, (_, rule_id) in enumerate(named) if rule_id is not None and i not in set_aside
    )
    return Vote(tuple(chosen), ANSWERED, tuple(token for token, rule_id in named if rule_id is None))
