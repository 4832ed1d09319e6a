"""Counts and shares on our command lines are checked by argparse before anything runs: 0 connections or
samples would leave Inspect's semaphores waiting forever, a negative retry count or panel size means
nothing, and a NaN share compares false with every failure rate."""

from __future__ import annotations

import pytest

from ecom_tasks.cli import main

BUILD = ["--out", "build", "--model", "ecom/baseline"]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["build", "rair", *BUILD, "--max-connections", "0"], "--max-connections: expected a whole number above 0"),
        (["build", "monbench", *BUILD, "--max-samples", "-5"], "--max-samples: expected a whole number above 0"),
        (["build", "rmir", *BUILD, "--retry-attempts", "-1"], "--retry-attempts: expected a whole number of 0"),
        (["build", "rmir", *BUILD, "--retry-attempts", "two"], "--retry-attempts: expected a whole number of 0"),
        (["build", "rmir", *BUILD, "--judges", "0"], "--judges: expected a whole number above 0"),
        (["build", "rmir", *BUILD, "--inputs", "-3"], "--inputs: expected a whole number above 0"),
        (["embed-pool", "--workers", "0"], "--workers: must be a positive whole number"),
        (["embed-pool", "--batch-size", "-256"], "--batch-size: must be a positive whole number"),
        (["calibrate", "--judge-failure-threshold", "nan"], "--judge-failure-threshold: must be a share from 0 to 1"),
        (["calibrate", "--judge-failure-threshold", "1.5"], "--judge-failure-threshold: must be a share from 0 to 1"),
    ],
)
def test_a_bad_count_is_a_usage_error_before_anything_runs(argv, expected, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    assert expected in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nothing was built or written


def test_zero_retries_is_a_setting():
    """0 is a valid retry count (no retry): it parses, where 0 connections does not."""
    from ecom_tasks.construction import retry_count

    assert retry_count("0") == 0 and retry_count("3") == 3
