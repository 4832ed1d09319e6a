"""RAIR records, fixtures, bad-input reporting (file:row:field) and the rules document."""

from __future__ import annotations

import base64
import collections
import json
from pathlib import Path

import pytest

from ecom_tasks.cli import main as ecom_tasks_cli
from ecom_tasks.data import DataValidationError, Row, fixtures_dir
from ecom_tasks.images import ImageAccess
from ecom_tasks.rair.rules import builtin_rules, gold_dimension, load_rules
from ecom_tasks.rair.schema import (
    DIMENSIONS,
    INDUSTRIES,
    INTENTS,
    LEVELS,
    SUBSETS,
    canonical_industry,
    infer_language,
    load_records,
    validate_rows,
)

FIXTURE_IMAGE = fixtures_dir("rair") / "images" / "color_red.png"


def good_row(**overrides) -> dict:
    row = {
        "id": "x1",
        "subset": "general",
        "query": "red hoodie",
        "title": "Unisex cotton hoodie, red",
        "shop_name": "",
        "cpv": "",
        "sku": "",
        "image": None,
        "industry": "Fashion & Apparel",
        "intent": None,
        "label": "L4",
        "rule_ids": [],
        "language": "en",
    }
    row.update(overrides)
    return row


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


# --- fixtures -------------------------------------------------------------------------


def test_fixtures_cover_every_subset_industry_intent_level_and_dimension():
    records = load_records()
    assert collections.Counter(r.subset for r in records).keys() == set(SUBSETS)
    assert {r.industry for r in records if r.subset == "general"} == set(INDUSTRIES)
    assert {r.intent for r in records if r.subset == "hard"} == set(INTENTS)
    for subset in SUBSETS:
        assert {r.label for r in records if r.subset == subset} >= {"L2", "L4"}
    assert {r.label for r in records} == set(LEVELS)
    assert {gold_dimension(r.rule_ids) for r in records} - {None} == set(DIMENSIONS)
    assert {r.language for r in records} == {"en", "zh"}
    assert all(r.intent is None for r in records if r.subset != "hard")


def test_fixture_paper_examples_keep_their_paper_labels():
    by_id = {r.id: r for r in load_records()}
    expected = {
        "rair-paper-fig6-automotive": ("Buick GL8 sliding door lubricant", "L4"),
        "rair-paper-fig6-healthcare": ("Gum regeneration and tooth stabilization treatment for receding gums", "L4"),
        "rair-paper-fig10-dj": ("Capibara plush toy", "L4"),
        "rair-paper-fig10-er": ("Estée Lauder Alternative", "L2"),
        "rair-paper-fig10-ss": ("Birthday Gift for Girlfriend", "L4"),
        "rair-paper-fig10-qa": ("What to Do About Poor Bedroom Soundproofing", "L1"),
        "rair-paper-fig10-nc": ("Silicone-Free Shampoo", "L4"),
        "rair-paper-fig10-ma": ("Women's Summer White A-Line Dress Cinched Waist", "L4"),
        "rair-paper-fig3-l3": ("Burgundy Dress", "L3"),
        "rair-paper-sec32-severity": ("green shirt", "L1"),
    }
    for record_id, (query, label) in expected.items():
        assert (by_id[record_id].query, by_id[record_id].label) == (query, label)
    assert by_id["rair-paper-fig10-er"].intent == "ER"


