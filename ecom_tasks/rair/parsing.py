"""RAIR answer extraction: the final label after ``</think>``, and the L2 mismatch dimension.

A reply is classified, never raised on. The answer region is what
:func:`ecom_tasks.scorers.replies.answer_region` leaves: the text after the
last ``</think>``, or the whole reply when it has no think tags (servers that
split reasoning into a separate field return only the final answer).

Instruct models often name more than one level ("Final answer: L3 - not L4
because ..."), so the level is picked by the first of these rules that finds
one in the answer region (:attr:`ParsedRelevance.rule` says which):

1. ``final-answer marker``: the last marker such as ``Final answer:``,
   ``Answer -``, ``Relevance:``, ``Level:``, ``The final answer is``,
   ``最终答案：``, ``答案为``, ``相关性：`` immediately followed by a level
   (markdown, brackets and a line break may come between);
2. ``bracket form``: the last ``[L2-<dimension> Mismatch]`` / ``【L2-…不匹配】``;
3. ``last line``: a level standing alone on the last non-empty line
   (``**L3**``, ``L3.``, ``[L3]``);
4. ``last level named``: the last level named anywhere in the region.

When the level picked is L2, the dimension is read from the bracket form
(the bracket holding that L2, else the last one in the region).

Status ``ok`` is a level L1-L4. Everything else is an invalid prediction
(always wrong, counted):

- ``empty``: nothing after the reasoning;
- ``unclosed_think``: ``<think>`` opened but never closed (cut off mid-reasoning);
- ``no_label``: no level named at all (e.g. "relevant");
- ``out_of_range``: the level picked is outside L1-L4 (e.g. "L5").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ecom_tasks.rair.schema import DIMENSION_NAMES_ZH, DIMENSIONS
from ecom_tasks.scorers.replies import answer_region

OK = "ok"
EMPTY = "empty"
UNCLOSED_THINK = "unclosed_think"
NO_LABEL = "no_label"
OUT_OF_RANGE = "out_of_range"
INVALID_STATUSES = (EMPTY, UNCLOSED_THINK, NO_LABEL, OUT_OF_RANGE)

#: A mismatch dimension was named but is none of the 16 (nor a known alias).
OTHER_DIMENSION = "other"

#: Which rule picked the level (``ParsedRelevance.rule``), in the order they are tried.
RULE_MARKER = "final-answer marker"
RULE_BRACKET = "bracket form"
RULE_LAST_LINE = "last line"
RULE_LAST_LEVEL = "last level named"

# "L3" standing alone ("L3.", "**L3**", "为L3", "[L2-Brand"), not inside a word or number.
_LEVEL = re.compile(r"(?<![A-Za-z0-9])L([0-9]+)(?![0-9])", re.IGNORECASE)
# A final-answer marker, a separator (":", "-", "=", "is", "为", "是", or a line break after a
# heading such as "## Final Answer"), then a level.
_MARKER = re.compile(
    r"(?<![A-Za-z])(?:"
    r"final[ \t]+(?:answer|label|level|result|judge?ment|rating|verdict|relevance(?:[ \t]+level)?)"
    r"|answer|relevance(?:[ \t]+(?:level|label|grade|rating))?|level|label"
    r"|最终答案|最终结果|最终等级|最终判断|最终判定|答案|结论|相关性等级|相关等级|相关性|等级"
    r")(?![A-Za-z])[ \t*_`#]*(?P<sep>[:：=\-–—]|\bis\b|为|是|\n)[\s*_`#]*[\[【(（]?[ \t]*"
    r"L(?P<level>[0-9]+)(?![0-9])",
    re.IGNORECASE,
)
# What may precede a marker on its line for a line break to separate it from the level.
_HEADING_START = re.compile(r"[\s#*_>`]*")
# "[L2-Brand Mismatch]", "【L2-品牌不匹配】": a level and a named mismatch, bracketed.
_BRACKET = re.compile(r"[\[【]\s*L([0-9]+)(?![0-9])\s*[-–—:：_]?\s*([^\]】\n]*?)\s*[\]】]", re.IGNORECASE)
# A level alone on a line: markdown emphasis, a bullet, brackets and trailing punctuation allowed.
_LONE_LEVEL = re.compile(
    r"^[\s>#*_`•-]*[\[【(（]?\s*L([0-9]+)(?![0-9])\s*[\]】)）]?[\s*_`.,;:!?。！，；：]*$", re.IGNORECASE
)
_MISMATCH_SUFFIX = re.compile(r"\s*(mismatch(?:ed)?|conflict|不匹配|不符合?|不一致|冲突)\s*$", re.IGNORECASE)

#: Names a model may use for a dimension: Table 8 names, the key attributes of
#: the Fig. 9 prompt (which name some dimensions differently) and Chinese names.
_ALIASES: dict[str, tuple[str, ...]] = {
    "Category": ("category", "categories", "product type", "类目", "品类", "类别"),
    "Style": ("style", "style details", "style detail", "design", "pattern", "fashion style", "风格", "款式", "款式细节", "设计", "图案"),
    "Special": ("special", "special needs", "special need", "price", "promotion", "特殊", "特殊需求", "价格", "促销"),
    "Audience": ("audience", "target audience", "gender", "age", "age group", "人群", "适用人群", "性别", "年龄"),
    "Bundle": ("bundle", "set", "set/single", "set single", "single", "quantity", "套装", "套装/单品", "单品", "数量"),
    "Season": ("season", "seasonal", "季节"),
    "Color": ("color", "colour", "颜色"),
    "Brand": ("brand", "品牌"),
    "Material": ("material", "materials", "材质", "材料"),
    "Component": ("component", "components", "accessory", "accessories", "part", "parts", "compatibility", "配件", "零件", "适配"),
    "Specification": ("specification", "specifications", "spec", "specs", "model", "model id", "model number", "size", "capacity", "规格", "型号", "尺寸", "容量"),
    "IP": ("ip", "ip image", "character", "license", "ip形象", "形象"),
    "Function": ("function", "functions", "functional", "efficacy", "usage", "功能", "功效", "用途"),
    "Attributes": ("attributes", "attribute", "special attributes", "special attribute", "other attributes", "property", "属性", "特殊属性"),
    "Year": ("year", "model year", "年份", "年款"),
    "Store": ("store", "shop", "seller", "channel", "店铺", "商家", "渠道"),
}
_ALIAS_TO_DIMENSION = {alias.casefold(): dim for dim, aliases in _ALIASES.items() for alias in aliases}
_ALIAS_TO_DIMENSION.update({name.casefold(): dim for dim, name in DIMENSION_NAMES_ZH.items()})
_ALIAS_TO_DIMENSION.update({dim.casefold(): dim for dim in DIMENSIONS})


def canonical_dimension(text: str) -> str | None:
    """The Table 8 dimension a name refers to (``"Spec"`` -> Specification), else None."""
    name = _MISMATCH_SUFFIX.sub("", " ".join(text.split())).strip(" -–—:：_*'\"").casefold()
    return _ALIAS_TO_DIMENSION.get(name)


@dataclass(frozen=True)
class ParsedRelevance:
    label: str | None  # "L1".."L4"; None unless status is ok
    status: str
    dimension: str | None = None  # for L2: one of DIMENSIONS, OTHER_DIMENSION, or None when not named
    detail: str = ""  # for ok: the rule that picked the level; else why the reply is invalid
    rule: str = ""  # RULE_MARKER, RULE_BRACKET, RULE_LAST_LINE or RULE_LAST_LEVEL; "" when no level was found

    @property
    def valid(self) -> bool:
        return self.status == OK

    @property
    def display(self) -> str:
        """The answer as the prompt's output form (``[L2-Brand Mismatch]``), or the status."""
        if self.label is None:
            return self.status
        if self.label == "L2" and self.dimension:
            return f"[L2-{self.dimension} Mismatch]"
        return self.label


