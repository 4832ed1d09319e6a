"""Digits ``int()`` refuses ('²' is ``str.isdigit()`` but no number) in a build's input or a voter's reply:
read as no number (an abstention, a file:row:field problem), never a ValueError."""

from __future__ import annotations

import json

import pytest

from ecom_tasks.data import DataValidationError
from ecom_tasks.monbench.construction.seeds import load_pairs
from ecom_tasks.rair.construction.parsing import parse_intent


@pytest.mark.parametrize(
    ("reply", "vote", "status"),
    [
        ("Answer: ²", None, "no_answer"),
        ("Answer: (5)", "NC", "ok"),
        ("7", "Other", "ok"),
        ("Answer: 8", None, "no_answer"),
    ],
)
def test_an_intent_reply_of_digits_is_fig_11s_number_or_no_answer(reply, vote, status):
    parsed = parse_intent(reply)
    assert (parsed.vote, parsed.status) == (vote, status)


def test_a_pair_category_of_digits_int_refuses_is_a_problem_naming_it(tmp_path):
    path = tmp_path / "pairs.jsonl"
    rows = [
        {"id": "a", "query": "q", "ad": "ad a", "human_label": "relevant", "category": "²"},
        {"id": "b", "query": "q", "ad": "ad b", "human_label": "irrelevant", "category": 3.0},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    with pytest.raises(DataValidationError) as info:
        load_pairs(path)
    assert [str(p) for p in info.value.problems] == [f"{path}:1:category: not one of the 22 query categories: '²'"]
    rows[0]["category"] = "Real Estate"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert [p.category for p in load_pairs(path)] == ["Real Estate", "Real Estate"]  # 3 is Table 7's third
