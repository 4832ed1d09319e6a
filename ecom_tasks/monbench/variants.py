"""MonBench's named variants, declared once: the lm-eval YAML is generated from here (README "Run it")."""

from __future__ import annotations

from dataclasses import dataclass

from ecom_tasks.monbench.protocol import FORMATS
from ecom_tasks.monbench.schema import TASKS

#: Output limit of every variant (Inspect ``max_tokens``, lm-eval ``max_gen_toks``); why None: README "Settings".
MAX_TOKENS = None

#: Task version, read by the Inspect tasks and written into the lm-eval YAML: bumped when scores stop
#: being comparable with earlier results. 2.1: replies are read as a careful grader reads them
#: (2.0's strict reading is reported beside it in every run, as ``acc_strict``). 2.2: the same
#: numbers; a score holds only the runs' numbers, the question's groups come from its sample or document.
#: 2.3: the careful reading reads more replies as a careful human does (boxed values, corrections between
#: and inside tags, a rejected tag, answer words inside a tag, an option's text with its reason); strict unchanged.
#: 2.7: a copy of the prompt with curled quotes or dashes is an echo (its tags are no answer); an answer corrected
#: to one word of no option is withdrawn ("Substitute, actually Compliment"). 2.8: the careful reading reads an
#: answer where the format was not followed (no tag, the other tag, a letter for the text, a label in Chinese).
#: 2.9: a concession reads as the answer turned to ("It could be A at first sight, but on balance: B" is B); a tag
#: never closed reads as the reply without it ("<Label>B" is B); an answer stated in Chinese ("我选择B", "C而不是B").
TASK_VERSION = "2.9"


@dataclass(frozen=True)
class Variant:
    name: str
    tasks: tuple[str, ...]
    design: str
    formats: tuple[str, ...]
    description: str

    @property
    def inspect_task(self) -> tuple[str, dict[str, str]]:
        """The same setting in Inspect: its task and ``-T`` arguments (``monbench_perm -T task=query_ad_relevance``)."""
        if len(self.tasks) > 1:
            return self.name, {}
        return self.name.removesuffix(f"_{self.tasks[0]}"), {"task": self.tasks[0]}


_DESIGNS = {
    "perm": ("full", FORMATS, "full protocol: 24 option orderings x 3 return formats = 72 runs per question (Table 2)"),
    "cyclic": ("cyclic", FORMATS, "4 cyclic option rotations x 3 return formats = 12 runs per question"),
    "canonical": ("canonical", ("label",), "options in data order, Label format: one run"),
}
TASK_TITLES = {
    "query_ad_relevance": "Query-Ad Relevance",
    "product_co_purchase": "Product Co-Purchase",
    "query_product_relation": "Query-Product Relation",
    "query_query_intent": "Query-Query Intent",
}


#: Per design: the all-task variant, then one per task.
VARIANTS = {
    variant.name: variant
    for short, (design, formats, what) in _DESIGNS.items()
    for variant in (
        Variant(f"monbench_{short}", TASKS, design, formats, f"MonBench, all four tasks, {what}"),
        *(
            Variant(f"monbench_{short}_{task}", (task,), design, formats, f"MonBench {TASK_TITLES[task]}, {what}")
            for task in TASKS
        ),
    )
}

#: lm-eval has no multi-task tasks: the all-task variants are groups of their per-task variants.
LM_EVAL_GROUPS = {
    name: [f"{name}_{task}" for task in TASKS] for name, variant in VARIANTS.items() if len(variant.tasks) > 1
}
