"""The console scripts, run as a user would: ``ecom-tasks``, ``lm_eval``, ``ecom-lm-eval``, ``inspect``.

Every subprocess runs offline under the network guard (see ``helpers.run_cli``).
Expected numbers come from ``helpers.expected_baseline_metrics``, which scores
the offline baseline on the bundled fixtures without either framework.
"""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import pytest
from helpers import check_ok, expected_baseline_metrics, parse_lm_eval_tables, run_cli
from inspect_ai.log import list_eval_logs, read_eval_log

from ecom_tasks.data import fixtures_dir
from ecom_tasks.lm_eval_tasks import TASKS_DIR
from ecom_tasks.monbench.schema import TASKS, load_records
from ecom_tasks.monbench.variants import TASK_VERSION

# --- the guard itself ----------------------------------------------------------------


def test_run_cli_fails_on_network_use(tmp_path: Path) -> None:
    connect = (
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('192.0.2.1', 80), timeout=1)\n"
        "except OSError as exc:\n"
        "    print(type(exc).__name__)\n"
    )
    with pytest.raises(AssertionError, match=r"non-loopback connections attempted: \[\['192\.0\.2\.1', 80\]\]") as info:
        run_cli(["python", "-c", connect], cwd=tmp_path)
    assert "BlockedConnectionError" in str(info.value)  # the stdout tail is in the message

    # A name lookup is reported too (the resolver itself is stubbed: no DNS query leaves).
    lookup = (
        "import _socket, socket\n"
        "_socket.getaddrinfo = lambda *a, **k: []\n"
        "socket.getaddrinfo('shop.example.invalid', 443)\n"
        "socket.getaddrinfo('127.0.0.1', 80)\n"
        "socket.getaddrinfo('localhost', 80)\n"
    )
    with pytest.raises(AssertionError, match=r"host names resolved: \['shop\.example\.invalid'\]"):
        run_cli(["python", "-c", lookup], cwd=tmp_path)

    clean = check_ok(run_cli(["python", "-c", "print('ok')"], cwd=tmp_path))
    assert clean.stdout == "ok\n"
    assert clean.netguard_report["blocked"] == [] and clean.netguard_report["name_lookups"] == []


# --- ecom-tasks ----------------------------------------------------------------------


def test_lm_eval_path_prints_the_task_folder(tmp_path: Path) -> None:
    out = check_ok(run_cli(["ecom-tasks", "lm-eval-path"], cwd=tmp_path)).stdout
    assert out.splitlines() == [str(TASKS_DIR)]
    folder = Path(out.strip())
    assert folder.is_dir()
    assert (folder / "monbench" / "_monbench_perm.yaml").is_file()


def test_validate_bundled_fixtures(tmp_path: Path) -> None:
    proc = check_ok(run_cli(["ecom-tasks", "validate", "monbench"], cwd=tmp_path))
    records = load_records(None, split=None)
    counts = collections.Counter(f"{r.task}/{r.split}" for r in records)
    expected = [f"OK: {len(records)} monbench records in {fixtures_dir('monbench')}"]
    expected += [f"  {key:<40} {count}" for key, count in sorted(counts.items())]
    assert proc.stdout.splitlines() == expected
    # Every task has test items (the suites below rely on it).
    assert {task for task in TASKS if counts[f"{task}/test"]} == set(TASKS)


