"""RAIR's construction stages as Inspect tasks (RAIR README, "Building the Hard and Visually Salient subsets"): a
scorer keeps every vote in its score's metadata; its threshold sets only the log's metric, not the build's."""

from __future__ import annotations

import functools

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ContentImage, ContentText
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from ecom_tasks.construction import Vote, check_sha256, panel_task, read_panel, stage_metadata, system_user
from ecom_tasks.data import ConfigurationError
from ecom_tasks.images import ImageAccess
from ecom_tasks.rair.construction import parsing, prompts
from ecom_tasks.rair.construction.assembly import unique_queries
from ecom_tasks.rair.construction.votes import MIN_VOTES, intent_decision, rule_vote, rules_for_label, visual_decision
from ecom_tasks.rair.rules import RuleSet, load_rules
from ecom_tasks.rair.schema import RairRecord, load_records

#: Seats of the intent and visual panels (the paper's tri-model ensembles) and runs of rule pre-annotation.
VOTERS = 3
RULE_RUNS = 3
#: Rule pre-annotation samples k independent answers: not greedy. The paper does not give its temperature.
RULE_TEMPERATURE = 0.7
MAX_TOKENS = 4096
#: Moves when a vote is read otherwise (2: markdown around an "or" between two answers offers alternatives).
STAGE_VERSION = "2"
#: What a stage log records as its benchmark: not a RAIR run (ecom-tasks report leaves it out of RAIR's tables).
BENCHMARK = "rair_build"


def _any_rule_line(reply: str) -> Vote:
    """Whether a reply can be read at all (its ids are checked against the pair's list when scored)."""
    return parsing.parse_rule_ids(reply, ())


#: Each stage's panel: the role prefix of its seats (the intent LLMs, the visual-necessity VLMs, the rule
#: annotator's runs), the reply parser, and what a seat is told after an unreadable and a cut-off reply.
PANELS = {
    "intent": ("voter", parsing.parse_intent, (prompts.INTENT_REMINDER, prompts.INTENT_LIMIT_REMINDER)),
    "visual": ("vlm", parsing.parse_visual, (prompts.VISUAL_REMINDER, prompts.VISUAL_LIMIT_REMINDER)),
    "rules": ("annotator", _any_rule_line, (prompts.RULES_REMINDER, prompts.RULES_LIMIT_REMINDER)),
}


def _panel_task(
    stage: str, samples: list[Sample], data: str, prompt_version: str, scorer: Scorer, facts: dict, **sampling
) -> Task:
    """The stage's task (``sampling``: seats, temperature, max_tokens, seed); its log's metadata: the
    candidate file's location and sha256, and the stage's ``facts``."""
    role, parse, reminders = PANELS[stage]
    metadata = stage_metadata(
        BENCHMARK, stage, version=STAGE_VERSION, prompt_version=prompt_version, data=data, **facts
    )
    return panel_task(
        f"rair_build_{stage}",
        samples,
        data,
        role=role,
        parse=parse,
        reminders=reminders,
        scorer=scorer,
        version=STAGE_VERSION,
        metadata=metadata,
        **sampling,
    )


def candidates(
    data: str,
    data_sha256: str = "",
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
    *,
    check_images: bool = False,
) -> list[RairRecord]:
    """The candidate pairs (every stage reads them, so every stage is given the build's image access)."""
    check_sha256(data, data_sha256 or None, "the candidate pairs file", setting="data_sha256")
    access = ImageAccess.from_options(allow_outside_images, allow_url_images)
    return load_records(data, check_images=check_images, image_access=access)


def structured_rules(rules: str, needs: str = "rule pre-annotation needs") -> RuleSet:
    ruleset = load_rules(rules)
    if ruleset is None or ruleset.verbatim is not None:
        raise ConfigurationError(
            f"{needs} a structured rules file (JSON with ids and levels, like rules_v1.json): {rules!r}"
        )
    return ruleset


# --- intent ---------------------------------------------------------------------------------------


@scorer(metrics=[mean()])
def rair_intent_votes(min_votes: int = MIN_VOTES) -> Scorer:
    """1 when at least ``min_votes`` voters give the query the same hard intent (the answer), else 0."""

    async def score(state: TaskState, target: Target) -> Score:
        parsed, metadata = read_panel(state, parsing.parse_intent, PANELS["intent"][2])
        decision = intent_decision([v.vote for v in parsed], min_votes)  # type: ignore[misc]
        return Score(
            value=1.0 if decision.hard else 0.0,
            answer=decision.intent or decision.status,
            explanation=f"votes {[v.vote for v in parsed]}; {decision.hard_votes} name a hard intent",
            metadata={**metadata, "status": decision.status, "agreement": decision.agreement},
        )

    return score


