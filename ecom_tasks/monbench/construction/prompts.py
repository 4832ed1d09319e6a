"""The relevance-voting prompt of MonBench's Query-Ad Relevance construction (App. B.1.2), in our own words: the
system message's first line names its version (runs record it, the offline baseline recognises it)."""

from __future__ import annotations

from ecom_tasks import files

VOTE_VERSION = "monbench-build-vote/1"
RELEVANT = "relevant"
IRRELEVANT = "irrelevant"

#: Synthetic labelled examples (query, location, ad, label): not from the MonBench data.
EXAMPLES = (
    (
        "cheap flights to lisbon",
        "Manchester, UK",
        "Lisbon from £39 - Book direct flights from Manchester with FlyNow.",
        RELEVANT,
    ),
    ("cheap flights to lisbon", "Manchester, UK", "Lisbon city guide: the 20 best things to do, free PDF.", IRRELEVANT),
    ("vet open sunday", "Austin, TX", "Emergency Pet Clinic Austin - Open 7 Days, Walk-Ins Welcome.", RELEVANT),
    ("vet open sunday", "Austin, TX", "Premium Dog Food Delivered - 20% Off Your First Box.", IRRELEVANT),
)

VOTE_SYSTEM = (
    files.package_text("ecom_tasks.monbench.construction", "prompt_texts/vote.txt")
    .removesuffix("\n")
    .format(
        version=VOTE_VERSION,
        examples="\n".join(f"Query: {q} | Location: {loc} | Ad: {ad} -> {label}" for q, loc, ad, label in EXAMPLES),
    )
)


def _place(location: str, market: str) -> list[str]:
    """The item's ``Location:`` and ``Market:`` lines (those it has)."""
    return [f"{name}: {value}" for name, value in (("Location", location), ("Market", market)) if value]


def vote_user(query: str, ad: str, location: str = "", market: str = "") -> str:
    return "\n".join([f"Query: {query}", *_place(location, market), f"Ad: {ad}"])


def question_text(query: str, location: str = "", market: str = "") -> str:
    """The MonBench question of a Query-Ad Relevance item (the paper's Table 3 layout)."""
    return "\n".join([f"User Query: {query}", *_place(location, market)])


#: What a voter whose reply could not be read is told (one more ask; see scorers.judge.run_judge),
#: and what one cut off by its length limit is told, in a fresh conversation.
VOTE_REMINDER = (
    "Your reply could not be read. Reply again, ending with one line 'Answer: relevant' or 'Answer: irrelevant'."
)
VOTE_LIMIT_REMINDER = "Keep your reply short: your previous reply was cut off at its length limit. Reply with only one line 'Answer: relevant' or 'Answer: irrelevant'."