def _brackets(region: str) -> list[re.Match[str]]:
    """Bracketed levels with a named mismatch (not "[L2 or L3]")."""
    return [m for m in _BRACKET.finditer(region) if m.group(2) and not _LEVEL.search(m.group(2))]


def _is_marker(region: str, match: re.Match[str]) -> bool:
    if match.group("sep") != "\n":
        return True
    line_start = region.rfind("\n", 0, match.start()) + 1
    return _HEADING_START.fullmatch(region, line_start, match.start()) is not None


def _pick_level(region: str) -> tuple[int, int, str] | None:
    """The chosen level number, where it is in ``region``, and the rule that chose it."""
    markers = [m for m in _MARKER.finditer(region) if _is_marker(region, m)]
    if markers:
        return int(markers[-1].group("level")), markers[-1].start("level"), RULE_MARKER
    brackets = _brackets(region)
    if brackets:
        return int(brackets[-1].group(1)), brackets[-1].start(1), RULE_BRACKET
    lines = [line for line in region.splitlines() if line.strip()]
    lone = _LONE_LEVEL.match(lines[-1]) if lines else None
    levels = list(_LEVEL.finditer(region))
    if lone:
        # a lone level on the last line is also the last level named in the region
        return int(lone.group(1)), levels[-1].start(1), RULE_LAST_LINE
    if levels:
        return int(levels[-1].group(1)), levels[-1].start(1), RULE_LAST_LEVEL
    return None


def _l2_dimension(region: str, at: int) -> str | None:
    """The dimension of the L2 bracket holding position ``at``, else of the last L2 bracket."""
    brackets = [m for m in _brackets(region) if m.group(1) == "2"]
    if not brackets:
        return None
    holding = [m for m in brackets if m.start() <= at < m.end()]
    bracket = holding[0] if holding else brackets[-1]
    return canonical_dimension(bracket.group(2)) or OTHER_DIMENSION


def parse_reply(completion: str | None) -> ParsedRelevance:
    """Classify a model reply to a RAIR prompt (see the module docstring)."""
    region = answer_region(completion)
    if region is None:
        return ParsedRelevance(None, UNCLOSED_THINK, detail="<think> is never closed")
    if not region.strip():
        return ParsedRelevance(None, EMPTY, detail="no answer after the reasoning")
    picked = _pick_level(region)
    if picked is None:
        return ParsedRelevance(None, NO_LABEL, detail=f"no level in {region.strip()[:80]!r}")
    number, at, rule = picked
    if not 1 <= number <= 4:
        return ParsedRelevance(None, OUT_OF_RANGE, detail=f"L{number} ({rule}) is not one of L1-L4", rule=rule)
    label = f"L{number}"
    dimension = _l2_dimension(region, at) if label == "L2" else None
    return ParsedRelevance(label, OK, dimension, detail=rule, rule=rule)
