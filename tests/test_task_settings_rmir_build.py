"""RMIR's build stages (rmir_build_generate/filter/retrieve/judge) and its settings parsers: a ``-T`` value no
stage can use is one ConfigurationError naming the setting when the task is built, before any model call or
search, not a raw ValueError/TypeError/OverflowError, a late failure at the first search, or a run that took it
(``max_tokens=-5``, ``k=10**30``, an unknown retriever)."""

from __future__ import annotations

import math

import pytest

from ecom_tasks.construction import write_jsonl
from ecom_tasks.data import fixtures_dir
from ecom_tasks.errors import ConfigurationError
from ecom_tasks.files import OutputFolder
from ecom_tasks.rmir.construction.tasks import (
    rmir_build_filter,
    rmir_build_generate,
    rmir_build_judge,
    rmir_build_retrieve,
)
from ecom_tasks.rmir.scoring import parse_retriever_args
from ecom_tasks.rmir.variants import parse_k

SEEDS = str(fixtures_dir("rmir") / "seeds.jsonl")
FILTERED = {
    "id": "q_func_screw_functional",
    "seed": "q_func_screw",
    "category": "functional",
    "query_text": "Which tool takes this out?",
    "target_desc": "a screwdriver with a cross-shaped tip",
}


@pytest.mark.parametrize(
    ("build", "setting", "value"),
    [
        (rmir_build_generate, "max_tokens", "abc"),
        (rmir_build_generate, "max_tokens", 0),
        (rmir_build_filter, "max_tokens", -5),
        (rmir_build_filter, "max_tokens", "9" * 5000),
        (rmir_build_judge, "max_tokens", math.inf),
        (rmir_build_generate, "temperature", ""),
        (rmir_build_generate, "temperature", math.nan),
        (rmir_build_judge, "temperature", ["0.5"]),
        (rmir_build_judge, "judges", "abc"),
        (rmir_build_judge, "judges", 10**30),
        (rmir_build_judge, "judges", 0),
        (rmir_build_judge, "judges", math.nan),
        (rmir_build_retrieve, "k", "abc"),
        (rmir_build_retrieve, "k", ""),
        (rmir_build_retrieve, "k", [16]),
        (rmir_build_retrieve, "k", math.inf),
        (rmir_build_retrieve, "k", 10**30),
        (rmir_build_retrieve, "k", "9" * 5000),
        (rmir_build_retrieve, "text_k", -1),
        (rmir_build_retrieve, "text_k", 2.5),
        (rmir_build_retrieve, "retriever", "no_such_embedder"),
        (rmir_build_retrieve, "retriever", ["lexical"]),
        (rmir_build_retrieve, "text_retriever", "no_such_embedder"),
        (rmir_build_retrieve, "retriever_args", 5),
        (rmir_build_retrieve, "text_retriever_args", ["a"]),
        (rmir_build_retrieve, "cache", "sometimes"),
        (rmir_build_retrieve, "cache", ["true"]),
        (rmir_build_generate, "input", 5),
        (rmir_build_filter, "input", 5),
        (rmir_build_filter, "input", "b" * 5000),
        (rmir_build_judge, "input", "a/" * 3000),
        (rmir_build_generate, "seeds", "s" * 300),
        (rmir_build_judge, "seeds_sha256", 123),
        (rmir_build_generate, "captions", "maybe"),
    ],
)
def test_a_setting_no_stage_can_use_is_refused_by_name(build, setting, value):
    # The input need not exist: the settings are refused before any file is read.
    settings = {"seeds": SEEDS, "input": "/nonexistent/rmir_build_input.jsonl", setting: value}
    if build is rmir_build_generate and setting != "input":
        del settings["input"]  # generate's default input: the seeds flagged input
    with pytest.raises(ConfigurationError, match=setting):
        build(**settings)


def test_text_k_zero_with_a_caption_index_is_refused_and_without_one_is_no_caption_index(tmp_path):
    path = tmp_path / "filtered.jsonl"
    digest = write_jsonl(path, [FILTERED], output=OutputFolder(tmp_path))
    with pytest.raises(ConfigurationError, match="text_k must be at least 1 with a text_retriever"):
        rmir_build_retrieve(seeds=SEEDS, input=str(path), text_retriever="lexical", text_k=0)
    task = rmir_build_retrieve(seeds=SEEDS, input=str(path), input_sha256=digest, text_k=0)
    assert task.metadata["text_retriever"] is None and task.metadata["text_k"] == 0


def test_usable_settings_build_as_before(tmp_path):
    task = rmir_build_generate(seeds=SEEDS, temperature="0.5", max_tokens="256", captions="yes")
    assert task.config.temperature == 0.5 and task.config.max_tokens == 256
    path, triplets = tmp_path / "filtered.jsonl", tmp_path / "triplets.jsonl"
    write_jsonl(path, [FILTERED], output=OutputFolder(tmp_path))
    assert rmir_build_filter(seeds=SEEDS, input=str(path), max_tokens=512).config.max_tokens == 512
    triplet = {
        "id": "t",
        "query_id": FILTERED["id"],
        "seed": "q_func_screw",
        "query_text": "?",
        "candidate": "claw_hammer",
    }
    write_jsonl(triplets, [triplet], output=OutputFolder(tmp_path))
    judge = rmir_build_judge(seeds=SEEDS, input=str(triplets), judges="3", temperature=1, max_tokens=64, seed=7)
    assert (judge.metadata["judges"], judge.metadata["temperature"], len(judge.dataset)) == (3, 1.0, 1)
    retrieve = rmir_build_retrieve(
        seeds=SEEDS, input=str(path), k="16", text_retriever="lexical", text_k=4.0, retriever_args="{}", cache="read"
    )
    assert (retrieve.metadata["k"], retrieve.metadata["text_k"], retrieve.metadata["text_retriever"]) == (
        16,
        4,
        "lexical",
    )
    assert retrieve.metadata["retriever_args"] == {} and len(retrieve.dataset) == 1


def test_settings_parsers_refuse_by_name_and_read_valid_values():
    with pytest.raises(ConfigurationError, match="retriever_args must be a JSON object, got 5"):
        parse_retriever_args(5)
    with pytest.raises(ConfigurationError, match="text_retriever_args must be a JSON object"):
        parse_retriever_args([1], "text_retriever_args")
    assert parse_retriever_args('{"dim": 64}') == {"dim": 64} and parse_retriever_args({"dim": 8}) == {"dim": 8}
    with pytest.raises(ConfigurationError, match=r"k must be at most 10,000,000 \(no pool is larger\)"):
        parse_k(10**30)
    with pytest.raises(ConfigurationError, match="k must be at most"):
        parse_k("20,10000001")
    assert parse_k("20,10000000") == (20, 10_000_000) and parse_k([5, 20]) == (5, 20)
