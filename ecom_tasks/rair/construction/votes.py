"""RAIR's construction votes as pure functions (Eqs. 2-4): a vote None abstains; thresholds are counts ("2 of 3")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ecom_tasks.rair.construction.prompts import OTHER
from ecom_tasks.rair.rules import Rule, RuleSet
from ecom_tasks.rair.schema import INTENTS, LEVELS
from ecom_tasks.scorers.panel import OK, quorum

#: The paper's thresholds: at least 2 of 3 models (Eqs. 2 and 3), at least 2 of k runs (Eq. 4).
MIN_VOTES = 2
#: Status of a query the quorum classed as Other (an ordinary query: not hard).
NOT_HARD = "other"


@dataclass(frozen=True)
class IntentDecision:
    """``intent``: the hard intent at least ``min_votes`` voters gave, else None; ``status`` says why
    not (``other``, ``no_quorum``, ``split_quorum``, ``panel_no_grade``); ``hard_votes``: voters
    naming any hard intent (Eq. 2's count); ``agreement``: share of voters giving the winning class."""

    intent: str | None
    status: str
    hard_votes: int
    agreement: float

    @property
    def hard(self) -> bool:
        return self.intent is not None


def intent_decision(votes: Sequence[str | None], min_votes: int = MIN_VOTES) -> IntentDecision:
    """A query is hard when at least ``min_votes`` voters give it the same hard intent: stricter than Eq. 2,
    whose count ``hard_votes`` keeps (why: RAIR README, "Building the Hard and Visually Salient subsets")."""
    winner, status = quorum(votes, min_votes)
    hard_votes = sum(1 for v in votes if v in INTENTS)
    agreement = votes.count(winner) / len(votes) if winner is not None and votes else 0.0
    if winner == OTHER:
        return IntentDecision(None, NOT_HARD, hard_votes, agreement)
    return IntentDecision(winner if status == OK else None, status, hard_votes, agreement)


def visual_decision(votes: Sequence[int | None], min_votes: int = MIN_VOTES) -> tuple[bool, int]:
    """(visually salient, votes for 1): Eq. 3, at least ``min_votes`` voters say the image is essential."""
    essential = sum(1 for v in votes if v == 1)
    return essential >= min_votes, essential


def rule_vote(
    runs: Sequence[Collection[str] | None], min_votes: int = MIN_VOTES, order: Sequence[str] = ()
) -> tuple[str, ...]:
    """Eq. 4: the rule ids named by at least ``min_votes`` of the runs (an abstaining run names none),
    in ``order`` (the rule set's order), then by first mention."""
    counts = Counter(rule_id for run in runs if run is not None for rule_id in dict.fromkeys(run))
    kept = [rule_id for rule_id, count in counts.items() if count >= min_votes]
    rank = {rule_id: i for i, rule_id in enumerate(order)}
    return tuple(sorted(kept, key=lambda r: rank.get(r, len(rank))))


def rules_for_label(ruleset: RuleSet, label: str) -> tuple[Rule, ...]:
    """``R'_y``: the rules that can accompany label ``y``: those whose level is ``y`` or less severe
    (the severity priority makes a pair's label its most severe rule's level, so a rule more severe
    than the label cannot apply). The paper also splits by industry; our rule sets have none."""
    floor = LEVELS.index(label)
    return tuple(rule for rule in ruleset.rules if LEVELS.index(rule.level) >= floor)
