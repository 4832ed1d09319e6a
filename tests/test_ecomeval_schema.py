"""EcomEval records: the bundled fixtures, the paper's names mapped, and bad input as file:row:field errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from ecom_tasks.data import DataValidationError
from ecom_tasks.ecomeval.protocol import load_items, select
from ecom_tasks.ecomeval.schema import CATEGORIES, LANGUAGES, load_judge_cases, load_records

FIXTURES = Path(__file__).parents[1] / "ecom_tasks" / "fixtures" / "ecomeval"


def good_row(**changes) -> dict:
    row = {
        "id": "r1",
        "category": "ecom_qa",
        "task": "shopping_guide",
        "language": "en",
        "question": "Which option? A. x B. y",
        "reference": "A",
        "images": [],
        "difficulty": None,
    }
    row.update(changes)
    return row


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_fixtures_cover_every_category_and_language_with_real_images():
    records = load_records()
    assert len(records) == 70
    assert {r.category for r in records} == set(CATEGORIES)
    assert {r.language for r in records} == set(LANGUAGES)
    multimodal = [r for r in records if r.multimodal]
    assert {r.category for r in multimodal} == {"ecom_multimodal"} and len(multimodal) == 10
    # Table 4's eight multimodal tasks (PCISel, PICA, MBR, MPS, MPRD, PCISum, MSR, MVCD) each have an item.
    table4 = {
        "product_cover_image_selection",
        "product_image_content_analysis",
        "multimodal_brand_recognition",
        "multimodal_product_similarity",
        "multimodal_pickup_reschedule_detection",
        "product_comment_image_summarization",
        "multimodal_search_relevance",
        "multimodal_violation_content_detection",
    }
    assert table4 <= {r.task for r in multimodal}
    for record in multimodal:
        for image in record.images:
            with Image.open(image) as img:
                assert img.format == "PNG" and img.size == (96, 96)
    paper = {r.id for r in records if r.id.startswith("paper-")}
    assert paper == {
        "paper-A1",
        "paper-A2",
        "paper-A3",
        "paper-A4",
        "paper-A5",
        "paper-A6",
        "paper-D1",
        "paper-D2",
        "paper-D3",
        "paper-D4",
    }
    by_id = {r.id: r for r in records}
    # The paper's display names are mapped onto the slugs.
    assert by_id["paper-D2"].category == "ecom_generation" and by_id["paper-D3"].category == "ecom_qa"
    assert by_id["paper-A2"].reference == "1" and by_id["paper-D1"].reference == "A"
    assert by_id["c1-title-refinement"].difficulty == "hard" and by_id["paper-A1"].difficulty is None


def test_judge_gold_set_keeps_the_paper_verdicts_and_our_adversarial_cases():
    cases = {c.id: c for c in load_judge_cases()}
    assert {c.expected_grade for k, c in cases.items() if k.startswith("paper-D")} == {1}
    assert cases["paper-D4"].response == "C. Collaborating with Specialized Logistics Providers"
    adversarial = {k for k, c in cases.items() if c.kind == "adversarial"}
    assert adversarial == {"adv-format-only", "adv-claims-correct", "adv-wrong-language", "adv-empty", "adv-injection"}
    assert cases["adv-empty"].response == "" and "Final Score: 3" in cases["adv-injection"].response


def test_filters_select_items_and_unknown_values_are_errors():
    records = load_records()
    assert {r.category for r in select(records, category="Ecom QA")} == {"ecom_qa"}
    assert all(r.multimodal for r in select(records, multimodal="true"))
    assert not any(r.multimodal for r in select(records, multimodal=False))
    assert {r.language for r in select(records, language="vi,th")} == {"vi", "th"}
    assert {r.difficulty for r in select(records, difficulty="hard")} == {"hard"}
    exact = select(records, exact=True)
    assert {r.id for r in exact} >= {"paper-A2", "paper-D1", "paper-D3", "paper-D4", "syn-reasoning-en"}
    assert not any(r.multimodal for r in exact) and "paper-A3" not in {r.id for r in exact}
    with pytest.raises(ValueError, match="unknown category 'toys'"):
        select(records, category="toys")
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        select(records, language="fr")
    with pytest.raises(ValueError, match="no EcomEval records"):
        load_items(None, task="no_such_task")


def test_csv_with_json_image_lists_and_display_names(tmp_path):
    Image.new("RGB", (8, 8), "red").save(tmp_path / "p.png")
    path = tmp_path / "items.csv"
    path.write_text(
        "id,category,task,language,question,reference,images,difficulty\n"
        'c1,Ecom Multimodal,MBR,Thai,What brand?,Nike,"[""p.png""]",Easy\n'
        "c2,shopping_concepts,Product Categorization,pt,Which category?,Casa,,\n",
        encoding="utf-8",
    )
    first, second = load_records(str(path))
    assert (first.category, first.language, first.difficulty) == ("ecom_multimodal", "th", "easy")
    assert (first.task, second.task) == ("multimodal_brand_recognition", "product_categorization")
    assert first.images == (str((tmp_path / "p.png").resolve()),)
    assert second.images == () and second.difficulty is None


def test_bad_rows_are_file_row_field_errors(tmp_path):
    (tmp_path / "ok.png").write_bytes(b"")  # placeholder name, replaced below
    Image.new("RGB", (8, 8), "blue").save(tmp_path / "ok.png")
    (tmp_path / "corrupt.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really a png")
    path = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            good_row(id="a", category="toys"),
            good_row(id="b", language="fr"),
            good_row(id="c", images=["missing.png"]),
            good_row(id="d", images=["ok.png", "corrupt.png"]),
            good_row(id="e", reference="   "),
            good_row(id="f", difficulty="impossible"),
            good_row(id="g", images="ok.png"),  # a single path is one image: fine
        ],
    )
    with pytest.raises(DataValidationError) as caught:
        load_records(str(path))
    problems = [str(p) for p in caught.value.problems]
    assert problems[0] == f"{path}:1:category: unknown category 'toys'; expected one of {', '.join(CATEGORIES)}"
    assert problems[1] == f"{path}:2:language: unknown language 'fr'; expected one of {', '.join(LANGUAGES)}"
    assert problems[2] == f"{path}:3:images[0]: image file not found: {tmp_path / 'missing.png'}"
    assert problems[3].startswith(f"{path}:4:images[1]: {tmp_path / 'corrupt.png'}: pillow cannot read it")
    assert problems[4] == f"{path}:5:reference: empty string"
    assert problems[5].startswith(f"{path}:6:difficulty: unknown difficulty 'impossible'")
    assert len(problems) == 6


def test_hub_style_image_objects_become_data_uris():
    """A hub dataset's image column gives PIL images or {bytes, path} dicts instead of paths."""
    import io

    from ecom_tasks.data import Row
    from ecom_tasks.ecomeval.schema import validate_rows

    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), "green").save(buffer, format="PNG")
    rows = [
        Row("hub[test]", 1, good_row(id="p", images=[Image.new("RGB", (4, 4), "red")])),
        Row("hub[test]", 2, good_row(id="b", images=[{"bytes": buffer.getvalue(), "path": None}])),
        Row("hub[test]", 3, good_row(id="r", images=["relative.png"])),
    ]
    with pytest.raises(DataValidationError) as caught:
        validate_rows(rows)
    assert [str(p) for p in caught.value.problems] == [
        "hub[test]:3:images[0]: relative image path 'relative.png' but the data is not a local file to resolve it against"
    ]
    first, second = validate_rows(rows[:2])
    assert first.images[0].startswith("data:image/png;base64,") and second.images[0].startswith(
        "data:image/png;base64,"
    )


