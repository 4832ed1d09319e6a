"""RMIR splits: one split is scored (``test`` by default), from a stubbed hub dataset's splits or a
local folder's ``split`` column; an unknown split names the available ones."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import datasets
import pytest
from helpers import run_cli

from ecom_tasks.data import ConfigurationError, DataValidationError, fixtures_dir
from ecom_tasks.rmir import schema
from ecom_tasks.rmir.schema import load_data, load_every_split, query_splits

FIXTURES = fixtures_dir("rmir")
FIXTURE_DATA = load_data()
#: Four of the 13 fixture queries are "training" queries, the rest the test set.
TRAIN = {"func_tire", "temp_tadpole", "caus_laundry", "caus_pizza"}


@pytest.fixture(autouse=True)
def fresh_loader_caches():
    schema._tables.cache_clear()
    schema._load.cache_clear()
    yield
    schema._tables.cache_clear()
    schema._load.cache_clear()


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def split_folder(tmp_path: Path) -> Path:
    """The fixtures with a ``split`` column on the queries (the pool is shared)."""
    folder = tmp_path / "rmir_split"
    shutil.copytree(FIXTURES, folder, ignore=shutil.ignore_patterns("*.py"))
    queries = rows(folder / "queries.jsonl")
    for q in queries:
        q["split"] = "train" if q["id"] in TRAIN else "test"
    write(folder / "queries.jsonl", queries)
    return folder


# --- a local folder with a split column ---------------------------------------------------------


def test_local_split_column_selects_test_by_default(tmp_path):
    folder = split_folder(tmp_path)
    default = load_data(folder)
    assert default.split == "test"
    assert {q.id for q in default.queries} == {q.id for q in FIXTURE_DATA.queries} - TRAIN
    train = load_data(folder, split="train")
    assert train.split == "train" and {q.id for q in train.queries} == TRAIN
    every = load_data(folder, split="all")
    assert every.split == "all" and len(every.queries) == 13
    assert [p.id for p in train.pool] == [p.id for p in default.pool] == [p.id for p in FIXTURE_DATA.pool]
    assert query_splits(folder) == ["test", "train"]


def test_unknown_split_names_the_available_ones(tmp_path):
    folder = split_folder(tmp_path)
    with pytest.raises(ConfigurationError, match=r"unknown split 'dev'; the queries have test, train \(or all\)"):
        load_data(folder, split="dev")


def test_data_without_splits_is_taken_whole_and_a_named_split_is_an_error():
    assert FIXTURE_DATA.split is None and len(FIXTURE_DATA.queries) == 13
    assert len(load_data(split="all").queries) == 13
    with pytest.raises(ConfigurationError, match=r"split 'test' was asked for, but the queries carry no split"):
        load_data(split="test")


def test_a_query_without_a_split_among_split_rows_is_a_row_error(tmp_path):
    folder = split_folder(tmp_path)
    queries = rows(folder / "queries.jsonl")
    del queries[2]["split"]
    write(folder / "queries.jsonl", queries)
    with pytest.raises(DataValidationError) as info:
        load_data(folder)
    assert [str(p) for p in info.value.problems] == [
        f"{folder / 'queries.jsonl'}:3:split: missing, while other rows name one (test, train)"
    ]


def test_qrels_of_the_other_split_are_left_out_not_reported(tmp_path):
    folder = split_folder(tmp_path)
    queries = rows(folder / "queries.jsonl")
    qrels = [
        {"query-id": q["id"], "corpus-id": p, "score": 1, "split": q["split"]} for q in queries for p in q["positives"]
    ]
    for q in queries:
        del q["positives"]
    write(folder / "queries.jsonl", queries)
    write(folder / "qrels.jsonl", qrels)
    expected = {q.id: q.positives for q in FIXTURE_DATA.queries}
    assert {q.id: q.positives for q in load_data(folder, split="train").queries} == {k: expected[k] for k in TRAIN}
    # Unsplit qrels serve both splits: the rows about the other split's queries are not "unknown query ids".
    for row in qrels:
        del row["split"]
    write(folder / "qrels.jsonl", qrels)
    assert {q.id: q.positives for q in load_data(folder).queries} == {
        k: v for k, v in expected.items() if k not in TRAIN
    }


def test_validate_checks_every_split(tmp_path):
    folder = split_folder(tmp_path)
    assert sorted(len(d.queries) for d in load_every_split(folder)) == [4, 9]
    queries = rows(folder / "queries.jsonl")
    bad = next(q for q in queries if q["split"] == "train")
    bad["positives"] = ["ghost"]
    write(folder / "queries.jsonl", queries)
    proc = run_cli(["ecom-tasks", "validate", "rmir", str(folder)], cwd=tmp_path)
    assert proc.returncode == 1
    assert f"{folder / 'queries.jsonl'}:{queries.index(bad) + 1}:positives[0]: 'ghost' is not a pool id" in proc.stderr


# --- a stubbed hub dataset -----------------------------------------------------------------------


def inline(path: str) -> str:
    return "data:image/png;base64," + base64.b64encode(Path(path).read_bytes()).decode("ascii")


def _hub_tables(pool_splits: tuple[str, ...] = ("train",)) -> dict[str, datasets.DatasetDict]:
    """The fixtures as hub configs: queries in test/train splits, the pool in ``pool_splits``;
    images inlined as data URIs (a hub row has no folder for a path to be relative to)."""
    queries = {"test": [], "train": []}
    for q in FIXTURE_DATA.queries:
        row = {
            "id": q.id,
            "category": q.category,
            "query_text": q.query_text,
            "query_image": inline(q.query_image),
            "positives": list(q.positives),
        }
        queries["train" if q.id in TRAIN else "test"].append(row)
    pool = [{"id": p.id, "image": inline(p.image), "description": p.description} for p in FIXTURE_DATA.pool]
    return {
        "queries": datasets.DatasetDict({name: datasets.Dataset.from_list(items) for name, items in queries.items()}),
        "pool": datasets.DatasetDict({name: datasets.Dataset.from_list(pool) for name in pool_splits}),
    }


def stub_hub(monkeypatch, tables: dict[str, datasets.DatasetDict]) -> list[tuple[str, str]]:
    calls: list[tuple[str, str]] = []

    def load_dataset(name, config=None, **kwargs):
        calls.append((name, config))
        if config not in tables:
            raise ValueError(f"BuilderConfig {config!r} not found")
        return tables[config]

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    return calls


def test_hub_splits_are_not_concatenated(monkeypatch):
    calls = stub_hub(monkeypatch, _hub_tables())
    test = load_data("org/rmir-stub")
    assert test.split == "test" and {q.id for q in test.queries} == {q.id for q in FIXTURE_DATA.queries} - TRAIN
    # The pool's lone split (a hub config's default "train") serves every query split.
    assert [p.id for p in test.pool] == [p.id for p in FIXTURE_DATA.pool]
    assert {q.id for q in load_data("org/rmir-stub", split="train").queries} == TRAIN
    assert len(load_data("org/rmir-stub", split="all").queries) == 13
    assert ("org/rmir-stub", "queries") in calls and ("org/rmir-stub", "pool") in calls
    with pytest.raises(ConfigurationError, match=r"unknown split 'validation'; the queries have test, train"):
        load_data("org/rmir-stub", split="validation")


def test_hub_pool_per_split_is_selected_or_refused(monkeypatch):
    tables = _hub_tables(("test", "train"))
    train_pool = tables["pool"]["train"]
    tables["pool"]["train"] = train_pool.filter(lambda row: row["id"] != "camouflage_clothing")  # a training pool of 25
    stub_hub(monkeypatch, tables)
    assert len(load_data("org/rmir-pools").pool) == 26
    assert [p.id for p in load_data("org/rmir-pools", split="train").pool] == [
        p.id for p in FIXTURE_DATA.pool if p.id != "camouflage_clothing"
    ]
    tables["pool"]["train"] = train_pool.filter(
        lambda row: row["id"] != "frog_on_leaf"
    )  # a positive of temp_tadpole (train)
    schema._tables.cache_clear()
    schema._load.cache_clear()
    with pytest.raises(
        DataValidationError,
        match=r"org/rmir-pools\[queries/train\]:\d+:positives\[0\]: 'frog_on_leaf' is not a pool id",
    ):
        load_data("org/rmir-pools", split="train")
    tables["pool"] = datasets.DatasetDict({"a": tables["pool"]["test"], "b": tables["pool"]["test"]})
    schema._tables.cache_clear()
    schema._load.cache_clear()
    with pytest.raises(ConfigurationError, match=r"the pool table has splits a, b but not 'test'"):
        load_data("org/rmir-pools")
