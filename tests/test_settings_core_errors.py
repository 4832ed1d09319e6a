"""Mistaken or hostile settings reaching the core modules directly (library calls, build stages, lm-eval
metadata): each is one ConfigurationError naming the setting (a ValueError too), never a raw TypeError,
OSError or OverflowError, and never taken as "true"; valid values behave as before."""

from __future__ import annotations

import json
import math
import shutil

import pytest

from ecom_tasks.construction import check_sha256
from ecom_tasks.data import fixtures_dir, parse_flag
from ecom_tasks.ecomeval.protocol import select
from ecom_tasks.ecomeval.schema import load_records as ecomeval_records
from ecom_tasks.errors import ConfigurationError, DataValidationError
from ecom_tasks.images import ImageAccess
from ecom_tasks.monbench.protocol import FORMATS, load_items, parse_formats, parse_shots, runs_for
from ecom_tasks.plugins import select_metrics
from ecom_tasks.provenance import file_sha256
from ecom_tasks.rair.construction.stages import candidates
from ecom_tasks.rair.rules import builtin_rules, load_rules
from ecom_tasks.rair.schema import load_records as rair_records
from ecom_tasks.rmir.construction.seeds import load_seeds


@pytest.mark.parametrize("value", [["yes"], [], math.nan, 2, -1, 1.0, {"a": 1}, "maybe", "y" * 5000])
def test_a_yes_no_setting_that_is_no_yes_no_is_refused_naming_it(value):
    with pytest.raises(ConfigurationError, match=r"^image must be true or false \(yes/no, on/off, 1/0\), got "):
        parse_flag(value, "image")
    with pytest.raises(ConfigurationError, match="^allow_url_images must be true or false"):
        ImageAccess.from_options(allow_url_images=value)


def test_a_yes_no_setting_reads_as_before():
    said = [True, "TRUE", " yes ", "on", "1", 1, False, "false", "No", "off", "0", "", 0, None]
    assert [parse_flag(value, "image") for value in said] == [True] * 6 + [False] * 8
    assert ImageAccess.from_options("true", 0) == ImageAccess(outside=True, urls=False)


def test_a_seed_cell_that_is_no_yes_no_stays_that_cells_problem(tmp_path):
    folder = tmp_path / "rmir"
    shutil.copytree(fixtures_dir("rmir"), folder)
    seeds = folder / "seeds.jsonl"
    rows = [json.loads(line) for line in seeds.read_text(encoding="utf-8").splitlines()]
    rows[0]["input"], rows[1]["input"], rows[2]["input"] = 2, 1.5, ["yes"]  # 2 and 1.5 (as 1) were "true"
    seeds.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    with pytest.raises(DataValidationError) as refused:
        load_seeds(seeds)
    assert [(p.row, p.field) for p in refused.value.problems] == [(1, "input"), (2, "input"), (3, "input")]
    assert refused.value.problems[0].message == "input must be true or false (yes/no, on/off, 1/0), got 2"
    assert refused.value.problems[1].message == "input must be true or false (yes/no, on/off, 1/0), got 1.5"

    rows[0]["input"], rows[1]["input"], rows[2]["input"] = 1, 0.0, "no"  # a whole float is its number
    seeds.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    chosen = load_seeds(seeds).inputs
    assert rows[0]["id"] in chosen and rows[1]["id"] not in chosen and rows[2]["id"] not in chosen


@pytest.mark.parametrize("rules", ["[" * 5000, "b" * 300, ["builtin"], 5, math.nan])
def test_a_rules_value_that_cannot_be_a_rules_file_is_refused_naming_rules(rules):
    with pytest.raises(ConfigurationError, match="^rules must be none, builtin or a rules file, got "):
        load_rules(rules)


def test_rules_values_read_as_before(tmp_path):
    assert load_rules(True) is builtin_rules() and load_rules("builtin") is builtin_rules()
    assert load_rules(False) is None and load_rules("none") is None and load_rules(None) is None
    with pytest.raises(DataValidationError, match="rules file not found"):
        load_rules(str(tmp_path / "nope.json"))


