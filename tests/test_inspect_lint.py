"""inspect-evals-lint runs in the suite: no failure, and every remaining finding is in the note with its reason.

The linter reads source only (no import, no network); its configuration is
``[tool.inspect-evals-lint]`` in ``pyproject.toml``, the note is
``docs/inspect-evals-lint.md``.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

from helpers import REPO_DIR

NOTE = REPO_DIR / "docs" / "inspect-evals-lint.md"
PACKAGES = ("inspect_evals", "scorers", "solvers")


def lint() -> dict:
    script = Path(sys.executable).parent / "inspect-evals-lint"
    assert script.exists(), "inspect-evals-lint is not installed: pip install -e '.[test]'"
    proc = subprocess.run(
        [str(script), *PACKAGES, "--output-format", "json"], cwd=REPO_DIR, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode in (0, 1), proc.stderr  # 2: a usage or configuration error
    return json.loads(proc.stdout)


def documented() -> set[tuple[str, str]]:
    """(code, file) of every row of the note's "Remaining findings" table."""
    section = NOTE.read_text(encoding="utf-8").split("## Remaining findings", 1)[1]
    rows = re.findall(r"^\| (IE[A-Z]{2}\d{3}) \| \w+ \| `([^`]+)` \| \w+ \| (.+) \|$", section, re.MULTILINE)
    assert all(reason.strip() for _, _, reason in rows)
    return {(code, path) for code, path, _ in rows}


def test_the_lint_passes_and_every_remaining_finding_is_documented():
    report = lint()
    findings = [(p["name"], d) for p in report["packages"] for d in p["diagnostics"]]
    failures = [f"{d['code']} {d['file']}:{d['line']}: {d['message']}" for _, d in findings if d["status"] == "fail"]
    assert failures == [] and report["passed"]
    notes = documented()
    undocumented = sorted({(d["code"], d["file"]) for _, d in findings if d["status"] != "pass"} - notes)
    assert undocumented == [], f"add these to {NOTE.name} with the reason (or fix them): {undocumented}"
    # And no row of the note is left over from a finding that is gone.
    stale = sorted(notes - {(d["code"], d["file"]) for _, d in findings if d["status"] != "pass"})
    assert stale == [], f"remove these rows from {NOTE.name}: the linter no longer reports them: {stale}"
    # Every package was linted, as an evaluation or a helper.
    assert sorted(p["name"] for p in report["packages"]) == sorted(PACKAGES)
    assert {p["kind"] for p in report["packages"]} == {"eval", "helper"}


def _private_inspect_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = (
            [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else []
        )
        found += [
            name
            for name in names
            if name.split(".")[0] == "inspect_ai" and any(part.startswith("_") for part in name.split(".")[1:])
        ]
    return found


def test_no_module_imports_a_private_inspect_module():
    """The whole package, including what the linter does not scan (cli.py, the benchmarks' folders)."""
    offenders = {}
    for path in sorted((REPO_DIR / "ecom_tasks").rglob("*.py")):
        imports = _private_inspect_imports(path)
        if imports:
            offenders[path.relative_to(REPO_DIR).as_posix()] = imports
    assert offenders == {}
