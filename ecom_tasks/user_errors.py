"""How an ``EcomTasksError`` reaches the user: a short message, not a traceback (our commands: :func:`short_errors`;
``inspect eval`` and plain ``lm_eval``: :func:`install_excepthook`)."""

from __future__ import annotations

import contextlib
import errno
import sys
from collections.abc import Iterator
from types import TracebackType

from ecom_tasks import files
from ecom_tasks.data import DataValidationError, EcomTasksError
from ecom_tasks.errors import printable

#: Problems shown by the short message; ``ecom-tasks validate`` lists them all.
SHOWN_PROBLEMS = 10
PREFIX = "ecom-tasks: "


def find_user_error(exc: BaseException | None) -> EcomTasksError | None:
    """The ``EcomTasksError`` that ``exc`` is, holds (exception groups) or was raised from (``from``)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, EcomTasksError):
            return exc
        if isinstance(exc, BaseExceptionGroup):
            for inner in exc.exceptions:
                found = find_user_error(inner)
                if found is not None:
                    return found
            return None
        exc = exc.__cause__  # explicit chaining only: an error *during* handling ours is a different bug
    return None


def user_message(error: EcomTasksError) -> str:
    """The message to print: every line starts with :data:`PREFIX`'s program name or is a listed problem; control
    characters escaped (:func:`printable`), a refused file's newline too (its message is one line)."""
    text = error.summary(SHOWN_PROBLEMS) if isinstance(error, DataValidationError) else str(error)
    return f"{PREFIX}{printable(text, newlines=not isinstance(error, files.FileRefused))}"


@contextlib.contextmanager
def short_errors() -> Iterator[None]:
    """For our own commands: an ``EcomTasksError`` raised inside prints its message and exits 1."""
    try:
        yield
    except BaseException as exc:
        error = find_user_error(exc)
        if error is None and isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
            # A path argument longer than the system allows (a pasted blob): the user's, wherever it is first used.
            error = files.too_long_refusal(exc.filename or "a path")
        if error is None:
            raise
        print(user_message(error), file=sys.stderr)
        sys.exit(1)


def install_excepthook() -> None:
    """Print an uncaught ``EcomTasksError`` as its message (idempotent; other exceptions unchanged)."""
    previous = sys.excepthook
    if getattr(previous, "ecom_tasks_short_errors", False):
        return

    def excepthook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        error = find_user_error(exc)
        if error is None:
            previous(kind, exc, tb)
        else:
            print(user_message(error), file=sys.stderr)

    excepthook.ecom_tasks_short_errors = True  # type: ignore[attr-defined]
    sys.excepthook = excepthook
