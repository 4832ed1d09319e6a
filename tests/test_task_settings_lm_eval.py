"""lm-eval's ``--metadata`` settings are the user's too: a wrong kind, an unknown name or a setting the task's
YAML already fixes is one ConfigurationError naming it when the task loads, not a raw TypeError/ValueError/OSError
(or a yes/no setting that took a list or NaN as "true")."""

from __future__ import annotations

import math

import pytest

from ecom_tasks.errors import ConfigurationError
from ecom_tasks.lm_eval_tasks import task_manager


def _load(task: str, **metadata):
    return task_manager(include_defaults=False, metadata=metadata).load([task])["tasks"][task]


@pytest.mark.parametrize(
    ("task", "setting", "value"),
    [
        ("rair_general", "rules", "[" * 5000),  # OSError: File name too long, in RairTask's load_rules
        ("rair_general", "data", ["a.jsonl"]),  # TypeError in data.py
        ("rair_general", "language", "klingon"),  # the benchmark's plain ValueError
        ("rair_general", "metrics", 5),  # TypeError: 'int' object is not iterable
        ("rair_general", "metrics", "accuracy"),
        ("rair_general", "allow_url_images", math.nan),  # ran as true
        ("monbench_perm_query_ad_relevance", "strict", ["a"]),  # ran as true
        ("monbench_perm_query_ad_relevance", "split", "train"),
        ("ecomeval_exact", "difficulty", [1, 2]),  # TypeError
        ("ecomeval_exact", "category", "ecom_qa"),  # the task's YAML sets it: "got multiple values for keyword"
    ],
)
def test_a_wrong_metadata_setting_is_one_configuration_error_naming_it(task, setting, value):
    with pytest.raises(ConfigurationError, match=setting):
        _load(task, **{setting: value})


def test_right_metadata_loads_as_before():
    task = _load("ecomeval", category="ecom_qa", multimodal="false", language=["en"])
    assert {doc["category"] for doc in task.eval_docs} == {"ecom_qa"}
