"""MonBench data validation: every problem named as file:row:field."""

from __future__ import annotations

import json

import pytest

from ecom_tasks.data import DataValidationError
from ecom_tasks.monbench.schema import CATEGORIES, TASKS, load_records

GOOD = {
    "id": "x1",
    "task": "product_co_purchase",
    "split": "test",
    "question": "User Purchase: coffee beans",
    "choices": ["coffee filters", "car tires", "dog leash", "desk lamp"],
    "answer": 0,
}


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def problems_of(path):
    with pytest.raises(DataValidationError) as info:
        load_records(path, split=None)
    return [str(p) for p in info.value.problems]


def test_bundled_fixtures_are_valid_and_cover_every_task_and_split():
    records = load_records(split=None)
    for task in TASKS:
        for split, minimum in (("fewshot", 5), ("validation", 1), ("test", 6)):
            assert sum(r.task == task and r.split == split for r in records) >= minimum, (task, split)
    assert {r.category for r in records} == set(CATEGORIES)
    # The paper's corrected labels (Table 9): "magic keyboard" -> Narrowing.
    keyboard = next(r for r in records if r.question.startswith("Query 1: magic keyboard"))
    assert keyboard.choices[keyboard.answer] == "Narrowing"


def test_malformed_rows_are_each_reported(tmp_path):
    rows = [
        GOOD,
        {**GOOD, "id": "three", "choices": ["a", "b", "c"]},
        {**GOOD, "id": "five", "choices": ["a", "b", "c", "d", "e"]},
        {**GOOD, "id": "range", "answer": 4},
        {**GOOD, "id": "letter", "answer": "E"},
        {**GOOD, "id": "task", "task": "ad_click_prediction"},
        {**GOOD, "id": "x1"},
        {**GOOD, "id": "empty", "question": "   "},
        {**GOOD, "id": "emptychoice", "choices": ["a", "", "c", "d"]},
        {**GOOD, "id": "dupchoice", "choices": ["a", "A", "c", "d"]},
        {**GOOD, "id": "split", "split": "train"},
        {**GOOD, "id": "cat", "category": "Pets"},
        {
            **GOOD,
            "id": "rel",
            "task": "query_query_intent",
            "choices": ["Narrowing", "Broadening", "Irrelevant", "Substitute"],
        },
        {**GOOD, "id": ""},
    ]
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    found = problems_of(path)
    prefix = str(path)
    expected_prefixes = [
        f"{prefix}:2:choices: needs exactly 4 choices, got 3",
        f"{prefix}:3:choices: needs exactly 4 choices, got 5",
        f"{prefix}:4:answer: must be 0-3 or A-D, got 4",
        f"{prefix}:5:answer: must be 0-3 or A-D, got 'E'",
        f"{prefix}:6:task: unknown task 'ad_click_prediction'",
        f"{prefix}:8:question: empty string",
        f"{prefix}:9:choices[1]: empty or not a string",
        f"{prefix}:10:choices: choices must be distinct",
        f"{prefix}:11:split: unknown split 'train'",
        f"{prefix}:12:category: not one of the 22 query categories: 'Pets'",
        f"{prefix}:13:choices: query_query_intent choices must be the labels",
        f"{prefix}:14:id: missing or empty",
        f"{prefix}:7:id: duplicate id 'x1' (first at {prefix}:1)",
    ]
    for expected in expected_prefixes:
        assert any(p.startswith(expected) for p in found), (expected, found)
    assert len(found) == len(expected_prefixes)


def test_broken_json_line_is_located(tmp_path):
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(GOOD) + "\n{not json\n", encoding="utf-8")
    assert problems_of(path)[0].startswith(f"{path}:2:-: not valid JSON")


def test_missing_file_is_a_clear_error(tmp_path):
    missing = tmp_path / "nope.jsonl"
    assert problems_of(missing) == [
        f"{missing}:0:-: no such file or folder (a Hugging Face dataset id has the form owner/name)"
    ]


def test_csv_with_letter_columns_and_letter_answers(tmp_path):
    path = tmp_path / "mb.csv"
    path.write_text(
        "id,task,split,question,A,B,C,D,answer,category\n"
        "c1,product_co_purchase,test,User Purchase: tent,sleeping bag,office chair,printer ink,bath mat,A,14\n"
        'c2,query_query_intent,test,"Query 1: tent\nQuery 2: 2 person tent",Irrelevant,Narrowing,Complement,Substitute,B,\n',
        encoding="utf-8",
    )
    records = load_records(path, split="test")
    assert [r.answer for r in records] == [0, 1]
    assert records[0].category == "Hobbies & Leisure" and records[1].category is None
    assert records[1].question == "Query 1: tent\nQuery 2: 2 person tent"


def test_filters_by_split_and_task_and_rejects_unknown_ones(tmp_path):
    path = write_jsonl(tmp_path / "ok.jsonl", [GOOD, {**GOOD, "id": "f", "split": "fewshot"}])
    assert [r.id for r in load_records(path, split="fewshot")] == ["f"]
    assert load_records(path, split="test", tasks=["query_ad_relevance"]) == []
    with pytest.raises(ValueError, match="unknown split"):
        load_records(path, split="train")
    with pytest.raises(ValueError, match="unknown MonBench task"):
        load_records(path, tasks=["nope"])


def test_records_are_read_again_when_the_file_changes(tmp_path):
    path = write_jsonl(tmp_path / "mb.jsonl", [GOOD])
    assert [r.id for r in load_records(path)] == ["x1"]
    write_jsonl(path, [GOOD, {**GOOD, "id": "x2 with a longer id"}])
    assert [r.id for r in load_records(path)] == ["x1", "x2 with a longer id"]
