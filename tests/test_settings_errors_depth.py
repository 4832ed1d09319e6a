"""A setting no record answers is a ConfigurationError raised by the selector itself (rair/prompts, the
schemas, the protocols, the judge panel), not a plain ValueError that a wrapper around the whole dataset load renamed; so a
plain ValueError from the data itself is no longer reported as a bad setting."""

from __future__ import annotations

import json

import pytest

from ecom_tasks.data import fixtures_dir
from ecom_tasks.ecomeval.judging import JudgeSettings
from ecom_tasks.errors import ConfigurationError, DataValidationError
from ecom_tasks.inspect_evals.models import EcomBaselineAPI
from ecom_tasks.inspect_evals.rair import rair_visual
from ecom_tasks.monbench.protocol import load_items as monbench_items
from ecom_tasks.monbench.schema import load_records as monbench_records
from ecom_tasks.rair.prompts import build_system_prompt
from ecom_tasks.rair.protocol import load_items as rair_items
from ecom_tasks.rmir.index import PoolIndex
from ecom_tasks.rmir.protocol import load_items as rmir_items
from ecom_tasks.scorers.panel import combine

GENERAL = {
    "id": "g1",
    "subset": "general",
    "query": "red hoodie",
    "title": "Hoodie",
    "industry": "Fashion & Apparel",
    "label": "L4",
    "rule_ids": [],
    "language": "en",
}


def test_each_selector_raises_the_settings_error_itself(tmp_path):
    with pytest.raises(ConfigurationError, match="^unknown language 'fr'; expected one of zh, en$"):
        build_system_prompt("fr")
    with pytest.raises(ConfigurationError, match="^unknown split 'train'; expected one of "):
        monbench_records(split="train")
    with pytest.raises(ConfigurationError, match="^unknown MonBench task 'ads'; expected one of "):
        monbench_records(tasks=["ads"])
    path = tmp_path / "general.jsonl"
    path.write_text(json.dumps(GENERAL) + "\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=f"^no RAIR records of subset 'hard' in {path}$"):
        rair_items(str(path), subset="hard")
    with pytest.raises(ConfigurationError, match="^no RAIR records of subset 'general' in language 'zh' in "):
        rair_items(str(path), subset="general", language="zh")
    # The fixtures hold 12 validation records and 20 few-shot ones (5 per task): a split or a shot count
    # the data cannot serve names the data.
    fixtures = fixtures_dir("monbench") / "monbench.jsonl"
    only_test = tmp_path / "monbench.jsonl"
    lines = fixtures.read_text(encoding="utf-8").splitlines()
    only_test.write_text("\n".join(line for line in lines if '"split": "test"' in line) + "\n", encoding="utf-8")
    with pytest.raises(
        ConfigurationError, match=rf"^no MonBench records for .* in split 'validation' \(data: {only_test}\)$"
    ):
        monbench_items(str(only_test), split="validation")
    with pytest.raises(ConfigurationError, match=r"^5-shot needs 5 few-shot records of \w+, the data has 0 \(data: "):
        monbench_items(str(only_test), shots=5)


def test_a_data_error_while_loading_is_not_reported_as_a_bad_setting(tmp_path):
    # A lone surrogate is valid JSON ("\ud800") but no file name: os.fsencode raises UnicodeEncodeError (a
    # ValueError) deep in the image check. The old wrapper turned any such ValueError into a settings error.
    path = tmp_path / "visual.jsonl"
    path.write_text(json.dumps(GENERAL | {"subset": "visual", "image": "\ud800.png"}) + "\n", encoding="utf-8")
    with pytest.raises(DataValidationError) as raised:
        rair_visual(data=str(path))
    assert not isinstance(raised.value, ConfigurationError), raised.value
    # The row's own problem, printable (the surrogate escaped), not a UnicodeEncodeError from os.fsencode.
    assert f"{path}:1:image: " in str(raised.value) and "not a file name (it holds a lone surrogate)" in str(
        raised.value
    )
    str(raised.value).encode("utf-8")


def test_rmir_the_judge_panel_and_the_ecom_models_raise_their_own_settings_errors(tmp_path):
    fixtures = fixtures_dir("rmir")
    queries = fixtures.joinpath("queries.jsonl").read_text(encoding="utf-8").splitlines()
    (tmp_path / "queries.jsonl").write_text("\n".join(q for q in queries if '"functional"' in q) + "\n", "utf-8")
    (tmp_path / "pool.jsonl").write_text(fixtures.joinpath("pool.jsonl").read_text(encoding="utf-8"), "utf-8")
    assert len(rmir_items(str(tmp_path), category="functional", check_images=False)[1]) == 5
    with pytest.raises(ConfigurationError, match=f"^no RMIR queries of category 'causal' in {tmp_path}$"):
        rmir_items(str(tmp_path), category="causal", check_images=False)
    for ask in (lambda: combine([1], "mode"), lambda: JudgeSettings.from_options(None, "mode")):
        with pytest.raises(ConfigurationError, match="^unknown panel aggregation 'mode'; expected one of "):
            ask()
    with pytest.raises(ConfigurationError, match="^unknown search 'annoy'; expected one of numpy"):
        PoolIndex.build(None, [], [], search="annoy")  # refused before the embedder is asked
    with pytest.raises(ConfigurationError, match="^unknown ecom model 'oracle'; available: baseline"):
        EcomBaselineAPI("oracle")
