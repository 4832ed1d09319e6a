"""EcomEval's 37 tasks (issue 29): the list, every accepted spelling loaded to its id, a task under the
wrong category refused as file:row:task, a name outside the list kept and named once, selection by
any spelling in both frameworks, per-task results and calibrate under the canonical ids, and the
report's per-task table with a row per listed task."""

from __future__ import annotations

import csv
import json
import math
import re
import warnings
from pathlib import Path

import pytest
from PIL import Image
from test_report_merge import make_log, read_table, report_folder, run_rows

from ecom_tasks import cli
from ecom_tasks.data import DataValidationError
from ecom_tasks.ecomeval.metrics import Outcome, summarize
from ecom_tasks.ecomeval.protocol import NoItemsSelected, load_items, select
from ecom_tasks.ecomeval.schema import CATEGORIES, UnknownTasksWarning, load_records
from ecom_tasks.ecomeval.tasks import SPELLINGS, TASKS, TASKS_BY_ID, canonical_task, task_key
from ecom_tasks.plugins import select_metrics
from ecom_tasks.report import write_report

#: The task figure of the official repository, as issue 29 transcribes it: category, then its tasks in order.
FIGURE = {
    "ecom_qa": ["After-Sales Service", "Shopping Guide", "Brand Model", "Brand Knowledge", "Product Inquiry"],
    "shopping_concepts": [
        "Product Attribute Extraction",
        "Product Categorization",
        "Order Classification",
        "Product Type Understanding",
        "Prohibited Item Identification",
        "Logistics Dialogue Classification",
    ],
    "user_understanding": [
        "Query Understanding",
        "Query-Product Matching",
        "User Review",
        "Review Sentiment Classification",
        "Search Relevance",
        "Fraud Risk Analysis",
    ],
    "shopping_reasoning": [
        "Product Recommendation",
        "Numerical Reasoning",
        "Similar Product Identification",
        "Description Similarity Evaluation",
        "Complementary Product Recommendation",
        "Selling Point Analysis",
    ],
    "ecom_generation": [
        "Product Information Generation",
        "Product Title Generation",
        "Product Title Refinement",
        "Product Tag Generation",
        "After-Sales Issue Summarization",
        "Product Translation",
    ],
    "ecom_multimodal": [
        "Multimodal Violation Content Detection",
        "Multimodal Search Relevance",
        "Product Comment & Image Summarization",
        "Multimodal Pickup Reschedule Detection",
        "Multimodal Product Similarity",
        "Multimodal Brand Recognition",
        "Product Image Context Analysis",
        "Product Cover Image Selection",
    ],
}
#: Table 4's abbreviations, written out from the paper's text (Sec. 4.3.4).
TABLE4 = {
    "PCISel": "Product Cover Image Selection",
    "PICA": "Product Image Context Analysis",
    "MBR": "Multimodal Brand Recognition",
    "MPS": "Multimodal Product Similarity",
    "MPRD": "Multimodal Pickup Reschedule Detection",
    "PCISum": "Product Comment & Image Summarization",
    "MSR": "Multimodal Search Relevance",
    "MVCD": "Multimodal Violation Content Detection",
}
#: Spellings a release may use, each with the id it must load to (written by hand, not from the mapping).
BY_HAND = {
    "After-Sales Service": "after_sales_service",
    "after sales service": "after_sales_service",
    "AFTER_SALES_SERVICE": "after_sales_service",
    "Query-Product Matching": "query_product_matching",
    "query product relation": "query_product_matching",  # our fixtures' earlier name
    "search relevance assessment": "search_relevance",  # App. C, Table C1
    "Search Relevance": "search_relevance",
    "Multimodal Search Relevance": "multimodal_search_relevance",
    "msr": "multimodal_search_relevance",
    "Product Comment & Image Summarization": "product_comment_image_summarization",
    "product comment and image summarization": "product_comment_image_summarization",
    "PCISum": "product_comment_image_summarization",
    "PCISel": "product_cover_image_selection",
    "Product Image Context Analysis": "product_image_content_analysis",  # the figure
    "product image content analysis": "product_image_content_analysis",  # the paper's text
    "pica": "product_image_content_analysis",
    "Product Title Translation": "product_translation",  # App. A.5
    "attribute_translation": "product_translation",
    "Query Understanding": "query_understanding",
    "query_intent_classification": "query_understanding",
    "Product Categorisation": "product_categorization",
}


def _image(folder: Path) -> str:
    if not (folder / "p.png").exists():
        Image.new("RGB", (8, 8), "red").save(folder / "p.png")
    return "p.png"


