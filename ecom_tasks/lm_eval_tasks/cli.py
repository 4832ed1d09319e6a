"""``ecom-lm-eval``: the ``lm_eval`` command with ecom-tasks' task folders and models added.

Accepts every ``lm_eval`` argument; adds our and plugins' folders to ``--include_path`` and registers
``ecom-baseline``. ``--model local-chat-completions`` runs ``ecom-chat-completions`` (``chat_completions.py``:
a prompt over the context is a counted failure, the output limit is the server's). An unknown task name
is one line naming the task meant (``--tasks rair_hrd``: did you mean rair_hard?), not a traceback.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator, Sequence

from ecom_tasks.data import ConfigurationError
from ecom_tasks.lm_eval_tasks import register_models, task_dirs
from ecom_tasks.lm_eval_tasks._lm_eval_private import parsed_command_line
from ecom_tasks.names import nearest, unknown_name
from ecom_tasks.offline import apply_safe_defaults
from ecom_tasks.user_errors import short_errors


def main(argv: list[str] | None = None) -> None:
    apply_safe_defaults()
    register_models()
    if argv is not None:
        sys.argv = [sys.argv[0], *argv]
    parser, args = parsed_command_line()
    if getattr(args, "model", None) == "local-chat-completions":
        from ecom_tasks.lm_eval_tasks.chat_completions import NAME

        # The same model with the same arguments, made fit for real servers (chat_completions.py).
        args.model = NAME
    if hasattr(args, "include_path"):
        # TaskManager accepts a list; the CLI only ever passes one string.
        user_paths = [args.include_path] if args.include_path else []
        args.include_path = [*task_dirs(), *user_paths]
    with short_errors():  # bad data or a missing setting: one message, exit 1
        try:
            with _index_only_the_task_folders(getattr(args, "tasks", None), getattr(args, "include_path", None)):
                parser.execute(args)
        except ValueError as exc:
            unknown = unknown_tasks(str(exc), getattr(args, "tasks", None), getattr(args, "include_path", None))
            if not unknown:
                raise
            raise ConfigurationError(
                f"{'; '.join(unknown)} (ecom-tasks list shows ours, lm-eval ls tasks all)"
            ) from exc


def requested_names(tasks: str | Sequence[str] | None) -> list[str]:
    """``--tasks a,b`` (or lm-eval's list of such strings) as names."""
    parts = [tasks] if isinstance(tasks, str) else tasks or []
    return [name.strip() for part in parts for name in part.split(",") if name.strip()]


@contextlib.contextmanager
def _index_only_the_task_folders(
    tasks: str | Sequence[str] | None, include_path: Sequence[str] | None
) -> Iterator[None]:
    """lm-eval reads all of its own ~14,000 task YAML files (about 12 s) before running any task. When
    every task asked for is found in the ``--include_path`` folders (ours, plugins', the user's), the run
    indexes those folders only; a name found nowhere else, a file path or a pattern keeps the whole index."""
    import lm_eval.tasks

    names = requested_names(tasks)
    full_index = lm_eval.tasks.TaskManager
    if (
        not names
        or not include_path
        or set(names) - set(full_index(include_path=list(include_path), include_defaults=False).all_tasks)
    ):
        yield
        return

    class FoldersOnly(full_index):  # type: ignore[misc, valid-type]
        def __init__(self, *args: object, **kwargs: object) -> None:
            kwargs.setdefault("include_defaults", False)
            super().__init__(*args, **kwargs)

    # lm-eval's run looks the class up here when it builds its index (lm_eval.config.evaluate_config).
    lm_eval.tasks.TaskManager = FoldersOnly  # type: ignore[misc]
    try:
        yield
    finally:
        lm_eval.tasks.TaskManager = full_index  # type: ignore[misc]


def unknown_tasks(error: str, tasks: str | Sequence[str] | None, include_path: Sequence[str] | None) -> list[str]:
    """For lm-eval's ``Tasks not found: a, b``: a message per requested name it lists, naming the
    nearest known name (ours first, from our folders' small index: a typo of ``rair_hard`` is not
    answered with one of lm-eval's own, and lm-eval's whole index is read only when none is close)."""
    head, found, listed = error.partition("not found")
    if not found:
        return []
    names = requested_names(tasks)
    listed_names = set(re.split(r"[\s,:]+", listed))
    missing = [name for name in dict.fromkeys(names) if name and name in listed_names]
    if not missing:
        return []
    from lm_eval.tasks import TaskManager

    paths = list(include_path or task_dirs())
    ours = TaskManager(include_path=paths, include_defaults=False).all_tasks
    everything: list[str] | None = None
    messages = []
    for name in missing:
        if not nearest(name, ours) and everything is None:
            everything = TaskManager(include_path=paths).all_tasks
        known = ours if nearest(name, ours) else everything or []
        messages.append(unknown_name("lm-eval task", name, known))
    return messages


if __name__ == "__main__":
    main()
