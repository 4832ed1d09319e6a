"""Real replies of a real server, graded by a person: our parsers must give the same grade.

``tests/data/real_replies/replies.jsonl`` holds every RAIR, MonBench and EcomEval-grader reply of the
two runs of ``benchmarks/real_server_check.py`` (llama.cpp's server with the Gemma 3 270M base
checkpoint, both frameworks; see ``tests/data/real_replies/README.md``). Each row carries the grade
a careful human gave the reply by reading it, never by running a parser: the level (RAIR), option
letter (MonBench) or 0-3 grade (EcomEval's grader) the reply states as its answer, or ``invalid``
when it only copies the prompt, rambles without an answer or breaks off before one.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from ecom_tasks import files
from ecom_tasks.ecomeval.parsing import parse_grade
from ecom_tasks.monbench.parsing import parse_reply as parse_monbench
from ecom_tasks.monbench.schema import LETTERS
from ecom_tasks.rair.parsing import parse_reply as parse_rair

TABLE = Path(__file__).parent / "data" / "real_replies" / "replies.jsonl"
INVALID = "invalid"
GRADES = {
    "rair": {"L1", "L2", "L3", "L4", INVALID},
    "monbench": {*LETTERS, INVALID},
    "ecomeval_grader": {0, 1, 2, 3, INVALID},
}


def _rows() -> list[dict]:
    values, problems = files.json_lines(TABLE)
    assert not problems, problems
    return [row for _, row in values]


ROWS = _rows()


def _row_id(row: dict) -> str:
    parts = [row["benchmark"], row["framework"].split()[0], f"max{row['max_tokens']}", row["task"], row["item_id"]]
    parts += [str(row[k]) for k in ("run", "attempt") if row.get(k) is not None]
    return "/".join(parts)


def parser_grade(row: dict) -> str | int:
    """What our parser reads from the reply, as the benchmark's scorer calls it."""
    reply = row["reply"]
    if row["benchmark"] == "rair":
        parsed = parse_rair(reply)
        return parsed.label if parsed.status == "ok" else INVALID
    if row["benchmark"] == "monbench":
        parsed = parse_monbench(reply, row["format"], tuple(row["displayed"]))
        return LETTERS[parsed.position] if parsed.position is not None else INVALID
    parsed = parse_grade(reply)
    return parsed.grade if parsed.grade is not None else INVALID


def test_the_table_is_a_real_run_graded_by_hand():
    """Every row is graded, from the run's three kinds of reply, in both frameworks."""
    assert len(ROWS) >= 50
    for row in ROWS:
        assert row["human_grade"] in GRADES[row["benchmark"]], _row_id(row)
        assert isinstance(row["reply"], str) and row["why"], _row_id(row)
    kinds = Counter((row["benchmark"], row["framework"].split()[0]) for row in ROWS)
    for benchmark in ("rair", "monbench", "ecomeval_grader"):
        for framework in ("inspect", "lm-eval"):
            assert kinds[benchmark, framework] > 0, (benchmark, framework)
    formats = {row["format"] for row in ROWS if row["benchmark"] == "monbench"}
    assert formats == {"label", "content", "label_content"}


@pytest.mark.parametrize("row", ROWS, ids=[_row_id(row) for row in ROWS])
def test_parser_gives_the_human_grade(row):
    assert parser_grade(row) == row["human_grade"], f"{row['why']}\n--- reply ---\n{row['reply'][:1500]}"
