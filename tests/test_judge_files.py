"""`ecom-tasks judge` on hostile folders and real servers' refusals: every attack is made for real (a
symlink planted at an output name, a FIFO, a second loopback server, a server answering HTTP 400 for a
prompt longer than its context) and nothing outside the output folder changes, nothing is paid for
before a bad file is found, and the messages point at the cause."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from helpers import run_cli
from loopback.openai_server import last_user_text, serve_openai_compatible
from loopback.server import JsonHandler, LoopbackServer

from ecom_tasks import files
from ecom_tasks.cli import build_parser
from ecom_tasks.ecomeval.judge_run import judge_output
from ecom_tasks.ecomeval.prompts import read_grader_prompt
from ecom_tasks.ecomeval.schema import load_records
from ecom_tasks.errors import ConfigurationError, DataValidationError

STAMP = "2026-01-01T00-00-00.000001"
SAMPLES_NAME = f"samples_ecomeval_{STAMP}.jsonl"
GRADER = "openai/judge"
#: Outputs of a run graded by GRADER, as the module docstring of ecomeval.judge_run names them.
GRADES_NAME = f"judge_grades_ecomeval_{STAMP}.openai_judge.jsonl"
RESULTS_NAME = f"judge_results_ecomeval_{STAMP}.openai_judge.json"
#: The reply cache's file in its folder.
FILE_NAME = "replies.jsonl"
RECORDS = [r for r in load_records() if r.category == "ecom_qa"][:4]
BAD = "I would pick the cheapest one."


def doc_of(record) -> dict:
    return {
        "id": record.id,
        "question": record.question,
        "reference": record.reference,
        "category": record.category,
        "language": record.language,
        "task": record.task,
        "difficulty": record.difficulty or "",
    }


def sample_line(doc_id: int, record, response: str) -> str:
    return json.dumps({"doc_id": doc_id, "doc": doc_of(record), "filtered_resps": [response], "resps": [[response]]})


def write_samples(folder: Path, lines: list[str] | None = None) -> Path:
    """An lm-eval samples file: the reference as the response for even doc_ids, a wrong answer for odd."""
    folder.mkdir(parents=True, exist_ok=True)
    if lines is None:
        lines = [sample_line(i, r, r.reference if i % 2 == 0 else BAD) for i, r in enumerate(RECORDS)]
    path = folder / SAMPLES_NAME
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def fair_grader(body) -> str:
    """3 for a response equal to the reference, else 0."""
    _question, reference, response = read_grader_prompt(last_user_text(body))
    return f"Compared.\nFinal Score: {3 if response == reference else 0}"


def tree_digest(root: Path) -> dict[str, str]:
    """Every file below ``root`` (links not followed) with its content's sha256, and every link's target."""
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            found[str(path)] = "-> " + os.readlink(path)
        elif path.is_file():
            found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def judge(out: Path, server, cache: Path, **options):
    return judge_output(out, [GRADER], api_bases=[server.base_url], cache_dir=cache, progress=False, **options)


def grades_of(path: Path) -> dict[int, dict]:
    values, problems = files.json_lines(path)
    assert not problems
    return {value["doc_id"]: value for _, value in values}


# --- writes -------------------------------------------------------------------------------------------


def test_symlinks_planted_at_the_outputs_and_the_old_temporary_names_are_never_written_through(tmp_path):
    victims = tmp_path / "victims"
    victims.mkdir()
    for name in ("bashrc", "results", "tmp_grades", "tmp_results"):
        (victims / name).write_text(f"{name} must not change\n", encoding="utf-8")
    before = tree_digest(victims)
    folder = tmp_path / "out" / "shop-model"
    write_samples(folder)
    (folder / GRADES_NAME).symlink_to(victims / "bashrc")
    (folder / RESULTS_NAME).symlink_to(victims / "results")
    # The fixed temporary names the judge used to write through.
    (folder / f".{GRADES_NAME}.tmp").symlink_to(victims / "tmp_grades")
    (folder / f".{RESULTS_NAME}.tmp").symlink_to(victims / "tmp_results")
    with serve_openai_compatible(fair_grader) as server:
        (judged,) = judge(tmp_path / "out", server, tmp_path / "cache")
    assert tree_digest(victims) == before
    for name in (GRADES_NAME, RESULTS_NAME):
        assert not (folder / name).is_symlink() and (folder / name).is_file()
    grades = grades_of(folder / GRADES_NAME)
    assert {doc_id: line["grade"] for doc_id, line in grades.items()} == {0: 3, 1: 0, 2: 3, 3: 0}
    assert judged.metrics["judge_failure_rate"] == 0.0
    # No temporary file is left behind (the planted links at the old names are the only dot files).
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) == sorted(
        [f".{GRADES_NAME}.tmp", f".{RESULTS_NAME}.tmp"]
    )


def test_judge_results_are_strict_json_when_a_metric_is_undefined(tmp_path):
    """Two graders who give every item the same grade: the kappas are undefined (nan in memory), null
    in the file, never a bare NaN."""
    write_samples(tmp_path / "out" / "m")
    with serve_openai_compatible(lambda body: "Final Score: 2") as server:
        (judged,) = judge_output(
            tmp_path / "out",
            ["openai/judge-a", "openai/judge-b"],
            api_bases=[server.base_url],
            cache_dir=tmp_path / "cache",
            progress=False,
        )
    text = judged.results_path.read_text(encoding="utf-8")
    assert "NaN" not in text
    results = files.read_json(judged.results_path)  # strict: NaN would be refused
    assert results["metrics"]["panel/fleiss_kappa"] is None and results["metrics"]["panel/exact_agreement"] == 1.0


# --- reads --------------------------------------------------------------------------------------------


def test_a_fifo_as_the_samples_file_is_refused_by_name_without_hanging(tmp_path):
    folder = tmp_path / "out" / "m"
    folder.mkdir(parents=True)
    os.mkfifo(folder / SAMPLES_NAME)
    with pytest.raises(files.FileRefused, match=rf"{SAMPLES_NAME}: a FIFO \(named pipe\), not a regular file"):
        judge_output(tmp_path / "out", [GRADER], api_bases=["http://127.0.0.1:9/v1"], cache_dir=tmp_path / "c")


def test_a_samples_file_linked_from_outside_the_folder_is_refused_and_a_linked_folder_is_not_walked(tmp_path):
    elsewhere = write_samples(tmp_path / "elsewhere")
    out = tmp_path / "out"
    (out / "m").mkdir(parents=True)
    (out / "m" / SAMPLES_NAME).symlink_to(elsewhere)
    with pytest.raises(files.FileRefused, match="outside"):
        judge_output(out, [GRADER], api_bases=["http://127.0.0.1:9/v1"], cache_dir=tmp_path / "c")
    (out / "m" / SAMPLES_NAME).unlink()
    (out / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(ConfigurationError, match="no samples of"):
        judge_output(out, [GRADER], api_bases=["http://127.0.0.1:9/v1"], cache_dir=tmp_path / "c")


def test_bad_samples_lines_are_file_line_field_problems_found_before_any_grader_call(tmp_path):
    good = sample_line(0, RECORDS[0], RECORDS[0].reference)
    doc = doc_of(RECORDS[1])
    bad_lines = [
        good,
        json.dumps({"doc_id": "1", "doc": doc, "filtered_resps": ["x"]}),  # doc_id as text
        json.dumps({"doc_id": 2, "doc": {**doc, "question": 5}, "filtered_resps": ["x"]}),
        json.dumps({"doc_id": 3, "doc": doc, "filtered_resps": [{"text": "x"}]}),
        json.dumps({"doc_id": 4, "doc": ["not", "an", "object"], "filtered_resps": ["x"]}),
        json.dumps({"doc_id": 5, "doc": {**doc, "category": 7}, "filtered_resps": ["x"]}),
        '{"doc_id": 6, "doc": ' + "[" * 200 + "]" * 200 + "}",  # nested deeper than any sample
        '{"doc_id": ' + "9" * 5000 + "}",  # a 5,000-digit number
    ]
    out = tmp_path / "out"
    path = write_samples(out / "m", bad_lines)
    with path.open("ab") as fh:
        fh.write(b'{"doc_id": 9, "doc": {"question": "caf\xe9"}}\n')  # Latin-1, not UTF-8
    with serve_openai_compatible(fair_grader) as server:
        with pytest.raises(DataValidationError) as raised:
            judge(out, server, tmp_path / "cache")
        assert server.requests == []
    where = {(p.row, p.field) for p in raised.value.problems}
    assert where == {
        (2, "doc_id"),
        (3, "doc.question"),
        (4, "filtered_resps"),
        (5, "doc"),
        (6, "doc.category"),
        (7, "-"),
        (8, "-"),
        (9, "-"),
    }
    assert all(p.source == str(path) for p in raised.value.problems)
    assert "not UTF-8" in next(p.message for p in raised.value.problems if p.row == 9)


def test_an_empty_samples_file_is_named(tmp_path):
    write_samples(tmp_path / "out" / "m", [])
    with pytest.raises(DataValidationError, match=rf"{SAMPLES_NAME}:0:-: no samples: the file is empty"):
        judge_output(tmp_path / "out", [GRADER], api_bases=["http://127.0.0.1:9/v1"], cache_dir=tmp_path / "c")


def test_two_lines_sharing_a_doc_id_never_share_a_grade(tmp_path):
    """A GOOD and a BAD response with one doc_id: refused, naming both lines, before any grader call;
    given their own doc_ids, each gets its own grade."""
    record = RECORDS[0]
    out = tmp_path / "out"
    path = write_samples(out / "m", [sample_line(0, record, record.reference), sample_line(0, record, BAD)])
    with serve_openai_compatible(fair_grader) as server:
        with pytest.raises(DataValidationError, match=r":2:doc_id: doc_id 0 is also the doc_id of line 1"):
            judge(out, server, tmp_path / "cache")
        assert server.requests == []
        write_samples(out / "m", [sample_line(0, record, record.reference), sample_line(1, record, BAD)])
        (judged,) = judge(out, server, tmp_path / "cache")
    grades = grades_of(judged.grades_path)
    assert (grades[0]["grade"], grades[0]["response"]) == (3, record.reference)
    assert (grades[1]["grade"], grades[1]["response"]) == (0, BAD)
    assert path.exists()


def test_a_malformed_lm_eval_results_file_is_left_out_with_a_warning_before_grading(tmp_path):
    folder = tmp_path / "out" / "m"
    write_samples(folder)
    results = folder / f"results_{STAMP}.json"
    warnings: list[str] = []
    warned_at_first_call: list[int] = []

    def grader(body):
        warned_at_first_call.append(len(warnings))
        return fair_grader(body)

    cases = {
        '{"config": [1, 2], "configs": {"ecomeval": 5}, "model_name": 3}': ("config", "configs.ecomeval", "model_name"),
        '{"config": {"model": "x"}, "date": NaN}': ("NaN",),
        '{"config": {"model": ': ("not valid JSON",),
    }
    with serve_openai_compatible(grader) as server:
        for case, (text, said) in enumerate(cases.items()):
            results.write_text(text, encoding="utf-8")
            warnings.clear()
            warned_at_first_call.clear()
            (judged,) = judge(tmp_path / "out", server, tmp_path / f"cache-{case}", warn=warnings.append)
            assert warned_at_first_call and min(warned_at_first_call) >= 1, text  # warned before any grader call
            joined = "\n".join(warnings)
            assert all(part in joined for part in said) and str(results) in joined, joined
            written = files.read_json(judged.results_path)
            assert written.get("model_name") is None and written["metrics"]["n"] == len(RECORDS)
        results.unlink()
        os.mkfifo(results)  # a FIFO: refused by name, not read (a read would hang)
        warnings.clear()
        (judged,) = judge(tmp_path / "out", server, tmp_path / "cache-fifo", warn=warnings.append)
    assert any("FIFO" in w for w in warnings) and judged.metrics["n"] == len(RECORDS)


# --- the reply cache ----------------------------------------------------------------------------------


def test_the_reply_cache_answers_only_the_server_it_was_filled_from(tmp_path):
    """Two servers serve the same --grader name; a run against B is asked of B, not answered from A's
    replies. The output limit is part of the key too."""
    out = tmp_path / "out"
    write_samples(out / "m")
    cache = tmp_path / "cache"
    with (
        serve_openai_compatible(lambda body: "Final Score: 3") as server_a,
        serve_openai_compatible(lambda body: "Final Score: 0") as server_b,
    ):
        (on_a,) = judge(out, server_a, cache)
        (on_b,) = judge(out, server_b, cache)
        named = files.read_json(on_b.results_path, allow_nan=True)["graders"][0]["api_base"]
        (again_a,) = judge(out, server_a, cache)
        (longer,) = judge(out, server_a, cache, max_tokens=4096)
        asked_a, asked_b = len(server_a.requests), len(server_b.requests)
        url_b = server_b.base_url
    n = len(RECORDS)
    assert (on_a.grader_calls, on_b.grader_calls, again_a.grader_calls, longer.grader_calls) == (n, n, 0, n)
    assert (asked_a, asked_b) == (2 * n, n)
    assert on_a.metrics["score_items"] == pytest.approx(100.0) and on_b.metrics["score_items"] == 0.0
    assert again_a.metrics["score_items"] == pytest.approx(100.0) and again_a.cached_calls == n
    assert named == url_b  # the results file names B, and B's grades are in it
    assert {b["max_tokens"] for b in server_a.requests[-n:]} == {4096}


def test_an_unwritable_cache_or_output_is_found_before_the_first_grader_call(tmp_path):
    victims = tmp_path / "victims"
    victims.mkdir()
    (victims / "profile").write_text("keep\n", encoding="utf-8")
    before = tree_digest(victims)
    out = tmp_path / "out"
    write_samples(out / "m")
    (tmp_path / "a-file").write_text("not a folder\n", encoding="utf-8")
    link_cache = tmp_path / "link-cache"
    link_cache.mkdir()
    (link_cache / FILE_NAME).symlink_to(victims / "profile")
    fifo_cache = tmp_path / "fifo-cache"
    fifo_cache.mkdir()
    os.mkfifo(fifo_cache / FILE_NAME)
    folder_cache = tmp_path / "folder-cache"
    (folder_cache / FILE_NAME).mkdir(parents=True)
    caches = {
        tmp_path / "a-file": "not a folder",
        tmp_path / "a-file" / "judge": "below a file",
        link_cache: "symbolic link",
        fifo_cache: "FIFO",
        folder_cache: FILE_NAME,
    }
    with serve_openai_compatible(fair_grader) as server:
        for cache, said in caches.items():
            with pytest.raises(files.FileRefused, match=said):
                judge(out, server, cache)
        (out / "m" / GRADES_NAME).mkdir()  # a folder where the grades go
        with pytest.raises(files.FileRefused, match="a folder where the judge writes its output"):
            judge(out, server, tmp_path / "cache")
        assert server.requests == []
    assert tree_digest(victims) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_output_folder_is_found_before_the_first_grader_call(tmp_path):
    folder = tmp_path / "out" / "m"
    write_samples(folder)
    folder.chmod(0o555)
    try:
        with serve_openai_compatible(fair_grader) as server:
            with pytest.raises(files.FileRefused, match="cannot be written"):
                judge(tmp_path / "out", server, tmp_path / "cache")
            assert server.requests == []
    finally:
        folder.chmod(0o755)


# --- options ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "option, value",
    [
        ("--grader-max-tokens", "-5"),
        ("--grader-max-tokens", "0"),
        ("--grader-max-tokens", "1.5"),
        ("--concurrency", "0"),
        ("--max-attempts", "-1"),
        ("--judge-failure-threshold", "nan"),
        ("--judge-failure-threshold", "-1"),
        ("--judge-failure-threshold", "2"),
        ("--judge-failure-threshold", "inf"),
    ],
)
def test_out_of_range_options_are_a_one_line_usage_error(option, value, capsys):
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["judge", "out", "--grader", GRADER, option, value])
    assert exited.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(f"ecom-tasks judge: error: argument {option}: must be a ") and repr(value) in error


def test_the_python_api_checks_the_same_options(tmp_path):
    write_samples(tmp_path / "out" / "m")
    for options, said in (
        ({"max_tokens": -5}, "--grader-max-tokens must be a whole number above 0"),
        ({"failure_threshold": float("nan")}, "--judge-failure-threshold must be a share from 0 to 1"),
        ({"concurrency": 0}, "--concurrency must be"),
    ):
        with pytest.raises(ConfigurationError, match=said):
            judge_output(tmp_path / "out", [GRADER], api_bases=["http://127.0.0.1:9/v1"], **options)


# --- a prompt longer than the grader's context ---------------------------------------------------------

#: Refusals as real servers word them: (HTTP body, what the judge's detail must say).
REFUSALS = {
    "openai": {
        "error": {
            "message": "This model's maximum context length is 4096 tokens. However, your messages resulted in "
            "5210 tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    },
    "llama.cpp": {
        "error": {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 5210,
            "n_ctx": 4096,
        }
    },
    "vllm": {  # the prompt fits; the prompt plus the output limit does not
        "object": "error",
        "message": "This model's maximum context length is 4096 tokens. However, you requested 5648 tokens "
        "(3600 in the messages, 2048 in the completion). Please reduce the length of the messages or completion.",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    },
}


class _RefusingHandler(JsonHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self.server.owner._record(body)
        self._send_json(400, REFUSALS[self.server.owner.style])


class RefusingServer(LoopbackServer):
    """An OpenAI-compatible server that refuses every request as longer than its context, in ``style``."""

    handler = _RefusingHandler

    def __init__(self, style: str) -> None:
        super().__init__()
        self.style = style


@pytest.mark.slow  # three `ecom-tasks judge` processes
def test_a_prompt_longer_than_the_graders_context_is_asked_once_named_and_fails_the_command(tmp_path):
    out = tmp_path / "out"
    write_samples(out / "m")
    for style in REFUSALS:
        with RefusingServer(style) as server:
            proc = run_cli(
                [
                    "ecom-tasks",
                    "judge",
                    out,
                    "--grader",
                    GRADER,
                    "--api-base",
                    server.base_url,
                    "--cache-dir",
                    tmp_path / "cache",
                    "--no-progress",
                    "--max-attempts",
                    "3",
                ],
                cwd=tmp_path,
            )
            requests = len(server.requests)
        assert requests == len(RECORDS), style  # one request per item: never retried, never re-sent longer
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        warning = proc.stderr
        assert "the judge failed on 4 of 4 items (100.0%), more than --judge-failure-threshold 0.1" in warning
        assert "grader_prompt_too_long x4" in warning and "larger context window" in warning
        assert "grader_max_tokens" not in warning and "raise" not in warning.lower()
        grades = grades_of(out / "m" / GRADES_NAME)
        detail = grades[0]["detail"]
        assert {g["status"] for g in grades.values()} == {"grader_prompt_too_long"}
        assert grades[0]["grader_stop_reasons"] == ["prompt_too_long"] and grades[0]["attempts"] == 1
        server_words = REFUSALS[style].get("error", REFUSALS[style])["message"]
        assert server_words in detail  # the server's own words, through litellm
        if style == "vllm":
            assert "(3600 tokens) fits the grader's 4096-token context window, but not with 2048" in detail
            assert "set --grader-max-tokens N with N below 496" in detail
        else:
            assert "(5210 tokens) does not fit the grader's context window of 4096 tokens" in detail
            assert "--grader-max-tokens" not in detail
        results = files.read_json(out / "m" / RESULTS_NAME)
        assert (
            results["judge_failures"] == {"grader_prompt_too_long": 4} and results["metrics"]["score_unreliable"] == 1
        )


@pytest.mark.slow  # an `ecom-tasks judge` process
def test_within_the_failure_threshold_the_command_exits_0(tmp_path):
    out = tmp_path / "out"
    write_samples(out / "m")
    with RefusingServer("openai") as server:
        proc = run_cli(
            ["ecom-tasks", "judge", out, "--grader", GRADER, "--api-base", server.base_url]
            + ["--cache-dir", tmp_path / "cache", "--no-progress", "--judge-failure-threshold", "1"],
            cwd=tmp_path,
        )
    assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr


def test_inspect_graders_refusal_is_a_counted_failure_not_a_reply(tmp_path, monkeypatch):
    """Through Inspect: OpenAI's coded refusal (made a reply by Inspect) and llama.cpp's (raised) are
    both PromptTooLong: asked once, named in Inspect's spelling of the option only where it helps."""
    import asyncio

    from inspect_ai.model import get_model

    from ecom_tasks.ecomeval.parsing import parse_grade
    from ecom_tasks.scorers.inspect_judge import inspect_ask
    from ecom_tasks.scorers.judge import run_judge

    for style in REFUSALS:
        with RefusingServer(style) as server:
            monkeypatch.setenv("REFUSING_BASE_URL", server.base_url)
            monkeypatch.setenv("REFUSING_API_KEY", "x")
            grader = get_model(f"openai-api/refusing/judge-{style.replace('.', '')}", memoize=False)
            result = asyncio.run(run_judge(inspect_ask(grader), "Grade this.", parse_grade, max_tokens=2048))
            requests = len(server.requests)
        assert requests == 1 and result.prompt_too_long and result.failed, style
        status, detail = result.limit_failure()
        assert status == "grader_prompt_too_long" and "larger context window" in detail
        if style == "vllm":
            assert "set -T grader_max_tokens=N with N below 496" in detail
        else:
            assert "grader_max_tokens" not in detail and "4096" in detail


