"""lm-evaluation-harness integration: YAML task families, the baseline model, and helpers.

lm-eval 0.4 has no plugin discovery for task folders: add ``task_dirs()`` via ``--include_path`` /
``TaskManager(include_path=...)``, or use ``ecom-lm-eval``, which does both.
"""

from __future__ import annotations

from pathlib import Path

TASKS_DIR = Path(__file__).parent


def task_dirs() -> list[str]:
    """Our task folder plus those contributed by plugins (``ecom_tasks_lm_eval_task_dirs``)."""
    from ecom_tasks.plugins import lm_eval_task_dirs

    return lm_eval_task_dirs()


def task_manager(**kwargs):
    """A ``lm_eval.tasks.TaskManager`` that knows every ecom-tasks and plugin task."""
    from lm_eval.tasks import TaskManager

    register_models()
    extra = list(kwargs.pop("include_path", None) or [])
    return TaskManager(include_path=[*task_dirs(), *extra], **kwargs)


def register_models() -> None:
    """Register ``ecom-baseline`` and ``ecom-chat-completions`` with lm-eval's model registry (idempotent)."""
    # lm-eval loads its own models only while its registry is empty: load them
    # first, or registering ours would hide local-chat-completions, hf, dummy, ...
    import lm_eval.models  # noqa: F401

    import ecom_tasks.lm_eval_tasks.chat_completions  # noqa: F401
    import ecom_tasks.lm_eval_tasks.models  # noqa: F401
