"""Inspect entry point (``[project.entry-points.inspect_ai] ecom_tasks``).

Importing this module registers every task, scorer, metric, solver and model
provider under ``ecom_tasks/...``. Keep it flat: Inspect imports it whenever it
resolves an ``ecom_tasks/`` name.
"""

from ecom_tasks.offline import apply_safe_defaults

apply_safe_defaults()

from ecom_tasks.inspect_evals.models import ecom  # noqa: E402
from ecom_tasks.inspect_evals.monbench import (  # noqa: E402
    monbench,
    monbench_canonical,
    monbench_cyclic,
    monbench_perm,
    monbench_product_co_purchase,
    monbench_query_ad_relevance,
    monbench_query_product_relation,
    monbench_query_query_intent,
)
from ecom_tasks.inspect_evals.rair import rair_general, rair_hard, rair_visual  # noqa: E402
from ecom_tasks.scorers.inspect_rair import rair_breakdown, rair_scorer, rair_summary  # noqa: E402
from ecom_tasks.scorers.inspect_scorers import monbench_scorer, monbench_summary, outcome_mean  # noqa: E402

__all__ = [
    "ecom",
    "monbench",
    "monbench_canonical",
    "monbench_cyclic",
    "monbench_perm",
    "monbench_product_co_purchase",
    "monbench_query_ad_relevance",
    "monbench_query_product_relation",
    "monbench_query_query_intent",
    "monbench_scorer",
    "monbench_summary",
    "outcome_mean",
    "rair_breakdown",
    "rair_general",
    "rair_hard",
    "rair_scorer",
    "rair_summary",
    "rair_visual",
]
