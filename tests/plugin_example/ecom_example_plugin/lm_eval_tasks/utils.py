"""Data and scoring of the ``example_echo`` task (3 inline multiple-choice docs)."""

from __future__ import annotations

from typing import Any

import datasets
from ecom_example_plugin import example_exact_match

DOCS = [
    {
        "id": "echo-1",
        "question": "Which product is a stainless steel water bottle?",
        "choices": [
            "Stainless steel water bottle 750 ml",
            "Cotton beach towel",
            "Wireless computer mouse",
            "Ceramic coffee mug",
        ],
        "answer": "A",
    },
    {
        "id": "echo-2",
        "question": "Which product charges a phone without cables?",
        "choices": ["Paper notebook", "Wireless phone charging pad", "Garden hose", "Wool socks"],
        "answer": "B",
    },
    {
        # The lexical baseline picks A here (it shares "winter"): it scores 2/3 on this task.
        "id": "echo-3",
        "question": "Which item keeps feet warm in winter?",
        "choices": ["Winter tyres for cars", "Sunglasses", "Wool socks", "Beach umbrella"],
        "answer": "C",
    },
]


def load_docs(**kwargs: Any) -> datasets.DatasetDict:
    """``custom_dataset`` hook: lm-eval passes ``metadata | dataset_kwargs`` (ignored here)."""
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(DOCS)})


def doc_to_text(doc: dict[str, Any]) -> str:
    options = "\n".join(f"{letter}. {choice}" for letter, choice in zip("ABCD", doc["choices"]))
    return (
        "Answer the multiple-choice question about online shopping.\n\n"
        f"{doc['question']}\n{options}\n\n"
        "** Output Format **\n<Label>A/B/C/D</Label>"
    )


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    return {"example_exact_match": example_exact_match(doc["answer"], results[0])}
