"""From the stages' votes to RAIR records (Hard, Visually Salient, both or neither; RAIR README "Building the
Hard and Visually Salient subsets"): pure, so thresholds can change without a model call.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ecom_tasks.rair.construction.votes import MIN_VOTES, intent_decision, rule_vote, visual_decision
from ecom_tasks.rair.rules import RuleSet
from ecom_tasks.rair.schema import RairRecord


def query_id(query: str) -> str:
    """A query's sample id in the intent stage: stable across runs and candidate files (sha256 of the stripped text)."""
    return "query-" + hashlib.sha256(query.strip().encode("utf-8")).hexdigest()[:12]


def unique_queries(records: Iterable[RairRecord]) -> dict[str, str]:
    """query id -> query, in the order the queries first appear (the intent stage asks each once)."""
    return {query_id(r.query): r.query.strip() for r in records}


@dataclass(frozen=True)
class Thresholds:
    intent: int = MIN_VOTES
    visual: int = MIN_VOTES
    rules: int = MIN_VOTES


@dataclass
class Assembly:
    rows: list[dict[str, Any]] = field(default_factory=list)  # RAIR records (image: the candidate's resolved image)
    decisions: list[dict[str, Any]] = field(default_factory=list)  # one per candidate, kept or not

    def counts(self) -> dict[str, int]:
        subsets = [row["subset"] for row in self.rows]
        return {
            "candidates": len(self.decisions),
            "hard": subsets.count("hard"),
            "visual": subsets.count("visual"),
            "left_out": sum(1 for d in self.decisions if not d["subsets"]),
        }


def assemble(
    candidates: Sequence[RairRecord],
    intent_votes: Mapping[str, Sequence[str | None]],
    visual_votes: Mapping[str, Sequence[int | None]],
    rule_runs: Mapping[str, Sequence[Sequence[str] | None]],
    thresholds: Thresholds = Thresholds(),
    ruleset: RuleSet | None = None,
) -> Assembly:
    """``intent_votes`` by query id (:func:`~ecom_tasks.rair.construction.stages.query_id`),
    ``visual_votes`` and ``rule_runs`` by candidate id; a candidate with no visual votes (no image)
    is not visual, one with no rule runs (no rule can accompany its label) has no rule ids."""
    out = Assembly()
    order = [rule.id for rule in ruleset.rules] if ruleset is not None else []
    for record in candidates:
        query_votes = list(intent_votes.get(query_id(record.query), []))
        intent = intent_decision(query_votes, thresholds.intent)
        votes = list(visual_votes.get(record.id, []))
        essential, yes = visual_decision(votes, thresholds.visual)
        rule_ids = list(rule_vote(list(rule_runs.get(record.id, [])), thresholds.rules, order))
        subsets = [s for s, member in (("hard", intent.hard), ("visual", essential)) if member]
        consistent = ruleset.resolve_level(rule_ids) == record.label if ruleset is not None else None
        out.decisions.append(
            {
                "id": record.id,
                "query": record.query,
                "label": record.label,
                "subsets": subsets,
                "intent": intent.intent,
                "intent_status": intent.status,
                "intent_votes": query_votes,
                "hard_votes": intent.hard_votes,
                "visual_votes": votes,
                "essential_votes": yes,
                "rule_ids": rule_ids,
                "rule_runs": [list(r) if r is not None else None for r in rule_runs.get(record.id, [])],
                "rules_give_label": consistent,
            }
        )
        fields = {f.name: getattr(record, f.name) for f in dataclasses.fields(record) if f.name != "source"}
        for subset in subsets:
            intent_of = intent.intent if subset == "hard" else None
            row = {"id": f"{record.id}-{subset}", "subset": subset, "intent": intent_of, "rule_ids": rule_ids}
            out.rows.append({**fields, **row, "origin": "ecom-tasks build rair", "candidate": record.id})
    return out
