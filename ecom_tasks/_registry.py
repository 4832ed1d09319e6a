"""Inspect entry point (``[project.entry-points.inspect_ai] ecom_tasks``): importing it registers every task, scorer,
metric, solver and model provider under ``ecom_tasks/...``, each imported by name. Inspect imports it whenever it
resolves an ``ecom_tasks/`` name: keep it flat."""

# ruff: noqa: F401  (every import below registers Inspect objects; this module uses none of them itself)

from ecom_tasks.offline import apply_safe_defaults
from ecom_tasks.user_errors import install_excepthook

apply_safe_defaults()
# `inspect eval` prints an uncaught error as a traceback: ours (bad data, a missing setting) as one message.
install_excepthook()

from ecom_tasks.inspect_evals.ecomeval import (  # noqa: E402
    ecomeval,
    ecomeval_exact,
    ecomeval_exact_scorer,
    ecomeval_judge,
    ecomeval_metrics,
)
from ecom_tasks.inspect_evals.ecomeval_judge_meta import (  # noqa: E402
    ecomeval_judge_meta,
    ecomeval_judge_meta_scorer,
    gold_response,
    judge_meta_metrics,
)
from ecom_tasks.inspect_evals.models import ecom  # noqa: E402
from ecom_tasks.inspect_evals.monbench import (  # noqa: E402
    monbench,
    monbench_canonical,
    monbench_cyclic,
    monbench_perm,
    monbench_scorer,
    monbench_summary,
)
from ecom_tasks.inspect_evals.rair import (  # noqa: E402
    rair_breakdown,
    rair_general,
    rair_hard,
    rair_scorer,
    rair_summary,
    rair_visual,
    rair_visual_text,
)
from ecom_tasks.inspect_evals.rmir import rmir, rmir_reason, rmir_scorer, rmir_summary  # noqa: E402
from ecom_tasks.monbench.construction.stages import monbench_build_votes, monbench_relevance_votes  # noqa: E402  (ecom-tasks build monbench)
from ecom_tasks.rair.construction.stages import (  # noqa: E402  (RAIR's construction stages: ecom-tasks build rair)
    rair_build_intent,
    rair_build_rules,
    rair_build_visual,
    rair_intent_votes,
    rair_rule_votes,
    rair_visual_votes,
)
from ecom_tasks.rmir.construction.tasks import (  # noqa: E402  (RMIR's construction stages: ecom-tasks build rmir)
    rmir_build_filter,
    rmir_build_generate,
    rmir_build_judge,
    rmir_build_means,
    rmir_build_retrieve,
    rmir_filter_scorer,
    rmir_generation_scorer,
    rmir_panel_scorer,
    rmir_retrieval_scorer,
)
from ecom_tasks.scorers.inspect_scorers import label_metrics, label_scorer, outcome_mean  # noqa: E402
from ecom_tasks.solvers.panel_votes import panel_generate  # noqa: E402
from ecom_tasks.solvers.reason_then_embed import reason_then_embed  # noqa: E402