@task
def rair_build_intent(
    data: str,
    data_sha256: str = "",
    voters: int = VOTERS,
    temperature: float = 0.0,
    max_tokens: int = MAX_TOKENS,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
) -> Task:
    """Hard-query intent classification (Sec. 4.2 Step 2, Fig. 11): every voter classes every distinct query."""
    queries = unique_queries(candidates(data, data_sha256, allow_outside_images, allow_url_images))
    samples = [
        Sample(id=qid, input=system_user(prompts.INTENT_SYSTEM, prompts.intent_user(query)), metadata={"query": query})
        for qid, query in queries.items()
    ]
    scorer = rair_intent_votes()
    sampling = {"seats": voters, "temperature": temperature, "max_tokens": max_tokens}
    return _panel_task("intent", samples, data, prompts.INTENT_VERSION, scorer, {}, **sampling)


# --- visual necessity -----------------------------------------------------------------------------


@scorer(metrics=[mean()])
def rair_visual_votes(min_votes: int = MIN_VOTES) -> Scorer:
    """1 when at least ``min_votes`` voters find the image essential (Eq. 3), else 0."""

    async def score(state: TaskState, target: Target) -> Score:
        parsed, metadata = read_panel(state, parsing.parse_visual, PANELS["visual"][2])
        essential, yes = visual_decision([v.vote for v in parsed], min_votes)  # type: ignore[misc]
        return Score(
            value=1.0 if essential else 0.0,
            answer="essential" if essential else "not essential",
            explanation=f"{yes} of {len(parsed)} voters find the image essential",
            metadata=metadata,
        )

    return score


@task
def rair_build_visual(
    data: str,
    data_sha256: str = "",
    vlms: int = VOTERS,
    temperature: float = 0.0,
    max_tokens: int = MAX_TOKENS,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
) -> Task:
    """Visual-necessity assessment (Sec. 4.3 Stage 2, Fig. 12): every voter sees each pair that has an image."""
    samples = [
        Sample(
            id=r.id,
            input=system_user(
                prompts.VISUAL_SYSTEM, [ContentText(text=prompts.visual_user(r)), ContentImage(image=image)]
            ),
            metadata={"query": r.query, "title": r.title},
        )
        for r in candidates(data, data_sha256, allow_outside_images, allow_url_images, check_images=True)
        if (image := r.image)
    ]
    scorer = rair_visual_votes()
    sampling = {"seats": vlms, "temperature": temperature, "max_tokens": max_tokens}
    return _panel_task("visual", samples, data, prompts.VISUAL_VERSION, scorer, {}, **sampling)


# --- rule pre-annotation --------------------------------------------------------------------------


@scorer(metrics=[mean()])
def rair_rule_votes(min_votes: int = MIN_VOTES, rules: str = "builtin") -> Scorer:
    """The rules at least ``min_votes`` runs name (Eq. 4), as the answer; 1 when the rules' severity
    priority gives the human label (a consistent pre-annotation), else 0."""
    ruleset = structured_rules(rules)

    async def score(state: TaskState, target: Target) -> Score:
        allowed = state.metadata["allowed_rules"]
        read = functools.partial(parsing.parse_rule_ids, allowed=allowed)
        parsed, metadata = read_panel(state, read, PANELS["rules"][2])
        kept = rule_vote([v.vote for v in parsed], min_votes, order=allowed)  # type: ignore[misc]
        consistent = ruleset.resolve_level(kept) == target.text
        return Score(
            value=1.0 if consistent else 0.0,
            answer=", ".join(kept) or "none",
            explanation=f"{len(parsed)} runs; unknown ids named: {sorted({u for v in parsed for u in v.unknown}) or 'none'}",
            metadata=metadata,
        )

    return score


@task
def rair_build_rules(
    data: str,
    data_sha256: str = "",
    rules: str = "builtin",
    rules_sha256: str = "",
    runs: int = RULE_RUNS,
    temperature: float = RULE_TEMPERATURE,
    max_tokens: int = MAX_TOKENS,
    seed: int | None = None,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
) -> Task:
    """Rule pre-annotation (Sec. 4.4, Eq. 4): ``runs`` annotators (roles ``annotator_1..k``, each the
    evaluated model unless bound: k independent samples at ``temperature``, ``seed + i`` when a seed
    is given) name the rules of each pair, shown only the rules that can accompany its label."""
    ruleset = structured_rules(rules)
    if rules_sha256 and ruleset.sha256 != rules_sha256:
        raise ConfigurationError(
            f"the rules file {rules} has changed since this stage was started: re-run the build command"
        )
    samples = [
        Sample(
            id=r.id,
            input=system_user(prompts.rules_system(allowed, r.label, r.language), prompts.rules_user(r)),
            target=r.label,
            metadata={"allowed_rules": [rule.id for rule in allowed], "label": r.label},
        )
        for r in candidates(data, data_sha256, allow_outside_images, allow_url_images)
        if (allowed := rules_for_label(ruleset, r.label))  # none can accompany the label: nothing to ask, no rule ids
    ]
    scorer = rair_rule_votes(rules=rules)
    facts = {"rules_version": ruleset.version, "rules_sha256": ruleset.sha256}
    sampling = {"seats": runs, "temperature": temperature, "max_tokens": max_tokens, "seed": seed}
    return _panel_task("rules", samples, data, prompts.RULES_VERSION, scorer, facts, **sampling)
