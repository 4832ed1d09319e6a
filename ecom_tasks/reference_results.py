"""The papers' published rows, from one long-form file per benchmark (``<benchmark>/reference_results.csv``: values
as the paper prints them, in the row's ``unit``: ``%``, ``1`` a fraction, ``0-100``; ``#`` lines name the source)."""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from pathlib import Path

from ecom_tasks import files

PACKAGE_DIR = Path(__file__).resolve().parent
FILE_NAME = "reference_results.csv"
#: Divisor that turns a printed value into the unit our logs use, by (printed unit, log unit).
_CONVERT = {("%", "fraction"): 100.0, ("1", "fraction"): 1.0, ("0-100", "0-100"): 1.0, ("%", "0-100"): 1.0}


@dataclass(frozen=True)
class ReferenceRow:
    table: str
    group: str
    model: str
    setting: str
    values: dict[str, float]  # column -> value in the log's unit


def reference_path(benchmark: str) -> Path:
    return PACKAGE_DIR / benchmark / FILE_NAME


@functools.cache
def _read(benchmark: str) -> tuple[tuple[int, dict[str, str]], ...]:
    """The file's records, each with its line number in the file (the ``#`` lines counted)."""
    path = reference_path(benchmark)
    if not path.exists():
        return ()
    kept = [
        (n, line)
        for n, line in enumerate(files.read_text(path).splitlines(keepends=True), 1)
        if not line.startswith("#")
    ]
    reader = csv.DictReader(line for _, line in kept)
    return tuple((kept[reader.line_num - 1][0], record) for record in reader)


def reference_rows(benchmark: str, table: str, log_unit: str) -> list[ReferenceRow]:
    """The paper's rows of ``table`` in file order, values converted to ``log_unit``."""
    rows: dict[tuple[str, str, str], ReferenceRow] = {}
    for number, record in _read(benchmark):
        if record["table"] != table:
            continue
        unit = record["unit"]
        if (unit, log_unit) not in _CONVERT:
            raise ValueError(f"{reference_path(benchmark)}:{number}:unit: cannot convert {unit!r} to {log_unit!r}")
        try:
            value = float(record["value"]) / _CONVERT[(unit, log_unit)]
        except ValueError:
            raise ValueError(f"{reference_path(benchmark)}:{number}:value: not a number: {record['value']!r}") from None
        key = (record["group"], record["model"], record["setting"])
        row = rows.setdefault(key, ReferenceRow(table, *key, values={}))
        # Rounded: 82.52 / 100 is 0.8252000000000001 in binary; the paper has four digits at most.
        row.values[record["column"]] = round(value, 10)
    return list(rows.values())
