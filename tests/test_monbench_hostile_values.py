"""MonBench values an untrusted file or log may hold: reported or shown as text, never a crash."""

from __future__ import annotations

import csv

import pytest

from ecom_tasks.data import DataValidationError
from ecom_tasks.monbench.paper_tables import design_text
from ecom_tasks.monbench.schema import load_records

ROW = {"id": "q1", "task": "product_co_purchase", "split": "test", "question": "Q?", "A": "a", "B": "b", "C": "c"}


def test_numbers_int_refuses_are_reported_as_the_cell(tmp_path):
    path = tmp_path / "m.csv"
    huge = "1" * 5000  # more digits than int() converts
    rows = [
        {**ROW, "D": "d", "answer": huge},
        {**ROW, "id": "q2", "D": "d", "answer": "²"},  # a digit int() does not read
        {**ROW, "id": "q3", "D": "d", "answer": "0", "category": huge},
        {**ROW, "id": "q4", "D": "d", "answer": "٣", "category": "٢"},  # Arabic-Indic digits stay numbers
    ]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, [*ROW, "D", "answer", "category"])
        writer.writeheader()
        writer.writerows(rows)
    with pytest.raises(DataValidationError) as info:
        load_records(path, split=None)
    fields = [(p.row, p.field) for p in info.value.problems]
    assert fields == [(1, "answer"), (2, "answer"), (3, "category")]
    assert f"got '{huge}'" in info.value.problems[0].message
    assert "got '²'" in info.value.problems[1].message


@pytest.mark.parametrize("attack", ["[" * 100_000 + "]" * 100_000, "[" + "9" * 5000 + "]"])
def test_a_logged_formats_list_json_refuses_stays_text(attack):
    text = design_text("full", attack)
    assert text.startswith("design=full, formats=")
    assert design_text("full", '["label", "content"]') == "perm (48 runs: label, content)"
