#!/usr/bin/env python
"""Does MonBench's cheap cyclic design (12 runs) reproduce the full design (72 runs)?

Runs ``ecom_tasks/monbench`` on the bundled fixtures with ``design=full``
(24 orderings x 3 formats) and ``design=cyclic`` (4 rotations x 3 formats)
for two offline models and prints, per task and overall: the full design's
mean accuracy and 95% CI half-width (``acc_ci``, Student-t over runs), the
cyclic mean (and its own CI), and whether the cyclic mean lies inside the
full design's CI; plus the model calls each design made and the speed-up.

Models:

- ``ecom/baseline``: our deterministic lexical-overlap baseline. It is nearly
  order-insensitive, so the two designs agree almost trivially.
- ``biased``: ``mockllm/model`` with a scripted callable that, for each prompt,
  answers option A with probability 0.5 (a coin flipped by a SHA-256 hash of
  the full prompt, so it is deterministic) and otherwise gives the lexical
  baseline's reply; answers follow the requested tag format. Its accuracy
  depends strongly on where the gold option is shown, which is what the
  permutation designs are for.

    .venv/bin/python benchmarks/cyclic_vs_full.py              # both models, ~1.5 min
    .venv/bin/python benchmarks/cyclic_vs_full.py --models biased
"""

from __future__ import annotations

import os
import sys

from ecom_tasks.offline import apply_offline

apply_offline()  # before inspect / datasets are imported

import argparse  # noqa: E402
import datetime  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    ChatMessage,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
    get_model,
)

import ecom_tasks._registry  # noqa: E402,F401  (registers ecom/ and our tasks)
from ecom_tasks.inspect_evals.monbench import monbench  # noqa: E402
from ecom_tasks.monbench.baseline import last_options_block, reply_in_requested_format  # noqa: E402
from ecom_tasks.monbench.schema import TASKS  # noqa: E402
from ecom_tasks.plugins import baseline_reply  # noqa: E402
from ecom_tasks.report import inspect_rows  # noqa: E402

BIAS_A = 0.5


def picks_a(prompt: str) -> bool:
    """The deterministic coin: True for about half of all prompts."""
    draw = int.from_bytes(hashlib.sha256(prompt.encode("utf-8")).digest()[:8], "big") / 2**64
    return draw < BIAS_A


def position_biased(input: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig) -> ModelOutput:
    """Option A with probability 0.5 (hash of the prompt), else the lexical baseline's reply."""
    messages = [(m.role, m.text) for m in input]
    text = "\n\n".join(t for _, t in messages)
    users = [t for role, t in messages if role == "user"]
    block = last_options_block(users[-1]) if users else None
    if block is not None and picks_a(text):
        reply = reply_in_requested_format(text, block[1], 0)
    else:
        reply = baseline_reply(messages)
    output = ModelOutput.from_content(model="mockllm/model", content=reply)
    prompt_tokens = sum(len(t.split()) for _, t in messages)
    # Usage given, so Inspect does not count tokens with tiktoken.
    output.usage = ModelUsage(
        input_tokens=prompt_tokens, output_tokens=len(reply.split()), total_tokens=prompt_tokens + len(reply.split())
    )
    return output


MODELS = {
    "baseline": lambda: "ecom/baseline",
    "biased": lambda: get_model("mockllm/model", custom_outputs=position_biased),
}


def run(design: str, model: Any, log_dir: str) -> dict[str, Any]:
    task = monbench(design=design)
    started = time.perf_counter()
    log = inspect_eval(task, model=model, display="none", log_dir=log_dir)[0]
    wall = time.perf_counter() - started
    if log.status != "success":
        raise RuntimeError(f"design={design}: {log.status} {log.error}")
    calls = sum(1 for sample in log.samples or [] for event in sample.events if event.event == "model")
    return {"rows": inspect_rows(log), "wall": wall, "calls": calls, "samples": len(log.samples or [])}


def inside(value: float, mean: float, half: float) -> bool:
    return not math.isnan(half) and mean - half - 1e-12 <= value <= mean + half + 1e-12


def in_ci_units(delta: float, half: float) -> float:
    """|delta| in units of a CI half-width (0 when both are 0)."""
    if math.isnan(half):
        return float("nan")
    if half == 0:
        return 0.0 if abs(delta) < 1e-12 else float("inf")
    return abs(delta) / half


