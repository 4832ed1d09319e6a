"""RAIR canonical record, its validation and loading; the fields are in ``ecom_tasks/rair/README.md`` ("Data")."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ecom_tasks.data import (
    ConfigurationError,
    Problem,
    Row,
    choice,
    fixtures_dir,
    id_list,
    is_blank,
    load_validated,
    require_text,
    validate_records,
)
from ecom_tasks.images import DEFAULT_ACCESS, ImageAccess, resolve_image

SUBSETS = ("general", "hard", "visual")
LEVELS = ("L1", "L2", "L3", "L4")
LANGUAGES = ("zh", "en")

#: Hard-subset intents (Sec. 4.2, Table 2), in the paper's order.
INTENTS = ("DJ", "ER", "SS", "QA", "NC", "MA")

#: The 14 industries, the rows of per-industry reports; the last five are our reconstruction (README "Deviations").
INDUSTRIES = tuple(
    "Fashion & Apparel|Home Furnishing|Daily Consumer Goods|Toys & Trendy Items|Food & Fresh Products|Automotive|"
    "Healthcare|Industrial & Agricultural|Customized Services|Beauty & Cosmetics|Consumer Electronics|"
    "Home Appliances|Sports & Outdoors|Mother & Baby".split("|")
)

#: Chinese industry names (as the released data may write them) -> the English name in
#: :data:`INDUSTRIES`. Only names whose meaning is clear; matched after stripping, case-insensitively.
INDUSTRY_ALIASES_ZH: dict[str, str] = {
    **dict.fromkeys(("服饰", "服装", "服装服饰", "服饰鞋包", "服装鞋包", "鞋服"), "Fashion & Apparel"),
    **dict.fromkeys(("家居", "家装", "家居家装", "家具"), "Home Furnishing"),
    **dict.fromkeys(("日用百货", "百货", "日用品"), "Daily Consumer Goods"),
    **dict.fromkeys(("玩具", "潮玩", "玩具潮玩", "潮玩玩具"), "Toys & Trendy Items"),
    **dict.fromkeys(("食品", "生鲜", "食品生鲜", "生鲜食品"), "Food & Fresh Products"),
    **dict.fromkeys(("汽车", "汽车用品", "汽配", "汽车配件"), "Automotive"),
    **dict.fromkeys(("医药", "健康", "医药健康", "医疗保健"), "Healthcare"),
    **dict.fromkeys(("工农业", "工业农业"), "Industrial & Agricultural"),
    **dict.fromkeys(("定制服务",), "Customized Services"),
    **dict.fromkeys(("美妆", "化妆品", "彩妆"), "Beauty & Cosmetics"),
    **dict.fromkeys(("数码", "3C数码", "数码3C", "消费电子"), "Consumer Electronics"),
    **dict.fromkeys(("家电", "家用电器"), "Home Appliances"),
    **dict.fromkeys(("运动户外", "运动", "户外", "户外运动"), "Sports & Outdoors"),
    **dict.fromkeys(("母婴", "母婴用品"), "Mother & Baby"),
}
_INDUSTRY_LOOKUP = {name.casefold(): name for name in INDUSTRIES}
_INDUSTRY_LOOKUP.update({alias.casefold(): name for alias, name in INDUSTRY_ALIASES_ZH.items()})

# CJK Unified Ideographs (with Extension A) and the compatibility ideographs.
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

#: The 16 intent dimensions of the rule system (Table 8), in the table's order.
DIMENSIONS = tuple(
    "Category Style Special Audience Bundle Season Color Brand Material Component Specification IP Function "
    "Attributes Year Store".split()
)
DIMENSION_NAMES_ZH = dict(
    zip(DIMENSIONS, "类目 风格 特殊需求 人群 套装 季节 颜色 品牌 材质 配件 规格 IP 功能 属性 年份 店铺".split())
)

#: A dimension named with a trailing "mismatch" word ("Brand mismatch", "颜色不符").
_MISMATCH_SUFFIX = re.compile(r"\s*(mismatch(?:ed)?|conflict|不匹配|不符合?|不一致|冲突)\s*$", re.IGNORECASE)

#: Names a model may use for a dimension: Table 8 names, the key attributes of
#: the Fig. 9 prompt (which name some dimensions differently) and Chinese names.
_ALIASES = {
    "Category": "category|categories|product type|类目|品类|类别|商品类型|产品类型",
    "Style": "style|style details|style detail|design|pattern|fashion style|风格|款式|款式细节|设计|图案|版型",
    "Special": "special|special needs|special need|price|promotion|特殊|特殊需求|价格|促销|新品",
    "Audience": "audience|target audience|gender|age|age group|人群|适用人群|目标人群|性别|年龄|年龄段",
    "Bundle": "bundle|set|set/single|set single|single|quantity|套装|套装/单品|单品|数量|件数",
    "Season": "season|seasonal|季节|季节性",
    "Color": "color|colour|颜色|色彩|颜色款式",
    "Brand": "brand|品牌",
    "Material": "material|materials|fabric|材质|材料|面料",
    "Component": "component|components|accessory|accessories|part|parts|compatibility|配件|零件|部件|适配|兼容",
    "Specification": "specification|specifications|spec|specs|model|model id|model number|size|capacity|weight|"
    "规格|型号|尺寸|尺码|码数|容量|重量|参数",
    "IP": "ip|ip image|character|license|ip形象|形象|联名",
    "Function": "function|functions|functional|efficacy|usage|功能|功效|用途|使用场景",
    "Attributes": "attributes|attribute|special attributes|special attribute|other attributes|property|属性|特殊属性|其他属性",
    "Year": "year|model year|年份|年款",
    "Store": "store|shop|seller|channel|店铺|商家|渠道|旗舰店",
}
_ALIAS_TO_DIMENSION = {alias.casefold(): dim for dim, aliases in _ALIASES.items() for alias in aliases.split("|")}
_ALIAS_TO_DIMENSION.update({name.casefold(): dim for dim, name in DIMENSION_NAMES_ZH.items()})
_ALIAS_TO_DIMENSION.update({dim.casefold(): dim for dim in DIMENSIONS})


def canonical_dimension(text: str) -> str | None:
    """The Table 8 dimension a name refers to (``"Spec"`` -> Specification, ``"尺码"`` -> Specification), else None."""
    name = _MISMATCH_SUFFIX.sub("", " ".join(text.split())).strip(" -–—:：_*'\"<>").casefold()
    name = re.sub(r"^(?:the|a|an)\s+", "", name)
    return _ALIAS_TO_DIMENSION.get(name)


@dataclass(frozen=True)
class RairRecord:
    id: str
    subset: str
    query: str
    title: str
    shop_name: str
    cpv: str
    sku: str
    image: str | None  # absolute file path, data: URI or http(s) URL
    industry: str  # one of INDUSTRIES when recognized, else the value as given
    intent: str | None
    label: str
    rule_ids: tuple[str, ...]
    language: str
    source: str = ""  # file:row, for messages


def _label(row: Row, problems: list[Problem]) -> str:
    value = row.values.get("label")
    if isinstance(value, bool):
        value = None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and 1 <= value <= 4:
        return f"L{value}"
    if isinstance(value, str) and value.strip().upper() in LEVELS:
        return value.strip().upper()
    problems.append(Problem(row.source, row.index, "label", f"unknown label {value!r}; expected one of L1, L2, L3, L4"))
    return ""


def canonical_industry(value: str) -> str:
    """The industry a record is stored under: one of :data:`INDUSTRIES` (up to case, or a Chinese alias), else
    the value as given (README "Data")."""
    return _INDUSTRY_LOOKUP.get(value.strip().casefold(), value.strip())


def infer_language(*texts: str) -> str:
    """``zh`` when any text has a CJK ideograph (U+3400-U+9FFF, U+F900-U+FAFF), else ``en``."""
    return "zh" if any(_CJK.search(text) for text in texts) else "en"


def _language(row: Row, query: str, title: str, problems: list[Problem]) -> str:
    """The given language (zh | en, any case), or the one the query and title are written in."""
    value = row.values.get("language")
    if is_blank(value):
        return infer_language(query, title)
    return choice(row, "language", LANGUAGES, problems, {language.casefold(): language for language in LANGUAGES})


def _intent(row: Row, subset: str, problems: list[Problem]) -> str | None:
    value = require_text(row, "intent", problems, optional=True)
    if subset == "hard" and value and value.upper() in INTENTS:
        return value.upper()
    if subset == "hard":
        expected = f"one of {', '.join(INTENTS)}"
        message = (
            f"unknown intent {value!r}; expected {expected}"
            if value
            else f"the hard subset needs an intent, {expected}"
        )
    elif value and subset:
        message = f"intents belong to the hard subset only (this row is {subset!r})"
    else:
        return None
    problems.append(Problem(row.source, row.index, "intent", message))
    return None


def _image(row: Row, subset: str, problems: list[Problem], check: bool, access: ImageAccess) -> str | None:
    """The image as something Inspect's ContentImage takes: absolute path, data URI or URL."""
    value = row.values.get("image")
    if is_blank(value):
        if subset == "visual":
            problems.append(Problem(row.source, row.index, "image", "the visual subset needs an image"))
        return None
    return resolve_image(value, row, "image", problems, check=check, access=access)


