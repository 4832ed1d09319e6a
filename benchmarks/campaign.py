"""A multi-model campaign on paper: calls, tokens, wall-clock and RMIR embedding work.

For a list of models and tasks, at the papers' sizes::

    .venv/bin/python benchmarks/campaign.py --models 20 --tasks monbench_perm,monbench_cyclic,rair_general,rair_hard,rair_visual,ecomeval,rmir_reason
    .venv/bin/python benchmarks/campaign.py --models 20 --prefill-tps 20000 --decode-tps 3000 --reasoning-tokens 1000 --json campaign.json

Prompt tokens come from the bundled fixtures: every prompt a task sends is
built by the benchmark's own prompt builder (``<benchmark>/protocol.py``) and
counted with tiktoken's ``o200k_base``; the mean per call, per MonBench task
and per call kind, is scaled to the paper's item counts (``PAPER_ITEMS``).
Images are counted per call and priced at ``--image-tokens`` each. Output
tokens are assumptions (``OUTPUT_TOKENS``: the answer each prompt asks for;
the fixtures hold no model replies), plus ``--reasoning-tokens`` per call for
a model that thinks first.

Prefix caching (vLLM's automatic prefix caching, a provider's prompt cache):
the prompts of one task form a trie; a server that keeps every prefix it has
seen computes each trie node once. On the fixtures we measure, per item, the
tokens no other item shares (``unique``) and the tokens shared across items
(``shared``: system prompt, rules, few-shot block, counted once); at the
paper's size the prefill is ``items * unique + shared``. An upper bound on the
saving: a real cache evicts, and matches in blocks (16 tokens in vLLM).

Wall-clock: models run ``--parallel`` at a time, one server each, in
``--harness-processes`` Inspect processes (e.g. one ``eval-set`` per
benchmark). A wave of models takes ``max(server, harness)``: the server's time
per model (prefill tokens / ``--prefill-tps`` + output tokens /
``--decode-tps``, one after the other: a conservative model of a server that
overlaps them) and the harness's own ceiling, which the models of a wave share
(their calls / (the calls per second ``benchmarks/harness_ceiling.py``
measured for one Inspect process, ``--harness-cps``, x processes)).

RMIR: the pool (35,803 images) is embedded once per embedder and cached
(``ecom-tasks embed-pool``); each run embeds its 1,634 queries. ``rmir`` calls
no chat model; ``rmir_reason`` asks the chat model once per query, then
embeds its description.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
try:
    import ecom_tasks  # noqa: F401  (installed: the usual case)
except ImportError:
    # Run from a checkout without the package installed. Appended, never first: a checkout's
    # ecom_tasks.egg-info ahead of the installed metadata makes Inspect take an editable install for
    # a plain folder and register our tasks without their ecom_tasks/ prefix.
    sys.path.append(str(ROOT))

from ecom_tasks.offline import apply_offline  # noqa: E402

# --- the papers' sizes (test sets) ---------------------------------------------------------------

#: MonBench Table 1, test size per task (2,611 questions in all).
MONBENCH_TEST = {
    "query_ad_relevance": 397,
    "product_co_purchase": 336,
    "query_query_intent": 535,
    "query_product_relation": 1343,
}
#: RAIR Sec. 4.5: 32,123 General, 10,931 Hard, 5,895 Visually Salient samples.
RAIR_ITEMS = {"general": 32123, "hard": 10931, "visual": 5895}
#: EcomEval: "about 3,100 items" (Sec. 1).
ECOMEVAL_ITEMS = 3100
#: RMIR Sec. 3.2: 1,634 test queries, a pool of 35,803 images chosen from 500,000 seed images.
RMIR_QUERIES, RMIR_POOL, RMIR_SEED = 1634, 35803, 500000

#: Runs per MonBench question by design.
MONBENCH_RUNS = {"monbench_perm": 72, "monbench_cyclic": 12, "monbench_canonical": 1}

#: Assumed output tokens per call (the answer each prompt asks for; no reasoning).
OUTPUT_TOKENS = {"monbench": 12, "rair": 60, "ecomeval": 200, "grader": 150, "rmir_reason": 80}

TASKS = (
    "monbench_perm",
    "monbench_cyclic",
    "monbench_canonical",
    "rair_general",
    "rair_hard",
    "rair_visual",
    "rair_visual_text",
    "ecomeval",
    "rmir",
    "rmir_reason",
)
DEFAULT_TASKS = ("monbench_perm", "rair_general", "rair_hard", "rair_visual", "ecomeval", "rmir_reason")


# --- per-call profiles ----------------------------------------------------------------------------


@dataclass
class CallKind:
    """One kind of chat call a task makes, measured on the fixtures and scaled to the paper."""

    name: str  # "model" (the evaluated model) or "grader"
    items: int  # items at the paper's size
    calls_per_item: int
    prompt_tokens: float  # mean text tokens per call
    images: float  # mean images per call
    unique_tokens: float  # per item: prompt tokens no other item shares (computed once each with a prefix cache)
    shared_tokens: float  # tokens shared across items, computed once with a prefix cache
    output_tokens: float  # per call, before reasoning

    @property
    def calls(self) -> int:
        return self.items * self.calls_per_item


@dataclass
class TaskPlan:
    task: str
    kinds: list[CallKind]
    query_embeddings: int = 0  # RMIR: query embeddings per run
    note: str = ""


@dataclass
class Settings:
    models: int = 20
    parallel: int = 1  # models at a time (one server each)
    prefill_tps: float = 10000.0  # prompt tokens per second per server
    decode_tps: float = 2000.0  # output tokens per second per server (all sequences together)
    image_tokens: float = 1000.0  # prompt tokens per image
    reasoning_tokens: float = 0.0  # extra output tokens per call (thinking models)
    harness_cps: float | None = None  # one Inspect process's own ceiling, calls per second (None: not limiting)
    harness_processes: int = 1  # Inspect processes sharing the work
    embed_rate: float = 50.0  # images embedded per second per embedding server
    embedders: int = 1


@dataclass
class Row:
    task: str
    calls: int  # per model
    prompt_tokens: float  # per model, without prefix caching
    prefill_cached: float  # per model, with a perfect prefix cache
    output_tokens: float  # per model
    server_s: float  # per model, no prefix cache
    server_cached_s: float  # per model, with it
    harness_s: float  # per model, one Inspect process to itself
    extra: dict[str, float] = field(default_factory=dict)

    @property
    def wall_s(self) -> float:
        return max(self.server_s, self.harness_s)

    @property
    def wall_cached_s(self) -> float:
        return max(self.server_cached_s, self.harness_s)


def plan_row(plan: TaskPlan, settings: Settings) -> Row:
    """The per-model numbers of one task: pure arithmetic on its call kinds."""
    calls = sum(k.calls for k in plan.kinds)
    image_tokens = sum(k.calls * k.images * settings.image_tokens for k in plan.kinds)
    prompt = sum(k.calls * k.prompt_tokens for k in plan.kinds) + image_tokens
    cached = (
        sum(min(k.items * k.unique_tokens + k.shared_tokens, k.calls * k.prompt_tokens) for k in plan.kinds)
        + image_tokens
    )
    output = sum(k.calls * (k.output_tokens + settings.reasoning_tokens) for k in plan.kinds)
    decode_s = output / settings.decode_tps
    harness_s = calls / settings.harness_cps if settings.harness_cps else 0.0
    return Row(
        plan.task,
        calls,
        prompt,
        cached,
        output,
        prompt / settings.prefill_tps + decode_s,
        cached / settings.prefill_tps + decode_s,
        harness_s,
    )


def campaign_totals(rows: Sequence[Row], settings: Settings) -> dict[str, float]:
    """All models: calls, tokens, and wall-clock with ``parallel`` models (one server each) at a time, the
    Inspect processes' ceiling shared by the models of a wave."""
    waves = math.ceil(settings.models / settings.parallel)
    share = settings.parallel / settings.harness_processes  # models per Inspect process in a wave
    return {
        "calls": settings.models * sum(r.calls for r in rows),
        "prompt_tokens": settings.models * sum(r.prompt_tokens for r in rows),
        "prefill_cached": settings.models * sum(r.prefill_cached for r in rows),
        "output_tokens": settings.models * sum(r.output_tokens for r in rows),
        "wall_s": waves * sum(max(r.server_s, share * r.harness_s) for r in rows),
        "wall_cached_s": waves * sum(max(r.server_cached_s, share * r.harness_s) for r in rows),
    }


