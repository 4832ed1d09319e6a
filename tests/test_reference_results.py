"""The papers' reference rows: a bad value is named at its line of the file, comment lines counted."""

from __future__ import annotations

import pytest

from ecom_tasks import reference_results


@pytest.fixture
def packaged(tmp_path, monkeypatch):
    monkeypatch.setattr(reference_results, "PACKAGE_DIR", tmp_path)
    reference_results._read.cache_clear()
    yield tmp_path
    reference_results._read.cache_clear()


def test_a_bad_value_is_named_at_its_own_line(packaged):
    (packaged / "bench").mkdir()
    (packaged / "bench" / "reference_results.csv").write_text(
        "# Source: a paper\n# Table 2\n"
        "table,group,model,setting,column,value,unit\n"
        "t2,all,m,base,acc,81.5,%\n"
        "# a comment between rows\n"
        "t2,all,m,base,f1,8l.2,%\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=r"reference_results\.csv:6:value: not a number: '8l\.2'"):
        reference_results.reference_rows("bench", "t2", "fraction")


def test_rows_are_converted_to_the_logs_unit(packaged):
    (packaged / "bench").mkdir()
    (packaged / "bench" / "reference_results.csv").write_text(
        "# Source\ntable,group,model,setting,column,value,unit\nt2,all,m,base,acc,82.52,%\nt2,all,m,base,f1,0.5,1\n",
        encoding="utf-8",
    )
    (row,) = reference_results.reference_rows("bench", "t2", "fraction")
    assert (row.group, row.model, row.setting, row.values) == ("all", "m", "base", {"acc": 0.8252, "f1": 0.5})
