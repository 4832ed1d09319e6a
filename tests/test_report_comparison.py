"""The report's "Which model is better" tables: two models of one task ranked with intervals, their paired
difference with Holm marks, the tests, a forest plot against ``--baseline``; the numbers are compare's,
in the CSV too; a hostile model name stays text in the page and in Chromium."""

from __future__ import annotations

import csv
import json
import os
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, write_eval_log
from test_report_security import IMG_PAYLOAD, PAYLOAD, Elements

from ecom_tasks.inspect_evals.rair import rair_general
from ecom_tasks.offline import apply_offline
from ecom_tasks.rair.schema import LEVELS
from ecom_tasks.report import write_report
from ecom_tasks.report.compare import compare_runs, model_runs
from ecom_tasks.report.runs import read_runs

HOSTILE_MODEL = f"openai/{PAYLOAD}{IMG_PAYLOAD}"


def _right(outcome: dict) -> dict:
    """The outcome of a reply naming the gold level (everything else as it was)."""
    gold = int(outcome["gold"])
    fixed = dict(outcome)
    for i, level in enumerate(LEVELS):
        fixed[f"pred_{level}"] = int(i == gold)
    fixed["pred_invalid"] = 0
    fixed["acc4"] = 1
    fixed["acc2"] = 1
    return fixed


@pytest.fixture(scope="module")
def two_models(tmp_path_factory) -> tuple[Path, int, int]:
    """The baseline's rair_general log and a second model's: the same replies, except that every item
    the baseline got wrong is right in the second. Returns (folder, items, items fixed)."""
    apply_offline()
    folder = tmp_path_factory.mktemp("two-models")
    (log,) = inspect_eval([rair_general()], model="ecom/baseline", log_dir=str(folder / "a"), display="none")
    assert log.status == "success"
    full = read_eval_log(log.location)
    fixed = 0
    for sample in full.samples or []:
        score = sample.scores["rair_scorer"]
        if score.value["acc4"] == 0:
            score.value = _right(score.value)
            fixed += 1
    full.eval.model = HOSTILE_MODEL
    write_eval_log(full, str(folder / "b" / "better.eval"))
    return folder, len(full.samples or []), fixed


def _csv(out: Path, name: str) -> list[dict[str, str]]:
    with (out / "csv" / f"{name}.csv").open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def report(two_models, tmp_path_factory) -> Path:
    folder, _, _ = two_models
    out = tmp_path_factory.mktemp("comparison-report")
    write_report([folder], out, baseline="ecom/baseline", resamples=300)
    return out


def test_the_tables_hold_compares_numbers(two_models, report: Path):
    folder, items, fixed = two_models
    ranked = _csv(report, "rair_better_rair_general_acc4")
    assert [row["model"] for row in ranked] == [f"openai/{PAYLOAD}{IMG_PAYLOAD}", "ecom/baseline"]
    baseline = float(ranked[1]["estimate"])
    assert float(ranked[0]["estimate"]) == 1.0 and baseline == pytest.approx(1 - fixed / items)
    for row in ranked:
        assert float(row["ci_low"]) <= float(row["estimate"]) <= float(row["ci_high"]) and float(row["n"]) == items
    (pair,) = _csv(report, "rair_better_rair_general_acc4_pairs")
    assert float(pair["ecom/baseline"]) == pytest.approx(fixed / items)
    (test,) = _csv(report, "rair_better_rair_general_acc4_tests")
    assert test["setting"] == "mcnemar_exact"
    # the same numbers compare computes (same seed, same resamples)
    runs, _, _ = model_runs(read_runs([folder]))
    records = compare_runs(runs, metric="acc4", n_resamples=300).records
    (record,) = [r for r in records if r.kind == "pair"]
    assert float(test["estimate"]) == pytest.approx(record.estimate)
    assert float(test["p_adjusted"]) == pytest.approx(record.p_adjusted)
    assert float(test["ci_low"]) == pytest.approx(record.ci_low) and float(test["ci_high"]) == pytest.approx(
        record.ci_high
    )
    # every item the baseline missed is now right: McNemar's discordant pairs all go one way
    assert record.p_value < 0.001
    markdown = (report / "report.md").read_text(encoding="utf-8")
    assert "Which model is better: rair_general, acc4" in markdown
    assert f"{100 * fixed / items:.2f}\\*\\*\\*" in markdown  # the matrix cell with its (escaped) Holm mark


def test_the_forest_plot_against_the_baseline(report: Path):
    (row,) = _csv(report, "rair_better_rair_general_acc4_forest")
    assert float(row["ci_low"]) <= float(row["estimate"]) <= float(row["ci_high"])
    assert (report / "plots" / "rair_better_rair_general_acc4_forest.png").stat().st_size > 1000


def test_one_model_gets_no_comparison_section(two_models, tmp_path: Path):
    folder, _, _ = two_models
    out = tmp_path / "report"
    write_report([folder / "a"], out, formats="csv")
    assert not list((out / "csv").glob("*better*"))


