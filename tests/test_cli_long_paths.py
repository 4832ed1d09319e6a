"""A path argument longer than the system allows (a pasted blob, a runaway shell expansion) is one short
error line from our commands, not an OSError traceback from wherever the path is first looked at."""

from __future__ import annotations

import pytest
from helpers import run_cli


@pytest.mark.parametrize(
    "args",
    [
        ["validate", "rair", "a" * 5000],  # one name over 255 bytes
        ["validate", "rmir", "a/" * 3000],  # a path over 4,096 bytes
        ["compare", "b" * 5000, "c"],
    ],
    ids=["validate-name", "validate-path", "compare"],
)
def test_a_path_too_long_is_one_error_line(tmp_path, args):
    proc = run_cli(["ecom-tasks", *args], cwd=tmp_path)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    [line] = proc.stderr.strip().splitlines()[-1:]
    assert line.startswith("ecom-tasks: ") and line.endswith("characters): file name too long")
    assert len(line) < 200
