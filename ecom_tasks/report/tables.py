"""Each benchmark's paper tables (``ecom_tasks/<benchmark>/paper_tables.py``), and a table of the runs no layout uses."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ecom_tasks.ecomeval import paper_tables as ecomeval_paper_tables
from ecom_tasks.monbench import paper_tables as monbench_paper_tables
from ecom_tasks.rair import paper_tables as rair_paper_tables
from ecom_tasks.results import MergedRun
from ecom_tasks.rmir import paper_tables as rmir_paper_tables
from ecom_tasks.tables import Column, Slots, Table, finish, residual, run_row


def other_table(benchmark: str, runs: Sequence[MergedRun]) -> Table | None:
    """Runs no benchmark's layout uses (e.g. a benchmark's lm-eval exact-match group): their top-level metrics."""
    names = list(dict.fromkeys(name for run in runs for name in run.metrics if "/" not in name))
    if not names:
        return None
    rows = []
    for run in runs:
        slots = Slots(run.model_name, run.framework, run.task, residual(run, ()), {"all": run})
        rows.append(run_row(slots, {n: run.metrics.get(n) for n in names}))
    title = f"{benchmark or 'Other'}: other runs (top-level metrics)"
    display = "score" if benchmark == "ecomeval" else "fraction"
    return finish(Table(benchmark or "other", "other", title, [Column(n, n) for n in names], rows, display=display))


#: Each benchmark's tables, in the order the report shows them.
BUILDERS: dict[str, Callable[[Sequence[MergedRun]], list[Table]]] = {
    "rair": rair_paper_tables.tables,
    "ecomeval": ecomeval_paper_tables.tables,
    "rmir": rmir_paper_tables.tables,
    "monbench": monbench_paper_tables.tables,
}


def build_tables(runs: Sequence[MergedRun]) -> list[Table]:
    """Every table for the runs, benchmark by benchmark, then the runs no layout used. A stage of a data
    build (``ecom-tasks build``, its log records the stage) is in no table: its numbers (votes, abstentions)
    are no benchmark result, so it is in the run listing only."""
    tables: list[Table] = []
    by_benchmark: dict[str, list[MergedRun]] = {}
    for run in runs:
        if not run.info.get("construction_stage"):
            by_benchmark.setdefault(run.benchmark, []).append(run)
    for benchmark, group in by_benchmark.items():
        built = BUILDERS[benchmark](group) if benchmark in BUILDERS else []
        tables += built
        used = {id(run) for table in built for row in table.run_rows() for run in row.merged}
        unused = [run for run in group if id(run) not in used]
        extra = other_table(benchmark, unused)
        if extra is not None:
            tables.append(extra)
    order = {name: i for i, name in enumerate(BUILDERS)}
    return sorted(tables, key=lambda t: order.get(t.benchmark, len(order)))
