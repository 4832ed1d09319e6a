"""The one place ecom-tasks relies on Inspect's internals (``inspect_ai._...``).

Everything else uses Inspect's public API (``inspect_ai``, ``inspect_ai.model``,
``inspect_ai.util``, ...). What is here has no public equivalent in the supported
range (inspect-ai 0.3.261 to 0.3.285, checked in both); the comment says why we
need it. When Inspect offers one, use it instead and delete it here.
``tests/test_inspect_lint.py`` checks that no module imports a private Inspect module.
"""

from __future__ import annotations

import sys
from types import FrameType

#: Inspect's task loader: ``inspect eval``, ``eval("name")``, eval sets and retries create a task
#: from its name or file here (the ``@task`` wrapper itself lives in ``inspect_ai._eval.registry``,
#: on the stack of every call, so only the loader tells). Checked in inspect-ai 0.3.261 and 0.3.285.
_INSPECT_TASK_LOADER = "inspect_ai._eval.loader"


def inspect_is_building_tasks() -> bool:
    """Whether the task function running now was called by Inspect's task loader.

    EcomEval refuses a judge-graded task without a usable grader when Inspect builds it (the
    command fails at once, before any model call) and leaves that check to the setup solver when
    plain Python builds the task object (its roles come later, with ``eval(task, model_roles=...)``).
    Neither public ``model_roles()`` (empty both outside an eval and in a run without roles) nor the
    private ``active_model()`` (still set after an in-process ``eval()`` ends, so a notebook building
    the next task would be refused) tells the two apart; the caller's frames do.
    """
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__") == _INSPECT_TASK_LOADER:
            return True
        frame = frame.f_back
    return False


__all__ = ["inspect_is_building_tasks"]