@pytest.mark.parametrize("expected", [-5, math.nan, True, 1.5, ["ab"]])
def test_a_sha256_setting_that_is_not_text_is_refused_naming_it(expected):
    pairs = fixtures_dir("rair") / "rair.jsonl"
    with pytest.raises(ConfigurationError, match="^data_sha256 must be the file's sha256"):
        candidates(str(pairs), expected)
    with pytest.raises(ConfigurationError, match="^the sha256 of the seed table must be the file's sha256"):
        check_sha256(pairs, expected, "the seed table")


def test_a_sha256_setting_checks_as_before():
    pairs = fixtures_dir("rair") / "rair.jsonl"
    digest = file_sha256(pairs)
    assert check_sha256(pairs, digest, "the pairs") == check_sha256(pairs, None, "the pairs") == digest
    assert check_sha256(pairs, 0, "the pairs") == digest  # type: ignore[arg-type]  # unset, as before
    with pytest.raises(ConfigurationError, match="has changed since this stage was started"):
        check_sha256(pairs, "0" * 64, "the pairs")


@pytest.mark.parametrize("shots", [math.inf, -math.inf, math.nan, 1.5, 2, "ten", "5" * 5000, [5], True])
def test_a_shots_value_that_is_no_count_is_refused_naming_shots(shots):
    with pytest.raises(ConfigurationError, match="^MonBench shots must be one of 0, 1, 5, got "):
        parse_shots(shots)


def test_shots_read_as_before():
    assert [parse_shots(value) for value in (None, 0, 1, 5, "5", 5.0)] == [0, 0, 1, 5, 5, 5]


def test_monbench_unknown_names_are_configuration_errors_with_their_messages():
    with pytest.raises(ConfigurationError, match="^unknown design 'diagonal'; expected one of full, cyclic, canonical"):
        runs_for("diagonal")
    with pytest.raises(ConfigurationError, match=r"^unknown design \['full'\]"):
        runs_for(["full"])  # type: ignore[arg-type]  # unhashable: was a raw TypeError
    with pytest.raises(
        ConfigurationError, match=r"^formats: unknown return format\(s\) \['prose'\]; expected a subset of "
    ):
        parse_formats("label,prose")
    with pytest.raises(ConfigurationError, match="^formats must be a comma list of "):
        parse_formats(7)  # type: ignore[arg-type]  # not iterable: was a raw TypeError
    assert parse_formats(None) == FORMATS and parse_formats("label") == ("label",)
    with pytest.raises(ConfigurationError, match=r"^unknown design 'diagonal'.* \(data: the bundled fixtures\)$"):
        load_items(None, design="diagonal")
    with pytest.raises(ConfigurationError, match=r"^unknown MonBench task\(s\) cooking;"):
        load_items(None, tasks=["cooking"])


@pytest.mark.filterwarnings("ignore:task\\(s\\) outside EcomEval")
def test_rair_ecomeval_and_metric_unknown_names_are_configuration_errors_with_their_messages():
    with pytest.raises(ConfigurationError, match="^unknown language 'fr'; expected one of zh, en$"):
        rair_records(language="fr")
    with pytest.raises(ConfigurationError, match="^unknown RAIR subset 'easy'; expected one of general, hard, visual$"):
        rair_records(subset="easy")
    records = ecomeval_records(check_images=False)
    with pytest.raises(ConfigurationError, match="^unknown language 'fr'; expected one of "):
        select(records, language="fr")
    with pytest.raises(ConfigurationError, match="^difficulty must be a name or a comma list of names, got 3"):
        select(records, difficulty=3)  # type: ignore[arg-type]  # not iterable: was a raw TypeError
    assert len(select(records, language="en")) == sum(r.language == "en" for r in records) > 0
    with pytest.raises(
        ConfigurationError, match="^metrics: unknown labels metric\\(s\\) accuracy; registered for this kind: "
    ):
        select_metrics("labels", "acc2,accuracy")
    with pytest.raises(ConfigurationError, match="^metrics must be a metric name or a comma list of names, got 5"):
        select_metrics("labels", 5)  # type: ignore[arg-type]  # not iterable: was a raw TypeError
    assert [spec.name for spec in select_metrics("labels", "acc2")] == ["acc2"]
