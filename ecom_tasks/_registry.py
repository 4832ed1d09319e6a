"""Inspect entry point (``[project.entry-points.inspect_ai] ecom_tasks``).

Importing this module registers every task, scorer, metric, solver and model
provider under ``ecom_tasks/...``. Keep it flat: Inspect imports it whenever it
resolves an ``ecom_tasks/`` name.
"""

from ecom_tasks.offline import apply_safe_defaults

apply_safe_defaults()

from ecom_tasks.inspect_evals import monbench as _monbench  # noqa: E402
from ecom_tasks.inspect_evals import rair as _rair  # noqa: E402
from ecom_tasks.inspect_evals.models import ecom  # noqa: E402
from ecom_tasks.inspect_evals.monbench import (  # noqa: E402
    monbench,
    monbench_scorer,
    monbench_summary,
)
from ecom_tasks.inspect_evals.rair import rair_breakdown, rair_scorer, rair_summary  # noqa: E402
from ecom_tasks.scorers.inspect_scorers import label_metrics, label_scorer, outcome_mean  # noqa: E402

# The presets declared in each benchmark's variants.py (monbench_perm, rair_hard, ...).
globals().update(_monbench.PRESETS)
globals().update(_rair.PRESETS)

__all__ = [
    "ecom",
    "label_metrics",
    "label_scorer",
    "monbench",
    "monbench_scorer",
    "monbench_summary",
    "outcome_mean",
    "rair_breakdown",
    "rair_scorer",
    "rair_summary",
    *_monbench.PRESETS,
    *_rair.PRESETS,
]
