"""The errors a user sees as one short message (``user_errors.py``) and the ``file:row:field`` problem, below every
other module (``files.py`` and ``data.py`` raise them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one field of one row."""

    source: str
    row: int  # 1-based record number within the source (0: the source as a whole)
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}:{self.row}:{self.field}: {self.message}"


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