def row(folder: Path, i: int, task: str, category: str, **changes) -> dict:
    """An item of ``task`` in ``category``; an image when the category is multimodal."""
    return {
        "id": f"r{i}",
        "category": category,
        "task": task,
        "language": "en",
        "question": f"Question {i}? Answer A or B.",
        "reference": "A",
        "images": [_image(folder)] if category == "ecom_multimodal" else [],
        **changes,
    }


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def variants(spelling: str) -> set[str]:
    """The ways a release may write one spelling: case, spaces / hyphens / underscores, '&' or 'and'."""
    forms = {spelling, spelling.upper(), spelling.lower(), spelling.title(), f"  {spelling} "}
    forms |= {spelling.replace(" ", "_"), spelling.replace(" ", "-"), spelling.replace("_", " ")}
    forms |= {spelling.replace("-", " "), spelling.replace("-", "_"), spelling.replace("&", "and")}
    forms.add(spelling.replace(" & ", "&"))
    return forms


# --- the list ---------------------------------------------------------------------------------


def test_the_list_is_the_figures_37_tasks_in_its_order():
    assert len(TASKS) == 37 and len(TASKS_BY_ID) == 37
    assert [t.category for t in TASKS] == [c for c in CATEGORIES for _ in FIGURE[c]]
    # The figure's names, in its order; PICA's name is the paper's text ("content"), the figure's an alias.
    for task, figure_name in zip(TASKS, [name for c in CATEGORIES for name in FIGURE[c]]):
        assert task_key(figure_name) in {task_key(s) for s in task.spellings}, (task.id, figure_name)
    assert {t.abbreviation: t.id for t in TASKS if t.abbreviation} == {
        abbreviation: canonical_task(name) for abbreviation, name in TABLE4.items()
    }
    assert all(t.category == "ecom_multimodal" for t in TASKS if t.abbreviation)
    assert all(re.fullmatch(r"[a-z]+(_[a-z]+)*", t.id) for t in TASKS)
    # The ids the fixtures, Table 4's reference rows and the tests used before stay ids.
    assert {"order_classification", "prohibited_item_identification", "product_image_content_analysis"} <= set(
        TASKS_BY_ID
    )


def test_every_spelling_in_the_mapping_loads_to_its_id(tmp_path: Path):
    rows, expected = [], []
    for task in TASKS:
        for spelling in task.spellings:
            for form in sorted(variants(spelling)):
                rows.append(row(tmp_path, len(rows) + 1, form, task.category))
                expected.append(task.id)
    for spelling, task_id in BY_HAND.items():
        rows.append(row(tmp_path, len(rows) + 1, spelling, TASKS_BY_ID[task_id].category))
        expected.append(task_id)
    path = write_jsonl(tmp_path / "spellings.jsonl", rows)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnknownTasksWarning)  # not one of them is outside the list
        records = load_records(str(path))
    assert [r.task for r in records] == expected
    assert len(records) > 10 * len(TASKS) and len(SPELLINGS) > len(TASKS)


# --- refused, kept, named ---------------------------------------------------------------------------


def test_a_task_under_another_category_is_a_file_row_task_problem(tmp_path: Path, capsys):
    path = write_jsonl(
        tmp_path / "wrong.jsonl",
        [
            row(tmp_path, 1, "Shopping Guide", "ecom_qa"),
            row(tmp_path, 2, "Shopping Guide", "User Understanding"),
            row(tmp_path, 3, "MPS", "shopping_reasoning"),
            row(tmp_path, 4, "search relevance assessment", "ecom_multimodal"),
        ],
    )
    with pytest.raises(DataValidationError) as caught:
        load_records(str(path))
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:2:task: 'Shopping Guide' (task shopping_guide) is of category ecom_qa in EcomEval's list, "
        "not user_understanding",
        f"{path}:3:task: 'MPS' (task multimodal_product_similarity) is of category ecom_multimodal in EcomEval's "
        "list, not shopping_reasoning",
        f"{path}:4:task: 'search relevance assessment' (task search_relevance) is of category user_understanding "
        "in EcomEval's list, not ecom_multimodal",
    ]
    args = cli.build_parser().parse_args(["validate", "ecomeval", str(path)])
    assert args.func(args) == 1
    err = capsys.readouterr().err
    assert f"{path}:2:task: 'Shopping Guide'" in err and "INVALID: 3 problem(s)" in err


