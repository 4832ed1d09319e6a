"""EcomEval's named variants, declared once: the lm-eval YAML is generated from here. What each name runs
in each framework, and why ``ecomeval_exact`` is one task rather than an lm-eval group: EcomEval's README."""

from __future__ import annotations

from dataclasses import dataclass

from ecom_tasks.ecomeval.schema import CATEGORIES, CATEGORY_NAMES, TEXT_CATEGORIES

#: Output limit of the evaluated model (Inspect ``max_tokens``, lm-eval ``max_gen_toks``): None leaves it
#: to the server (vLLM: what is left of the context). Set one to cap a reasoning model (README: output limits).
MAX_TOKENS = None
#: The paper's judge (Sec. 4.1), the default of the ``grader`` model role.
DEFAULT_GRADER = "openai/gpt-4.1"


@dataclass(frozen=True)
class Variant:
    name: str
    categories: tuple[str, ...]  # empty: all
    exact: bool
    description: str

    @property
    def judged(self) -> bool:
        """Graded by the LLM judge (in lm-eval: afterwards, by ``ecom-tasks judge``)."""
        return not self.exact

    @property
    def category(self) -> str | None:
        return ",".join(self.categories) or None

    @property
    def inspect_task(self) -> tuple[str, dict[str, str]]:
        """The same setting in Inspect: its task and ``-T`` arguments (``ecomeval_exact -T category=ecom_qa``)."""
        task = "ecomeval_exact" if self.exact else "ecomeval"
        return task, ({} if self.name == task else {"category": str(self.category)})


_JUDGE, _EXACT = "graded by the LLM judge", "exact match (no judge)"
VARIANTS = {
    variant.name: variant
    for variant in (
        Variant("ecomeval", (), False, f"EcomEval, every category, {_JUDGE} (0-3 rubric)"),
        *(Variant(f"ecomeval_{c}", (c,), False, f"EcomEval {CATEGORY_NAMES[c]}, {_JUDGE}") for c in CATEGORIES),
        Variant(
            "ecomeval_exact", TEXT_CATEGORIES, True, f"EcomEval text items with an exact-answer reference, {_EXACT}"
        ),
        *(
            Variant(f"ecomeval_exact_{c}", (c,), True, f"EcomEval {CATEGORY_NAMES[c]} exact-answer items, {_EXACT}")
            for c in TEXT_CATEGORIES
        ),
    )
}
