"""``ecom-tasks build rmir``: the four stages chained over one build folder, then the data set assembled.

The folder's layout, resuming and re-assembling are in the RMIR README ("The build folder", "Resuming").
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ecom_tasks import construction
from ecom_tasks.construction import (
    DECLINED,
    Stage,
    VoteOutcomes,
    file_sha256,
    given,
    image_access_args,
    image_file_name,
    open_build_folder,
    place_image,
    say,
    scored_samples,
    write_jsonl,
)
from ecom_tasks.data import ConfigurationError, fixtures_dir
from ecom_tasks.files import FileRefused, OutputFolder
from ecom_tasks.images import DEFAULT_ACCESS, ImageAccess
from ecom_tasks.rmir.construction.assembly import (
    DEFAULT_CONFIDENCE,
    DEFAULT_K_IMAGE,
    DEFAULT_K_TEXT,
    DEFAULT_TSR_THRESHOLD,
    Assembly,
    Candidate,
    assemble,
)
from ecom_tasks.rmir.construction.prompts import ABSTAIN, CATEGORY_TAGS
from ecom_tasks.rmir.construction.seeds import Seeds, load_seeds
from ecom_tasks.rmir.construction.tasks import (
    DEFAULT_JUDGES,
    JUDGE_TEMPERATURE,
    SCORER_FILTER,
    SCORER_GENERATE,
    SCORER_JUDGE,
    SCORER_RETRIEVE,
    checked_searches,
)
from ecom_tasks.rmir.embedders import DEFAULT_RETRIEVER
from ecom_tasks.rmir.index import check_cache_outside
from ecom_tasks.scorers.settings import whole_number
from ecom_tasks.solvers.panel_votes import MAX_JUDGES

STAGE_NAMES = ("generate", "filter", "retrieve", "judge")
#: What the build writes below ``--out`` (besides the stages' Inspect logs in ``logs/``).
INPUTS, GENERATED, FILTERED, TRIPLETS, VOTES = (
    f"work/{name}.jsonl" for name in ("inputs", "generated", "filtered", "triplets", "votes")
)
DATA = "data"
QUERIES, POOL, IMAGES = f"{DATA}/queries.jsonl", f"{DATA}/pool.jsonl", f"{DATA}/images"
#: The data set: removed when a build stops without one (an earlier build's must not pass for this one's).
DATA_SET = (QUERIES, POOL, IMAGES)


def default_seeds() -> Path:
    """The bundled synthetic seed table (the RMIR fixtures' images with captions)."""
    return fixtures_dir("rmir") / "seeds.jsonl"


@dataclass
class BuildOptions(construction.BuildOptions):
    seeds: Path = field(default_factory=default_seeds)
    judges: int = DEFAULT_JUDGES
    judge_temperature: float = JUDGE_TEMPERATURE
    seed: int | None = None
    inputs: int | None = None
    sample_seed: int = 0
    captions: bool = False
    retriever: str = DEFAULT_RETRIEVER
    retriever_args: dict[str, Any] = field(default_factory=dict)
    k: int = DEFAULT_K_IMAGE
    text_retriever: str | None = None
    text_retriever_args: dict[str, Any] = field(default_factory=dict)
    text_k: int = DEFAULT_K_TEXT
    cache: str = "true"
    confidence: float = DEFAULT_CONFIDENCE
    tsr_threshold: float = DEFAULT_TSR_THRESHOLD
    until: str = "judge"
    images: str = construction.IMAGES_DEFAULT  # copy | link (a hard link: the data set shares the seed files)
    image_access: ImageAccess = DEFAULT_ACCESS
    #: Output limit of every model stage (None: each stage's own, tasks.*_MAX_TOKENS).
    max_tokens: int | None = None


@dataclass
class BuildResult:
    logs: dict[str, Any] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)
    assembly: Assembly | None = None
    data: Path | None = None


def _keep(result: BuildResult, output: OutputFolder, name: str, rows: list[dict[str, Any]]) -> BuildResult:
    """Write rows to ``work/<key>.jsonl`` and list the file in the result as ``<key>`` (with ``--until``,
    the last stage's rows are the build's output)."""
    write_jsonl(name, rows, output=output)
    result.files[Path(name).stem] = output.path(name)
    return result


def _by_id(log: Any, scorer: str) -> dict[str, Any]:
    return {str(sample.id): score for sample, score in scored_samples(log, scorer)}