def test_a_name_outside_the_list_is_kept_and_named_once(tmp_path: Path, capsys):
    path = write_jsonl(
        tmp_path / "outside.jsonl",
        [
            row(tmp_path, 1, "Gift Wrapping Advice", "ecom_qa"),
            row(tmp_path, 2, "after-sales service", "ecom_qa"),
            row(tmp_path, 3, "Gift Wrapping Advice", "ecom_qa"),
            row(tmp_path, 4, "prohibited product image detection", "ecom_multimodal"),
        ],
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = load_records(str(path))
    ours = [w for w in caught if issubclass(w.category, UnknownTasksWarning)]
    assert [str(w.message) for w in ours] == [
        "task(s) outside EcomEval's 37, kept as given: 'Gift Wrapping Advice' (2 items, first at "
        f"{path}:1); 'prohibited product image detection' (1 item, first at {path}:4)"
    ]
    assert [r.task for r in records] == [
        "Gift Wrapping Advice",
        "after_sales_service",
        "Gift Wrapping Advice",
        "prohibited product image detection",
    ]
    # validate names them (a new file: read afresh) and lists every task with its items.
    copy = write_jsonl(tmp_path / "outside2.jsonl", [row(tmp_path, 1, "Gift Wrapping Advice", "ecom_qa")])
    args = cli.build_parser().parse_args(["validate", "ecomeval", str(copy)])
    assert args.func(args) == 0
    out = capsys.readouterr()
    assert [line for line in out.err.splitlines() if "WARNING" in line] == [
        f"WARNING: task(s) outside EcomEval's 37, kept as given: 'Gift Wrapping Advice' (1 item, first at {copy}:1)"
    ]
    assert re.search(r"^\s+Gift Wrapping Advice\s+1$", out.out, re.M)


def test_the_fixtures_use_canonical_ids_but_one_item_outside_the_list():
    records = load_records()
    outside = {r.id: r.task for r in records if r.task not in TASKS_BY_ID}
    assert outside == {"syn-mm-pt": "prohibited_product_image_detection"}
    for path in (Path(__file__).parents[1] / "ecom_tasks" / "fixtures" / "ecomeval").glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            assert item["task"] in TASKS_BY_ID or item["id"] == "syn-mm-pt", item["id"]


# --- selection ----------------------------------------------------------------------------------------


def test_any_spelling_selects_one_task_and_an_unknown_one_says_so():
    records = load_records()
    matching = {r.id for r in records if r.task == "query_product_matching"}
    assert matching == {"paper-D1", "syn-user-en-complement", "syn-user-pt-exact"}
    for spelling in ("query_product_matching", "Query-Product Matching", "query product relation"):
        assert {r.id for r in select(records, task=spelling)} == matching
    assert {r.id for r in select(records, task="PICA,pcisel")} == {"syn-mm-en-count", "syn-mm-en"}
    # A task outside the list is selected as the data spells it.
    assert [r.id for r in select(records, task="prohibited_product_image_detection")] == ["syn-mm-pt"]
    with pytest.raises(NoItemsSelected, match=r"'aftersale servise' is none of EcomEval's 37 tasks; did you mean "):
        load_items(None, task="aftersale servise")
    # A misspelt name beside one that selects items was dropped silently (PCISel ran alone); now refused.
    with pytest.raises(NoItemsSelected, match=r"^task 'PICAA' selects no .*'PICAA' is none of EcomEval's 37 tasks"):
        load_items(None, task="PCISel,PICAA")
    assert {i.id for i in load_items(None, task="PCISel,prohibited_product_image_detection")} == {
        "syn-mm-en",
        "syn-mm-pt",
    }
    # A listed task without items in the data: no hint, just no items.
    with pytest.raises(NoItemsSelected) as caught:
        load_items(None, task="Fraud Risk Analysis")
    assert "none of EcomEval's 37" not in str(caught.value)


def _spelled_data(folder: Path) -> Path:
    """Exact-answer items of three tasks, each task under two spellings, and one multimodal item."""
    return write_jsonl(
        folder / "spelled.jsonl",
        [
            row(folder, 1, "Query-Product Matching", "user_understanding"),
            row(folder, 2, "query_product_relation", "user_understanding", reference="B"),
            row(folder, 3, "After-Sales Service", "Ecom QA"),
            row(folder, 4, "after sales service", "ecom_qa"),
            row(folder, 5, "Numerical Reasoning", "shopping_reasoning"),
            row(folder, 6, "numerical-reasoning", "shopping_reasoning", reference="B"),
            row(folder, 7, "PICA", "ecom_multimodal"),
        ],
    )


@pytest.mark.slow
def test_lm_eval_exact_reports_per_task_means_as_inspect_does(tmp_path: Path):
    """lm-eval's ecomeval_exact gave no task/<id> key (its list said task names were free text), so its
    runs had no per-task numbers where Inspect's ecomeval_exact has them. The baseline picks option A:
    after_sales_service 1 of 2 right (50), numerical_reasoning 1 of 1 (100), shopping_guide no item."""
    import lm_eval
    from inspect_ai import eval as inspect_eval

    from ecom_tasks.inspect_evals.ecomeval import ecomeval_exact
    from ecom_tasks.lm_eval_tasks import task_manager

    question = {"question": "Which one?\nA. this\nB. that"}
    data = write_jsonl(
        tmp_path / "three.jsonl",
        [
            row(tmp_path, 1, "After-Sales Service", "ecom_qa", **question),
            row(tmp_path, 2, "after_sales_service", "ecom_qa", reference="B", **question),
            row(tmp_path, 3, "Numerical Reasoning", "shopping_reasoning", **question),
        ],
    )
    results = lm_eval.simple_evaluate(
        model="ecom-baseline",
        tasks=["ecomeval_exact"],
        task_manager=task_manager(include_defaults=False, metadata={"data": str(data)}),
        bootstrap_iters=0,
    )
    found = results["results"]["ecomeval_exact"].items()
    lm = {k.removesuffix(",none"): v for k, v in found if k.startswith("task/") and "_stderr" not in k}
    assert lm["task/after_sales_service"] == pytest.approx(50) and lm["task/numerical_reasoning"] == pytest.approx(100)
    assert math.isnan(lm["task/shopping_guide"]) and "task/product_cover_image_selection" not in lm
    results = lm_eval.simple_evaluate(
        model="ecom-baseline",
        tasks=["ecomeval_exact_ecom_qa"],
        task_manager=task_manager(include_defaults=False, metadata={"data": str(data)}),
        bootstrap_iters=0,
    )
    qa = [k for k in results["results"]["ecomeval_exact_ecom_qa"] if k.startswith("task/") and "_stderr" not in k]
    assert qa == [f"task/{t.id},none" for t in TASKS if t.category == "ecom_qa"]  # its category's tasks only
    (log,) = inspect_eval(ecomeval_exact(data=str(data)), model="ecom/baseline", log_dir=str(tmp_path), display="none")
    inspect = {k: m.value for s in log.results.scores for k, m in s.metrics.items() if k.startswith("task/")}
    assert inspect == {k: v for k, v in lm.items() if not math.isnan(v)}


@pytest.mark.slow
def test_inspect_and_lm_eval_select_by_any_spelling_and_report_canonical_ids(tmp_path: Path):
    import lm_eval
    from inspect_ai import eval as inspect_eval

    from ecom_tasks.inspect_evals.ecomeval import ecomeval, ecomeval_exact
    from ecom_tasks.lm_eval_tasks import task_manager

    data = _spelled_data(tmp_path)
    (log,) = inspect_eval(
        ecomeval(data=str(data), task="Query Product Matching"),
        model="ecom/baseline",
        model_roles={"grader": "ecom/baseline"},
        log_dir=str(tmp_path / "one"),
        display="none",
    )
    assert [s.metadata["record_id"] for s in log.samples] == ["r1", "r2"]
    metrics = {name: m.value for score in log.results.scores for name, m in score.metrics.items()}
    assert [k for k in metrics if k.startswith("task/")] == ["task/query_product_matching"]
    (log,) = inspect_eval(
        ecomeval_exact(data=str(data)), model="ecom/baseline", log_dir=str(tmp_path / "all"), display="none"
    )
    assert {s.metadata["task"] for s in log.samples} == {
        "query_product_matching",
        "after_sales_service",
        "numerical_reasoning",
    }
    results = lm_eval.simple_evaluate(
        model="ecom-baseline",
        tasks=["ecomeval_exact"],
        task_manager=task_manager(include_defaults=False, metadata={"data": str(data), "task": "AFTER-SALES SERVICE"}),
        bootstrap_iters=0,
        log_samples=True,
    )
    documents = results["samples"]["ecomeval_exact"]
    assert sorted(d["doc"]["record_id"] for d in documents) == ["r3", "r4"]
    assert {d["doc"]["task"] for d in documents} == {"after_sales_service"}


@pytest.mark.slow
def test_calibrate_writes_task_difficulty_under_canonical_ids(tmp_path: Path):
    """Two logs of the baseline on data with two spellings per task; the task table has one row per
    task, under its id. A log of before the list (its samples holding another spelling) is mapped too."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log, write_eval_log

    from ecom_tasks.inspect_evals.ecomeval import ecomeval

    data = _spelled_data(tmp_path)
    (log,) = inspect_eval(
        ecomeval(data=str(data), multimodal=False),
        model="ecom/baseline",
        model_roles={"grader": "ecom/baseline"},
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    old = read_eval_log(log.location)
    old.eval.model = "ecom/older-run"
    for sample in old.samples:  # as a log written before the task list held them
        sample.metadata["task"] = {"r1": "Query-Product Matching", "r4": "after sales service"}.get(
            sample.metadata["record_id"], sample.metadata["task"]
        )
    write_eval_log(old, str(tmp_path / "logs" / "older.eval"))
    out = tmp_path / "calibrated.jsonl"
    args = cli.build_parser().parse_args(
        ["calibrate", log.location, str(tmp_path / "logs" / "older.eval"), "--out", str(out), "--data", str(data)]
    )
    assert args.func(args) == 0
    with (tmp_path / "calibrated.tasks.csv").open(encoding="utf-8", newline="") as fh:
        table = {r["task"]: r for r in csv.DictReader(fh)}
    assert set(table) == {"query_product_matching", "after_sales_service", "numerical_reasoning"}
    assert {r["items"] for r in table.values()} == {"2"} and {r["models"] for r in table.values()} == {"2"}


# --- the report ---------------------------------------------------------------------------------------


def _part(task_id: str) -> str:
    task = TASKS_BY_ID[task_id]
    titles = {
        "ecom_qa": "Ecom QA",
        "shopping_concepts": "Shopping Concept",
        "user_understanding": "User Understanding",
        "shopping_reasoning": "Shopping Reasoning",
        "ecom_generation": "Ecom Generative Ability",
        "ecom_multimodal": "Ecom Multimodal",
    }
    return f"{titles[task.category]}: {task.name}" + (f" ({task.abbreviation})" if task.abbreviation else "")


def test_the_per_task_table_has_a_row_per_listed_task_and_names_the_others_apart(tmp_path: Path):
    specs = select_metrics("rubric")
    # One item per listed task (grade i mod 4), one outside the list: the run covers all 37.
    outcomes = [Outcome(i % 4, 1.0, task.category, "en", task.id) for i, task in enumerate(TASKS)]
    outcomes.append(
        Outcome.of({"grade": 3, "graded": 1}, {"category": "ecom_qa", "language": "en", "task": "Gift Wrapping Advice"})
    )
    full = summarize(outcomes, specs)
    # A second run: two tasks, one of them under a log key of before the list (query_product_relation).
    part = {"task/shopping_guide": 50.0, "task/query_product_relation": 25.0, "score": 40.0, "n": 2.0}
    meta = {"benchmark": "ecomeval", "scoring": "judge"}
    args = {"data": None, "category": None, "language": None, "cache": True}
    make_log(tmp_path / "full.eval", "ecomeval", full, task_args=args, grader="x/full", metadata=meta)
    make_log(tmp_path / "part.eval", "ecomeval", part, task_args=args, grader="x/part", metadata=meta)
    out = report_folder(tmp_path)
    write_report([tmp_path], out, plots=False)

    rows = run_rows(out, "ecomeval_tasks")
    full_rows = [r for r in rows if r["setting"] == "judge x/full"]
    assert len(full_rows) == 37
    assert [r["part"] for r in full_rows] == [_part(t.id) for t in TASKS]
    assert [float(r["task_mean"]) for r in full_rows] == pytest.approx([(i % 4) * 100 / 3 for i in range(37)])
    part_rows = {r["part"]: r["task_mean"] for r in rows if r["setting"] == "judge x/part"}
    assert len(part_rows) == 37
    assert {p: v for p, v in part_rows.items() if v} == {
        _part("shopping_guide"): "50.0",
        _part("query_product_matching"): "25.0",
    }
    # The task outside the list is in its own table, named as the log names it.
    outside = run_rows(out, "ecomeval_tasks_outside")
    assert [(r["setting"], r["part"], float(r["task_mean"])) for r in outside] == [
        ("judge x/full", "gift_wrapping_advice", 100.0)
    ]
    # Table 4 is unchanged: the eight tasks under the paper's abbreviations.
    table4 = next(r for r in read_table(out, "ecomeval_table4") if r["setting"] == "judge x/full")
    assert float(table4["task/product_cover_image_selection"]) == (36 % 4) * 100 / 3
    md = (out / "report.md").read_text()
    assert "| Ecom Multimodal: Product Cover Image Selection (PCISel) |" in md