def rmir_embedding(settings: Settings, with_reason: bool, with_embed: bool) -> dict[str, float]:
    """Images and texts embedded: the pool once per embedder (cached), queries once per run."""
    runs = settings.embedders * (settings.models * with_reason + with_embed)
    pool = settings.embedders * RMIR_POOL
    return {
        "pool_images": pool,
        "pool_s": pool / settings.embed_rate,
        "query_embeddings": runs * RMIR_QUERIES,
        "seed_images": RMIR_SEED,  # the paper's pipeline, if the pool is rebuilt from its seed images
        "seed_s": RMIR_SEED / settings.embed_rate,
    }


# --- measuring the fixtures -------------------------------------------------------------------------


def trie_nodes(sequences: Iterable[Sequence[int]]) -> int:
    """Tokens a perfect prefix cache computes for these prompts: the nodes of their prefix trie."""
    ordered = sorted(tuple(s) for s in sequences)
    total, previous = 0, ()
    for seq in ordered:
        common = 0
        for a, b in zip(seq, previous):
            if a != b:
                break
            common += 1
        total += len(seq) - common
        previous = seq
    return total


def prefix_profile(groups: Sequence[Sequence[Sequence[int]]]) -> tuple[float, float]:
    """(mean unique tokens per item, shared tokens) of items whose prompts are ``groups``.

    An item's unique tokens are the trie nodes only it needs (the trie of all
    items minus the trie without it); the shared tokens are the rest, needed once.
    """
    everything = [seq for group in groups for seq in group]
    total = trie_nodes(everything)
    unique = []
    for i in range(len(groups)):
        others = [seq for j, group in enumerate(groups) if j != i for seq in group]
        unique.append(total - trie_nodes(others))
    return statistics.fmean(unique), float(total - sum(unique))


