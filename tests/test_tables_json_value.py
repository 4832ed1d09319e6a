"""A recorded setting is log text (untrusted): decoding it keeps files.parse_json's limits."""

from ecom_tasks import files
from ecom_tasks.tables import json_value, readable


def test_a_setting_list_or_object_is_decoded() -> None:
    assert json_value('["a", 2]') == ["a", 2]
    assert json_value('{"k": [1]}') == {"k": [1]}
    assert readable('["a", 2]') == "a, 2"
    assert json_value("plain") == "plain"
    assert json_value("[not json") == "[not json"


def test_a_setting_nested_too_deep_stays_text() -> None:
    deep = "[" * 100_000 + "]" * 100_000  # plain json.loads: RecursionError
    assert json_value(deep) == deep
    assert readable(deep) == deep
    just_over = "[" * (files.MAX_JSON_DEPTH + 1) + "]" * (files.MAX_JSON_DEPTH + 1)
    assert json_value(just_over) == just_over


def test_a_setting_with_a_huge_integer_stays_text() -> None:
    huge = "[" + "9" * 5000 + "]"  # plain json.loads: ValueError (int over 4300 digits)
    assert json_value(huge) == huge
    assert readable(huge) == huge
    over_limit = '{"n": ' + "1" * (files.MAX_INT_DIGITS + 1) + "}"
    assert json_value(over_limit) == over_limit
