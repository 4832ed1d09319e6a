"""``ecom-tasks report`` on hostile logs (issue 17): a shared Inspect log or lm-eval results file
must not run script in the reader's browser, put raw HTML in report.md, or make the report write
outside ``--out``; and a relative path to one log works.

The attacks are the ones the issue quotes: ``"><script>alert(1)</script>`` as the benchmark name
(Inspect ``eval.metadata.benchmark``, lm-eval ``configs.<task>.metadata.benchmark``), plus the same
kind of payload in every other string a log supplies (model, settings, metric name, error message),
and benchmark names ``../../x`` and an absolute path.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from attack_helpers import swap_at_open
from helpers import check_ok, run_cli
from test_report_merge import MONBENCH_ARGS, _rair_log, make_log, monbench_metrics

from ecom_tasks.report import _Placement, write_report
from ecom_tasks.tables import file_slug

PAYLOAD = '"><script>alert(1)</script>'
#: Breaks out of a single-quoted attribute too, and needs no <script> tag.
IMG_PAYLOAD = "'\"><img src=x onerror=alert(2)>"
#: Markdown's own injections: a link, an image, a cell break and a line break.
MD_PAYLOAD = "x | y](javascript:alert(3)) ![t](http://tracker.invalid/p.png)\n# heading"
#: matplotlib would read "$...$" as mathtext, and this one does not parse.
MATH_PAYLOAD = r"$\notacommand{$"


def hostile_inspect_logs(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    # The case: the benchmark name, which becomes a section, a nav link and file names.
    make_log(
        folder / "benchmark.eval",
        "monbench_perm",
        {"acc": 0.5, f"acc{IMG_PAYLOAD}": 0.25},
        model=f"openai/{PAYLOAD}",
        task_args={**MONBENCH_ARGS, "data": MD_PAYLOAD},
        metadata={"benchmark": PAYLOAD},
    )
    # Strings inside a known layout (MonBench Table 2, with its heatmap figure): model, settings.
    make_log(
        folder / "monbench.eval",
        "monbench_perm",
        {**monbench_metrics(0.5), "acc_pos_A": 0.6},
        model=f"openai/{IMG_PAYLOAD}{MATH_PAYLOAD}",
        task_args={**MONBENCH_ARGS, "shots": 5, "split": PAYLOAD, "max_tokens": MD_PAYLOAD},
    )
    # A failed run: its error message is listed.
    make_log(
        folder / "failed.eval",
        "monbench_perm",
        {},
        model=f"openai/{MD_PAYLOAD}",
        status="error",
        task_args={**MONBENCH_ARGS, "metrics": IMG_PAYLOAD},
    )
    _rair_log(folder / "rair.eval")  # a harmless run beside them: figures are drawn


def hostile_lm_eval_results(folder: Path) -> Path:
    results = {
        "results": {
            "monbench_perm_query_ad_relevance": {"alias": PAYLOAD, "acc,none": 0.5, f"{IMG_PAYLOAD},none": 0.1}
        },
        "configs": {
            "monbench_perm_query_ad_relevance": {
                "metadata": {"version": 2.0, "benchmark": PAYLOAD, "shots": MD_PAYLOAD},
                "dataset_kwargs": {"tasks": ["query_ad_relevance"]},
            }
        },
        "config": {
            "model": "local-chat-completions",
            "model_args": f"model={IMG_PAYLOAD},base_url=http://127.0.0.1:1/v1",
        },
        "n-shot": {"monbench_perm_query_ad_relevance": 0},
        "date": 1767261600.0,
    }
    path = folder / "results_2026-01-01T10-00-00.000001.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results))
    return path


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory) -> Path:
    logs = tmp_path_factory.mktemp("hostile-logs")
    hostile_inspect_logs(logs / "inspect")
    hostile_lm_eval_results(logs / "lm-eval" / "model")
    out = tmp_path_factory.mktemp("hostile-report")
    result = write_report([logs], out)
    assert result.runs == 4 and result.failed == 1
    return out


# --- the page ----------------------------------------------------------------------------


class Elements(HTMLParser):
    """Every start tag with its attributes, as a browser's tokenizer sees them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)

    def handle_endtag(self, tag):
        self._in_script = False


