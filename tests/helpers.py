"""Helpers for tests that run the console scripts and a local OpenAI-compatible server.

``run_cli`` runs ``ecom-tasks``, ``ecom-lm-eval``, ``inspect``, ``lm_eval`` (any
script of the venv running the tests) in a subprocess that is offline and
guarded: ``tests/netguard_site/sitecustomize.py`` installs the socket guard at
interpreter start and reports what it saw; ``run_cli`` fails the test if the
subprocess tried a non-loopback connection or resolved a host name.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from loopback.openai_server import (
    OpenAICompatibleServer,
    last_user_text,
    serve_openai_compatible,
    system_text,
)

from ecom_tasks.offline import litellm_tokenizer_dir

TESTS_DIR = Path(__file__).resolve().parent
REPO_DIR = TESTS_DIR.parent
NETGUARD_SITE = TESTS_DIR / "netguard_site"
PLUGIN_EXAMPLE = TESTS_DIR / "plugin_example"


def tail(text: str, lines: int = 40) -> str:
    return "\n".join((text or "").splitlines()[-lines:])


def _describe(proc: subprocess.CompletedProcess) -> str:
    return (
        f"command: {' '.join(map(str, proc.args))}\nexit code: {proc.returncode}\n"
        f"--- stdout (tail) ---\n{tail(proc.stdout)}\n--- stderr (tail) ---\n{tail(proc.stderr)}"
    )


def offline_env(env: dict[str, str] | None = None, *, report: str | None = None) -> dict[str, str]:
    """``os.environ`` + offline flags + ``env``; PYTHONPATH = netguard site : env's : ours."""
    merged = dict(os.environ)
    merged.update(
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    tokenizer_dir = litellm_tokenizer_dir()
    if tokenizer_dir:
        merged["TIKTOKEN_CACHE_DIR"] = tokenizer_dir
    extra = dict(env or {})
    paths = [str(NETGUARD_SITE)]
    if extra.get("PYTHONPATH"):
        paths.append(extra.pop("PYTHONPATH"))
    if os.environ.get("PYTHONPATH"):
        paths.append(os.environ["PYTHONPATH"])
    merged.update(extra)
    merged["PYTHONPATH"] = os.pathsep.join(paths)
    # Loopback calls must never be routed through a proxy from the caller's environment.
    merged["NO_PROXY"] = merged["no_proxy"] = ",".join(
        p for p in ("127.0.0.1,localhost,::1", merged.get("NO_PROXY", "")) if p
    )
    if report is not None:
        merged["ECOM_NETGUARD_REPORT"] = report
    return merged


def run_cli(
    args: list[str],
    *,
    env: dict[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess:
    """Run ``args[0]`` from this venv's bin folder, offline and under the network guard.

    Returns the completed process (text stdout/stderr) whatever its exit code;
    asserts that the guard report was written and shows no blocked connection
    and no host-name lookup.
    """
    script = Path(sys.executable).parent / args[0]
    assert script.exists(), f"no console script {script}"
    with tempfile.TemporaryDirectory(prefix="netguard-") as tmp:
        report_path = os.path.join(tmp, "report.json")
        proc = subprocess.run(
            [str(script), *map(str, args[1:])],
            env=offline_env(env, report=report_path),
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        assert os.path.exists(report_path), (
            f"the network guard wrote no report (sitecustomize not loaded?)\n{_describe(proc)}"
        )
        with open(report_path, encoding="utf-8") as fh:
            report = json.load(fh)
    assert report["blocked"] == [], f"non-loopback connections attempted: {report['blocked']}\n{_describe(proc)}"
    assert report["name_lookups"] == [], f"host names resolved: {report['name_lookups']}\n{_describe(proc)}"
    proc.netguard_report = report  # type: ignore[attr-defined]
    return proc


def check_ok(proc: subprocess.CompletedProcess, code: int = 0) -> subprocess.CompletedProcess:
    """Assert the exit code, showing the output tails if it differs."""
    assert proc.returncode == code, _describe(proc)
    return proc


# --- the local OpenAI-compatible server ---------------------------------------------

Rule = Callable[[str, str], str]
"""``rule(system_text, user_text) -> reply`` for one chat request."""


def baseline_rule(system: str, user: str) -> str:
    """The offline baseline's reply: a served 'model' that answers like ``ecom/baseline``."""
    from ecom_tasks.plugins import baseline_reply

    return baseline_reply([("system", system), ("user", user)])


def label_rule(letter: str) -> Rule:
    """Always answer ``<Label>{letter}</Label>`` (a scripted position-biased model)."""
    return lambda system, user: f"<Label>{letter}</Label>"


def policy_from_rule(rule: Rule) -> Callable[[dict[str, Any]], str]:
    """A server policy applying ``rule`` to the system and last user text of a chat request."""

    def policy(body: dict[str, Any]) -> str:
        if "messages" not in body:
            raise ValueError("only chat completions are served by this policy")
        return rule(system_text(body), last_user_text(body))

    return policy


def start_monbench_server(rule: Rule = baseline_rule, *, model_name: str = "test-model") -> OpenAICompatibleServer:
    """Start a loopback server answering MonBench prompts with ``rule`` (use as a with-block)."""
    return serve_openai_compatible(policy_from_rule(rule), model_name=model_name)


# --- expected numbers, computed without either framework -----------------------------


def expected_baseline_metrics(design: str, formats: str | None = None, *, limit: int | None = None) -> dict[str, float]:
    """MonBench metrics of the offline baseline on the bundled test split, scored directly.

    The items are those both frameworks build; ``limit`` counts questions, as
    Inspect's ``--limit`` does (one Sample per question); each reply is the baseline's answer to the
    (system, user) pair, scored with the shared scoring code. Keys as in the
    Inspect log: ``acc``, ``<task>/acc``, ...
    """
    from ecom_tasks.monbench.protocol import expand, runs_for
    from ecom_tasks.monbench.schema import load_records
    from ecom_tasks.monbench.scoring import score_reply, summarize
    from ecom_tasks.plugins import baseline_reply, select_metrics

    records = load_records(None, split="test")
    items = expand(records[:limit] if limit is not None else records, runs_for(design, formats))
    outcomes = [
        score_reply(item.fields, baseline_reply([("system", item.system_prompt), ("user", item.user_prompt)]))[1]
        for item in items
    ]
    return summarize(outcomes, select_metrics("choice_runs"))


def parse_lm_eval_tables(stdout: str) -> dict[str, dict[str, dict[str, str]]]:
    """lm-eval's printed markdown tables: ``{"Tasks"|"Groups": {name: {metric: value}}}``.

    Names lose their `` - `` subtask prefix; values stay strings as printed (e.g. ``"0.4286"``).
    """
    tables: dict[str, dict[str, dict[str, str]]] = {}
    current: dict[str, dict[str, str]] | None = None
    name = ""
    for line in stdout.splitlines():
        if not line.startswith("|"):
            current = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] in ("Tasks", "Groups") and "Metric" in cells:
            current = tables.setdefault(cells[0], {})
            continue
        if current is None or set(cells[0]) <= {"-", ":"} and cells[0]:
            continue
        if cells[0]:
            name = cells[0].removeprefix("- ").strip()
        current.setdefault(name, {})[cells[4]] = cells[6]
    return tables


def lm_eval_logged(
    model_args: str, tasks: list[str], out: Path | str, *, model: str = "local-chat-completions"
) -> dict[str, Any]:
    """lm-eval's ``model`` (by default ``local-chat-completions``, with its chat template) with ``model_args`` over
    ``tasks`` (ours only), its results and samples saved under ``out`` as ``lm_eval --output_path out
    --log_samples`` does; lm-eval's results."""
    import lm_eval
    from lm_eval.loggers import EvaluationTracker

    from ecom_tasks.lm_eval_tasks import task_manager

    tracker = EvaluationTracker(output_path=str(out))
    results = lm_eval.simple_evaluate(
        model=model,
        model_args=model_args,
        tasks=tasks,
        apply_chat_template=model == "local-chat-completions",
        task_manager=task_manager(include_defaults=False),
        bootstrap_iters=0,
        log_samples=True,
        evaluation_tracker=tracker,
    )
    samples = results.pop("samples")  # as lm_eval's CLI does: the results file holds no samples
    tracker.save_results_aggregated(results=results, samples=samples)
    for task, task_samples in samples.items():
        tracker.save_results_samples(task_name=task, samples=task_samples)
    return {**results, "samples": samples}


def finished_lm_eval_results(folder: Path, task: str, stamp: str) -> Path:
    """The smallest lm-eval results file saying ``task`` (RAIR) finished, so ``compare`` reads the samples file of
    the same ``stamp`` beside it (without one, a samples file is an unfinished run, left out unread)."""
    results = {
        "results": {task: {"alias": task, "acc4,none": 0.5}},
        "configs": {task: {"metadata": {"benchmark": "rair"}}},
        "config": {"model": "local-chat-completions", "model_args": "model=shop-model"},
        "date": 1.0,
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"results_{stamp}.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    return path


def mark_build_folder(out: Path, benchmark: str) -> None:
    """What an earlier build of ``benchmark`` left in ``out``: its marker (a test then plants the rest)."""
    from ecom_tasks.construction import BUILD_MARKER

    out.mkdir(parents=True, exist_ok=True)
    (out / BUILD_MARKER).write_text(json.dumps({"benchmark": benchmark}) + "\n", encoding="utf-8")


def mark_report_folder(out: Path) -> Path:
    """What an earlier ``ecom-tasks report`` left in ``out``: its marker (a test then plants the rest)."""
    from ecom_tasks.report import REPORT_MARKER

    out.mkdir(parents=True, exist_ok=True)
    (out / REPORT_MARKER).write_text(json.dumps({"command": "report"}) + "\n", encoding="utf-8")
    return out