def _encoder():
    apply_offline()  # tiktoken's encodings ship with litellm; never downloaded
    import tiktoken

    return tiktoken.get_encoding("o200k_base")


def _kind(
    name: str, items: int, calls_per_item: int, groups: list[list[list[int]]], images: list[int], output: float
) -> CallKind:
    lengths = [len(seq) for group in groups for seq in group]
    unique, shared = prefix_profile(groups)
    return CallKind(
        name, items, calls_per_item, statistics.fmean(lengths), statistics.fmean(images), unique, shared, output
    )


def measure(task: str, encode=None) -> TaskPlan:
    """The task's call kinds: prompts built by the benchmark's own builders on the fixtures, scaled."""
    encode = encode or _encoder().encode
    if task in MONBENCH_RUNS:
        from ecom_tasks.monbench.protocol import load_items

        design = {"monbench_perm": "full", "monbench_cyclic": "cyclic", "monbench_canonical": "canonical"}[task]
        formats = "label" if design == "canonical" else None
        kinds = []
        for name, size in MONBENCH_TEST.items():
            by_question: dict[str, list[list[int]]] = {}
            for item in load_items(None, tasks=(name,), split="test", design=design, formats=formats):
                by_question.setdefault(item.record.id, []).append(encode(item.system_prompt + "\n" + item.user_prompt))
            groups = list(by_question.values())
            kinds.append(
                _kind(
                    f"model:{name}",
                    size,
                    MONBENCH_RUNS[task],
                    groups,
                    [0] * sum(map(len, groups)),
                    OUTPUT_TOKENS["monbench"],
                )
            )
        return TaskPlan(task, kinds)
    if task.startswith("rair_"):
        from ecom_tasks.rair.protocol import load_items

        subset, image = {
            "rair_general": ("general", False),
            "rair_hard": ("hard", False),
            "rair_visual": ("visual", True),
            "rair_visual_text": ("visual", False),
        }[task]
        items = load_items(None, subset=subset, image=image)
        groups = [[encode(i.system_prompt + "\n" + i.user_prompt)] for i in items]
        return TaskPlan(
            task,
            [
                _kind(
                    "model",
                    RAIR_ITEMS[subset],
                    1,
                    groups,
                    [int(i.image is not None) for i in items],
                    OUTPUT_TOKENS["rair"],
                )
            ],
        )
    if task == "ecomeval":
        from ecom_tasks.ecomeval.prompts import build_grader_prompt
        from ecom_tasks.ecomeval.protocol import load_items

        items = load_items(None)
        model = [[encode(i.prompt)] for i in items]
        # The grader sees question, reference and response; a response as long as the reference is assumed.
        grader = [
            [encode(build_grader_prompt(i.record.question, i.record.reference, i.record.reference))] for i in items
        ]
        images = [len(i.images) for i in items]
        return TaskPlan(
            task,
            [
                _kind("model", ECOMEVAL_ITEMS, 1, model, images, OUTPUT_TOKENS["ecomeval"]),
                _kind("grader", ECOMEVAL_ITEMS, 1, grader, [0] * len(items), OUTPUT_TOKENS["grader"]),
            ],
        )
    if task in ("rmir", "rmir_reason"):
        if task == "rmir":
            return TaskPlan(task, [], query_embeddings=RMIR_QUERIES, note="no chat model")
        from ecom_tasks.rmir.protocol import load_items

        _, items = load_items(None, mode="reason_then_embed")
        groups = [[encode(i.prompt)] for i in items]
        kind = _kind(
            "model", RMIR_QUERIES, 1, groups, [int(i.image is not None) for i in items], OUTPUT_TOKENS["rmir_reason"]
        )
        return TaskPlan(task, [kind], query_embeddings=RMIR_QUERIES)
    raise SystemExit(f"unknown task {task!r}; choose from {', '.join(TASKS)}")


