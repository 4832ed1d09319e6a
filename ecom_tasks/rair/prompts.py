"""RAIR prompt builder (paper Fig. 9) in English and Chinese; our additions: README "Prompt", "Deviations and notes"."""

from __future__ import annotations

from ecom_tasks import files
from ecom_tasks.errors import ConfigurationError
from ecom_tasks.rair.rules import RuleSet
from ecom_tasks.rair.schema import DIMENSION_NAMES_ZH, LANGUAGES, RairRecord

PROMPT_VERSION = "rair-fig9/1"

#: Fig. 9's instructions, with an ``{image}`` slot for the image source (``prompt_texts/system_<language>.txt``).
_SYSTEM = {
    language: files.package_text("ecom_tasks.rair", f"prompt_texts/system_{language}.txt") for language in LANGUAGES
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
        raise ConfigurationError(f"unknown language {language!r}; expected one of {', '.join(LANGUAGES)}")
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
