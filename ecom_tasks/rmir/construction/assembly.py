"""From the panel's votes to an RMIR data set (Sec. 3.1.4-3.1.7), as pure functions: :func:`decide` one
triplet, :func:`assemble` every query (removal, pool, TSR, split). The rules are in the RMIR README
("Then the votes are assembled", "Votes"); thresholds apply here, so changing one asks no model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ecom_tasks.rmir.construction.prompts import ABSTAIN
from ecom_tasks.rmir.metrics import negative_fraction, tsr
from ecom_tasks.scorers.panel import Vote, majority_with_confidence

TRUE, FALSE = "True", "False"
VERDICTS = (TRUE, FALSE, ABSTAIN)
POSITIVE, NEGATIVE, UNCERTAIN = "positive", "negative", "uncertain"
TEST, TRAIN = "test", "train"
#: The paper keeps only unanimous panels (Sec. 3.1.5).
DEFAULT_CONFIDENCE = 1.0
#: The paper gives no value ("some threshold"); ours. A list whose positives are all at the top of
#: 16 candidates and whose other candidates every judge rejected scores about 0.83 (8 positives) to
#: 0.996 (1 positive); one with rejections only in its last few places scores far lower.
DEFAULT_TSR_THRESHOLD = 0.9
#: Candidates from the image index per query (K_img, Sec. 3.1.3), the length TSR pads to.
DEFAULT_K_IMAGE = 16
#: Candidates from the text (caption) index per query (K_desc).
DEFAULT_K_TEXT = 4
_EPSILON = 1e-9


@dataclass(frozen=True)
class Candidate:
    """A candidate target of one query, with its rank (1-based) in each index that found it."""

    id: str
    image_rank: int | None = None
    text_rank: int | None = None


@dataclass(frozen=True)
class Decision:
    vote: Vote
    outcome: str  # positive | negative | uncertain
    negative_fraction: float  # share of the panel that said False (TSR's input)


def decide(votes: Sequence[str | None], confidence: float = DEFAULT_CONFIDENCE) -> Decision:
    """One triplet's decision from its panel's votes (``"True"``, ``"False"``, ``"ABSTAIN"``, or
    None for a judge that failed)."""
    if not 0.0 < confidence <= 1.0:
        raise ValueError(f"confidence must be in (0, 1], got {confidence}")
    unknown = {v for v in votes if v is not None and v not in VERDICTS}
    if unknown:
        raise ValueError(f"votes must be {', '.join(VERDICTS)} or None, got {sorted(unknown)}")
    vote = majority_with_confidence(list(votes))
    sure = vote.confidence >= confidence - _EPSILON
    outcome = POSITIVE if sure and vote.label == TRUE else NEGATIVE if sure and vote.label == FALSE else UNCERTAIN
    # The False votes over the whole panel (abstentions and failures are not False).
    return Decision(vote, outcome, negative_fraction(list(votes)) if votes else 0.0)


@dataclass(frozen=True)
class AssembledQuery:
    id: str
    positives: tuple[str, ...]
    tsr: float
    split: str


@dataclass
class Assembly:
    queries: list[AssembledQuery]
    pool: list[str]  # union of the kept queries' positives, in order of first appearance
    removed: set[str]  # candidates of uncertain triplets, removed from the seed set
    dropped: dict[str, str] = field(default_factory=dict)  # query id -> why it has no positive
    decisions: dict[tuple[str, str], Decision] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        outcomes = [d.outcome for d in self.decisions.values()]
        return {
            "triplets": len(outcomes),
            "positive": outcomes.count(POSITIVE),
            "negative": outcomes.count(NEGATIVE),
            "uncertain": outcomes.count(UNCERTAIN),
            "removed_images": len(self.removed),
            "queries": len(self.queries),
            "test": sum(q.split == TEST for q in self.queries),
            "train": sum(q.split == TRAIN for q in self.queries),
            "dropped_queries": len(self.dropped),
            "pool": len(self.pool),
        }


def query_tsr(candidates: Sequence[Candidate], decisions: Mapping[str, Decision], k: int = DEFAULT_K_IMAGE) -> float:
    """TSR of one query: its image-index candidates in rank order (at most ``k``), padded to ``k``."""
    ranked = sorted((c for c in candidates if c.image_rank is not None), key=lambda c: c.image_rank or 0)[:k]
    return tsr([decisions[c.id].negative_fraction for c in ranked], k)


def assemble(
    queries: Sequence[str],
    candidates: Mapping[str, Sequence[Candidate]],
    votes: Mapping[tuple[str, str], Sequence[str | None]],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    tsr_threshold: float = DEFAULT_TSR_THRESHOLD,
    k: int = DEFAULT_K_IMAGE,
) -> Assembly:
    """Queries (ids, in order), each one's candidates, and every triplet's votes -> the data set (every
    candidate of a query needs votes: ``votes[(query, candidate)]``)."""
    decisions: dict[tuple[str, str], Decision] = {}
    for query in queries:
        for candidate in candidates.get(query, ()):
            key = (query, candidate.id)
            if key not in votes:
                raise ValueError(f"no votes for query {query!r}, candidate {candidate.id!r}")
            decisions[key] = decide(votes[key], confidence)
    # Sec. 3.1.5: an uncertain candidate may be a valid answer nobody could confirm, so it leaves the seed set.
    removed = {cid for (_, cid), d in decisions.items() if d.outcome == UNCERTAIN}
    kept: list[AssembledQuery] = []
    dropped: dict[str, str] = {}
    pool: dict[str, None] = {}
    for query in queries:
        own = list(candidates.get(query, ()))
        mine = {c.id: decisions[(query, c.id)] for c in own}
        confirmed = [c.id for c in own if mine[c.id].outcome == POSITIVE]
        positives = tuple(cid for cid in confirmed if cid not in removed)
        if not positives:
            dropped[query] = (
                "no candidate"
                if not own
                else "no positive"
                if not confirmed
                else "every positive was removed as uncertain elsewhere"
            )
            continue
        score = query_tsr(own, mine, k)
        kept.append(AssembledQuery(query, positives, score, TEST if score > tsr_threshold else TRAIN))
        pool.update(dict.fromkeys(positives))
    return Assembly(kept, list(pool), removed, dropped, decisions)