def test_validate_reports_each_problem_as_file_row_field(tmp_path: Path) -> None:
    rows = [
        # 1: three choices
        {
            "id": "bad-1",
            "task": "query_ad_relevance",
            "split": "test",
            "question": "Query: running shoes",
            "choices": ["Trail running shoes", "Road bike", "Tent"],
            "answer": 0,
        },
        # 2: answer out of range
        {
            "id": "bad-2",
            "task": "product_co_purchase",
            "split": "test",
            "question": "A user bought a tent. What else?",
            "choices": ["Sleeping bag", "Lamp", "Desk", "Mug"],
            "answer": 7,
        },
        # 3: unknown task
        {
            "id": "bad-3",
            "task": "query_weather",
            "split": "test",
            "question": "Query: umbrella",
            "choices": ["Umbrella", "Hat", "Scarf", "Gloves"],
            "answer": 0,
        },
        # 4: duplicate of row 1's id (otherwise valid)
        {
            "id": "bad-1",
            "task": "query_ad_relevance",
            "split": "test",
            "question": "Query: yoga mat",
            "choices": ["Yoga mat", "Dumbbell", "Treadmill", "Bench"],
            "answer": 0,
        },
        # 5: empty question
        {
            "id": "bad-5",
            "task": "query_ad_relevance",
            "split": "test",
            "question": "",
            "choices": ["Sofa", "Chair", "Table", "Bed"],
            "answer": 1,
        },
    ]
    data = tmp_path / "bad.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")

    proc = check_ok(run_cli(["ecom-tasks", "validate", "monbench", str(data)], cwd=tmp_path), 1)
    assert proc.stdout == ""
    problems = [line for line in proc.stderr.splitlines() if line.startswith(f"{data}:")]
    by_prefix = {line[: line.index(": ") + 1]: line for line in problems}
    assert len(problems) == len(by_prefix) == 5, proc.stderr
    assert set(by_prefix) == {
        f"{data}:1:choices:",
        f"{data}:2:answer:",
        f"{data}:3:task:",
        f"{data}:4:id:",
        f"{data}:5:question:",
    }
    assert by_prefix[f"{data}:1:choices:"] == f"{data}:1:choices: needs exactly 4 choices, got 3"
    assert by_prefix[f"{data}:2:answer:"] == f"{data}:2:answer: must be 0-3 or A-D, got 7"
    assert by_prefix[f"{data}:3:task:"].startswith(f"{data}:3:task: unknown task 'query_weather'")
    assert by_prefix[f"{data}:4:id:"] == f"{data}:4:id: duplicate id 'bad-1' (first at {data}:1)"
    assert by_prefix[f"{data}:5:question:"] == f"{data}:5:question: empty string"
    assert proc.stderr.splitlines()[-1] == f"INVALID: 5 problem(s) in {data}"


def test_validate_unknown_benchmark_exits_2(tmp_path: Path) -> None:
    proc = check_ok(run_cli(["ecom-tasks", "validate", "nosuchbench", "x"], cwd=tmp_path), 2)
    assert proc.stdout == ""
    assert proc.stderr.startswith("unknown benchmark 'nosuchbench'; known: ")
    assert "monbench" in proc.stderr.split("known: ", 1)[1].strip().split(", ")


# --- plain lm_eval with --include_path ----------------------------------------------


