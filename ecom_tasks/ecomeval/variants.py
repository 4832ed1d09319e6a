"""EcomEval's named variants, declared once: the Inspect presets and the lm-eval YAML both come from here.

``ecomeval`` and ``ecomeval_<category>`` are judge-graded (Inspect only:
lm-eval runs no judge inside a task). ``ecomeval_exact`` and
``ecomeval_exact_<category>`` take the text items whose reference is an option
letter or a short exact answer and score them by exact match after
normalisation, deterministically, in both frameworks (lm-eval: the group
``ecomeval_exact`` of the per-category tasks).
"""

from __future__ import annotations

from dataclasses import dataclass

from ecom_tasks.ecomeval.schema import CATEGORIES, CATEGORY_NAMES

#: Generation budget (Inspect ``max_tokens``, lm-eval ``max_gen_toks``): room for reasoning models.
MAX_TOKENS = 16384
#: The paper's judge (Sec. 4.1), the default of the ``grader`` model role.
DEFAULT_GRADER = "openai/gpt-4.1"
#: Categories whose items are text; ``ecom_multimodal``'s all have images, so it has no exact task.
TEXT_CATEGORIES = tuple(c for c in CATEGORIES if c != "ecom_multimodal")


@dataclass(frozen=True)
class Variant:
    name: str
    categories: tuple[str, ...]  # empty: all
    exact: bool
    description: str

    @property
    def in_lm_eval(self) -> bool:
        return self.exact and len(self.categories) == 1

    @property
    def category(self) -> str | None:
        return ",".join(self.categories) or None


def _variants() -> dict[str, Variant]:
    table = {"ecomeval": Variant("ecomeval", (), False, "EcomEval, every category, graded by the LLM judge (0-3 rubric)")}
    for c in CATEGORIES:
        table[f"ecomeval_{c}"] = Variant(f"ecomeval_{c}", (c,), False, f"EcomEval {CATEGORY_NAMES[c]}, graded by the LLM judge")
    table["ecomeval_exact"] = Variant(
        "ecomeval_exact", TEXT_CATEGORIES, True, "EcomEval text items with an exact-answer reference, exact match (no judge)"
    )
    for c in TEXT_CATEGORIES:
        name = f"ecomeval_exact_{c}"
        table[name] = Variant(name, (c,), True, f"EcomEval {CATEGORY_NAMES[c]} exact-answer items, exact match (no judge)")
    return table


VARIANTS = _variants()

#: lm-eval groups: ``ecomeval_exact`` = its per-category tasks (group ``score``: their unweighted mean).
LM_EVAL_GROUPS = {"ecomeval_exact": [v.name for v in VARIANTS.values() if v.in_lm_eval]}
