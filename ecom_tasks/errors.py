"""The errors a user sees as one short message (``user_errors.py``) and the ``file:row:field`` problem, below every
other module (``files.py`` and ``data.py`` raise them)."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The C0 and C1 control characters but tab, with or without newline (key: whether newlines stay): a terminal obeys them (ESC starts a sequence that recolours,
#: retitles or rewrites the screen; CR overwrites a line), and a file name or a value in the data may hold them.
_CONTROL = {True: re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]"), False: re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")}


def printable(text: str, *, newlines: bool = True) -> str:
    """``text`` for a terminal: each control character written as Python writes it in a string (``\\x1b``), a
    newline too unless ``newlines`` (a name holding one would forge a line of output of its own)."""
    return _CONTROL[newlines].sub(lambda match: repr(match.group())[1:-1], text)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one field of one row."""

    source: str
    row: int  # 1-based record number within the source (0: the source as a whole)
    field: str
    message: str

    def __str__(self) -> str:
        return printable(f"{self.source}:{self.row}:{self.field}: {self.message}", newlines=False)


class DataWarning(UserWarning):
    """A warning about the user's data: shown with the data's names and values through :func:`printable`, on one
    line (Python's own display of a warning and ``ecom-tasks``' alike)."""

    def __str__(self) -> str:
        return printable(super().__str__(), newlines=False)


class EcomTasksError(Exception):
    """A mistake in the user's data or settings: shown to the user as a short message, not a traceback."""


class ConfigurationError(EcomTasksError, ValueError):
    """A task setting or model role the run needs is missing or wrong (e.g. no ``grader`` role)."""


class DataValidationError(EcomTasksError, ValueError):
    """Raised when input data does not fit a benchmark's schema; lists every problem."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__(self.summary(50))

    def summary(self, limit: int) -> str:
        """The problem itself when there is one, else a count and the first ``limit`` problems."""
        if len(self.problems) == 1:
            return str(self.problems[0])
        shown = "\n".join(f"  {p}" for p in self.problems[:limit])
        more = len(self.problems) - limit
        suffix = f"\n  ... and {more} more (ecom-tasks validate <benchmark> <data> lists them all)" if more > 0 else ""
        return f"{len(self.problems)} problems in the data:\n{shown}{suffix}"