def test_synthetic_fixtures_are_labelled_as_such():
    rows = [json.loads(line) for line in (fixtures_dir("rair") / "rair.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in rows:
        if row["origin"] == "synthetic":
            assert row["id"].startswith("rair-syn-") and "Synthetic" in row["note"]
        else:
            assert row["origin"].startswith("paper:") and row["id"].startswith("rair-paper-")


def test_fixture_labels_follow_the_severity_priority_of_their_rules():
    rules = builtin_rules()
    for record in load_records():
        assert rules.resolve_level(record.rule_ids) == record.label, record.id


def test_fixture_images_exist_open_and_stay_small():
    folder = fixtures_dir("rair")
    visual = load_records(subset="visual")
    assert visual and all(r.image and Path(r.image).is_file() for r in visual)
    total = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    assert total < 200_000


def test_filters_by_subset_and_language():
    assert {r.subset for r in load_records(subset="hard")} == {"hard"}
    zh = load_records(language="zh")
    assert zh and {r.language for r in zh} == {"zh"}
    with pytest.raises(ValueError, match="unknown RAIR subset 'Hard'"):
        load_records(subset="Hard")


# --- bad input: every problem, as file:row:field ---------------------------------------


BAD_ROWS = [
    ("label", {"label": "L5"}, "unknown label 'L5'"),
    ("label", {"label": "relevant"}, "unknown label"),
    ("query", {"query": None}, "missing"),
    ("title", {"title": "  "}, "empty string"),
    ("subset", {"subset": "Hard-subset"}, "unknown subset 'Hard-subset'"),
    ("industry", {"industry": "  "}, "empty string"),
    ("industry", {"industry": None}, "missing"),
    ("language", {"language": "fr"}, "unknown language 'fr'"),
    ("intent", {"subset": "hard"}, "the hard subset needs an intent"),
    ("intent", {"subset": "hard", "intent": "XX"}, "unknown intent 'XX'"),
    ("intent", {"intent": "DJ"}, "hard subset only"),
    ("image", {"subset": "visual"}, "the visual subset needs an image"),
    ("image", {"image": "images/missing.png"}, "image file not found"),
    ("image", {"image": "notes.txt"}, "pillow cannot read it"),
    ("rule_ids", {"rule_ids": "BRAND-01"}, "not a list"),
]


@pytest.mark.parametrize(("field", "change", "message"), BAD_ROWS, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD_ROWS)])
def test_bad_row_is_reported_as_file_row_field(tmp_path, field, change, message):
    (tmp_path / "notes.txt").write_text("not an image")
    path = write_jsonl(tmp_path / "data.jsonl", [good_row(id="ok"), good_row(id="bad", **change)])
    with pytest.raises(DataValidationError) as info:
        load_records(path)
    [problem] = info.value.problems
    assert (problem.source, problem.row, problem.field) == (str(path), 2, field)
    assert message in problem.message
    assert f"{path}:2:{field}: " in str(info.value)


def without(row: dict, *fields: str) -> dict:
    return {k: v for k, v in row.items() if k not in fields}


def test_industry_is_free_text_with_known_names_made_canonical(tmp_path):
    path = write_jsonl(
        tmp_path / "data.jsonl",
        [
            without(good_row(id="zh", query="红色卫衣", title="男女同款纯棉卫衣 红色", industry="服饰"), "language"),
            good_row(id="pets", industry="Pet Supplies"),
            good_row(id="case", industry="  fashion & APPAREL "),
            good_row(id="auto", industry="汽车"),
        ],
    )
    by_id = {r.id: r for r in load_records(path)}
    assert (by_id["zh"].industry, by_id["zh"].language) == ("Fashion & Apparel", "zh")
    assert by_id["pets"].industry == "Pet Supplies"  # kept: counted overall, in no per-industry row
    assert by_id["case"].industry == "Fashion & Apparel"
    assert by_id["auto"].industry == "Automotive"


def test_chinese_industry_aliases():
    expected = {
        "服饰": "Fashion & Apparel",
        "服装": "Fashion & Apparel",
        "家居": "Home Furnishing",
        "汽车": "Automotive",
        "食品": "Food & Fresh Products",
        "生鲜": "Food & Fresh Products",
        "美妆": "Beauty & Cosmetics",
        "家电": "Home Appliances",
        "数码": "Consumer Electronics",
        "母婴": "Mother & Baby",
        "运动户外": "Sports & Outdoors",
        "玩具": "Toys & Trendy Items",
        "潮玩": "Toys & Trendy Items",
        "医药": "Healthcare",
        "健康": "Healthcare",
    }
    assert {alias: canonical_industry(alias) for alias in expected} == expected
    assert all(canonical_industry(name) == name for name in INDUSTRIES)
    assert canonical_industry("宠物") == "宠物"