def compare(name: str, full: dict[str, Any], cyclic: dict[str, Any]) -> dict[str, Any]:
    rows = [("overall", "monbench")] + [(t, f"monbench/{t}") for t in TASKS]
    print(f"\n=== model: {name}")
    print(
        f"{'task':<24}{'full acc':>9}{'±CI95':>8}{'  full CI range':<18}{'cyclic acc':>11}{'±CI95':>8}"
        f"{'Δ (cyc-full)':>13}{'cyc in full CI':>15}{'|Δ|/CI':>8}{'full in cyc CI':>15}"
    )
    out = {}
    for label, key in rows:
        f, c = full["rows"][key], cyclic["rows"][key]
        fa, fh, ca, ch = f["acc"], f["acc_ci"], c["acc"], c["acc_ci"]
        ok = inside(ca, fa, fh)
        back = inside(fa, ca, ch)
        ratio = in_ci_units(ca - fa, fh)
        print(
            f"{label:<24}{fa:>9.4f}{fh:>8.4f}  [{fa - fh:.4f}, {fa + fh:.4f}]{ca:>11.4f}{ch:>8.4f}"
            f"{ca - fa:>+13.4f}{'yes' if ok else 'NO':>15}{ratio:>8.2f}{'yes' if back else 'NO':>15}"
        )
        out[label] = {
            "full_acc": fa,
            "full_ci": fh,
            "cyclic_acc": ca,
            "cyclic_ci": ch,
            "cyclic_in_full_ci": ok,
            "full_in_cyclic_ci": back,
        }
    pos = "  ".join(
        f"{p}: {full['rows']['monbench'][f'acc_pos_{p}']:.3f}/{cyclic['rows']['monbench'][f'acc_pos_{p}']:.3f}"
        for p in "ABCD"
    )
    print(f"accuracy by gold position, full/cyclic (overall): {pos}")
    print(
        f"consistency full/cyclic: {full['rows']['monbench']['consistency']:.3f}/{cyclic['rows']['monbench']['consistency']:.3f}"
        "  (right in every run; the cyclic runs are a subset of the full runs, so >= by construction)"
    )
    speed = full["wall"] / cyclic["wall"]
    print(
        f"model calls: full {full['calls']} ({full['samples']} samples), cyclic {cyclic['calls']} ({cyclic['samples']} samples): "
        f"{full['calls'] / cyclic['calls']:.1f}x fewer;  wall: full {full['wall']:.1f}s, cyclic {cyclic['wall']:.1f}s: speed-up {speed:.1f}x"
    )
    out["_calls"] = {"full": full["calls"], "cyclic": cyclic["calls"]}
    out["_wall"] = {"full": full["wall"], "cyclic": cyclic["wall"], "speedup": speed}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="baseline,biased", help="comma list of: " + ", ".join(MODELS))
    parser.add_argument("--json", help="write the comparison to this file")
    args = parser.parse_args(argv)
    chosen = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in chosen if m not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {unknown}; choose from {', '.join(MODELS)}")

    load = os.getloadavg()
    print(
        f"MonBench cyclic vs full design, bundled fixtures (test split)  {datetime.datetime.now():%Y-%m-%d %H:%M}  "
        f"cores {os.cpu_count()}  load avg {load[0]:.2f}"
    )
    started = time.perf_counter()
    results = {}
    with tempfile.TemporaryDirectory(prefix="ecom-cyclic-") as log_dir:
        # Warm-up so the first timed eval() does not carry one-off import costs.
        inspect_eval(
            monbench(design="canonical", formats="label"), model="ecom/baseline", display="none", log_dir=log_dir
        )
        for name in chosen:
            model = MODELS[name]()
            full = run("full", model, log_dir)
            cyclic = run("cyclic", model, log_dir)
            results[name] = compare(name, full, cyclic)
    print(
        "\nNotes: the cyclic runs (4 rotations x 3 formats) are 12 of the 72 full runs, and both models are"
        " deterministic, so the cyclic mean is the mean of a subset of the full design's run accuracies."
        " 'cyc in full CI' is the requested check: is that subset mean inside the full design's 95% CI"
        " (Student-t over 72 runs)? That CI is the uncertainty of the 72-run mean, not a tolerance for a"
        " 12-run subset: for runs that differ only by noise, a 12-of-72 subset mean deviates from the full"
        " mean with SD ~ s*sqrt(1/12-1/72) ~ 0.26 s, a bit more than the half-width 1.99 s/sqrt(72) ~ 0.23 s,"
        " so a 'NO' with |Δ|/CI near 1 is expected now and then. What the cyclic design keeps is balance:"
        " as in the full design, every option is shown equally often in every position, so a model whose"
        " accuracy depends only on where the gold option is shown gets the same mean under both designs;"
        " differences come from interactions with the order of the other options and per-prompt noise"
        " (for the 'biased' stub: its coin flips)."
        " 'full in cyc CI' is the converse check against the cyclic design's own (wider) CI."
    )
    print(f"total time {time.perf_counter() - started:.0f}s")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
