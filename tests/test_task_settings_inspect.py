"""Every ``-T`` value of the Inspect tasks is the user's: a wrong kind (a list, a number, NaN), an unknown name, a
huge or negative count is one ConfigurationError naming the setting, raised while the task is built (before any
model call), never a raw TypeError/ValueError/OverflowError/OSError nor a run that takes it as "true"."""

from __future__ import annotations

import math

import pytest
from inspect_ai.model import CachePolicy

from ecom_tasks.errors import ConfigurationError
from ecom_tasks.inspect_evals._task_parameters import check_settings
from ecom_tasks.inspect_evals.ecomeval import ecomeval
from ecom_tasks.inspect_evals.ecomeval_judge_meta import ecomeval_judge_meta
from ecom_tasks.inspect_evals.monbench import monbench
from ecom_tasks.inspect_evals.rair import rair_general
from ecom_tasks.inspect_evals.rmir import rmir
from ecom_tasks.scorers.inspect_judge import judge_cache

TASKS = {"rair": rair_general, "monbench": monbench, "ecomeval": ecomeval, "rmir": rmir, "meta": ecomeval_judge_meta}


@pytest.mark.parametrize(
    ("task", "setting", "value"),
    [
        # yes/no settings: anything but a yes/no word, a bool, 0 or 1 ran as "true" (or raised ValueError)
        ("rair", "image", ["a", "b"]),
        ("monbench", "strict", -5),
        ("rmir", "pool_captions", math.nan),
        ("ecomeval", "allow_url_images", {"a": 1}),
        ("ecomeval", "multimodal", 2.5),
        ("rair", "allow_outside_images", "maybe"),
        # max_tokens: a negative, zero, huge or non-number count reached GenerateConfig (accepted or pydantic's error)
        ("rair", "max_tokens", -5),
        ("monbench", "max_tokens", 0),
        ("ecomeval", "max_tokens", 10**30),
        ("rmir", "max_tokens", "abc"),
        ("rair", "max_tokens", math.inf),
        ("rair", "max_tokens", True),
        # data / rules: not a path (TypeError) or a name no file system holds (OSError: File name too long)
        ("rair", "data", ["a.jsonl"]),
        ("monbench", "data", 5),
        ("meta", "data", "9" * 5000),
        ("ecomeval", "data", ""),
        ("rair", "rules", "[" * 5000),
        ("rair", "rules", 2.5),
        # names of the wrong kind: TypeError (unhashable, not iterable) deep in the benchmark
        ("monbench", "design", ["full"]),
        ("rmir", "split", ["test"]),
        ("ecomeval", "category", 7),
        ("ecomeval", "difficulty", [1, 2]),
        ("rair", "metrics", 5),
        ("meta", "graders", 5),
        ("rmir", "retriever_args", [1, 2]),
        ("monbench", "shots", math.inf),
        # unknown names: the benchmark's plain ValueError, now a settings error
        ("rair", "language", "klingon"),
        ("monbench", "design", "spiral"),
        ("monbench", "split", "train"),
        ("monbench", "formats", "json"),
        ("monbench", "task", "abc"),
        ("ecomeval", "category", "weather"),
        ("ecomeval", "metrics", "accuracy"),
        ("monbench", "metrics", "f1"),
        # first read at the first score (after the model's calls in reason_then_embed mode), now at build time
        ("rmir", "retriever", "abc"),
        ("rmir", "search", "annoy"),
        # a judge cache expiry Inspect reads only when it first caches a grade
        ("ecomeval", "cache", "abc"),
        ("meta", "cache", [1]),
    ],
)
def test_a_wrong_setting_is_one_configuration_error_naming_it(task, setting, value):
    with pytest.raises(ConfigurationError, match=setting if setting != "task" else "MonBench task") as caught:
        TASKS[task](**{setting: value})
    assert len(str(caught.value)) < 400  # a 5,000-character value is cut short in the message


def test_values_of_the_right_kind_pass_unchanged():
    check_settings(
        {
            "image": "false",
            "strict": True,
            "exact": 0,
            "multimodal": None,
            "max_tokens": "512",
            "data": "owner/name",
            "rules": True,  # -T rules=true: the builtin rules
            "category": ["ecom_qa", "shopping_concepts"],  # -T category=a,b
            "language": "en",
            "retriever_args": {"batch_size": 8},
            "shots": 5,
            "k": 20,
        }
    )
    assert monbench(max_tokens=64, strict="yes", shots=1).config.max_tokens == 64


def test_the_judge_cache_takes_yes_no_or_an_inspect_expiry():
    assert judge_cache("1W") == CachePolicy(expiry="1W", per_epoch=False)
    assert judge_cache(True) == CachePolicy(expiry=None, per_epoch=False)
    assert judge_cache("false") is False and judge_cache(None) is False
    for value in ("1 week", "W", "12x", 2.5):
        with pytest.raises(ConfigurationError, match="cache must be true, false or an expiry"):
            judge_cache(value)
