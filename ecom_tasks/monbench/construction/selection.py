"""Hard-case selection and question assembly for Query-Ad Relevance (App. B.1.2), as pure functions (the
rules: MonBench README, "Building Query-Ad Relevance questions").
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ecom_tasks.monbench.construction.prompts import IRRELEVANT, RELEVANT, question_text
from ecom_tasks.monbench.construction.seeds import AdPair

WRONG_OPTIONS = 3
#: Why a query made no question.
NO_POSITIVE = "no_relevant_ad"
TOO_FEW_NEGATIVES = "too_few_irrelevant_ads"


@dataclass(frozen=True)
class Tally:
    relevant: int
    irrelevant: int
    abstained: int


def tally(votes: Sequence[str | None]) -> Tally:
    relevant, irrelevant = votes.count(RELEVANT), votes.count(IRRELEVANT)
    return Tally(relevant, irrelevant, abstained=len(votes) - relevant - irrelevant)


def disagreement(pair: AdPair, counts: Tally) -> int:
    """Votes against the human label: ``irrelevant`` votes of a relevant ad, ``relevant`` votes of an irrelevant one."""
    return counts.irrelevant if pair.human == RELEVANT else counts.relevant


def hardest(pairs: Sequence[AdPair], tallies: dict[str, Tally], human: str, minimum: int = 0) -> list[AdPair]:
    """The pairs with this human label and at least ``minimum`` disagreeing votes, hardest first
    (ties: input order); ads repeating an earlier one's text (case-insensitive) are left out."""
    chosen = [p for p in pairs if p.human == human and disagreement(p, tallies[p.id]) >= minimum]
    chosen.sort(key=lambda p: (-disagreement(p, tallies[p.id]), p.position))
    unique: dict[str, AdPair] = {}
    for pair in chosen:
        unique.setdefault(pair.ad.casefold(), pair)
    return list(unique.values())


@dataclass(frozen=True)
class Selection:
    positive: AdPair | None
    negatives: tuple[AdPair, ...]
    reason: str = ""  # empty when a question can be made

    @property
    def complete(self) -> bool:
        return not self.reason


def select_options(
    pairs: Sequence[AdPair], tallies: dict[str, Tally], *, min_positive: int = 0, min_negative: int = 0
) -> Selection:
    """The hardest positive and the three hardest negatives of one question's pairs."""
    positives = hardest(pairs, tallies, RELEVANT, min_positive)
    positive = positives[0] if positives else None
    negatives = [
        p
        for p in hardest(pairs, tallies, IRRELEVANT, min_negative)
        if positive is None or p.ad.casefold() != positive.ad.casefold()
    ]
    negatives = negatives[:WRONG_OPTIONS]
    if positive is None:
        return Selection(None, tuple(negatives), NO_POSITIVE)
    if len(negatives) < WRONG_OPTIONS:
        return Selection(positive, tuple(negatives), TOO_FEW_NEGATIVES)
    return Selection(positive, tuple(negatives))


def option_order(question_id: str, seed: int = 0) -> list[int]:
    """A permutation of 0..3 drawn from ``question_id`` and ``seed`` (the same on every machine)."""
    order = list(range(WRONG_OPTIONS + 1))
    random.Random(f"{seed}:{question_id}").shuffle(order)
    return order


def assemble_question(selection: Selection, question_id: str, *, split: str = "test", seed: int = 0) -> dict:
    """The MonBench record: ``choices`` are the positive (index 0 before shuffling) and the negatives
    (hardest first) in :func:`option_order`; ``answer`` is where the positive landed."""
    if not selection.complete or selection.positive is None:
        raise ValueError(f"question {question_id} cannot be made: {selection.reason}")
    first = selection.positive
    options = [first, *selection.negatives]
    order = option_order(question_id, seed)
    return {
        "id": question_id,
        "task": "query_ad_relevance",
        "split": split,
        "question": question_text(first.query, first.location, first.market),
        "choices": [options[i].ad for i in order],
        "answer": order.index(0),
        "category": first.category,
    }