def test_plain_lm_eval_does_not_know_ecom_baseline(tmp_path: Path) -> None:
    proc = run_cli(
        [
            "lm_eval",
            "--tasks",
            "monbench_canonical_query_ad_relevance",
            "--include_path",
            str(TASKS_DIR),
            "--model",
            "ecom-baseline",
            "--limit",
            "1",
        ],
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Attempted to load model 'ecom-baseline', but no model for this name found!" in proc.stderr


def test_plain_lm_eval_include_path_with_dummy_model(tmp_path: Path) -> None:
    """Our YAML tasks load in stock lm_eval; ``dummy`` replies "lol": a format violation, never correct."""
    out_dir = tmp_path / "out"
    proc = check_ok(
        run_cli(
            [
                "lm_eval",
                "--tasks",
                "monbench_canonical_query_ad_relevance",
                "--include_path",
                str(TASKS_DIR),
                "--model",
                "dummy",
                "--limit",
                "2",
                "--output_path",
                str(out_dir),
            ],
            cwd=tmp_path,
        )
    )
    table = parse_lm_eval_tables(proc.stdout)
    assert table["Tasks"] == {
        "monbench_canonical_query_ad_relevance": {
            "acc": "0",
            "acc_ci": "NaN",
            "invalid_rate": "1",
            "context_exceeded_rate": "0",
            # the strict reading beside the careful one (issue 27): nothing to read either way
            "acc_strict": "0",
            "acc_ci_strict": "NaN",
            "invalid_rate_strict": "1",
        }
    }
    (results_file,) = out_dir.rglob("results_*.json")
    saved = json.loads(results_file.read_text())
    result = saved["results"]["monbench_canonical_query_ad_relevance"]
    assert result["acc,none"] == 0.0
    assert result["invalid_rate,none"] == 1.0
    assert result["sample_len"] == 2
    n_test = len(load_records(None, split="test", tasks=["query_ad_relevance"]))
    assert saved["n-samples"]["monbench_canonical_query_ad_relevance"] == {"original": n_test, "effective": 2}


# --- ecom-lm-eval ----------------------------------------------------------------------


def test_ecom_lm_eval_monbench_group_table(tmp_path: Path) -> None:
    proc = check_ok(
        run_cli(["ecom-lm-eval", "--tasks", "monbench_canonical", "--model", "ecom-baseline"], cwd=tmp_path)
    )
    expected = expected_baseline_metrics("canonical", "label")
    # lm-eval prints 4 decimals, and its table writer drops a column's common trailing zeros (0.4000 -> 0.4).
    tables = {
        kind: {name: {m: v if v == "NaN" else round(float(v), 4) for m, v in row.items()} for name, row in rows.items()}
        for kind, rows in parse_lm_eval_tables(proc.stdout).items()
    }
    assert tables["Groups"] == {
        "monbench_canonical": {
            "acc": round(expected["acc"], 4),
            "invalid_rate": round(expected["invalid_rate"], 4),
            "context_exceeded_rate": 0.0,
            # the baseline writes exactly the requested format: the strict reading agrees
            "acc_strict": round(expected["acc"], 4),
            "invalid_rate_strict": round(expected["invalid_rate"], 4),
        }
    }
    assert tables["Tasks"] == {
        "monbench_canonical": tables["Groups"]["monbench_canonical"],
        **{
            f"monbench_canonical_{task}": {
                "acc": round(expected[f"{task}/acc"], 4),
                "acc_ci": "NaN",  # one run: no interval
                "invalid_rate": round(expected[f"{task}/invalid_rate"], 4),
                "context_exceeded_rate": 0.0,
                "acc_strict": round(expected[f"{task}/acc"], 4),
                "acc_ci_strict": "NaN",
                "invalid_rate_strict": round(expected[f"{task}/invalid_rate"], 4),
            }
            for task in TASKS
        },
    }
    assert re.search(
        rf"\|monbench_canonical\|{TASK_VERSION:>7}\|none  \|     0\|acc +\|↑  \| *[0-9.]+\|±  \|   N/A\|", proc.stdout
    )


# --- inspect ---------------------------------------------------------------------------


def test_inspect_monbench_canonical_with_baseline(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    check_ok(
        run_cli(
            [
                "inspect",
                "eval",
                "ecom_tasks/monbench_canonical",
                "--model",
                "ecom/baseline",
                "--log-dir",
                str(log_dir),
                "--display",
                "none",
            ],
            cwd=tmp_path,
        )
    )
    (info,) = list_eval_logs(str(log_dir))
    log = read_eval_log(info)
    assert log.status == "success"
    assert log.eval.task == "ecom_tasks/monbench_canonical"
    assert log.eval.model == "ecom/baseline"
    assert log.results is not None
    assert log.results.total_samples == log.results.completed_samples == len(load_records(None, split="test"))
    (score,) = log.results.scores
    metrics = {name: metric.value for name, metric in score.metrics.items()}
    expected = expected_baseline_metrics("canonical", "label")
    assert metrics["acc"] == pytest.approx(expected["acc"])
    assert metrics["invalid_rate"] == 0.0
    for task in TASKS:
        assert metrics[f"{task}/acc"] == pytest.approx(expected[f"{task}/acc"]), task
    assert metrics["n_runs"] == 1.0


def test_ecom_lm_eval_keeps_lm_evals_own_models() -> None:
    # Registering ecom-baseline must not hide lm-eval's built-in models (its registry
    # imports them only while it is empty).
    from lm_eval.api.registry import get_model

    from ecom_tasks.lm_eval_tasks import register_models

    register_models()
    assert get_model("ecom-baseline").__name__ == "EcomBaselineLM"
    assert get_model("local-chat-completions").__name__ == "LocalChatCompletion"
    assert get_model("dummy").__name__ == "DummyLM"


def _record_indexes(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """``include_defaults`` of every lm-eval task index built from now on (in this process)."""
    import lm_eval.tasks

    built: list[bool] = []

    class Recording(lm_eval.tasks.TaskManager):  # type: ignore[misc]
        def __init__(self, *args, **kwargs) -> None:
            built.append(kwargs.get("include_defaults", True))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(lm_eval.tasks, "TaskManager", Recording)
    return built


def test_ecom_lm_eval_skips_lm_evals_own_task_index_when_only_our_tasks_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Reading lm-eval's ~14,000 task files costs about 12 s a run, for nothing when every task is ours.
    import lm_eval.tasks

    from ecom_tasks.lm_eval_tasks import cli

    built = _record_indexes(monkeypatch)
    recording = lm_eval.tasks.TaskManager
    cli.main(["--tasks", "rair_general,monbench_canonical", "--model", "ecom-baseline", "--limit", "1"])
    # the check over the task folders, then lm-eval's own index for the run
    assert built == [False, False]
    assert lm_eval.tasks.TaskManager is recording, "lm-eval's class is put back after the run"
    out = capsys.readouterr().out
    assert "rair_general" in out and "monbench_canonical" in out


def test_ecom_lm_eval_keeps_lm_evals_own_task_index_when_a_task_is_not_ours(monkeypatch: pytest.MonkeyPatch) -> None:
    from ecom_tasks.lm_eval_tasks import cli

    built = _record_indexes(monkeypatch)
    with pytest.raises(SystemExit) as stopped:  # lm-eval's own task (not installed data here) or a typo: one message
        cli.main(["--tasks", "rair_general,rair_hrd", "--model", "ecom-baseline", "--limit", "1"])
    assert stopped.value.code == 1
    assert built[:2] == [False, True], "lm-eval's run reads its whole index when a name is not in our folders"


# --- a missing data file: one short message in every CLI --------------------------------------

#: A record of lm-eval's own logger ("2026-01-01:12:00:00 INFO     [...] ...") and the second line of its
#: "Custom kwargs can be passed to `--metadata`" warning, printed for every task with a custom dataset.
LM_EVAL_LOG_LINE = re.compile(r"^\d{4}-\d{2}-\d{2}:\d{2}:\d{2}:\d{2} (DEBUG|INFO|WARNING) |^For example --metadata=")


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        ["inspect", "eval", "ecom_tasks/rair_general", "-T", "data={data}", "--model", "ecom/baseline"],
        [
            "inspect",
            "eval",
            "ecom_tasks/ecomeval",
            "-T",
            "data={data}",
            "--model",
            "ecom/baseline",
            "--model-role",
            "grader=ecom/baseline",
        ],
        ["ecom-lm-eval", "--tasks", "rair_general", "--model", "dummy", "--metadata", '{{"data": "{data}"}}'],
        [
            "lm_eval",
            "--include_path",
            str(TASKS_DIR),
            "--tasks",
            "rair_general",
            "--model",
            "dummy",
            "--metadata",
            '{{"data": "{data}"}}',
        ],
        ["ecom-tasks", "validate", "rair", "{data}"],
    ],
    ids=["inspect-rair", "inspect-ecomeval", "ecom-lm-eval", "lm_eval", "ecom-tasks"],
)
def test_missing_data_file_prints_a_short_message_naming_it(tmp_path: Path, command: list[str]) -> None:
    data = tmp_path / "no-such-dir" / "data.jsonl"
    proc = run_cli([part.format(data=data) for part in command], cwd=tmp_path)
    assert proc.returncode != 0
    output = proc.stdout + proc.stderr
    assert "Traceback" not in output
    lines = [line for line in output.splitlines() if line.strip() and not LM_EVAL_LOG_LINE.match(line)]
    assert 1 <= len(lines) <= 5, output
    assert str(data) in lines[-1]
    if command[0] != "ecom-tasks":
        assert lines == [
            f"ecom-tasks: {data}:0:-: no such file or folder (a Hugging Face dataset id has the form owner/name)"
        ]
    else:
        assert lines[-1] == f"INVALID: 1 problem(s) in {data}"
