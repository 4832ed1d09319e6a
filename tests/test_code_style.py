"""ruff (lint and format) and mypy stay clean over the repository, as configured in pyproject.toml."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed (pip install -e '.[test]')")
@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]], ids=["lint", "format"])
def test_ruff_is_clean(command: list[str]) -> None:
    run = subprocess.run([RUFF, *command], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


MYPY = shutil.which("mypy", path=str(Path(sys.executable).parent)) or shutil.which("mypy")


@pytest.mark.slow  # without mypy's cache (.mypy_cache) it checks every module and its imports: a minute or more
@pytest.mark.skipif(MYPY is None, reason="mypy is not installed (pip install -e '.[test]')")
def test_mypy_is_clean() -> None:
    """The package type-checks as configured in pyproject.toml ([tool.mypy])."""
    run = subprocess.run([MYPY, "ecom_tasks"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
