"""Write MonBench's lm-eval YAML from ``ecom_tasks/monbench/variants.py``: ``python _generate_configs.py [--check]``."""

from __future__ import annotations

from pathlib import Path

from ecom_tasks.lm_eval_tasks._configs import main, render_family, task_template
from ecom_tasks.monbench.protocol import runs_for
from ecom_tasks.monbench.variants import LM_EVAL_GROUPS, MAX_TOKENS, TASK_VERSION, VARIANTS, Variant

FOLDER = Path(__file__).parent
#: The task version (the Inspect tasks read the same constant); lm-eval prints it as a number.
VERSION = float(TASK_VERSION)

# The system prompt (instruction, output format, few-shot block) varies with the run's return
# format, so it is a document column (a plain column: a Jinja template would be re-rendered for every
# document), the system message byte for byte as Inspect sends it. Without a chat template the task
# puts a blank line between it and the question (MonBenchTask.plain_separator).
TEMPLATE_CONFIG = task_template("MonBenchTask", "system_prompt", MAX_TOKENS, VERSION, fewshot_delimiter="\n\n")
#: Group rows: unweighted means over the four tasks, as Table 2's "Avg." (its CI is in the Inspect task).
#: No truncated_rate: lm-eval passes no stop reason, so that share is unknown (the report says so).
GROUP_METRICS = tuple(
    "acc acc_strict acc_pos_A acc_pos_B acc_pos_C acc_pos_D consistency invalid_rate invalid_rate_strict mismatch_rate "
    "context_exceeded_rate".split()
)


def _group_metrics(variant: Variant) -> list[str]:
    if len(runs_for(variant.design, variant.formats)) > 1:
        return [*GROUP_METRICS[:6], *(f"acc_fmt_{f}" for f in variant.formats), *GROUP_METRICS[6:]]
    return ["acc", "acc_strict", "invalid_rate", "invalid_rate_strict", "context_exceeded_rate"]


def render() -> dict[str, str]:
    tasks = {
        variant.name: {
            "dataset_kwargs": {"tasks": list(variant.tasks), "design": variant.design, "formats": list(variant.formats)}
        }
        for variant in VARIANTS.values()
        if len(variant.tasks) == 1
    }
    groups = {group: (members, _group_metrics(VARIANTS[group])) for group, members in LM_EVAL_GROUPS.items()}
    return render_family("monbench", TEMPLATE_CONFIG, tasks, groups)


if __name__ == "__main__":
    raise SystemExit(main(FOLDER, render))