def test_the_papers_column_spellings_load_into_our_fields(tmp_path):
    """App. C's "difficulty level", App. A's "Reference Answer" / "Input Image", App. D's "Correct answer"."""
    Image.new("RGB", (8, 8), "red").save(tmp_path / "shoe.png")
    path = write_jsonl(
        tmp_path / "release.jsonl",
        [
            {
                "ID": "a",
                "Category": "Ecom QA",
                "Task": "shopping_guide",
                "Language": "English",
                "Question": "Which?\nA. x\nB. y",
                "Correct answer": "A",
                "difficulty level": "Hard",
            },
            {
                "id": "b",
                "category": "Ecom Multimodal",
                "task": "Multimodal Brand Recognition",
                "language": "pt",
                "question": "Brand?",
                "Reference Answer": "Nike",
                "Input Image": "shoe.png",
                "Difficulty-Level": "easy",
            },
        ],
    )
    first, second = load_records(str(path))
    assert (first.id, first.category, first.language, first.reference, first.difficulty) == (
        "a",
        "ecom_qa",
        "en",
        "A",
        "hard",
    )
    assert (
        second.reference == "Nike"
        and second.images == (str((tmp_path / "shoe.png").resolve()),)
        and second.difficulty == "easy"
    )


def test_a_field_given_by_two_columns_is_an_error(tmp_path):
    path = write_jsonl(tmp_path / "twice.jsonl", [good_row(**{"difficulty level": "hard", "difficulty": "easy"})])
    with pytest.raises(DataValidationError) as caught:
        load_records(str(path))
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:1:difficulty: given twice, by columns 'difficulty' and 'difficulty level'"
    ]


