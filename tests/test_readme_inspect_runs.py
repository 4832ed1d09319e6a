"""The ``inspect eval`` commands of the READMEs and docs pages run as written (tests/test_readme_commands.py
finds them and runs the others; apart so that ``pytest -n`` runs the two shares on two workers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_readme_commands import INSPECT_RUNS, Command, run_as_written


def test_the_readmes_have_inspect_commands_to_run() -> None:
    assert len(INSPECT_RUNS) >= 5, [str(c) for c in INSPECT_RUNS]


@pytest.mark.slow
@pytest.mark.parametrize("command", INSPECT_RUNS, ids=str)
def test_readme_inspect_command_runs_offline(command: Command, tmp_path: Path) -> None:
    run_as_written(command, tmp_path)
