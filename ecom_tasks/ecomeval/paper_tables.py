"""EcomEval's tables in the report: the paper's Tables 2, 3 and 4, with our per-difficulty and per-task tables (0-100)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from ecom_tasks.ecomeval.judge_run import panel_label
from ecom_tasks.ecomeval.schema import CATEGORY_NAMES, DIFFICULTIES, LANGUAGE_NAMES
from ecom_tasks.ecomeval.tasks import TABLE4_ORDER, TASKS, TASKS_BY_ID, EcomEvalTask, find_task
from ecom_tasks.ecomeval.variants import DEFAULT_GRADER
from ecom_tasks.results import LM_EVAL, MergedRun, Run
from ecom_tasks.scorers.judge import PANEL_ROLE
from ecom_tasks.scorers.panel import MEDIAN
from ecom_tasks.tables import Column, Row, Slots, Table, assemble, data_and_flags, finish, paper_rows, run_row

#: Table 2's and Table 3's column orders.
TEXT_CATEGORIES = tuple(
    (slug, CATEGORY_NAMES[slug])
    for slug in ("ecom_generation", "user_understanding", "shopping_reasoning", "shopping_concepts", "ecom_qa")
)
LANGUAGES = tuple((code, LANGUAGE_NAMES[code]) for code in ("en", "id", "ms", "pt", "th", "zh", "vi"))
#: Table 4's columns: the eight multimodal tasks under the paper's abbreviations.
MULTIMODAL_TASKS = tuple((task_id, TASKS_BY_ID[task_id].abbreviation) for task_id in TABLE4_ORDER)
TASK_PREFIX = "task/"


def panel_members(run: Run | MergedRun) -> list[str]:
    """The models an Inspect run graded with (the ``graders`` parameter, else the ``grader_<n>`` roles, in their
    order; none: its ``grader`` role, as an lm-eval run's judge is)."""
    if run.framework == LM_EVAL:
        return []
    named = str(run.info.get("graders") or "")
    if named and named != "roles":
        return [run.roles.get(name, name) for name in named.split(",")]
    numbers = {r: int(m.group(1)) for r in run.roles if (m := PANEL_ROLE.match(r))}
    return [run.roles[r] for r in sorted(numbers, key=numbers.__getitem__)]


def _judge(run: MergedRun) -> str:
    """The row label's judge: one grader's model, or ``panel median(a, b, c)`` (Inspect roles, or the
    grader or panel ``ecom-tasks judge`` graded an lm-eval run with)."""
    members = panel_members(run)
    if len(members) > 1:
        return f"judge {panel_label(members, run.info.get('panel') or MEDIAN)}"
    judge = (members[0] if members else None) or run.roles.get("grader") or run.settings_dict.get("role:grader")
    if judge:
        return f"judge {judge}"
    return f"judge {DEFAULT_GRADER} (default)"


EXACT = "exact match (no judge)"
#: The flags of an lm-eval run's responses (EcomEval's first stage in lm-eval, ``n`` its only number).
JUDGED_FLAG = "judged: its grades are in the tables above"
AWAITING_FLAG = "not judged yet: run ecom-tasks judge on its output folder"


def _responses_only(run: MergedRun) -> bool:
    """An lm-eval run of a judge-graded EcomEval task before ``ecom-tasks judge``: responses, no grades."""
    return (
        run.framework == LM_EVAL
        and run.info.get("scoring") != "judge"
        and not run.task.startswith("ecomeval_exact")
        and "score" not in run.metrics
    )


def _folders(run: MergedRun) -> set[Path]:
    return {Path(source).parent for source in run.sources}


def responses_table(runs: Sequence[MergedRun]) -> Table | None:
    """lm-eval's EcomEval runs that hold responses only, each flagged judged (``ecom-tasks judge`` wrote
    its results beside them, read as a row of Tables 2-4) or not judged yet, with the command."""
    judged = {
        (run.task, run.model_name, folder)
        for run in runs
        if run.framework == LM_EVAL and run.info.get("scoring") == "judge"
        for folder in _folders(run)
    }
    rows = []
    for run in runs:
        if not _responses_only(run):
            continue
        data, flags = data_and_flags([run])
        done = any((run.task, run.model_name, folder) in judged for folder in _folders(run))
        rows.append(
            Row(
                run.model_name,
                run.task,
                run.framework,
                {"n": run.metrics["n"]} if "n" in run.metrics else {},
                merged=(run,),
                data=data,
                flags=(*flags, JUDGED_FLAG if done else AWAITING_FLAG),
            )
        )
    if not rows:
        return None
    note = (
        "lm-eval writes EcomEval's responses; their grades come from a second step, `ecom-tasks judge OUTPUT_DIR "
        "--grader MODEL` (the ecomeval README), whose results file the report reads as a row of Tables 2-4."
    )
    return Table(
        "ecomeval",
        "responses",
        "EcomEval in lm-eval: responses and whether they are judged",
        [Column("n", "items")],
        rows,
        display="count",
        note=note,
    )


def task_part(task: EcomEvalTask) -> str:
    """A per-task row's part: ``Ecom Multimodal: Product Cover Image Selection (PCISel)``."""
    return f"{CATEGORY_NAMES[task.category]}: {task.name}" + (f" ({task.abbreviation})" if task.abbreviation else "")


def task_keys(metrics: Mapping[str, float]) -> tuple[dict[str, str], list[str]]:
    """A run's per-task metric keys: listed task id -> its key, and the keys of tasks outside the list.

    A log written before the list (or with another spelling) has ``task/query_product_relation``: it is
    the key of ``query_product_matching`` unless the log also has that task under its id (then the other
    spelling, no item count to merge them with, is shown apart)."""
    keys = [key for key in metrics if key.startswith(TASK_PREFIX)]
    listed = {key[len(TASK_PREFIX) :]: key for key in keys if key[len(TASK_PREFIX) :] in TASKS_BY_ID}
    outside = []
    for key in keys:
        if key in listed.values():
            continue
        found = find_task(key[len(TASK_PREFIX) :])
        if found is not None and found.id not in listed:
            listed[found.id] = key
        else:
            outside.append(key)
    return listed, outside


def task_tables(rows_slots: Sequence[Slots]) -> list[Table]:
    """The per-task table (every listed task for every run with per-task results) and the table of
    tasks outside the list."""
    runs = [
        slots
        for slots in rows_slots
        if "" in slots.runs and any(key.startswith(TASK_PREFIX) for key in slots.runs[""].metrics)
    ]
    keys = [task_keys(slots.runs[""].metrics) for slots in runs]
    listed_rows = [
        run_row(slots, {"task_mean": slots.metric("", listed[task.id]) if task.id in listed else None}, task_part(task))
        for task in TASKS
        for slots, (listed, _) in zip(runs, keys)
    ]
    outside_names = sorted({key for _, outside in keys for key in outside})
    outside_rows = [
        run_row(slots, {"task_mean": slots.metric("", key)}, key[len(TASK_PREFIX) :])
        for key in outside_names
        for slots, (_, outside) in zip(runs, keys)
        if key in outside
    ]
    specs = (
        (
            "tasks",
            "EcomEval per task: the 37 tasks of the list (0-100)",
            listed_rows,
            "A row per task of EcomEval's list (the official repository's task figure), in the figure's "
            "order within each category, for each run; blank (an lm-eval row: n/a) where the run has no item of the task. "
            "item mean: over the task's graded items. Task names the data spells otherwise (the paper's "
            "abbreviations, display names) are counted under the task; tasks outside the list are in the "
            "next table.",
        ),
        (
            "tasks_outside",
            "EcomEval tasks outside the list of 37 (0-100)",
            outside_rows,
            "Task names in the data that are none of EcomEval's 37 tasks (the loader kept them as given "
            "and warned), as the log names them. A multimodal one counts in score_multimodal.",
        ),
    )
    column = [Column("task_mean", "item mean")]
    found = [
        finish(Table("ecomeval", name, title, column, rows, display="score", note=note))
        for name, title, rows, note in specs
    ]
    return [table for table in found if table is not None]


def _six_category_score(slots: Slots) -> bool:
    """A log from before ``score`` meant Table 2's Average: it has a multimodal category mean but no
    ``score_multimodal``, so its ``score`` averaged the multimodal category in too."""
    metrics = slots.runs[""].metrics if "" in slots.runs else {}
    return "category/ecom_multimodal" in metrics and "score_multimodal" not in metrics


def tables(runs: Sequence[MergedRun]) -> list[Table]:
    def classify(run: MergedRun) -> tuple[str, str] | None:
        if "score" not in run.metrics and not any(k.startswith("category/") for k in run.metrics):
            return None
        if run.framework == LM_EVAL and run.info.get("scoring") == "judge":
            # ``ecom-tasks judge``'s grades of lm-eval's responses: the same keys as an Inspect run.
            return _judge(run), ""
        if run.framework == LM_EVAL:
            # lm-eval: the ``ecomeval_exact`` group holds the averages, each ``ecomeval_exact_<category>``
            # task its category's items (its language/task breakdowns mix categories: left to "other").
            prefix = "ecomeval_exact_"
            return EXACT, (run.task[len(prefix) :] if run.task.startswith(prefix) else "")
        return (EXACT if run.info.get("scoring") in ("exact", "exact match") else _judge(run)), ""

    # The judge is in the row label: its settings (Inspect roles, the lm-eval judge) are not repeated.
    judge_settings = {"role:grader", "judge"} | {
        k for run in runs for k, _ in run.settings if PANEL_ROLE.match(k.removeprefix("role:"))
    }
    rows_slots = assemble(runs, classify, judge_settings)

    def cell(slots: Slots, key: str) -> float | None:
        found = slots.metric("", key)
        if found is None and key.startswith("category/"):
            found = slots.metric(key.split("/", 1)[1], key)
        if key == "score" and _six_category_score(slots):
            return None
        return found

    def table(name: str, title: str, columns: list[Column], note: str = "", refs: bool = True) -> Table | None:
        rows = [run_row(slots, {c.key: cell(slots, c.log_key) for c in columns}) for slots in rows_slots]
        rows = [row for row in rows if any(k != "judge_failure_rate" for k in row.cells)]
        reference = paper_rows("ecomeval", name, "0-100") if refs else []
        return finish(Table("ecomeval", name, title, columns, rows + reference, display="score", note=note))

    present = {name for slots in rows_slots if "" in slots.runs for name in slots.runs[""].metrics}
    tables = [
        table(
            "table2",
            "EcomEval Table 2: average and per category (0-100)",
            [
                Column("score", "Average", headline=True),
                *(Column(f"category/{slug}", title) for slug, title in TEXT_CATEGORIES),
                Column("score_items", "item mean"),
                Column("judge_failure_rate", "judge failures %", display="percent"),
            ],
            note="Average: the log's score, the mean of the five text categories' means, as the paper's Table 2 "
            "averages them (the multimodal tasks' Average is Table 4's). A log written before score meant that "
            "(its score averages every category, multimodal included) leaves this Average empty. "
            "item mean: over all graded items. "
            "judge failures: share of items the judge did not grade (left out of every mean, never a 0); "
            "a row whose failure rate is above the run's threshold is flagged 'judge unreliable'.",
        ),
        table(
            "table3",
            "EcomEval Table 3: per language (0-100)",
            [Column(f"language/{code}", title) for code, title in LANGUAGES],
            note="Each language: the mean over the run's graded items in it, multimodal ones included. The "
            "paper's rows are its text models (Table 2's), so compare a run of text items (multimodal=false).",
        ),
        table(
            "table4",
            "EcomEval Table 4: multimodal tasks (0-100)",
            [
                Column("multimodal_average", "Average", metric="score_multimodal", headline=True),
                *(Column(f"task/{slug}", abbrev) for slug, abbrev in MULTIMODAL_TASKS),
                Column("category/ecom_multimodal", "item mean"),
            ],
            note="Average: the log's score_multimodal, the mean of the means of every multimodal task in the run (the "
            "paper's: its eight task columns), so a task outside those eight counts too (it is in the per-task "
            "table); empty for a log written before that metric existed. item mean: the multimodal "
            "category's mean over its items, which the paper does not print.",
        ),
        table(
            "difficulty",
            "EcomEval by difficulty (0-100)",
            [Column(f"difficulty/{d}", d) for d in DIFFICULTIES if f"difficulty/{d}" in present],
            refs=False,
        ),
        *task_tables(rows_slots),
    ]
    tables.append(responses_table(runs))
    return [t for t in tables if t is not None]