def select_inputs(seeds: Seeds, count: int | None, sample_seed: int = 0) -> list[str]:
    """The seeds query generation starts from: those flagged ``input`` (else all), or ``count`` of them
    drawn at random with ``sample_seed`` (in table order)."""
    pool = list(seeds.inputs or seeds.by_id)
    if count is None or count >= len(pool):
        return pool
    if count < 1:
        raise ConfigurationError(f"--inputs must be at least 1, got {count}")
    chosen = set(random.Random(sample_seed).sample(pool, count))
    return [s for s in pool if s in chosen]


def generated_rows(log: Any, order: list[str]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Stage 1's pairs as rows (input order, then the categories' order) and counts."""
    scores = _by_id(log, SCORER_GENERATE)
    rows, counts = [], {"pairs": 0, "abstained": 0, "missing": 0, "failed_replies": 0}
    for seed in order:
        score = scores.get(seed)
        if score is None:
            continue
        meta = score.metadata or {}
        counts["abstained"] += len(meta.get("abstained", []))
        counts["missing"] += len(meta.get("missing", []))
        counts["failed_replies"] += int(score.value.get("failed", 0))
        for category in CATEGORY_TAGS:
            pair = (meta.get("pairs") or {}).get(category)
            if pair:
                rows.append(
                    {
                        "id": f"{seed}-{category}",
                        "seed": seed,
                        "category": category,
                        "query_text": pair["query"],
                        "target_desc": pair["target"],
                        "reasoning": pair.get("reasoning", ""),
                    }
                )
    counts["pairs"] = len(rows)
    return rows, counts


def filtered_rows(log: Any, generated: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    scores = _by_id(log, SCORER_FILTER)
    kept = [row for row in generated if row["id"] in scores and (scores[row["id"]].metadata or {}).get("valid") is True]
    failed = sum(1 for s in scores.values() if (s.metadata or {}).get("valid") is None)
    return kept, {"approved": len(kept), "rejected": len(scores) - len(kept) - failed, "no_verdict": failed}


def triplet_rows(log: Any, queries: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, list[Candidate]]]:
    scores = _by_id(log, SCORER_RETRIEVE)
    rows: list[dict[str, Any]] = []
    candidates: dict[str, list[Candidate]] = {}
    for query in queries:
        found = (scores[query["id"]].metadata or {}).get("candidates", []) if query["id"] in scores else []
        candidates[query["id"]] = [Candidate(c["id"], c.get("image_rank"), c.get("text_rank")) for c in found]
        for c in found:
            rows.append(
                {
                    "id": f"{query['id']}|{c['id']}",
                    "query_id": query["id"],
                    "seed": query["seed"],
                    "query_text": query["query_text"],
                    "candidate": c["id"],
                    "image_rank": c.get("image_rank"),
                    "text_rank": c.get("text_rank"),
                }
            )
    return rows, candidates


def vote_rows(log: Any, triplets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    scores = _by_id(log, SCORER_JUDGE)
    rows = []
    for triplet in triplets:
        score = scores.get(triplet["id"])
        if score is None:
            raise ConfigurationError(f"the judge log has no votes for triplet {triplet['id']!r}")
        votes = (score.metadata or {}).get("votes", {})
        rows.append({"query_id": triplet["query_id"], "candidate": triplet["candidate"], "votes": votes})
    return rows


# --- abstentions ----------------------------------------------------------------------------------


def stage_outcomes(log: Any, stage: str) -> VoteOutcomes:
    """What became of a model stage's votes: a generation reply is one vote (answered when it gave a
    pair; declined when it declined every category it answered), the filter's verdict one, each judge's
    one (``ABSTAIN``: declined); a missing vote counts by its status (cut off by the token limit, unreadable)."""
    outcomes = VoteOutcomes(stage)
    scorer = {"generate": SCORER_GENERATE, "filter": SCORER_FILTER, "judge": SCORER_JUDGE}[stage]
    for score in _by_id(log, scorer).values():
        meta = score.metadata or {}
        if stage == "generate":
            declined = not meta.get("pairs") and not meta.get("missing") and meta.get("abstained")
            outcomes.add(True if meta.get("pairs") else None, DECLINED if declined else meta.get("status"))
        elif stage == "filter":
            outcomes.add(meta.get("valid"), meta.get("status"))
        else:
            statuses = meta.get("statuses") or {}
            for role, vote in (meta.get("votes") or {}).items():
                outcomes.add(None if vote == ABSTAIN else vote, DECLINED if vote == ABSTAIN else statuses.get(role))
    return outcomes


# --- the data set --------------------------------------------------------------------------------


def check_seed_images_outside(seeds: Seeds, output: OutputFolder) -> None:
    """Refuse seeds whose images lie in the build's ``data/images``: a build replaces that folder, and removes
    it when it stops without a data set (checked before the first model call)."""
    image_dir = output.path(IMAGES).resolve()
    for seed in seeds.records:
        if seed.image and not seed.image.startswith(("data:", "http://", "https://")):
            if Path(seed.image).resolve().is_relative_to(image_dir):
                raise FileRefused(
                    f"{output.path(IMAGES)}: holds the seed image {seed.image}, and a build replaces that folder; "
                    "choose another --out"
                )


def write_dataset(
    assembly: Assembly, seeds: Seeds, queries: list[dict[str, Any]], output: OutputFolder, *, images: str
) -> dict[str, Path]:
    """``queries.jsonl`` (with ``split`` and ``tsr``), ``pool.jsonl`` and ``images/`` in ``data/`` of the
    build folder, written through ``output``: never through a symlink. An earlier assembly's ``images/``
    is removed first (the pool may have changed) when it is a real folder below the build folder; a
    symlink there is removed itself, never what it names (no seed image lies in it: :func:`check_seed_images_outside`)."""
    output.remove(IMAGES)
    by_query = {q["id"]: q for q in queries}
    names: dict[str, str] = {}

    def place(seed_id: str) -> str:
        if seed_id not in names:
            source = seeds[seed_id].image
            assert source is not None, "load_seeds refuses a seed without an image"
            names[seed_id] = image_file_name(seed_id, source)
            place_image(source, f"{IMAGES}/{names[seed_id]}", images, output=output)
        return f"images/{names[seed_id]}"

    query_rows = []
    for kept in assembly.queries:
        query = by_query[kept.id]
        query_rows.append(
            {
                "id": kept.id,
                "split": kept.split,
                "category": query["category"],
                "query_text": query["query_text"],
                "query_image": place(query["seed"]),
                "positives": list(kept.positives),
                "tsr": round(kept.tsr, 6),
                "target_desc": query["target_desc"],
                "seed": query["seed"],
            }
        )
    pool_rows = [{"id": pid, "image": place(pid), "description": seeds[pid].description} for pid in assembly.pool]
    write_jsonl(QUERIES, query_rows, output=output)
    write_jsonl(POOL, pool_rows, output=output)
    return {"queries": output.path(QUERIES), "pool": output.path(POOL)}


# --- the build -----------------------------------------------------------------------------------


def build(options: BuildOptions) -> BuildResult:
    """Run (or resume) the stages up to ``options.until`` and, after the judge stage, write the data set."""
    if options.until not in STAGE_NAMES:
        raise ConfigurationError(f"--until must be one of {', '.join(STAGE_NAMES)}, got {options.until!r}")
    # The later stages' settings are checked before the first stage's model calls, as each stage checks them.
    checked_searches(options.retriever, options.text_retriever, options.k, options.text_k)
    seats = whole_number("judges", options.judges, 1, MAX_JUDGES)
    unknown = set(options.model_roles) - {f"judge_{seat}" for seat in range(1, seats + 1)}
    if unknown:
        raise ConfigurationError(
            f"unknown model role(s) {', '.join(sorted(unknown))}: the build binds judge_1 .. judge_{options.judges} (generation and filtration use --model)"
        )
    logs = [f"logs/{index}_{name}" for index, name in enumerate(STAGE_NAMES, 1)]
    output = open_build_folder(
        options.out,
        benchmark="rmir",
        inputs=[options.seeds],
        files_out=(INPUTS, GENERATED, FILTERED, TRIPLETS, VOTES, QUERIES, POOL),
        folders=(*logs, IMAGES),
    )
    seeds = load_seeds(options.seeds, image_access=options.image_access)
    check_seed_images_outside(seeds, output)
    if options.cache == "true":  # the seed index's shards land neither in the seeds nor in the build
        for folder in (options.seeds, output.root):
            check_cache_outside(str(folder))
    seeds_sha256 = file_sha256(seeds.file)
    common = {
        "seeds": str(Path(seeds.file).resolve()),
        "seeds_sha256": seeds_sha256,
        **image_access_args(options.image_access),
    }
    model_stage_args = given(captions=options.captions or None, max_tokens=options.max_tokens)  # captions: when on
    last = STAGE_NAMES.index(options.until) + 1
    result = BuildResult()

    def run(index: int, name: str, rows: list[dict[str, Any]], args: dict[str, Any], **cost: Any) -> Any:
        """Stage ``index`` over one item a row (written to ``name``), then its votes checked (retrieval has none)."""
        stage_name = STAGE_NAMES[index - 1]
        digest = write_jsonl(name, rows, output=output)
        task_args = {**common, "input": str(output.path(name).resolve()), "input_sha256": digest, **args}
        stage = Stage(stage_name, f"ecom_tasks/rmir_build_{stage_name}", task_args, items=len(rows), **cost)
        outcomes = None if stage_name == "retrieve" else functools.partial(stage_outcomes, stage=stage_name)
        log = options.run(stage, output, outcomes, data=DATA_SET, index=index, of=len(STAGE_NAMES))
        result.logs[stage_name] = log
        return log

    order = select_inputs(seeds, options.inputs, options.sample_seed)
    log = run(1, INPUTS, [{"seed": s} for s in order], model_stage_args, model=options.model)
    generated, counts = generated_rows(log, order)
    say(
        f"  generated {counts['pairs']} queries from {len(order)} images; {counts['abstained']} abstentions, "
        f"{counts['missing']} categories missing from a reply, {counts['failed_replies']} unreadable replies"
    )
    if last == 1:
        return _keep(result, output, GENERATED, generated)

    log = run(2, GENERATED, generated, model_stage_args, model=options.model)
    filtered, counts = filtered_rows(log, generated)
    say(
        f"  kept {counts['approved']} of {len(generated)} queries; {counts['rejected']} rejected, {counts['no_verdict']} without a verdict"
    )
    if last == 2:
        return _keep(result, output, FILTERED, filtered)

    retrieve_args = {"retriever": options.retriever, "k": options.k, "cache": options.cache}
    retrieve_args.update(given(retriever_args=options.retriever_args or None))  # args, a text index: when given
    if options.text_retriever:
        text_args = given(text_retriever_args=options.text_retriever_args or None)
        retrieve_args.update(text_retriever=options.text_retriever, text_k=options.text_k, **text_args)
    log = run(3, FILTERED, filtered, retrieve_args, calls_per_item=0, model="none")
    triplets, candidates = triplet_rows(log, filtered)
    say(f"  {len(triplets)} triplets (query, candidate) for {len(filtered)} queries")
    if last == 3:
        return _keep(result, output, TRIPLETS, triplets)

    judge_args = {"judges": options.judges, "temperature": options.judge_temperature, **model_stage_args}
    judge_args.update(given(seed=options.seed))
    judging = {"calls_per_item": options.judges, "unit": "judges", "model_roles": dict(options.model_roles)}
    log = run(4, TRIPLETS, triplets, judge_args, model=options.model, **judging)
    votes = vote_rows(log, triplets)
    _keep(result, output, VOTES, votes)

    result.assembly = assemble(
        [q["id"] for q in filtered],
        candidates,
        # The judges' order does not matter: the majority and the share of False votes are counts.
        {(v["query_id"], v["candidate"]): list(v["votes"].values()) for v in votes},
        confidence=options.confidence,
        tsr_threshold=options.tsr_threshold,
        k=options.k,
    )
    counts = result.assembly.counts()
    say(
        f"  triplets: {counts['positive']} positive, {counts['negative']} negative, {counts['uncertain']} uncertain "
        f"(confidence below {options.confidence:g}: their {counts['removed_images']} images removed from the seed set)"
    )
    if not result.assembly.queries:
        for name in DATA_SET:
            output.remove(name)
        raise ConfigurationError("no query kept a confirmed positive: nothing to write (see the judge log)")
    result.files.update(write_dataset(result.assembly, seeds, filtered, output, images=options.images))
    result.data = data = output.path(DATA)
    say(
        f"RMIR data in {data}: {counts['queries']} queries ({counts['test']} test with TSR > {options.tsr_threshold:g}, "
        f"{counts['train']} train), pool of {counts['pool']} images; {counts['dropped_queries']} queries dropped without a positive"
    )
    if not counts["test"]:
        say(
            "  no query reached the TSR threshold: the test split is empty (lower --tsr-threshold, or run with -T split=train)"
        )
    say(f"  check: ecom-tasks validate rmir {data}\n  run:   inspect eval ecom_tasks/rmir -T data={data} --model none")
    return result