# --- output -------------------------------------------------------------------------------------------


def _si(value: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= size:
            return f"{value / size:.2f} {unit}"
    return f"{value:.0f}"


def _hours(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min" if seconds >= 600 else f"{seconds / 60:.1f} min"


def render(rows: Sequence[Row], plans: Sequence[TaskPlan], settings: Settings, harness: dict | None) -> str:
    lines = [
        f"Campaign: {settings.models} model(s), {settings.parallel} at a time; server {settings.prefill_tps:,.0f} prompt tok/s, "
        f"{settings.decode_tps:,.0f} output tok/s; {settings.image_tokens:,.0f} tokens per image; "
        f"{settings.reasoning_tokens:,.0f} reasoning tokens per call; harness ceiling "
        + (
            f"{settings.harness_cps:,.0f} calls/s per Inspect process, {settings.harness_processes} process(es)"
            if settings.harness_cps
            else "not limiting"
        ),
        "",
        "| task | calls / model | prompt tokens / model | with prefix cache | output tokens / model | server time / model | cached | harness floor / model |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row.task} | {row.calls:,} | {_si(row.prompt_tokens)} | {_si(row.prefill_cached)} ({row.prefill_cached / row.prompt_tokens:.0%}) "
            f"| {_si(row.output_tokens)} | {_hours(row.server_s)} | {_hours(row.server_cached_s)} | {_hours(row.harness_s)} |"
            if row.calls
            else f"| {row.task} | 0 (embedding only) | | | | | | |"
        )
    totals = campaign_totals(rows, settings)
    lines += [
        "",
        f"All {settings.models} models: {totals['calls']:,} calls, {_si(totals['prompt_tokens'])} prompt tokens "
        f"({_si(totals['prefill_cached'])} computed with a prefix cache), {_si(totals['output_tokens'])} output tokens; "
        f"wall-clock {_hours(totals['wall_s'])} ({_hours(totals['wall_cached_s'])} with prefix caching).",
    ]
    names = [p.task for p in plans]
    if "rmir" in names or "rmir_reason" in names:
        emb = rmir_embedding(settings, "rmir_reason" in names, "rmir" in names)
        lines.append(
            f"RMIR embedding work ({settings.embedders} embedder(s)): pool {emb['pool_images']:,} images once, cached "
            f"({_hours(emb['pool_s'])} at {settings.embed_rate:,.0f} images/s on one server; split it over servers with "
            f"embed-pool --engine ray); {emb['query_embeddings']:,} query embeddings over all runs; rebuilding the pool from "
            f"the paper's {RMIR_SEED:,} seed images: {_hours(emb['seed_s'])}."
        )
    perm = next((r for r in rows if r.task == "monbench_perm"), None)
    if perm is not None:
        saved = perm.calls - perm.calls // 6
        lines.append(
            f"MonBench cyclic design (12 runs) instead of the full 72: {perm.calls // 6:,} calls per model instead of "
            f"{perm.calls:,} ({saved:,} fewer, 6x); prefix caching alone computes "
            f"{perm.prefill_cached / perm.prompt_tokens:.0%} of the full design's prompt tokens."
        )
    if harness:
        cps = ", ".join(f"{k} {v:,.0f}" for k, v in harness.get("calls_per_s", {}).items() if v)
        lines.append(f"Harness ceiling (calls/s, {harness.get('source', 'harness_ceiling.py')}): {cps}.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--tasks", default=",".join(DEFAULT_TASKS), help=f"comma-separated, from {', '.join(TASKS)}")
    parser.add_argument("--parallel", type=int, default=1, help="models evaluated at a time, one server each")
    parser.add_argument("--prefill-tps", type=float, default=Settings.prefill_tps)
    parser.add_argument("--decode-tps", type=float, default=Settings.decode_tps)
    parser.add_argument("--image-tokens", type=float, default=Settings.image_tokens)
    parser.add_argument("--reasoning-tokens", type=float, default=0.0)
    parser.add_argument(
        "--embed-rate", type=float, default=Settings.embed_rate, help="images per second per embedding server"
    )
    parser.add_argument("--embedders", type=int, default=1)
    parser.add_argument(
        "--harness",
        default=str(Path(__file__).with_name("harness_ceiling.json")),
        help="harness_ceiling.py --json output",
    )
    parser.add_argument(
        "--harness-cps",
        type=float,
        default=None,
        help="one Inspect process's calls per second (default: from --harness)",
    )
    parser.add_argument(
        "--harness-processes",
        type=int,
        default=1,
        help="Inspect processes sharing the campaign (e.g. one eval-set per benchmark)",
    )
    parser.add_argument("--json", help="write the rows and totals here")
    args = parser.parse_args(argv)
    harness = json.loads(Path(args.harness).read_text(encoding="utf-8")) if Path(args.harness).exists() else None
    cps = args.harness_cps or (harness or {}).get("calls_per_s", {}).get("inspect")
    settings = Settings(
        models=args.models,
        parallel=args.parallel,
        prefill_tps=args.prefill_tps,
        decode_tps=args.decode_tps,
        image_tokens=args.image_tokens,
        reasoning_tokens=args.reasoning_tokens,
        harness_cps=cps,
        harness_processes=args.harness_processes,
        embed_rate=args.embed_rate,
        embedders=args.embedders,
    )
    encode = _encoder().encode
    plans = [measure(t.strip(), encode) for t in args.tasks.split(",") if t.strip()]
    rows = [plan_row(p, settings) for p in plans]
    print(render(rows, plans, settings, harness))
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "settings": settings.__dict__,
                    "rows": [r.__dict__ for r in rows],
                    "totals": campaign_totals(rows, settings),
                    "plans": [{"task": p.task, "kinds": [k.__dict__ for k in p.kinds]} for p in plans],
                },
                indent=2,
            ),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