def test_each_log_is_read_once_and_each_folder_listed_once(two_models, tmp_path: Path, monkeypatch):
    """The comparison takes the runs the report already read: every log's header is read once (a compared
    log's samples once more, each after our check of the members it inflates), every results file once, every
    folder listed once (each was twice or more)."""
    import inspect_ai.log

    from ecom_tasks import files

    folder = tmp_path / "logs"
    shutil.copytree(two_models[0], folder)
    results = folder / "lm" / "results_2026-01-01T10-00-00.000001.json"
    results.parent.mkdir()
    configs = {"monbench_perm_query_ad_relevance": {"metadata": {"benchmark": "monbench"}}}
    results.write_text(
        json.dumps({"results": {"monbench_perm_query_ad_relevance": {"acc,none": 0.5}}, "configs": configs}),
        encoding="utf-8",
    )
    logs = [str(p.relative_to(folder)) for p in folder.rglob("*.eval")]
    assert len(logs) == 2 and (folder / "b" / "better.eval").exists()
    calls: Counter[tuple[str, str]] = Counter()

    def counting(module: Any, name: str, what: Callable[[dict[str, Any]], str]) -> None:
        real = getattr(module, name)

        def call(path: Any, *args: Any, **kwargs: Any) -> Any:
            if Path(path).is_relative_to(folder):
                calls[(str(Path(path).relative_to(folder)), what(kwargs))] += 1
            elif Path(path).is_relative_to(files.private_folder().root):  # Inspect reads the file we opened
                calls[("pinned", what(kwargs))] += 1
            return real(path, *args, **kwargs)

        monkeypatch.setattr(module, name, call)

    counting(inspect_ai.log, "read_eval_log", lambda kw: "header" if kw.get("header_only") else "samples")
    counting(files, "open_regular", lambda kw: "read")
    counting(os, "scandir", lambda kw: "listed")
    write_report([folder], tmp_path / "report", formats="csv", plots=False, resamples=50)
    # Both models are compared: each log opened once for its header, once for its samples; Inspect and our
    # checks of the members read that open file through its pinned name.
    expected: dict[tuple[str, str], int] = {("pinned", kind): len(logs) for kind in ("header", "samples")}
    expected |= {("pinned", "read"): 2 * len(logs)}  # the members' check, before each Inspect read
    expected |= {(log, "read"): 2 for log in logs}
    expected |= {(str(results.relative_to(folder)), "read"): 1}
    expected |= {(where, "listed"): 1 for where in (".", "a", "b", "lm")}
    assert dict(calls) == expected


def _deflated_log(source: Path, out: Path, padding: dict[str, int]) -> Path:
    """``source``'s log rewritten member by member with deflate, a member named in ``padding`` followed by that
    many spaces (still the same JSON): a zip bomb when the padding is large (spaces deflate about 1,000 to 1)."""
    import zipfile

    log = read_eval_log(str(source))
    members = {"header.json": log.model_copy(update={"samples": None}).model_dump_json().encode()}
    members |= {f"samples/{s.id}_epoch_{s.epoch}.json": s.model_dump_json().encode() for s in log.samples or []}
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            with archive.open(name, "w", force_zip64=True) as member:
                member.write(data)
                for start in range(0, padding.get(name, 0), 1 << 22):
                    member.write(b" " * min(1 << 22, padding[name] - start))
    return out


def test_an_eval_log_that_inflates_past_the_limit_is_named_and_never_inflated(two_models, tmp_path, monkeypatch):
    """A shared .eval log of a few hundred KB whose header or a sample inflates to tens of MB (Inspect inflates a
    member whole: 1 MB of log took 2 GB): the report lists it as unreadable with the reason, compare leaves its
    run out with a note; the same log without the padding is read as the original."""
    from ecom_tasks import files

    (source,) = (two_models[0] / "a").glob("*.eval")
    plain = _deflated_log(source, tmp_path / "plain" / "log.eval", {})
    [original], [copy] = (model_runs(read_runs([where]))[0] for where in (source, plain))
    assert copy.units.ids == original.units.ids and copy.units.outcomes == original.units.outcomes

    header_limit = files.MAX_LOG_INFLATED_BYTES // 16  # a header read's limit: 64 MiB
    bomb = _deflated_log(source, tmp_path / "logs" / "header.eval", {"header.json": header_limit})
    assert bomb.stat().st_size < header_limit // 100
    result = write_report([bomb.parent], tmp_path / "report", formats="csv", plots=False)
    assert (result.runs, result.failed) == (0, 1)
    assert result.problems == [
        f"{bomb}: not a readable Inspect log (its members inflate past {header_limit} bytes (header.json))"
    ]

    monkeypatch.setattr(files, "MAX_LOG_INFLATED_BYTES", header_limit)  # a samples read's limit, made smaller
    sample = next(name for name in _member_names(plain) if name.startswith("samples/"))
    bomb = _deflated_log(source, tmp_path / "samples" / "log.eval", {sample: header_limit})
    runs, _, unreadable = model_runs(read_runs([bomb]))
    assert runs == [] and unreadable == [
        f"{bomb}: not a readable Inspect log (its members inflate past {header_limit} bytes ({sample}))"
    ]


def _member_names(path: Path) -> list[str]:
    import zipfile

    with zipfile.ZipFile(path) as archive:
        return archive.namelist()


def test_model_names_from_logs_stay_text_in_the_section(report: Path):
    page = (report / "report.html").read_text(encoding="utf-8")
    parsed = Elements()
    parsed.feed(page)
    assert [tag for tag, _ in parsed.tags].count("script") == 1
    assert not [(tag, name) for tag, attrs in parsed.tags for name in attrs if name.startswith("on")]
    assert "Which model is better" in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


@pytest.mark.slow
def test_the_section_is_inert_in_chromium(report: Path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (the test extra) not installed")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("headless Chromium not installed (Debian: apt-get install chromium)")
    dialogs: list[str] = []
    errors: list[str] = []
    with sync_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto((report / "report.html").as_uri(), wait_until="load")
            probe = page.text_content("#report-errors")
            body = page.inner_text("body")
        finally:
            browser.close()
    assert dialogs == [] and errors == [] and probe == "[]", (dialogs, errors, probe)
    assert "Which model is better: rair_general, acc4" in body and PAYLOAD in body
