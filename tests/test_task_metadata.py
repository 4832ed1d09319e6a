"""Every Inspect task records what it ran on and under which protocol (issue 18).

The expected hashes are computed here from the files themselves (``sha256sum``'s
output for one file; the SHA-256 of ``sha256sum``'s listing for a folder), not
read back from the code under test.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import datasets
import pytest
from inspect_ai import eval as inspect_eval

from ecom_tasks.data import fixtures_dir
from ecom_tasks.ecomeval.prompts import GRADER_VERSION
from ecom_tasks.ecomeval.prompts import PROMPT_VERSION as ECOMEVAL_PROMPT
from ecom_tasks.inspect_evals import ecomeval, monbench, rair, rmir
from ecom_tasks.inspect_evals.ecomeval_judge_meta import ecomeval_judge_meta
from ecom_tasks.monbench.prompts import PROMPT_VERSION as MONBENCH_PROMPT
from ecom_tasks.monbench.variants import TASK_VERSION as MONBENCH_VERSION
from ecom_tasks.provenance import data_provenance
from ecom_tasks.rair.prompts import PROMPT_VERSION as RAIR_PROMPT
from ecom_tasks.rair.variants import TASK_VERSION as RAIR_VERSION
from ecom_tasks.report.runs import inspect_run
from ecom_tasks.rmir.prompts import PROMPT_VERSION as RMIR_PROMPT


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def listing_sha256(folder: Path, names: list[str] | None = None) -> str:
    """What ``sha256sum <names> | sha256sum`` prints for files in ``folder``, names sorted; by default
    every data file at the folder's top level."""
    if names is None:
        names = [
            p.name
            for p in folder.iterdir()
            if p.is_file() and p.suffix.lower() in (".jsonl", ".json", ".csv", ".parquet")
        ]
    listing = "".join(f"{sha256_of(folder / name)}  {name}\n" for name in sorted(names))
    return hashlib.sha256(listing.encode()).hexdigest()


#: benchmark -> (a task of it, its task version, its prompt version, protocol settings it must record).
CASES = {
    "monbench": (
        lambda: monbench.monbench_cyclic(),
        MONBENCH_VERSION,
        MONBENCH_PROMPT,
        {
            "tasks": ["query_ad_relevance", "product_co_purchase", "query_product_relation", "query_query_intent"],
            "design": "cyclic",
            "formats": ["label", "content", "label_content"],
            "shots": 0,
            "strict": False,
            "split": "test",
        },
    ),
    "rair": (
        lambda: rair.rair_hard(rules="builtin"),
        RAIR_VERSION,
        RAIR_PROMPT,
        {"subset": "hard", "rules_source": "builtin", "image": False, "language": "all"},
    ),
    "rmir": (
        lambda: rmir.rmir_reason(),
        rmir.VERSION,
        RMIR_PROMPT,
        {"mode": "reason_then_embed", "retriever": "lexical", "split": None, "pool_input": "caption"},
    ),
    "ecomeval": (
        lambda: ecomeval.ecomeval_exact(),
        ecomeval.VERSION,
        ECOMEVAL_PROMPT,
        {
            "scoring": "exact match",
            "category": "ecom_qa,shopping_concepts,user_understanding,shopping_reasoning,ecom_generation",
        },
    ),
}


@pytest.mark.parametrize("benchmark", sorted(CASES))
def test_each_benchmark_records_version_prompt_data_and_protocol(benchmark):
    make, version, prompt, protocol = CASES[benchmark]
    task = make()
    meta = task.metadata
    assert meta["benchmark"] == benchmark
    assert meta["task_version"] == task.version == version
    assert meta["prompt_version"] == prompt
    assert meta["data_location"] == f"ecom_tasks/fixtures/{benchmark}"
    assert meta["data_sha256"] == listing_sha256(fixtures_dir(benchmark))
    assert {key: meta[key] for key in protocol} == protocol
    json.dumps(meta)  # the log stores it as JSON


def test_the_judge_meta_eval_records_the_grader_prompt_and_its_cases():
    meta = ecomeval_judge_meta().metadata  # built, never run: its graders are resolved by its run
    folder = fixtures_dir("ecomeval") / "judge_meta"
    assert (
        meta["prompt_version"] == GRADER_VERSION and meta["data_location"] == "ecom_tasks/fixtures/ecomeval/judge_meta"
    )
    assert meta["data_sha256"] == listing_sha256(folder)


@pytest.mark.slow
def test_a_data_file_is_identified_by_its_sha256_in_the_log_and_the_report(tmp_path):
    """A user's RAIR file: the log records its path and sha256sum; one changed record changes the hash;
    the report names the file and the hash prefix instead of calling it fixtures."""
    data = tmp_path / "rair_copy.jsonl"
    shutil.copy(fixtures_dir("rair") / "rair.jsonl", data)
    shutil.copytree(fixtures_dir("rair") / "images", tmp_path / "images")
    [log] = inspect_eval(
        rair.rair_general(data=str(data)), model="ecom/baseline", log_dir=str(tmp_path / "logs"), display="none"
    )
    assert log.status == "success"
    assert log.eval.metadata["data_location"] == str(data) and log.eval.metadata["data_sha256"] == sha256_of(data)
    assert inspect_run(log, "x").data == f"{data} (sha256:{sha256_of(data)[:12]})"
    rows = data.read_text(encoding="utf-8").splitlines()
    first = json.loads(rows[0])
    first["query"] = first["query"] + " (edited)"
    data.write_text("\n".join([json.dumps(first, ensure_ascii=False), *rows[1:]]) + "\n", encoding="utf-8")
    edited = rair.rair_general(data=str(data)).metadata["data_sha256"]
    assert edited == sha256_of(data) != log.eval.metadata["data_sha256"]


def test_a_data_folder_hashes_its_data_files_only(tmp_path):
    """An RMIR folder: the listing of its data files; images, notes and sub-folders do not count."""
    folder = tmp_path / "rmir"
    shutil.copytree(fixtures_dir("rmir"), folder)
    expected = listing_sha256(folder)
    assert {"pool.jsonl", "queries.jsonl"} <= {p.name for p in folder.iterdir()}
    task = rmir.rmir(data=str(folder))
    assert task.metadata["data_location"] == str(folder) and task.metadata["data_sha256"] == expected
    (folder / "NOTES.md").write_text("not data\n", encoding="utf-8")
    (folder / "images" / "extra.jsonl").write_text("{}\n", encoding="utf-8")
    assert data_provenance(str(folder), "ecom_tasks/fixtures/rmir")["data_sha256"] == expected


def test_a_hub_dataset_records_its_revision_when_datasets_knows_it(monkeypatch):
    commit = "0123456789abcdef0123456789abcdef01234567"
    asked = []

    class Builder:
        hash = commit

    monkeypatch.setattr(datasets, "load_dataset_builder", lambda name, *a, **k: asked.append(name) or Builder())
    assert data_provenance("org/ecom-data", "ecom_tasks/fixtures/rair") == {
        "data_location": "org/ecom-data",
        "data_revision": commit,
    }
    assert asked == ["org/ecom-data"]
    Builder.hash = "not-a-commit"  # e.g. a local builder's config hash: not a revision
    assert data_provenance("org/ecom-data", "ecom_tasks/fixtures/rair") == {"data_location": "org/ecom-data"}

    def unreachable(name, *a, **k):
        raise ConnectionError("offline")

    monkeypatch.setattr(datasets, "load_dataset_builder", unreachable)
    assert data_provenance("org/ecom-data", "ecom_tasks/fixtures/rair") == {"data_location": "org/ecom-data"}
