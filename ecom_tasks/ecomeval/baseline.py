"""EcomEval's offline baseline (``ecom/baseline``, ``ecom-baseline``): an answerer (first option, else the most
relevant sentence) and a term-overlap baseline judge, not a real one; the rules: EcomEval's README, "Baseline" paragraph."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from ecom_tasks.ecomeval.parsing import OPTION_LETTER, option_letter
from ecom_tasks.ecomeval.prompts import read_grader_prompt

# Words of alphabetic scripts; single characters of scripts written without spaces (CJK, Thai).
_TERM = re.compile(
    r"[\u3400-\u9fff\uf900-\ufaff\u0e00-\u0e7f]|[^\W_\u3400-\u9fff\uf900-\ufaff\u0e00-\u0e7f]+", re.UNICODE
)
_OPTION = re.compile(r"^\s*([A-J])[.)]\s+(.+)$")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_TAG_FORMATS = ("<Label>", "<Answer>")  # MonBench's prompts: left to its responder


def terms(text: str) -> list[str]:
    return [t.casefold() for t in _TERM.findall(text)]


def overlap_f1(response: str, reference: str) -> float:
    """F1 of the multisets of terms (0 when either side has none)."""
    a, b = terms(response), terms(reference)
    if not a or not b:
        return 0.0
    common = sum((Counter(a) & Counter(b)).values())
    if not common:
        return 0.0
    precision, recall = common / len(a), common / len(b)
    return 2 * precision * recall / (precision + recall)


def grade_by_overlap(response: str, reference: str) -> tuple[int, float]:
    """(grade, overlap): an option-letter reference is compared with the option the response picks
    (3 when the same, else 1; 0 for an empty response)."""
    if OPTION_LETTER.match(reference.strip()):
        same = option_letter(response) == reference.strip().upper()
        return (3 if same else 1 if response.strip() else 0), float(same)
    f1 = overlap_f1(response, reference)
    return (3 if f1 >= 0.8 else 2 if f1 >= 0.5 else 1 if f1 > 0 else 0), f1


def respond_grader(messages: Sequence[tuple[str, str]]) -> str | None:
    """Grade an EcomEval grader prompt by token overlap, else None."""
    users = [text for role, text in messages if role == "user"]
    found = read_grader_prompt(users[-1]) if users else None
    if found is None:
        return None
    _, reference, response = found
    grade, f1 = grade_by_overlap(response, reference)
    return (
        f"Baseline judge (term overlap, not a real judge): overlap with the reference {f1:.2f}.\nFinal Score: {grade}"
    )


def first_option(question: str) -> str | None:
    for line in question.splitlines():
        match = _OPTION.match(line)
        if match and match.group(1) == "A":
            return f"A. {match.group(2).strip()}"
    return None


def most_relevant_sentence(question: str) -> str:
    """The sentence sharing the most distinct terms with the rest of the question (ties: the earliest)."""
    sentences = [s.strip() for s in _SENTENCE.split(question) if s and s.strip()]
    if not sentences:
        return question.strip()

    def shared(i: int) -> int:
        rest = set(terms(" ".join(sentences[:i] + sentences[i + 1 :])))
        return len(set(terms(sentences[i])) & rest)

    return sentences[max(range(len(sentences)), key=shared)]  # max keeps the earliest of a tie


def respond_ecomeval(messages: Sequence[tuple[str, str]]) -> str | None:
    """Answer a lone user question (EcomEval's shape), else None."""
    if len(messages) != 1 or messages[0][0] != "user":
        return None
    question = messages[0][1]
    if any(tag in question for tag in _TAG_FORMATS):
        return None
    return first_option(question) or most_relevant_sentence(question)
