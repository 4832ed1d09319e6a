"""Write RAIR's lm-eval YAML from ``ecom_tasks/rair/variants.py``: ``python _generate_configs.py [--check]``."""

from __future__ import annotations

from pathlib import Path

from ecom_tasks.lm_eval_tasks._configs import main, render_family, task_template
from ecom_tasks.rair.variants import LM_EVAL_GROUPS, MAX_TOKENS, TASK_VERSION, VARIANTS

FOLDER = Path(__file__).parent
#: The task version both frameworks record (``ecom_tasks/rair/variants.py``).
VERSION = float(TASK_VERSION)

# The static system prompt (Fig. 9 instructions, plus the rules in the *_builtin_rules tasks) is
# the same for every document; it ends with a newline, so without a chat template it is still
# separated from the input.
TEMPLATE_CONFIG = task_template("RairTask", "system_prompt", MAX_TOKENS, VERSION)
#: No truncated_rate: lm-eval passes no stop reason, so that share is unknown (the report says so).
#: The strict reading's figures (``*_strict``) stand beside the careful ones.
GROUP_METRICS = tuple(
    "acc2 acc4 macro_f1 acc2_strict acc4_strict macro_f1_strict invalid_rate invalid_rate_strict context_exceeded_rate".split()
)


def render() -> dict[str, str]:
    tasks = {
        variant.name: {"dataset_kwargs": {"subset": variant.subset, "variant_rules": variant.rules}}
        for variant in VARIANTS.values()
        if variant.in_lm_eval
    }
    # The paper reports each subset on its own; the group row is their unweighted mean.
    groups = {group: (members, list(GROUP_METRICS)) for group, members in LM_EVAL_GROUPS.items()}
    return render_family("rair", TEMPLATE_CONFIG, tasks, groups)


if __name__ == "__main__":
    raise SystemExit(main(FOLDER, render))