def validate_rows(
    rows: list[Row], *, check_images: bool = True, image_access: ImageAccess = DEFAULT_ACCESS
) -> list[RairRecord]:
    """Canonical records from raw rows, or a DataValidationError listing every problem. ``check_images``: decode every
    image with pillow (text-only runs may skip it; ``ecom-tasks validate`` does not)."""

    def record(row: Row, record_id: str, problems: list[Problem]) -> RairRecord:
        subset = choice(row, "subset", SUBSETS, problems)
        query = require_text(row, "query", problems)
        title = require_text(row, "title", problems)
        return RairRecord(
            id=record_id,
            subset=subset,
            query=query,
            title=title,
            shop_name=require_text(row, "shop_name", problems, optional=True),
            cpv=require_text(row, "cpv", problems, optional=True),
            sku=require_text(row, "sku", problems, optional=True),
            industry=canonical_industry(require_text(row, "industry", problems)),
            intent=_intent(row, subset, problems),
            label=_label(row, problems),
            rule_ids=id_list(row, "rule_ids", problems, "rule ids") or (),
            language=_language(row, query, title, problems),
            image=_image(row, subset, problems, check_images, image_access),
            source=f"{row.source}:{row.index}",
        )

    return validate_records(rows, record)


def load_records(
    data: str | os.PathLike[str] | None = None,
    *,
    subset: str | None = None,
    language: str | None = None,
    check_images: bool = True,
    image_access: ImageAccess = DEFAULT_ACCESS,
) -> list[RairRecord]:
    """Validated RAIR records (bundled fixtures by default) of one subset / language; every row is validated first."""
    for name, value, allowed in (("RAIR subset", subset, SUBSETS), ("language", language, LANGUAGES)):
        if value is not None and value not in allowed:
            raise ConfigurationError(f"unknown {name} {value!r}; expected one of {', '.join(allowed)}")
    records = load_validated(
        data if data is not None else fixtures_dir("rair"),
        validate_rows,
        check_images=check_images,
        image_access=image_access,
    )
    return [
        r for r in records if (subset is None or r.subset == subset) and (language is None or r.language == language)
    ]