def test_the_page_holds_no_element_or_attribute_from_a_log(hostile_report: Path):
    page = (hostile_report / "report.html").read_text(encoding="utf-8")
    parsed = Elements()
    parsed.feed(page)
    tags = [tag for tag, _ in parsed.tags]
    # One script (the page's own error probe), and the images are our figures, as data URIs.
    assert tags.count("script") == 1 and "alert" not in parsed.scripts[0]
    images = [attrs for tag, attrs in parsed.tags if tag == "img"]
    assert images and all(str(a["src"]).startswith("data:image/png;base64,") for a in images)
    assert not [(tag, name) for tag, attrs in parsed.tags for name in attrs if name.startswith("on")]
    # Links stay inside the page, ids are slugs.
    hrefs = [attrs["href"] for tag, attrs in parsed.tags if tag == "a"]
    assert hrefs and all(re.fullmatch(r"#[a-z0-9_-]+", str(h)) for h in hrefs), hrefs
    ids = {attrs["id"] for _, attrs in parsed.tags if "id" in attrs}
    assert all(re.fullmatch(r"[a-z0-9_-]+", str(i)) for i in ids), ids
    assert {h[1:] for h in hrefs} <= ids  # every nav link finds its section
    # The payloads are there, as text.
    text = re.sub(r"<[^>]+>", "", page)
    for payload in (PAYLOAD, IMG_PAYLOAD):
        assert (
            payload.replace("&", "&amp;")
            .replace("<", "&lt;")
            .replace(">", "&gt;")
            .replace('"', "&#34;")
            .replace("'", "&#39;")
            in text
        )