def test_a_cache_line_cut_short_by_a_kill_is_skipped_and_the_next_entries_stay_readable(tmp_path):
    out = tmp_path / "out"
    write_samples(out / "m")
    cache = tmp_path / "cache"
    with serve_openai_compatible(fair_grader) as server:
        judge(out, server, cache)
        with (cache / FILE_NAME).open("a", encoding="utf-8") as fh:
            fh.write('{"key": "cut sho')  # a process killed mid-append
        (longer,) = judge(out, server, cache, max_tokens=1000)  # new keys, appended after the cut line
        (again,) = judge(out, server, cache, max_tokens=1000)
    assert longer.grader_calls == len(RECORDS)
    assert again.grader_calls == 0 and again.cached_calls == len(RECORDS)


def test_a_question_the_evaluated_models_server_refused_is_not_sent_to_the_grader(tmp_path):
    """lm-eval's reply for a question longer than the evaluated model's context (the marked reply of
    scorers.context_limit): no grader call, grade 0, counted in context_exceeded_rate, as in Inspect."""
    from ecom_tasks.scorers.context_limit import ContextExceeded, as_reply

    refused = as_reply(ContextExceeded("the request exceeds the available context size", 9000, 8192))
    lines = [sample_line(i, r, r.reference) for i, r in enumerate(RECORDS)]
    lines[1] = sample_line(1, RECORDS[1], refused)
    write_samples(tmp_path / "out" / "m", lines)
    with serve_openai_compatible(fair_grader) as server:
        (judged,) = judge(tmp_path / "out", server, tmp_path / "cache")
        asked = [read_grader_prompt(last_user_text(b))[0] for b in server.requests]
    assert sorted(asked) == sorted(r.question for i, r in enumerate(RECORDS) if i != 1)
    grades = grades_of(judged.grades_path)
    assert (grades[1]["grade"], grades[1]["status"]) == (0, "context_exceeded") and "8192" in grades[1]["detail"]
    assert judged.metrics["context_exceeded_rate"] == pytest.approx(1 / len(RECORDS))
    assert judged.metrics["score_items"] == pytest.approx(100 * 3 / len(RECORDS))  # three 3s and the refused 0
    assert judged.metrics["judge_failure_rate"] == 0.0


def test_a_grader_error_that_no_retry_fixes_is_named_in_the_servers_words(tmp_path):
    """A 400 that is not about the context (an unknown model): the run stops at once, quoting the server,
    and does not claim that running again will help before the cause is fixed."""
    from loopback.openai_server import RequestRejected

    from ecom_tasks.ecomeval.judge_run import GradingStopped

    def unknown_model(body):
        raise RequestRejected("The model `judge` does not exist.", code="model_not_found")

    write_samples(tmp_path / "out" / "m")
    with serve_openai_compatible(unknown_model) as server:
        with pytest.raises(GradingStopped) as stopped:
            judge(tmp_path / "out", server, tmp_path / "cache", concurrency=1)
        asked = len(server.requests)
    message = str(stopped.value)
    assert asked == 1  # a bad request is not retried
    assert "(BadRequestError: The model `judge` does not exist.)" in message
    assert "fix what it says, then run the same command" in message and "again to grade the rest" not in message
