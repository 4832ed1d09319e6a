"""RAIR prompt builder (paper Fig. 9), in English and Chinese.

The static system prompt and per-sample user prompt, and our additions to Fig. 9, are in
``ecom_tasks/rair/README.md`` ("Prompt", "Deviations and notes").
"""

from __future__ import annotations

from ecom_tasks.rair.rules import RuleSet
from ecom_tasks.rair.schema import DIMENSION_NAMES_ZH, LANGUAGES, RairRecord

PROMPT_VERSION = "rair-fig9/1"

_SYSTEM = {
    "en": (
        "You are an expert in e-commerce relevance analysis. Your task is to assess the relevance "
        "between a user Query and an item based on provided information.\n"
        "\n"
        "Key Attributes: Pay attention to Category, Brand, Style Details, Material, Target Audience, "
        "Season, Model ID, Specifications, Color, Function, Accessories, Set/Single, Price, Year, "
        "Special Attributes, and IP image.\n"
        "\n"
        "Instructions:\n"
        "- Synthesize Information: Combine insights from the item Title, CPV (Color-Pattern-Version), and SKU{image}.\n"
        "- Chain of Thought (CoT): You must enclose your reasoning process within <think> and </think> "
        "tags before outputting the final result.\n"
        "- Output Format: For L2 cases, specify the mismatch type in brackets, e.g., [L2-Style Mismatch].\n"
        "- Final Answer: After </think>, output only the final level: L1, L3 or L4, or for L2 the bracketed "
        "form [L2-<attribute> Mismatch].\n"
        "\n"
        "Relevance Levels:\n"
        "- L1 (Irrelevant): Complete category mismatch with no association.\n"
        "- L2 (Partially Irrelevant): Category mismatch but related; or Category matches but key attributes "
        "(e.g., Brand, Spec, Gender) fail.\n"
        "- L3 (Closely Relevant): Proximate category/attributes but lacks full intent alignment; or contains "
        "minor attribute conflicts.\n"
        "- L4 (Perfectly Relevant): Completely satisfies the query intent.\n"
    ),
    "zh": (
        "你是一名电商相关性分析专家。你的任务是根据提供的信息，评估用户查询（Query）与商品之间的相关性。\n"
        "\n"
        "关键属性：请关注类目、品牌、款式细节、材质、适用人群、季节、型号、规格、颜色、功能、配件、"
        "套装/单品、价格、年份、特殊属性和IP形象。\n"
        "\n"
        "说明：\n"
        "- 综合信息：结合商品标题、CPV（颜色-图案-版本）和SKU{image}中的信息。\n"
        "- 思维链（CoT）：在输出最终结果之前，必须将推理过程写在<think>和</think>标签之内。\n"
        "- 输出格式：对于L2，请在方括号中注明不匹配类型，例如[L2-款式不匹配]。\n"
        "- 最终答案：在</think>之后只输出最终等级：L1、L3或L4；若为L2，则输出方括号形式[L2-<属性>不匹配]。\n"
        "\n"
        "相关性等级：\n"
        "- L1（不相关）：类目完全不符，且毫无关联。\n"
        "- L2（部分不相关）：类目不符但有关联；或类目相符但关键属性（如品牌、规格、性别）不满足。\n"
        "- L3（较相关）：类目/属性相近但未完全满足查询意图；或存在轻微的属性冲突。\n"
        "- L4（完全相关）：完全满足查询意图。\n"
    ),
}
_IMAGE_SOURCE = {"en": ", together with the item Image", "zh": "以及商品图片"}
_RULES_HEADER = {"en": "Judge strictly by the following rules.\n", "zh": "请严格依据以下规则进行判断。\n"}
#: The input heading and the label of each item field in the user message (the
#: offline baseline reads prompts back through these).
INPUT_HEADING = {"en": "Input:", "zh": "输入："}
_FIELDS = ("query", "title", "shop_name", "cpv", "sku")
FIELD_LABELS = {
    "en": dict(zip(_FIELDS, ("User Query:", "Item Title:", "Item Shop:", "Item CPV:", "Item SKU:"))),
    "zh": dict(zip(_FIELDS, ("用户查询：", "商品标题：", "商品店铺：", "商品CPV：", "商品SKU："))),
}
#: Closes the user text when an image part follows it.
_IMAGE_LINE = {"en": "Item Image:", "zh": "商品图片："}
_NO_IMAGE_LINE = {"en": "Item Image: (none)", "zh": "商品图片：（无）"}


def build_system_prompt(language: str = "en", rules: RuleSet | None = None, image: bool = False) -> str:
    """The static prefix: Fig. 9 instructions, then (rule-guided) the rules document."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; expected one of {', '.join(LANGUAGES)}")
    text = _SYSTEM[language].format(image=_IMAGE_SOURCE[language] if image else "")
    if rules is not None:
        text += "\n" + _RULES_HEADER[language] + "\n" + rules.render(language) + "\n"
    return text


def build_user_prompt(record: RairRecord, image: bool = False) -> str:
    """The per-sample part, in the record's language. With ``image``, ends with an
    "Item Image:" line the image part follows."""
    language = record.language
    # English labels are followed by a space, Chinese ones end in a full-width colon.
    separator = " " if language == "en" else ""
    lines = [INPUT_HEADING[language]]
    lines += [f"{label}{separator}{getattr(record, field)}" for field, label in FIELD_LABELS[language].items()]
    text = "\n".join(lines)
    if image:
        text += "\n" + (_IMAGE_LINE[language] if record.image else _NO_IMAGE_LINE[language])
    return text


def render_answer(label: str, dimension: str | None = None, reasoning: str = "", language: str = "en") -> str:
    """A reply in the Fig. 9 output form (used by the baseline, scripted models and tests)."""
    final = label
    if label == "L2" and dimension:
        final = f"[L2-{DIMENSION_NAMES_ZH[dimension]}不匹配]" if language == "zh" else f"[L2-{dimension} Mismatch]"
    return f"<think>{reasoning}</think>\n{final}"
