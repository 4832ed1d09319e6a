"""Write EcomEval's lm-eval YAML from ``ecom_tasks/ecomeval/variants.py``: ``python _generate_configs.py [--check]``."""

from __future__ import annotations

from pathlib import Path

from ecom_tasks.ecomeval.variants import MAX_TOKENS, VARIANTS
from ecom_tasks.lm_eval_tasks._configs import Function, main, render_family, task_template

FOLDER = Path(__file__).parent
#: Task version, bumped when scores stop being comparable with earlier results. 1.1: exact answers read as a
#: careful human reads them (answers in the data's languages, "Therefore, B.", "B, because ...", "Answer: b",
#: "The answer is Nike.", "Nike, because ...", "20.0" for 20).
VERSION = 1.3

# No system prompt: the question goes to the model as it is (it carries its own instructions).
TEMPLATE_CONFIG = task_template("EcomEvalExactTask", "", MAX_TOKENS, VERSION)
TEMPLATE_CONFIG["doc_to_text"] = "question"


def render() -> dict[str, str]:
    tasks: dict[str, dict] = {}
    for variant in VARIANTS.values():
        # Tasks, not groups (see variants.py): ecomeval_exact over the text categories, ecomeval over all.
        tasks[variant.name] = {"dataset_kwargs": {"category": variant.category}}
        if variant.judged:
            # Responses only, graded afterwards by `ecom-tasks judge`; images as lm-eval's multimodal
            # models take them (doc_to_image: PIL images; dropped when the selected items have none).
            tasks[variant.name] = {
                "dataset_kwargs": {"category": variant.category or "", "judged": True},
                "class": Function("utils.EcomEvalResponseTask"),
                "doc_to_image": Function("utils.doc_images"),
            }
    return render_family("ecomeval", TEMPLATE_CONFIG, tasks)


if __name__ == "__main__":
    raise SystemExit(main(FOLDER, render))