@pytest.mark.slow
def test_the_payloads_do_not_run_in_chromium(hostile_report: Path):
    """A real browser opens the page: no dialog, no console error, no error caught by the page's
    probe (which also records anything its Content-Security-Policy blocked), and the payload is
    shown as text."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (the test extra) not installed")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("headless Chromium not installed (Debian: apt-get install chromium)")
    dialogs: list[str] = []
    console: list[str] = []
    with sync_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            page.on("console", lambda message: console.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: console.append(str(error)))
            page.goto((hostile_report / "report.html").as_uri(), wait_until="load")
            assert page.get_attribute("body", "data-report-ready") == "1"
            probe = page.text_content("#report-errors")
            body = page.inner_text("body")
            scripts = page.locator("script").count()
            # Control: the same browser and hooks do see a dialog the page itself opens.
            page.evaluate("() => setTimeout(() => alert('control'), 0)")
            page.wait_for_timeout(200)
        finally:
            browser.close()
    assert dialogs == ["control"], dialogs
    assert console == [] and probe == "[]", (console, probe)
    assert scripts == 1
    assert PAYLOAD in body and IMG_PAYLOAD in body


# --- the markdown ------------------------------------------------------------------------


def test_report_md_carries_no_raw_html_links_or_broken_rows(hostile_report: Path):
    from markdown_it import MarkdownIt

    text = (hostile_report / "report.md").read_text(encoding="utf-8")
    tokens = MarkdownIt("commonmark").enable("table").parse(text)

    def walk(items):
        for token in items:
            yield token
            yield from walk(token.children or [])

    everything = list(walk(tokens))
    assert not [t for t in everything if t.type in ("html_inline", "html_block")]
    assert not [t for t in everything if t.type == "link_open"]
    # Images: only our figures, under plots/.
    assert all(str(t.attrs.get("src", "")).startswith("plots/") for t in everything if t.type == "image")
    # Headings: only ours (a log's text cannot start a line).
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert "heading" not in headings
    # Every table row has as many cells as its header.
    widths, header = [], None
    for token in tokens:
        if token.type == "thead_open":
            header, widths = 0, []
        elif token.type == "tr_open":
            widths.append(0)
        elif token.type in ("th_open", "td_open"):
            widths[-1] += 1
        elif token.type == "table_close":
            assert len(set(widths)) == 1, widths
    assert header == 0
    # The payloads are shown, as text.
    rendered = MarkdownIt("commonmark").enable("table").render(text)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered and "<script>" not in rendered


# --- the files ---------------------------------------------------------------------------


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_nothing_is_written_outside_out(tmp_path: Path):
    """Benchmark names that are paths (relative with ``..``, absolute) or that clean up to the same
    slug: every file lands inside ``--out``, one file per table."""
    work = tmp_path / "work"
    logs = work / "a" / "b" / "logs"
    outside = tmp_path / "outside" / "evil"
    names = {
        "../../x": 0.1,
        "../../../../../../../../tmp/y": 0.2,
        str(outside): 0.3,
        "Foo Bar": 0.4,
        "foo/bar": 0.5,
        "foo-bar": 0.6,
        "..": 0.7,
    }
    for i, (name, acc) in enumerate(names.items()):
        make_log(logs / f"{i}.eval", "monbench_perm", {"acc": acc}, metadata={"benchmark": name})
    out = work / "a" / "b" / "out"
    before = tree(tmp_path)
    tmp_listing = set(os.listdir("/tmp"))
    result = write_report([logs], out)
    after = tree(tmp_path)
    new = after - before
    assert new and all(Path(tmp_path / p).resolve().is_relative_to(out.resolve()) for p in new), sorted(
        new - {p for p in new if p.startswith("work/a/b/out")}
    )
    # Other xdist workers' subprocess guards (tests/helpers.py) make netguard-* folders in /tmp meanwhile.
    new_in_tmp = {name for name in set(os.listdir("/tmp")) - tmp_listing if not name.startswith("netguard-")}
    assert not (tmp_path / "outside").exists() and new_in_tmp == set()
    assert all(f.resolve().is_relative_to(out.resolve()) for f in result.files)
    # One CSV per benchmark name, each holding its own number: names that slug alike do not overwrite.
    csvs = sorted((out / "csv").glob("*_other.csv"))
    assert len(csvs) == len(names)
    found = sorted(float(path.read_text().splitlines()[1].split(",")[-1]) for path in csvs)
    assert found == sorted(names.values())
    assert all(re.fullmatch(r"[a-z0-9_-]+_other\.csv", p.name) for p in csvs)


def test_two_files_at_one_name_are_never_an_overwrite():
    place = _Placement()
    assert place("report.md") == "report.md"
    assert place("report.md") == "report-2.md"
    assert place("csv/x.csv") == "csv/x.csv" and place("csv/x.csv") == "csv/x-2.csv"


def test_file_slugs():
    assert file_slug("rair") == "rair" and file_slug("my_bench2") == "my_bench2"
    for name in ("../../x", "/etc/passwd", PAYLOAD, "Rair", "a b", "", "..", "x" * 100, "名前"):
        slug = file_slug(name)
        assert re.fullmatch(r"[a-z0-9][a-z0-9_-]*", slug) and len(slug) <= 64, (name, slug)
    assert file_slug("Foo Bar") != file_slug("foo/bar") != file_slug("foo-bar")


def test_report_of_one_log_by_a_relative_path(tmp_path: Path):
    """The README's own example, ``ecom-tasks report logs/run.eval``, run from the folder above."""
    _rair_log(tmp_path / "logs" / "run.eval")
    proc = check_ok(
        run_cli(["ecom-tasks", "report", "logs/run.eval", "--out", "out", "--format", "md,csv"], cwd=tmp_path)
    )
    assert "report: 1 run row(s), 0 unfinished/failed" in proc.stdout
    [row] = [
        r for r in (tmp_path / "out" / "csv" / "rair_table5.csv").read_text().splitlines()[1:] if r.startswith("run,")
    ]
    assert ",0.5,0.25,0.2," in row + ","


