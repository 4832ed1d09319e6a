"""MonBench's ``-T category_weights=`` value comes from the command line: strict JSON, category numbers
to finite weights >= 0, else one ConfigurationError naming the setting (not a raw traceback)."""

from __future__ import annotations

import pytest

from ecom_tasks.data import ConfigurationError, DataValidationError
from ecom_tasks.inspect_evals.monbench import _weights


def test_a_json_object_of_category_numbers_gives_the_weights():
    assert _weights('{"1": 0.5, "2": 0.3, "5": 0.2}') == {"1": 0.5, "2": 0.3, "5": 0.2}
    assert _weights({1: 2, "2": 1.0}) == {"1": 2.0, "2": 1.0}
    assert _weights('{"22": 1}') == {"22": 1.0}  # Retailers & General Merchandise, the last of Table 7
    assert _weights(None) is None and _weights("") is None


@pytest.mark.parametrize(
    "value",
    [
        *(
            '["1", "2"]',
            '{"one": 0.5}',
            '{"1": "heavy"}',
            '{"1": -0.5}',
            '{"-1": 0.5}',
            '{"1.5": 1}',
            '{"1": null}',
            "7",
        ),
        # Table 7 numbers its 22 categories from 1: a 0-based id or one past the list matches no category
        *('{"0": 0.5, "1": 0.5}', '{"22": 0.5, "23": 0.5}'),
    ],
)
def test_a_value_that_is_not_category_numbers_to_weights_is_refused_by_name(value):
    with pytest.raises(ConfigurationError, match=r"category_weights must be a JSON object of category numbers \(1-22"):
        _weights(value)


@pytest.mark.parametrize(
    "value",
    ["not json", '{"1": NaN}', '{"1": ' + "9" * 5000 + "}", "[" * 5000 + "]" * 5000],
    ids=["not-json", "nan", "huge-int", "deep"],
)
def test_text_that_is_not_strict_json_is_a_problem_of_the_setting(value):
    with pytest.raises(DataValidationError, match="category_weights"):
        _weights(value)