def test_language_is_inferred_when_missing_or_empty(tmp_path):
    path = write_jsonl(
        tmp_path / "data.jsonl",
        [
            without(good_row(id="en"), "language"),
            good_row(id="en-empty", language=""),
            good_row(id="zh-title", title="Nike 跑步短裤", language=None),
            good_row(id="zh-compat", query="\uf900 test", language="  "),  # a CJK compatibility ideograph
            good_row(id="given", language="ZH"),  # a given value wins (any case), even over English text
        ],
    )
    languages = {r.id: r.language for r in load_records(path)}
    assert languages == {"en": "en", "en-empty": "en", "zh-title": "zh", "zh-compat": "zh", "given": "zh"}
    [nan_cell] = validate_rows(
        [Row("table[test]", 1, good_row(query="连衣裙", language=float("nan")))]
    )  # pandas' empty cell
    assert nan_cell.language == "zh"
    assert infer_language("Ｌ3 ｒｅｄ", "ﾚｯﾄﾞ") == "en"  # full-width Latin and kana are not CJK ideographs
    assert infer_language("", "连衣裙") == "zh"


def test_csv_row_with_chinese_industry_and_no_language_column(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text(
        "id,subset,query,title,shop_name,cpv,sku,image,industry,intent,label,rule_ids\n"
        "c1,general,酒红色连衣裙,夏季酒红色连衣裙,,,,,服饰,,L4,[]\n"
        "c2,general,red dress,Summer red dress,,,,,Pet Supplies,,L4,[]\n",
        encoding="utf-8",
    )
    records = load_records(path)
    assert [(r.industry, r.language) for r in records] == [("Fashion & Apparel", "zh"), ("Pet Supplies", "en")]


def test_all_problems_are_reported_together(tmp_path):
    path = write_jsonl(
        tmp_path / "data.jsonl",
        [good_row(id="a", label="L9"), good_row(id="a", query=""), good_row(id="c", subset="visual", title=None)],
    )
    with pytest.raises(DataValidationError) as info:
        load_records(path)
    found = {(p.row, p.field) for p in info.value.problems}
    assert found == {(1, "label"), (2, "query"), (2, "id"), (3, "title"), (3, "image")}


def test_unreadable_image_file_fails_only_when_images_are_checked(tmp_path):
    (tmp_path / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n truncated")
    path = write_jsonl(tmp_path / "data.jsonl", [good_row(image="broken.png")])
    with pytest.raises(DataValidationError, match=r"data.jsonl:1:image: .*pillow cannot read it"):
        load_records(path)
    [record] = load_records(path, check_images=False)
    assert record.image == str((tmp_path / "broken.png").resolve())


def test_image_forms_relative_absolute_data_uri_url(tmp_path):
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.png").write_bytes(FIXTURE_IMAGE.read_bytes())
    data_uri = "data:image/png;base64," + base64.b64encode(FIXTURE_IMAGE.read_bytes()).decode()
    path = write_jsonl(
        tmp_path / "data.jsonl",
        [
            good_row(id="rel", subset="visual", image="img/a.png"),
            good_row(id="abs", subset="visual", image=str(FIXTURE_IMAGE)),
            good_row(id="uri", subset="visual", image=data_uri),
            good_row(id="url", subset="visual", image="https://example.com/a.png"),
        ],
    )
    # A path outside the data's folder and a URL are refused unless allowed (tests/test_hostile_data.py).
    with pytest.raises(DataValidationError) as refused:
        load_records(path)
    assert [(p.row, p.field) for p in refused.value.problems] == [(2, "image"), (4, "image")]
    # Allowed, and not checked (a text-only run): the URL is kept as written, never fetched.
    allowed = ImageAccess(outside=True, urls=True)
    images = {r.id: r.image for r in load_records(path, check_images=False, image_access=allowed)}
    assert images["rel"] == str((tmp_path / "img" / "a.png").resolve())
    assert images["abs"] == str(FIXTURE_IMAGE.resolve())
    assert images["uri"] == data_uri
    assert images["url"] == "https://example.com/a.png"
    bad_uri = write_jsonl(tmp_path / "bad.jsonl", [good_row(image="data:image/png;base64,AAAA")])
    with pytest.raises(DataValidationError, match="bad.jsonl:1:image"):
        load_records(bad_uri)


def test_hub_style_image_bytes_become_a_data_uri():
    row = Row("hub[test]", 1, good_row(subset="visual", image={"bytes": FIXTURE_IMAGE.read_bytes(), "path": None}))
    [record] = validate_rows([row])
    assert record.image.startswith("data:image/png;base64,")


def test_csv_rows_with_rule_ids_as_json(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text(
        "id,subset,query,title,shop_name,cpv,sku,image,industry,intent,label,rule_ids,language\n"
        'c1,hard,13900k,Intel Core i9 processor,,,,,Consumer Electronics,DJ,4,"[""CATEGORY-04""]",en\n',
        encoding="utf-8",
    )
    [record] = load_records(path)
    assert (record.label, record.rule_ids, record.intent, record.shop_name) == ("L4", ("CATEGORY-04",), "DJ", "")


def test_validate_command_accepts_fixtures_and_reports_bad_rows(tmp_path, capsys):
    with pytest.raises(SystemExit) as ok:
        ecom_tasks_cli(["validate", "rair"])
    assert ok.value.code == 0
    out = capsys.readouterr().out
    assert "OK: 69 rair records" in out and "visual" in out
    path = write_jsonl(
        tmp_path / "bad.jsonl", [good_row(label="L5"), good_row(id="x2", subset="visual", image="gone.png")]
    )
    with pytest.raises(SystemExit) as bad:
        ecom_tasks_cli(["validate", "rair", str(path)])
    assert bad.value.code == 1
    err = capsys.readouterr().err
    assert f"{path}:1:label: unknown label 'L5'" in err
    assert f"{path}:2:image: image file not found" in err


# --- the rules document ----------------------------------------------------------------


def test_builtin_rules_cover_the_taxonomy():
    rules = builtin_rules()
    assert rules.version == "ecom-tasks-rair-rules/1.0"
    assert set(rules.dimensions) == set(DIMENSIONS)
    assert {r.dimension for r in rules.rules} == set(DIMENSIONS)
    assert {r.level for r in rules.rules} == set(LEVELS)
    assert len({r.id for r in rules.rules}) == len(rules.rules)
    for language in ("en", "zh"):
        text = rules.render(language)
        assert text == builtin_rules().render(language)
        assert all(r.id in text for r in rules.rules)


def test_severity_priority_and_gold_dimension():
    rules = builtin_rules()
    assert rules.resolve_level(["COLOR-01", "CATEGORY-01"]) == "L1"
    assert rules.resolve_level(["COLOR-02", "BRAND-01"]) == "L2"
    assert rules.resolve_level([]) == "L4"
    assert rules.resolve_level(["OFFICIAL-7"]) is None
    assert gold_dimension(["COLOR-01", "CATEGORY-01"]) == "Category"
    assert gold_dimension(["Brand-3"]) == "Brand"
    assert gold_dimension(["颜色-2"]) == "Color"
    assert gold_dimension(["R-17"]) is None


def test_rules_file_json_in_our_schema_text_verbatim_and_errors(tmp_path):
    doc = json.loads((Path(__file__).parents[1] / "ecom_tasks" / "rair" / "rules_v1.json").read_text(encoding="utf-8"))
    doc["version"] = "team-rules/2"
    good = tmp_path / "team.json"
    good.write_text(json.dumps(doc), encoding="utf-8")
    loaded = load_rules(str(good))
    assert loaded.version.startswith("team-rules/2 (sha256:") and len(loaded.rules) == 40

    text = tmp_path / "official.md"
    text.write_text("# Official rules\nR1: brand mismatch is L2\n", encoding="utf-8")
    verbatim = load_rules(str(text))
    assert verbatim.render("en") == verbatim.render("zh") == "# Official rules\nR1: brand mismatch is L2"
    assert verbatim.version.startswith("official.md (sha256:")

    doc["rules"][0]["level"] = "L7"
    doc["rules"][1]["dimension"] = "Vibe"
    del doc["version"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DataValidationError) as info:
        load_rules(str(bad))
    assert {(p.row, p.field) for p in info.value.problems} == {
        (0, "version"),
        (1, "rules.level"),
        (2, "rules.dimension"),
    }
    with pytest.raises(DataValidationError, match="rules file not found"):
        load_rules(str(tmp_path / "nope.json"))
    assert load_rules("none") is None and load_rules("builtin") is builtin_rules()
