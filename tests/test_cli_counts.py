"""Counts and shares on our command lines are checked by argparse before anything runs: 0 connections or
samples would leave Inspect's semaphores waiting forever, a negative retry count or panel size means
nothing, a NaN share compares false with every failure rate, and a build's panel size, temperature or
threshold was refused only at its stage, after the earlier stages' model calls."""

from __future__ import annotations

import pytest

from ecom_tasks.cli import main

BUILD = ["--out", "build", "--model", "ecom/baseline"]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["build", "rair", *BUILD, "--max-connections", "0"], "--max-connections: must be a whole number above 0"),
        (["build", "monbench", *BUILD, "--max-samples", "-5"], "--max-samples: must be a whole number above 0"),
        (["build", "rmir", *BUILD, "--retry-attempts", "-1"], "--retry-attempts: must be a whole number of 0"),
        (["build", "rmir", *BUILD, "--retry-attempts", "two"], "--retry-attempts: must be a whole number of 0"),
        (["build", "rmir", *BUILD, "--judges", "0"], "--judges: must be a whole number above 0"),
        (["build", "rmir", *BUILD, "--inputs", "-3"], "--inputs: must be a whole number above 0"),
        # each was taken and refused only at its stage, after the earlier stages' model calls, or (the thresholds)
        # by a traceback after every call; temperatures as every stage's settings check reads them (0 to 2)
        (["build", "rair", *BUILD, "--vlms", "0"], "--vlms: must be a whole number above 0"),
        (["build", "rair", *BUILD, "--rule-runs", "-1"], "--rule-runs: must be a whole number above 0"),
        (["build", "rair", *BUILD, "--voters", "2.5"], "--voters: must be a whole number above 0"),
        (["build", "rair", *BUILD, "--min-intent-votes", "0"], "--min-intent-votes: must be a whole number above 0"),
        (["build", "rair", *BUILD, "--min-rule-votes", "-1"], "--min-rule-votes: must be a whole number above 0"),
        (
            ["build", "rair", *BUILD, "--rule-temperature", "nan"],
            "--rule-temperature: temperature must be a number from 0 to 2",
        ),
        (["build", "rair", *BUILD, "--temperature", "-1"], "--temperature: temperature must be a number from 0 to 2"),
        (["build", "monbench", *BUILD, "--voters", "0"], "--voters: must be a whole number above 0"),
        (
            ["build", "monbench", *BUILD, "--temperature", "inf"],
            "--temperature: temperature must be a number from 0 to 2",
        ),
        (
            ["build", "monbench", *BUILD, "--min-negative-votes", "-1"],
            "--min-negative-votes: must be a whole number of 0",
        ),
        (
            ["build", "rmir", *BUILD, "--judge-temperature", "nan"],
            "--judge-temperature: temperature must be a number from 0 to 2",
        ),
        (["build", "rair", *BUILD, "--seed", "9" * 20], "--seed: seed must be a whole number"),
        (["build", "rmir", *BUILD, "--seed", "1e3"], "--seed: seed must be a whole number"),
        (["build", "rmir", *BUILD, "--confidence", "0"], "--confidence: must be a share above 0 and at most 1"),
        (["build", "rmir", *BUILD, "--confidence", "nan"], "--confidence: must be a share above 0 and at most 1"),
        (
            ["build", "rmir", *BUILD, "--tsr-threshold", "1e400"],
            "--tsr-threshold: must be a share from 0 to 1",
        ),
        (["embed-pool", "--workers", "0"], "--workers: must be a whole number above 0 and at most 999,999,999"),
        (
            ["embed-pool", "--batch-size", "-256"],
            "--batch-size: must be a whole number above 0 and at most 999,999,999",
        ),
        (["compare", "logs", "--plan", "nan"], "--plan: must be a finite number above 0"),
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


def test_a_panel_too_large_for_a_later_stage_is_refused_before_the_first(tmp_path, capsys):
    """101 VLMs (the visual stage, second) was refused after the intent stage's calls."""
    with pytest.raises(SystemExit) as stopped:
        main(["build", "rair", "--out", str(tmp_path / "build"), "--model", "ecom/baseline", "--vlms", "101"])
    assert stopped.value.code == 1
    assert "vlms must be a whole number from 1 to 100, got 101" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["rair", "--min-rule-votes", "99"], "--min-rule-votes 99 exceeds the 3 rule runs that vote"),
        (["rair", "--vlms", "3", "--min-visual-votes", "4"], "--min-visual-votes 4 exceeds the 3 VLMs that vote"),
        (["rair", "--voters", "1"], "--min-intent-votes 2 exceeds the 1 voters that vote"),  # the default threshold
        (["monbench", "--voters", "3", "--min-negative-votes", "4"], "--min-negative-votes 4 exceeds the 3 voters"),
        (["monbench", "--min-positive-votes", "6"], "--min-positive-votes 6 exceeds the 4 voters that vote"),
    ],
)
def test_a_threshold_above_its_panel_is_refused_before_the_first_stage(options, expected, tmp_path, capsys):
    """No item could reach it: the build paid every model call and then selected nothing."""
    benchmark, *rest = options
    with pytest.raises(SystemExit) as stopped:
        main(["build", benchmark, "--out", str(tmp_path / "build"), "--model", "ecom/baseline", *rest])
    assert stopped.value.code == 1
    assert expected in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_the_ends_of_each_range_are_settings():
    """0 retries (no retry) and 0 votes parse, where 0 connections does not; a temperature of 2, a confidence of 1
    and a threshold of 0 are settings."""
    from ecom_tasks.construction import confidence_share, non_negative_int, sampling_seed, share, temperature

    assert non_negative_int("0") == 0 and non_negative_int("3") == 3
    assert temperature("0") == 0.0 and temperature("2") == 2.0
    assert sampling_seed(str(2**63 - 1)) == 2**63 - 1 and sampling_seed("-7") == -7
    assert confidence_share("1") == 1.0 and confidence_share("0.6") == 0.6
    assert share("0") == 0.0 and share("1") == 1.0
