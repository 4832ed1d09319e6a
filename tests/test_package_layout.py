"""Where things live: each benchmark's paper tables sit in its folder beside the paper's numbers, the
report looks them up, and imports run one way (core -> benchmarks -> adapters, report and CLI)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ecom_tasks
from ecom_tasks.report.tables import BUILDERS
from ecom_tasks.results import BENCHMARKS

PACKAGE = Path(ecom_tasks.__file__).parent
#: What a benchmark folder or the core must never import: the layers that consume them.
CONSUMERS = (
    "ecom_tasks.report",
    "ecom_tasks.inspect_evals",
    "ecom_tasks.lm_eval_tasks",
    "ecom_tasks.cli",
    "ecom_tasks._registry",
)
#: The core modules the report's tables are built on.
REPORT_CORE = ("results.py", "tables.py", "reference_results.py")


def imported_modules(path: Path) -> set[str]:
    """Every ``ecom_tasks...`` module a file imports, at any depth (function-level imports too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return {name for name in found if name.startswith("ecom_tasks")}


def consumers_in(path: Path) -> list[str]:
    return sorted(m for m in imported_modules(path) if any(m == c or m.startswith(c + ".") for c in CONSUMERS))


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_each_benchmark_holds_its_paper_tables(benchmark: str) -> None:
    folder = PACKAGE / benchmark
    assert (folder / "paper_tables.py").is_file()
    assert (folder / "reference_results.csv").is_file()
    builder = BUILDERS[benchmark]
    assert builder.__module__ == f"ecom_tasks.{benchmark}.paper_tables" and builder.__name__ == "tables"
    assert builder([]) == []  # no runs, no tables (the paper's rows alone are in the benchmark README)


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_benchmark_folders_import_no_consumer(benchmark: str) -> None:
    for path in sorted((PACKAGE / benchmark).rglob("*.py")):
        assert consumers_in(path) == [], path.relative_to(PACKAGE)


@pytest.mark.parametrize("name", REPORT_CORE)
def test_report_core_imports_only_core(name: str) -> None:
    modules = imported_modules(PACKAGE / name)
    assert consumers_in(PACKAGE / name) == []
    assert not any(m.startswith(f"ecom_tasks.{b}") for m in modules for b in BENCHMARKS), modules


def test_calibration_reads_logs_outside_the_inspect_adapter() -> None:
    from ecom_tasks.ecomeval import calibration
    from ecom_tasks.inspect_evals import ecomeval as adapter

    assert callable(calibration.log_grades)
    assert not hasattr(adapter, "log_grades")
