"""A fake third-party ecom-tasks plugin, used by the test suite.

Putting ``tests/plugin_example`` on ``PYTHONPATH`` makes ``importlib.metadata``
find ``ecom_example_plugin-0.1.0.dist-info`` and its entry point
``[ecom_tasks] example = ecom_example_plugin``, exactly as if the plugin had
been pip-installed. It contributes one metric and one lm-eval task folder.
"""

from __future__ import annotations

import re
from pathlib import Path

from ecom_tasks.hookspecs import hookimpl

TASKS_DIR = Path(__file__).parent / "lm_eval_tasks"
_LABEL = re.compile(r"<Label>\s*([A-D])\s*</Label>")


def label_letter(reply: str) -> str | None:
    """The letter of the first ``<Label>X</Label>`` tag in a reply (None if absent)."""
    match = _LABEL.search(reply or "")
    return match.group(1) if match else None


def example_exact_match(gold: str, reply: str) -> float:
    """1.0 when the reply's ``<Label>`` letter equals the gold letter, else 0.0."""
    return float(label_letter(reply) == gold)


@hookimpl
def ecom_tasks_metrics():
    return {"example_exact_match": example_exact_match}


@hookimpl
def ecom_tasks_lm_eval_task_dirs():
    return [str(TASKS_DIR)]