@pytest.mark.parametrize("suffix", [".eval", ".json"])
@pytest.mark.parametrize("swap", ["link_to_a_colleague", "log_that_kills_the_reader"])
def test_a_log_swapped_after_it_was_opened_is_read_as_it_was_checked(suffix, swap, tmp_path: Path, monkeypatch):
    """The race itself: a shared log is opened and checked, then replaced by name (a link to a colleague's log, or
    a JSON log nested 100,000 deep that Inspect's header parser does not finish) before Inspect reads it. Inspect
    reads the file that was opened and checked, and the log keeps the name the user gave."""
    import inspect_ai.log

    from ecom_tasks import files

    mine = make_log(tmp_path / "shared" / f"mine{suffix}", "monbench_perm", {"acc": 0.25}, model="openai/mine")
    secret = make_log(tmp_path / "colleague" / f"secret{suffix}", "monbench_perm", {"acc": 0.9}, model="openai/theirs")
    real = inspect_ai.log.read_eval_log

    def swap_then_read(path, *args, **kwargs):
        if mine.exists() and not mine.is_symlink():
            mine.unlink()
            if swap == "link_to_a_colleague":
                mine.symlink_to(secret)
            else:
                mine.write_text('{"version": 2, "eval": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(inspect_ai.log, "read_eval_log", swap_then_read)
    for header_only in (True, False):
        if mine.is_symlink() or not mine.exists() or mine.stat().st_size > 100_000:
            mine.unlink()
            make_log(mine, "monbench_perm", {"acc": 0.25}, model="openai/mine")
        log = files.read_inspect_log(mine, header_only=header_only)
        assert log.eval.model == "openai/mine" and log.location == str(mine)


@pytest.mark.parametrize("kind", ["eval", "json", "lm_eval_results"])
def test_a_run_found_in_a_folder_and_swapped_for_a_link_out_as_it_is_opened_is_refused(kind, tmp_path, monkeypatch):
    """The race itself: the walk of a shared runs folder finds a regular file, which becomes a link to a colleague's
    log when it is opened. The read keeps the walk's rule (a link stays in its folder): listed as unreadable, and
    nothing of the colleague's run is read."""
    from helpers import finished_lm_eval_results

    from ecom_tasks.report.runs import read_runs
    from ecom_tasks.results import UNREADABLE

    shared, colleague = tmp_path / "shared", tmp_path / "colleague"
    if kind == "lm_eval_results":
        mine = finished_lm_eval_results(shared / "lm" / "mine", "rair_hard", "2026-01-01T10-00-00.000001")
        secret = finished_lm_eval_results(colleague, "rair_hard", "2026-01-01T10-00-00.000001")
        secret.write_text(secret.read_text().replace("shop-model", "theirs"), encoding="utf-8")
    else:
        name = "mine.eval" if kind == "eval" else "2026-01-01T10-00-00+00-00_monbench_perm_abc.json"
        mine = make_log(shared / name, "monbench_perm", {"acc": 0.25}, model="openai/mine")
        secret = make_log(colleague / f"secret.{kind}", "monbench_perm", {"acc": 0.9}, model="openai/theirs")
    swap_at_open(monkeypatch, mine, secret)
    runs = read_runs([shared])
    monkeypatch.undo()
    assert [(r.status, r.source) for r in runs] == [(UNREADABLE, str(mine))], runs
    assert f"a symbolic link to {secret}, outside {mine.parent}" in runs[0].error
    assert not any("theirs" in r.model for r in runs)


def test_compare_keeps_the_walks_rule_for_a_samples_file_swapped_for_a_link_out(tmp_path, monkeypatch):
    """compare reads an lm-eval run's samples file after the walk listed it: a link to a colleague's file planted
    there when it is opened is refused by name, never read."""
    from helpers import finished_lm_eval_results

    from ecom_tasks.report.compare import model_runs
    from ecom_tasks.report.runs import read_runs

    stamp = "2026-01-01T10-00-00.000001"
    results = finished_lm_eval_results(tmp_path / "shared" / "mine", "rair_hard", stamp)
    samples = results.parent / f"samples_rair_hard_{stamp}.jsonl"
    samples.write_text("{}\n", encoding="utf-8")
    secret = tmp_path / "colleague" / "secret.jsonl"
    secret.parent.mkdir()
    secret.write_text('{"doc": {"id": "colleague-secret"}}\n', encoding="utf-8")
    runs = read_runs([tmp_path / "shared"])
    swap_at_open(monkeypatch, samples, secret)
    found, _, unreadable = model_runs(runs)
    monkeypatch.undo()
    assert found == [] and len(unreadable) == 1, unreadable
    assert f"{samples}: a symbolic link to {secret}, outside {samples.parent}" in unreadable[0]
    assert "colleague-secret" not in unreadable[0]
