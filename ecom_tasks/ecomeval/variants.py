"""EcomEval's named variants, declared once: the lm-eval YAML is generated from here.

In Inspect a variant is ``ecomeval`` or ``ecomeval_exact`` with ``-T category=<category>``
for a per-category name (``Variant.inspect_task``).

``ecomeval`` and ``ecomeval_<category>`` are judge-graded. In Inspect the
``grader`` role (or a panel) grades inside the run; lm-eval runs no judge
inside a task, so there the same names ask the same questions and log the
responses (``--log_samples`` / ``--predict_only``), and ``ecom-tasks judge``
grades them afterwards with the same grading code. They are tasks, not
groups, in lm-eval, for the reason below. ``ecomeval_exact`` and
``ecomeval_exact_<category>`` take the text items whose reference is an option
letter or a short exact answer and score them by exact match after
normalisation, deterministically, in both frameworks, as tasks of the same
names. ``ecomeval_exact`` is one task over the five text categories in both
(not an lm-eval group of the category tasks): a category with no exact-answer
item in the data is left out of its ``score`` with a message, where a group
would have a member with no documents, which lm-eval cannot run.
"""

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
    def in_lm_eval(self) -> bool:
        return True

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


def _variants() -> dict[str, Variant]:
    table = {
        "ecomeval": Variant("ecomeval", (), False, "EcomEval, every category, graded by the LLM judge (0-3 rubric)")
    }
    for c in CATEGORIES:
        table[f"ecomeval_{c}"] = Variant(
            f"ecomeval_{c}", (c,), False, f"EcomEval {CATEGORY_NAMES[c]}, graded by the LLM judge"
        )
    table["ecomeval_exact"] = Variant(
        "ecomeval_exact",
        TEXT_CATEGORIES,
        True,
        "EcomEval text items with an exact-answer reference, exact match (no judge)",
    )
    for c in TEXT_CATEGORIES:
        name = f"ecomeval_exact_{c}"
        table[name] = Variant(
            name, (c,), True, f"EcomEval {CATEGORY_NAMES[c]} exact-answer items, exact match (no judge)"
        )
    return table


VARIANTS = _variants()

#: lm-eval groups: none (``ecomeval_exact`` is a task; see the module docstring).
LM_EVAL_GROUPS: dict[str, list[str]] = {}
