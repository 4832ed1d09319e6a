"""RAIR answer extraction: the final label after ``</think>``, and the L2 mismatch dimension.

A reply is classified, never raised on. ``ok``: exactly one level L1-L4 is
named after the reasoning (an L2 may carry ``[L2-<dimension> Mismatch]``).
Everything else is an invalid prediction (always wrong, counted):

- ``empty``: nothing after the reasoning;
- ``unclosed_think``: ``<think>`` opened but never closed (cut off mid-reasoning);
- ``no_label``: no L1-L4 named (e.g. "relevant");
- ``out_of_range``: only a level outside L1-L4 named (e.g. "L5");
- ``multiple_labels``: two different levels named (e.g. "L2 or L3").

A reply with no ``<think>`` tags at all is read whole: servers that split
reasoning into a separate field return only the final answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ecom_tasks.rair.schema import DIMENSION_NAMES_ZH, DIMENSIONS

OK = "ok"
EMPTY = "empty"
UNCLOSED_THINK = "unclosed_think"
NO_LABEL = "no_label"
OUT_OF_RANGE = "out_of_range"
MULTIPLE_LABELS = "multiple_labels"
INVALID_STATUSES = (EMPTY, UNCLOSED_THINK, NO_LABEL, OUT_OF_RANGE, MULTIPLE_LABELS)

#: A mismatch dimension was named but is none of the 16 (nor a known alias).
OTHER_DIMENSION = "other"

_THINK_OPEN = re.compile(r"<\s*think\s*>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"<\s*/\s*think\s*>", re.IGNORECASE)
# "L3" standing alone ("L3.", "**L3**", "为L3", "[L2-Brand"), not inside a word or number.
_LEVEL = re.compile(r"(?<![A-Za-z0-9])L([0-9]+)(?![0-9])", re.IGNORECASE)
_L2_BRACKET = re.compile(r"[\[【]\s*L2\s*[-–—:：_]?\s*([^\]】\n]*?)\s*[\]】]", re.IGNORECASE)
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
    detail: str = ""

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


def answer_region(completion: str) -> tuple[str | None, str]:
    """Text after the last ``</think>`` (the whole reply without think tags); None if unclosed."""
    closes = list(_THINK_CLOSE.finditer(completion))
    if closes:
        return completion[closes[-1].end() :], OK
    if _THINK_OPEN.search(completion):
        return None, UNCLOSED_THINK
    return completion, OK


def parse_reply(completion: str | None) -> ParsedRelevance:
    """Classify a model reply to a RAIR prompt (see the module docstring)."""
    region, status = answer_region(completion or "")
    if region is None:
        return ParsedRelevance(None, status, detail="<think> is never closed")
    if not region.strip():
        return ParsedRelevance(None, EMPTY, detail="no answer after the reasoning")
    named = sorted({int(m.group(1)) for m in _LEVEL.finditer(region)})
    if not named:
        return ParsedRelevance(None, NO_LABEL, detail=f"no level in {region.strip()[:80]!r}")
    if len(named) > 1:
        return ParsedRelevance(None, MULTIPLE_LABELS, detail=f"levels {', '.join(f'L{n}' for n in named)} all named")
    if not 1 <= named[0] <= 4:
        return ParsedRelevance(None, OUT_OF_RANGE, detail=f"L{named[0]} is not one of L1-L4")
    label = f"L{named[0]}"
    dimension = None
    if label == "L2":
        bracket = _L2_BRACKET.search(region)
        if bracket and bracket.group(1).strip():
            dimension = canonical_dimension(bracket.group(1)) or OTHER_DIMENSION
    return ParsedRelevance(label, OK, dimension)
