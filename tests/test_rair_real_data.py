"""RAIR rows shaped like the released data (Chinese industry names, no language column) load,
are asked in their own language and are scored overall and per industry."""

from __future__ import annotations

import json

from ecom_tasks.plugins import select_metrics
from ecom_tasks.rair.protocol import load_items
from ecom_tasks.rair.scoring import score_reply, summarize

ROWS = [
    {
        "id": "r1",
        "subset": "general",
        "query": "酒红色连衣裙",
        "title": "夏季酒红色收腰连衣裙",
        "industry": "服饰",
        "label": "L4",
        "rule_ids": [],
    },
    {
        "id": "r2",
        "subset": "general",
        "query": "儿童滑板车",
        "title": "成人折叠滑板车",
        "industry": "运动户外",
        "label": "L2",
        "rule_ids": [],
    },
    {
        "id": "r3",
        "subset": "general",
        "query": "猫粮",
        "title": "成猫全价猫粮 2kg",
        "industry": "宠物",
        "label": "L4",
        "rule_ids": [],
    },
    {
        "id": "r4",
        "subset": "general",
        "query": "red hoodie",
        "title": "Unisex hoodie, red",
        "industry": "fashion & apparel",
        "label": "L4",
        "rule_ids": [],
    },
]


def test_real_shaped_rows_load_and_score_per_industry(tmp_path):
    path = tmp_path / "rair_general.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8")
    items = load_items(str(path), subset="general")
    assert [(i.record.industry, i.record.language) for i in items] == [
        ("Fashion & Apparel", "zh"),
        ("Sports & Outdoors", "zh"),
        ("宠物", "zh"),
        ("Fashion & Apparel", "en"),
    ]
    assert items[0].user_prompt.startswith("输入：") and items[3].user_prompt.startswith("Input:")

    replies = ["Final answer: L4", "<think>…</think>\nL3 — not L4", "最终答案：L4", "**L4**"]
    outcomes = [score_reply(item.fields, reply)[1] for item, reply in zip(items, replies)]
    result = summarize(outcomes, select_metrics("labels"))
    assert result["n"] == 4 and result["acc4"] == 0.75 and result["invalid_rate"] == 0
    assert result["n/industry/fashion_apparel"] == 2
    assert result["n/industry/sports_outdoors"] == 1
    # The unknown industry counts overall but has no row of its own.
    assert sum(v for k, v in result.items() if k.startswith("n/industry/")) == 3