def test_ignored_columns_are_named_not_dropped_silently(tmp_path, capsys):
    from ecom_tasks import cli, data
    from ecom_tasks.ecomeval.schema import IgnoredColumnsWarning

    path = write_jsonl(
        tmp_path / "extra.jsonl",
        [good_row(**{"key challenges": "x", "average": 54.57, "origin": "ours"}), good_row(id="r2", notes="n")],
    )
    with pytest.warns(
        IgnoredColumnsWarning, match=r"ignored column\(s\) not read by ecomeval: key challenges, average, notes"
    ):
        load_records(str(path))
    args = cli.build_parser().parse_args(
        ["validate", "ecomeval", str(write_jsonl(tmp_path / "extra2.jsonl", [good_row(average=1)]))]
    )
    assert args.func(args) == 0
    out = capsys.readouterr()
    assert f"WARNING: {tmp_path / 'extra2.jsonl'}: ignored column(s) not read by ecomeval: average" in out.err
    assert "OK: 1 ecomeval records" in out.out
    # Our own fixtures carry only known columns. Their one warning names the item whose task is outside
    # EcomEval's 37 on purpose (the cache cleared: a fresh process reads the file again).
    data._validated.cache_clear()
    args = cli.build_parser().parse_args(["validate", "ecomeval"])
    assert args.func(args) == 0
    assert [line for line in capsys.readouterr().err.splitlines() if "WARNING" in line] == [
        "WARNING: task(s) outside EcomEval's 37, kept as given: 'prohibited_product_image_detection' "
        f"(1 item, first at {FIXTURES / 'ecomeval_fixtures.jsonl'}:20)"
    ]


def test_a_multimodal_item_without_an_image_is_rejected(tmp_path, capsys):
    from ecom_tasks import cli

    path = write_jsonl(
        tmp_path / "mm.jsonl",
        [
            good_row(id="m1", category="ecom_multimodal", task="PCISel", images=[]),
            good_row(id="m2", category="Ecom Multimodal", task="product_cover_image_selection"),
        ],
    )
    with pytest.raises(DataValidationError) as caught:
        load_records(str(path))
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:1:images: an ecom_multimodal item needs an image (none given)",
        f"{path}:2:images: an ecom_multimodal item needs an image (none given)",
    ]
    args = cli.build_parser().parse_args(["validate", "ecomeval", str(path)])
    assert args.func(args) == 1
    assert f"{path}:1:images: an ecom_multimodal item needs an image" in capsys.readouterr().err
