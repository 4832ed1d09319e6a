#!/usr/bin/env python
"""The harness's own ceiling: calls per second over HTTP against an instant loopback server.

Side by side in one run, each side a whole process (imports included) sending
the same MonBench calls (the fixtures, full design: every test question x 72
runs; 2,880 calls for the 40 questions of 2026-11-24) to the same
OpenAI-compatible server on 127.0.0.1, which answers each call at once with a
fixed valid reply (``<Label>A</Label>``):

- ``inspect eval ecom_tasks/monbench_perm`` with its defaults, then with
  settings that may help (``--max-connections``, ``--no-log-realtime``,
  ``--no-log-samples``);
- ``ecom-lm-eval --tasks monbench_perm --model local-chat-completions`` with
  ``num_concurrent``;
- a bare ``openai.AsyncOpenAI`` client sending the same prompts (built by
  MonBench's own prompt builder) with the same concurrency.

The server runs in a process of its own (its CPU is not counted against any
side, but it shares the machine's cores). Wall and CPU seconds per side,
medians over ``--reps`` and the fastest run (the least disturbed: the
ceiling); the load average before and after is printed: quote numbers only
from a quiet machine, and compare CPU seconds when wall and CPU differ
(another process had the cores).

    .venv/bin/python benchmarks/harness_ceiling.py --reps 3 --json benchmarks/harness_ceiling.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BIN = Path(sys.executable).parent
REPLY = "<Label>A</Label>"

BARE_CLIENT = f"""
import asyncio, json, sys
from openai import AsyncOpenAI
from ecom_tasks.monbench.protocol import load_items
from ecom_tasks.monbench.schema import TASKS

async def main(base_url, concurrency, calls):
    items = load_items(None, tasks=TASKS, split="test", design="full")
    client = AsyncOpenAI(base_url=base_url, api_key="none", max_retries=0)
    gate = asyncio.Semaphore(concurrency)
    async def one(item):
        async with gate:
            out = await client.chat.completions.create(model="m", temperature=0.0, max_tokens=16384, messages=[
                {{"role": "system", "content": item.system_prompt}}, {{"role": "user", "content": item.user_prompt}}])
            return out.choices[0].message.content
    replies = await asyncio.gather(*(one(i) for i in items))
    assert len(replies) == calls and all(r == {REPLY!r} for r in replies)

asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
"""


def serve() -> None:
    """``--serve``: the instant server, in this process, until killed."""
    # The loopback servers are the test suite's own (tests/loopback), not part of the package.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from loopback.openai_server import serve_openai_compatible
    from loopback.server import QuietServer

    # socketserver listens with a backlog of 5: 32 clients connecting at once overflow it, and the
    # kernel drops SYNs that are retried a second later, which would time the server, not the clients.
    QuietServer.request_queue_size = 1024
    server = serve_openai_compatible(lambda body: REPLY, model_name="m")
    print(server.base_url, flush=True)
    while True:
        time.sleep(3600)


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one child process run to completion."""
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    proc = subprocess.run(
        args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tempfile.gettempdir()
    )
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args[:3])} failed:\n{proc.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def monbench_calls() -> int:
    """Calls of ``monbench_perm`` on the fixtures: what every side sends."""
    from ecom_tasks.monbench.protocol import load_items
    from ecom_tasks.monbench.schema import TASKS

    return len(load_items(None, tasks=TASKS, split="test", design="full"))


def sides(base_url: str, concurrency: int, log_dir: str, calls: int) -> dict[str, list[str]]:
    inspect = [
        str(BIN / "inspect"),
        "eval",
        "ecom_tasks/monbench_perm",
        "--model",
        "openai-api/loop/m",
        "--log-dir",
        log_dir,
        "--display",
        "none",
    ]
    many = ["--max-connections", str(concurrency)]
    return {
        "inspect (defaults)": inspect,
        f"inspect --max-connections {concurrency}": inspect + many,
        f"inspect --max-connections {concurrency} --no-log-realtime": inspect + many + ["--no-log-realtime"],
        f"inspect --max-connections {concurrency} --no-log-realtime --no-log-samples": inspect
        + many
        + ["--no-log-realtime", "--no-log-samples"],
        f"lm-eval num_concurrent={concurrency}": [
            str(BIN / "ecom-lm-eval"),
            "--tasks",
            "monbench_perm",
            "--model",
            "local-chat-completions",
            "--apply_chat_template",
            "--model_args",
            f"model=m,base_url={base_url}/chat/completions,num_concurrent={concurrency},max_retries=1",
        ],
        f"bare AsyncOpenAI, {concurrency} at a time": [
            sys.executable,
            "-c",
            BARE_CLIENT,
            base_url,
            str(concurrency),
            str(calls),
        ],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--json", help="write the numbers here (benchmarks/campaign.py reads them)")
    args = parser.parse_args()
    if args.serve:
        serve()
        return 0
    from ecom_tasks.offline import apply_offline

    apply_offline()
    calls = monbench_calls()
    env = dict(os.environ, LOOP_API_KEY="none", NO_PROXY="127.0.0.1,localhost")
    server = subprocess.Popen([sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        base_url = server.stdout.readline().strip()
        env["LOOP_BASE_URL"] = base_url
        load_before = os.getloadavg()
        with tempfile.TemporaryDirectory() as tmp:
            commands = sides(base_url, args.concurrency, tmp, calls)
            results: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
            for command in commands.values():  # untimed warm-up (page cache, bytecode)
                timed(command, env)
                break
            for rep in range(args.reps):
                order = list(commands.items())
                for name, command in order if rep % 2 == 0 else reversed(order):
                    results[name].append(timed(command, env))
        load_after = os.getloadavg()
    finally:
        server.kill()
        server.wait()
    print(
        f"load average before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, after {load_after[0]:.2f} {load_after[1]:.2f} "
        f"{load_after[2]:.2f} (1, 5, 15 min; 2 cores)"
    )
    print(f"{calls} MonBench calls (fixtures, full design), instant loopback server, {args.reps} run(s) per side\n")
    print("| side | wall s, median | wall s, fastest | CPU s, median | calls/s (fastest) |\n|---|---:|---:|---:|---:|")
    summary = {}
    for name, runs in results.items():
        wall, cpu, fastest = (
            statistics.median(w for w, _ in runs),
            statistics.median(c for _, c in runs),
            min(w for w, _ in runs),
        )
        summary[name] = {
            "wall_s": wall,
            "wall_min_s": fastest,
            "cpu_s": cpu,
            "calls_per_s": calls / fastest,
            "runs": runs,
        }
        print(f"| {name} | {wall:.1f} | {fastest:.1f} | {cpu:.1f} | {calls / fastest:.0f} |")
    if args.json:
        best_inspect = max((v["calls_per_s"] for k, v in summary.items() if k.startswith("inspect")), default=None)
        Path(args.json).write_text(
            json.dumps(
                {
                    "source": "benchmarks/harness_ceiling.py",
                    "calls": calls,
                    "load_before": load_before,
                    "load_after": load_after,
                    "sides": summary,
                    "calls_per_s": {
                        "inspect": summary["inspect (defaults)"]["calls_per_s"],
                        "inspect_tuned": best_inspect,
                        "lm_eval": next(v["calls_per_s"] for k, v in summary.items() if k.startswith("lm-eval")),
                        "bare_client": next(v["calls_per_s"] for k, v in summary.items() if k.startswith("bare")),
                    },
                },
                indent=2,
            ),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
