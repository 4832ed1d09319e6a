"""``ecom-tasks build monbench``: the relevance-vote stage, then hard-case selection into questions (the
layout of ``--out``: MonBench README, "Building Query-Ad Relevance questions").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ecom_tasks import construction
from ecom_tasks.construction import (
    file_sha256,
    given,
    log_vote_outcomes,
    logged_votes,
    open_build_folder,
    say,
    write_jsonl,
)
from ecom_tasks.data import fixtures_dir
from ecom_tasks.monbench.construction.seeds import AdPair, load_pairs
from ecom_tasks.monbench.construction.selection import Tally, assemble_question, disagreement, select_options, tally
from ecom_tasks.monbench.construction.stages import VOTER_ROLE, VOTERS

SCORER = "monbench_relevance_votes"
QUESTION_PREFIX = "mb-build-"
#: What the build writes below ``--out`` (besides the stage's Inspect logs in ``logs/1_votes``).
DATA = "data/monbench.jsonl"
VOTES = "work/votes.jsonl"
QUESTIONS = "work/questions.jsonl"
LOGS = "logs/1_votes"


def default_pairs() -> Path:
    """The bundled synthetic query-ad pairs."""
    return fixtures_dir("monbench_build") / "pairs.jsonl"


@dataclass
class BuildOptions(construction.BuildOptions):
    pairs: Path = field(default_factory=default_pairs)
    voters: int = VOTERS
    temperature: float = 0.0
    max_tokens: int | None = None  # None: the stage's default (stages.MAX_TOKENS)
    min_positive: int = 0
    min_negative: int = 0
    split: str = "test"
    order_seed: int = 0


@dataclass
class BuildResult:
    log: Any = None
    questions: list[dict[str, Any]] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # query key -> why no question
    data: Path | None = None


def questions(
    pairs: list[AdPair],
    votes: dict[str, list[str | None]],
    *,
    min_positive: int = 0,
    min_negative: int = 0,
    split: str = "test",
    order_seed: int = 0,
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """One question per query (in input order) from the votes, and why the other queries made none."""
    tallies: dict[str, Tally] = {p.id: tally(votes.get(p.id, [])) for p in pairs}
    groups: dict[str, list[AdPair]] = {}
    for pair in pairs:
        groups.setdefault(pair.query_key, []).append(pair)
    made, skipped = [], {}
    for key, group in groups.items():
        selection = select_options(group, tallies, min_positive=min_positive, min_negative=min_negative)
        if not selection.complete:
            skipped[key] = selection.reason
            continue
        made.append(assemble_question(selection, QUESTION_PREFIX + key, split=split, seed=order_seed))
    return made, skipped


def build(options: BuildOptions) -> BuildResult:
    """Run (or resume) the vote stage, then write the questions with the thresholds given."""
    construction.check_thresholds(
        ("--min-positive-votes", options.min_positive, options.voters, "voters"),
        ("--min-negative-votes", options.min_negative, options.voters, "voters"),
    )
    output = open_build_folder(
        options.out,
        benchmark="monbench",
        inputs=[Path(options.pairs)],
        files_out=(DATA, VOTES, QUESTIONS),
        folders=(LOGS,),
    )
    out = output.root
    pairs = load_pairs(options.pairs)
    task_args = {
        "data": str(Path(options.pairs).resolve()),
        "data_sha256": file_sha256(options.pairs),
        "voters": options.voters,
        "temperature": options.temperature,
        **given(max_tokens=options.max_tokens),
    }
    task = "ecom_tasks/monbench_build_votes"
    stage = options.panel_stage("votes", task, task_args, len(pairs), options.voters, "voters", role=VOTER_ROLE)
    result = BuildResult()
    result.log = options.run(stage, output, lambda log: log_vote_outcomes(log, SCORER, stage.name), data=(DATA,))
    votes = logged_votes(result.log, SCORER)
    write_jsonl(
        VOTES,
        (
            {
                "id": p.id,
                "query": p.query,
                "ad": p.ad,
                "human": p.human,
                "votes": votes.get(p.id, []),
                "disagreement": disagreement(p, tally(votes.get(p.id, []))),
            }
            for p in pairs
        ),
        output=output,
    )
    result.questions, result.skipped = questions(
        pairs,
        votes,
        min_positive=options.min_positive,
        min_negative=options.min_negative,
        split=options.split,
        order_seed=options.order_seed,
    )
    write_jsonl(
        QUESTIONS,
        (
            *({"query_key": q["id"].removeprefix(QUESTION_PREFIX), "question": q["id"]} for q in result.questions),
            *({"query_key": key, "skipped": why} for key, why in result.skipped.items()),
        ),
        output=output,
    )
    say(
        f"  {len(pairs)} pairs, {len(result.questions) + len(result.skipped)} queries: {len(result.questions)} questions made, "
        f"{len(result.skipped)} skipped ({', '.join(sorted(set(result.skipped.values()))) or 'none'}); "
        f"thresholds: positive >= {options.min_positive}, negative >= {options.min_negative} disagreeing votes"
    )
    if not result.questions:
        output.remove(DATA)  # an earlier build's questions must not pass for this one's
        say(f"  no question could be made: nothing to write (see {out / QUESTIONS})")
        return result
    result.data = out / DATA
    write_jsonl(DATA, result.questions, output=output)
    say(
        f"MonBench questions in {result.data}\n  check: ecom-tasks validate monbench {result.data}\n"
        f"  run:   inspect eval ecom_tasks/monbench_canonical -T data={result.data} --model ..."
    )
    return result
