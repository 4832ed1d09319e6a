"""RMIR data: the bundled fixtures, the folder / qrels / CSV forms, and every bad input as file:row:field."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from helpers import check_ok, run_cli

from ecom_tasks.data import DataValidationError, fixtures_dir
from ecom_tasks.rmir.schema import CATEGORIES, load_data, select_queries

FIXTURES = fixtures_dir("rmir")


def copy_fixtures(tmp_path: Path) -> Path:
    folder = tmp_path / "rmir"
    shutil.copytree(FIXTURES, folder, ignore=shutil.ignore_patterns("*.py"))
    return folder


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def problems(folder: Path, **options) -> list[str]:
    with pytest.raises(DataValidationError) as info:
        load_data(folder, **options)
    return [str(p) for p in info.value.problems]


def test_fixtures_cover_all_categories_and_resolve_images():
    data = load_data()
    assert {q.category for q in data.queries} == set(CATEGORIES)
    assert len(data.pool) == 26 and len(data.queries) == 13
    assert all(Path(p.image).is_file() for p in data.pool) and all(Path(q.query_image).is_file() for q in data.queries)
    tadpole = next(q for q in data.queries if q.id == "temp_tadpole")
    assert tadpole.positives == ("frog_on_leaf", "frog_in_grass")
    assert [q.id for q in select_queries(data, "CAUS")] == ["caus_magnifier", "caus_laundry", "caus_cat", "caus_pizza"]
    with pytest.raises(ValueError, match="unknown RMIR category 'spatial'"):
        select_queries(data, "spatial")


def test_qrels_in_place_of_positives_and_csv_tables(tmp_path):
    folder = copy_fixtures(tmp_path)
    queries = rows(folder / "queries.jsonl")
    qrels = [{"query-id": q["id"], "corpus-id": p, "score": 1} for q in queries for p in q["positives"]]
    qrels.append({"query-id": queries[0]["id"], "corpus-id": "claw_hammer", "score": 0})  # judged, not relevant
    for q in queries:
        del q["positives"]
    (folder / "queries.jsonl").unlink()
    with (folder / "queries.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(queries[0]))
        writer.writeheader()
        writer.writerows(queries)
    write(folder / "qrels.jsonl", qrels)
    data = load_data(folder)
    assert {q.id: q.positives for q in data.queries} == {q.id: q.positives for q in load_data().queries}


def test_every_bad_input_is_reported_with_file_row_field(tmp_path):
    folder = copy_fixtures(tmp_path)
    pool, queries = rows(folder / "pool.jsonl"), rows(folder / "queries.jsonl")
    pool[3]["id"] = pool[0]["id"]  # duplicate pool id
    (folder / "images" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    pool[5]["image"] = "images/broken.png"  # unreadable image
    queries[0]["positives"] = ["phillips_screwdriver", "no_such_item"]  # positive not in the pool
    queries[1]["positives"] = []  # no positive
    queries[2]["category"] = "spatial"
    queries[3]["query_image"] = "images/missing.png"
    write(folder / "pool.jsonl", pool)
    write(folder / "queries.jsonl", queries)
    found = problems(folder)
    pool_file, query_file = folder / "pool.jsonl", folder / "queries.jsonl"
    assert f"{pool_file}:4:id: duplicate id {pool[0]['id']!r} (first at {pool_file}:1)" in found
    assert any(
        p.startswith(f"{pool_file}:6:image: {folder / 'images' / 'broken.png'}: pillow cannot read it") for p in found
    )
    assert f"{query_file}:1:positives[1]: 'no_such_item' is not a pool id" in found
    assert f"{query_file}:2:positives: the query has no positive (every query needs at least one)" in found
    assert f"{query_file}:3:category: unknown category 'spatial'; expected one of functional, temporal, causal" in found
    assert f"{query_file}:4:query_image: image file not found: {folder / 'images' / 'missing.png'}" in found
    assert len(found) == 6
    # Text-only runs may skip opening images; the rest is still checked.
    assert len(problems(folder, check_images=False)) == 4


def test_missing_tables_and_bad_qrels(tmp_path):
    folder = copy_fixtures(tmp_path)
    (folder / "pool.jsonl").unlink()
    assert problems(folder) == [f"{folder}:0:-: the RMIR data folder needs pool.jsonl (or .parquet/.csv)"]
    folder = copy_fixtures(tmp_path / "b")
    queries = rows(folder / "queries.jsonl")
    write(
        folder / "qrels.jsonl",
        [
            {"query-id": queries[0]["id"], "corpus-id": "ghost", "score": 1},
            {"query-id": "nobody", "corpus-id": "bolt_cutter", "score": "x"},
        ],
    )
    found = problems(folder)
    assert f"{folder / 'qrels.jsonl'}:1:corpus-id: 'ghost' is not a pool id" in found
    assert f"{folder / 'qrels.jsonl'}:2:score: must be a number, got 'x'" in found
    assert f"{folder / 'queries.jsonl'}:1:positives: given both here and in qrels; keep one" in found


def test_validate_cli(tmp_path):
    out = check_ok(run_cli(["ecom-tasks", "validate", "rmir"], cwd=tmp_path)).stdout
    assert "OK: 39 rmir records" in out
    assert "  pool                                     26" in out.splitlines()
    assert "  queries                                  13" in out.splitlines()
    folder = copy_fixtures(tmp_path)
    queries = rows(folder / "queries.jsonl")
    queries[0]["positives"] = ["ghost"]
    write(folder / "queries.jsonl", queries)
    proc = run_cli(["ecom-tasks", "validate", "rmir", str(folder)], cwd=tmp_path)
    assert proc.returncode == 1
    assert f"{folder / 'queries.jsonl'}:1:positives[0]: 'ghost' is not a pool id" in proc.stderr


def test_parquet_tables(tmp_path):
    import pandas as pd

    folder = copy_fixtures(tmp_path)
    for table in ("pool", "queries"):
        pd.DataFrame(rows(folder / f"{table}.jsonl")).to_parquet(folder / f"{table}.parquet")
        (folder / f"{table}.jsonl").unlink()
    data = load_data(folder)
    assert [(q.id, q.positives) for q in data.queries] == [(q.id, q.positives) for q in load_data().queries]
    assert [p.id for p in data.pool] == [p.id for p in load_data().pool]


def test_table_names_and_suffixes_in_any_case(tmp_path):
    folder = copy_fixtures(tmp_path)
    (folder / "queries.jsonl").rename(folder / "Queries.JSONL")
    (folder / "pool.jsonl").rename(folder / "POOL.jsonl")
    data = load_data(folder)
    assert len(data.pool) == 26 and len(data.queries) == 13
    # Two spellings of one table are two files for it: named, not one picked silently.
    shutil.copy(folder / "Queries.JSONL", folder / "queries.jsonl")
    assert problems(folder) == [f"{folder}:0:queries: several files for one table: Queries.JSONL, queries.jsonl"]
