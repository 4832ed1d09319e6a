"""Loading data from a Hugging Face id (offline here: the hub is stubbed or refused)."""

from __future__ import annotations

import datasets
import pytest

from ecom_tasks.data import DataValidationError, load_rows
from ecom_tasks.monbench.schema import load_records

ROW = {
    "id": "h1",
    "task": "query_query_intent",
    "question": "Query 1: tent\nQuery 2: 2 person tent",
    "choices": ["Irrelevant", "Narrowing", "Complement", "Substitute"],
    "answer": 1,
}


def test_hub_splits_become_the_split_column(monkeypatch):
    hub = datasets.DatasetDict(
        {
            "test": datasets.Dataset.from_list([ROW]),
            "fewshot": datasets.Dataset.from_list([{**ROW, "id": "h2"}]),
        }
    )
    calls = []
    monkeypatch.setattr(datasets, "load_dataset", lambda name, **kw: calls.append(name) or hub)
    rows = load_rows("org/monbench-hub-stub")
    assert calls == ["org/monbench-hub-stub"]
    assert [(r.source, r.index, r.values["split"]) for r in rows] == [
        ("org/monbench-hub-stub[test]", 1, "test"),
        ("org/monbench-hub-stub[fewshot]", 1, "fewshot"),
    ]
    assert [r.id for r in load_records("org/monbench-hub-stub", split="fewshot")] == ["h2"]


def test_unreachable_hub_id_is_a_clear_error_without_network():
    # HF_DATASETS_OFFLINE=1 (tests/conftest.py): datasets refuses at once; the socket guard proves no connection.
    with pytest.raises(DataValidationError) as info:
        load_rows("org/no-such-dataset-offline")
    (problem,) = info.value.problems
    assert str(problem).startswith(
        "org/no-such-dataset-offline:0:-: not a local path, and loading it as a Hugging Face dataset failed"
    )


def test_path_like_names_are_not_sent_to_the_hub(tmp_path):
    with pytest.raises(DataValidationError, match="no such file or folder"):
        load_rows("./missing/monbench.jsonl")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataValidationError, match="folder holds no .jsonl"):
        load_rows(empty)
