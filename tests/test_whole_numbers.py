"""One reading of a count (data.read_whole_number) behind the checks that refuse it in their own words: the
numeric options (scorers.judge.number_option: construction.positive_int, the judge's positive_whole_number;
argparse and the Python API), the task settings (scorers.settings.whole_number), a
panel's seats (solvers.panel_votes) and lm-eval MonBench's question limit."""

from __future__ import annotations

import argparse
import math

import pytest

from ecom_tasks.construction import positive_int
from ecom_tasks.errors import ConfigurationError
from ecom_tasks.lm_eval_tasks.monbench.utils import parse_questions
from ecom_tasks.rair.construction.pipeline import default_candidates
from ecom_tasks.rair.construction.stages import rair_build_rules
from ecom_tasks.scorers.judge import positive_whole_number
from ecom_tasks.scorers.settings import check_settings, whole_number
from ecom_tasks.solvers.panel_votes import panel_generate

#: What a user writes for a count, and the count it is.
READ = [(7, 7), ("7", 7), (" 12 ", 12), ("+5", 5), (2.0, 2)]
#: Not a count of 1 or more: numbers below 1, fractions, words, bools, nan/inf, and text int() does not read.
REFUSED = [0, "0", -3, "-3", 1.5, "1.5", "abc", "", True, math.nan, math.inf, "1e3", "2.0", "٣", "1_000", [4]]


@pytest.mark.parametrize(("value", "count"), READ)
def test_the_checks_read_a_count_alike(value, count):
    assert whole_number("k", value, 1, 100) == count
    assert positive_whole_number(value) == count
    assert parse_questions(value) == count
    panel_generate(str, judges=value)  # a panel of that many seats
    if isinstance(value, str):  # argparse hands over text only
        assert positive_int(value) == count


@pytest.mark.parametrize("value", REFUSED)
def test_the_checks_refuse_alike_each_in_its_own_words(value):
    with pytest.raises(ConfigurationError, match=r"^k must be a whole number from 1 to 100, got "):
        whole_number("k", value, 1, 100)
    with pytest.raises(
        ConfigurationError, match=r"^must be a whole number above 0 and at most 999,999,999, got "
    ) as raised:
        positive_whole_number(value)
    assert isinstance(raised.value, argparse.ArgumentTypeError)  # argparse prints it as a usage error
    with pytest.raises(ConfigurationError, match="^MonBench questions must be a whole number of at least 1, got "):
        parse_questions(value)
    with pytest.raises(ConfigurationError, match=r"^a panel needs 1 to \d+ judges \(voters, runs\), got "):
        panel_generate(str, judges=value)
    if isinstance(value, str):
        with pytest.raises(argparse.ArgumentTypeError, match=r"^must be a whole number above 0, got "):
            positive_int(value)


def test_the_bounds_are_each_checks_own():
    assert whole_number("text_k", 0, 0, 10) == 0 and whole_number("k", "10", 1, 10) == 10
    with pytest.raises(ConfigurationError, match="^k must be a whole number from 1 to 10, got 11$"):
        whole_number("k", 11, 1, 10)
    assert positive_whole_number("999999999") == 999_999_999  # the judge's limit: nine digits
    with pytest.raises(ConfigurationError):
        positive_whole_number(10**9)
    assert positive_int("9" * 40) == int("9" * 40)  # a build's --max-tokens has no upper bound of its own
    with pytest.raises(argparse.ArgumentTypeError):  # ... but 5,000 digits is no count (int() would refuse it)
        positive_int("9" * 5000)


def test_a_seed_passes_the_settings_check_only_as_text_int_reads():
    # A panel gives seat i the seed int(seed) + i at its call: '1e3' passed the check and failed there.
    for value, seed in ((" 7 ", 7), ("+5", 5), (2.0, 2), (-3, -3), (str(2**63 - 1), 2**63 - 1)):
        check_settings({"seed": value})
        assert int(value) == seed
    for value in ("1e3", "2.0", 2.5, str(2**63), "seven"):
        with pytest.raises(ConfigurationError, match="^seed must be a whole number, got "):
            rair_build_rules(data=str(default_candidates()), seed=value)


def test_max_tokens_is_a_count_of_tokens_never_a_float():
    for value in (" 512 ", "+5", 10_000_000):
        check_settings({"max_tokens": value})
    for value in (2.0, "2.0", 0, 10_000_001, "1e3"):  # a float would be sent and recorded as 2.0 tokens
        with pytest.raises(ConfigurationError, match="^max_tokens must be a whole number of tokens from 1 to "):
            check_settings({"max_tokens": value})
