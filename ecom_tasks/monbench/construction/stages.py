"""MonBench's construction stage as an Inspect task (``ecom_tasks/monbench_build_votes``): every voter
labels every query-ad pair relevant or irrelevant (App. B.1.2: four models); the build selects the hard
cases from the logged votes."""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from ecom_tasks.construction import check_sha256, panel_task, read_panel, stage_metadata, system_user
from ecom_tasks.monbench.construction.parsing import parse_relevance
from ecom_tasks.monbench.construction.prompts import (
    VOTE_LIMIT_REMINDER,
    VOTE_REMINDER,
    VOTE_SYSTEM,
    VOTE_VERSION,
    vote_user,
)
from ecom_tasks.monbench.construction.seeds import load_pairs
from ecom_tasks.monbench.construction.selection import tally

#: The paper's four voting models (GPT-4o, GPT-5-Chat, DeepSeek-V3, DeepSeek-R1).
VOTERS = 4
MAX_TOKENS = 4096
#: Moves when a vote is read otherwise (2: markdown around an "or" between two answers offers alternatives).
STAGE_VERSION = "2"
#: Role prefix of the panel: voter_1 .. voter_<voters>, each the evaluated model unless bound.
VOTER_ROLE = "voter"
#: What the stage log records as its benchmark: not a MonBench run (ecom-tasks report leaves it out of MonBench's tables).
BENCHMARK = "monbench_build"
#: What a voter is told after an unreadable and after a cut-off reply.
REMINDERS = (VOTE_REMINDER, VOTE_LIMIT_REMINDER)


@scorer(metrics=[mean()])
def monbench_relevance_votes() -> Scorer:
    """The share of voters agreeing with the human label (an abstention agrees with nothing); the
    answer is the tally."""

    async def score(state: TaskState, target: Target) -> Score:
        _, metadata = read_panel(state, parse_relevance, REMINDERS)  # a reply cut off by a limit abstains
        votes = metadata["votes"]
        counts = tally(votes)
        agreeing = sum(1 for v in votes if v == target.text)
        return Score(
            value=agreeing / len(votes) if votes else 0.0,
            answer=f"{counts.relevant} relevant, {counts.irrelevant} irrelevant, {counts.abstained} abstained",
            explanation=f"human: {target.text}",
            metadata=metadata,
        )

    return score


@task
def monbench_build_votes(
    data: str,
    data_sha256: str = "",
    voters: int = VOTERS,
    temperature: float = 0.0,
    max_tokens: int = MAX_TOKENS,
) -> Task:
    """Relevance votes on query-ad pairs (App. B.1.2): every voter (roles ``voter_1..N``) labels every pair."""
    check_sha256(data, data_sha256 or None, "the query-ad pairs file", setting="data_sha256")
    samples = [
        Sample(
            id=p.id,
            input=system_user(VOTE_SYSTEM, vote_user(p.query, p.ad, p.location, p.market)),
            target=p.human,
            metadata={"query": p.query, "ad": p.ad},
        )
        for p in load_pairs(data)
    ]
    return panel_task(
        "monbench_build_votes",
        samples,
        data,
        role=VOTER_ROLE,
        seats=voters,
        temperature=temperature,
        max_tokens=max_tokens,
        parse=parse_relevance,
        reminders=REMINDERS,
        scorer=monbench_relevance_votes(),
        version=STAGE_VERSION,
        metadata=stage_metadata(BENCHMARK, "votes", version=STAGE_VERSION, prompt_version=VOTE_VERSION, data=data),
    )
