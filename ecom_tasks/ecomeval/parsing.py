"""Reading the grader's grade (strict), and exact-answer matching for the ``ecomeval_exact`` tasks.

Grades. Every ``score: N`` the grader wrote is read: ``Final Score: 2``,
``**Score:** 3/3``, ``Score = 1``, ``{"score": 1}``, ``"final_score": 2``
(a markdown ``**`` or quote may stand around the name, value or colon; a
``/3`` may follow). The grade is ``ok`` only when every such mention names
the same whole number in 0..3. Otherwise the reply is a judge failure, never
a grade:

- ``no_grade``: no ``score: N`` at all (nonsense, refusals, an empty reply);
- ``out_of_range``: a value outside 0..3, not a whole number, or over a
  scale other than 3 (``4``, ``2.5``, ``7/10``);
- ``conflicting``: two different grades.

Reasoning before ``</think>`` is not read (see ``scorers.replies``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ecom_tasks.scorers.core import RUBRIC_MAX
from ecom_tasks.scorers.replies import answer_region

OK = "ok"
NO_GRADE = "no_grade"
OUT_OF_RANGE = "out_of_range"
CONFLICTING = "conflicting"
FAILURE_STATUSES = (NO_GRADE, OUT_OF_RANGE, CONFLICTING)

# "score" (optionally "final score" / "final_score"), markdown or quotes, ":" or "=", markdown or
# quotes, a number, optionally "/ scale".
_GRADE = re.compile(
    r"(?<![A-Za-z])score\b[\s*_\"'`]*[:=][\s*\"'`]*(-?\d+(?:\.\d+)?)(?:\s*/\s*(\d+(?:\.\d+)?))?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ParsedGrade:
    grade: int | None
    status: str
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.grade is None


def parse_grade(reply: str | None) -> ParsedGrade:
    """The grade in a grader's reply, or a judge failure saying why (never raises)."""
    region = answer_region(reply)
    if region is None:
        return ParsedGrade(None, NO_GRADE, "the grader's reasoning was never closed")
    found = _GRADE.findall(region)
    if not found:
        return ParsedGrade(None, NO_GRADE, "no 'Final Score: N' line")
    grades: list[int] = []
    for value, scale in found:
        number = float(value)
        if scale and float(scale) != RUBRIC_MAX:
            return ParsedGrade(None, OUT_OF_RANGE, f"grade {value}/{scale} is not on the 0..{RUBRIC_MAX} scale")
        if not number.is_integer() or not 0 <= number <= RUBRIC_MAX:
            return ParsedGrade(None, OUT_OF_RANGE, f"grade {value} is outside 0..{RUBRIC_MAX}")
        grades.append(int(number))
    if len(set(grades)) > 1:
        return ParsedGrade(None, CONFLICTING, f"different grades {', '.join(map(str, dict.fromkeys(grades)))}")
    return ParsedGrade(grades[0], OK)


# --- exact answers (the deterministic ecomeval_exact tasks) ---------------------------------------

#: References that are one option letter (App. D.1, D.3, D.4 multiple choice).
OPTION_LETTER = re.compile(r"^[A-J]$")
#: A short exact answer: one line of at most this many words (App. A.2's "1", A.6's "Nike").
EXACT_MAX_WORDS = 3
EXACT_MAX_CHARS = 32

_TAG = re.compile(r"<[^<>\n]{1,40}>")
# "B." "(B)" "B)" "B:" or a lone "B" at the start; not "I think ..." (I is a letter too).
_LEADING_LETTER = re.compile(r"^[(\[]?([A-J])(?:[).:\]]|$)")
# "answer is B", "Answer: B", "option (B)": the letter itself is matched case-sensitively.
_ANSWER_IS = re.compile(r"(?:answer|option|choice)\s*(?:is|:)?\s*[:\-]?\s*[*\"'(\[]*((?-i:[A-J]))(?![A-Za-z])", re.IGNORECASE)
_PREFIX = re.compile(r"^(?:final\s+answer|answer|output|result)\s*[:：]\s*", re.IGNORECASE)


def exact_answer(reference: str) -> str | None:
    """The reference as an exact answer (an option letter or a short one-line answer), else None."""
    text = reference.strip()
    if not text or "\n" in text:
        return None
    if OPTION_LETTER.match(text):
        return text
    if len(text) <= EXACT_MAX_CHARS and len(text.split()) <= EXACT_MAX_WORDS:
        return text
    return None


def normalise(text: str) -> str:
    """Case-folded NFKC text without markdown, tags, surrounding quotes/punctuation and extra spaces."""
    text = unicodedata.normalize("NFKC", text)
    text = _TAG.sub(" ", text).replace("*", " ").replace("`", " ")
    text = _PREFIX.sub("", text.strip())
    text = " ".join(text.split()).casefold()
    return text.strip(" .,;:!?\"'“”‘’()[]{}")


def option_letter(reply: str) -> str | None:
    """The option a reply picks: its leading letter ("B. Trousers ...", "(B)") or the last
    "answer is B" / "Answer: B"."""
    text = _TAG.sub(" ", reply).replace("*", "").strip()
    stated = _ANSWER_IS.findall(text)
    if stated:
        return stated[-1].upper()
    lead = _LEADING_LETTER.match(text)
    return lead.group(1).upper() if lead else None


def exact_match(reference: str, reply: str | None) -> bool:
    """Whether ``reply`` gives the exact answer ``reference`` (after normalisation).

    An option-letter reference matches the letter the reply picks; any other
    reference must equal the whole normalised reply.
    """
    region = answer_region(reply) or ""
    target = reference.strip()
    if OPTION_LETTER.match(target):
        return option_letter(region) == target.upper()
    return bool(region.strip()) and normalise(region) == normalise(target)
