"""EcomEval prompts: the question as it is, and the grader's prompt (our wording of the Table B1 rubric; its
static part first, so that provider prompt caching applies across items). The inserted texts are HTML-escaped,
so none can write a marker; :func:`read_grader_prompt` undoes it exactly. README: "Prompts and the judge"."""

from __future__ import annotations

import html

from ecom_tasks import files

PROMPT_VERSION = "ecomeval-question/1"
#: Version 2: the inserted texts are escaped (a response cannot forge the markers).
GRADER_VERSION = "ecomeval-grader/2"

#: The rubric, the markers and the three inserted texts (``{question}``, ``{reference}``, ``{response}``).
GRADER_TEMPLATE = files.package_text("ecom_tasks.ecomeval", "prompt_texts/grader.txt")
#: First line of every grader prompt; the offline baseline grader recognises its prompts by it.
GRADER_HEADER = GRADER_TEMPLATE.partition("\n")[0]

QUESTION_OPEN, QUESTION_CLOSE = "<question>\n", "\n</question>"
REFERENCE_OPEN, REFERENCE_CLOSE = "<reference_answer>\n", "\n</reference_answer>"
RESPONSE_OPEN, RESPONSE_CLOSE = "<response>\n", "\n</response>"


def build_grader_prompt(question: str, reference: str, response: str) -> str:
    """The grader's prompt for one response: the three texts escaped (``&`` ``<`` ``>`` as HTML entities, so
    none holds a marker), then inserted (``str.format`` does not re-read the inserted values)."""
    texts = {"question": question, "reference": reference, "response": response}
    return GRADER_TEMPLATE.format(**{name: html.escape(text, quote=False) for name, text in texts.items()})


def read_grader_prompt(text: str) -> tuple[str, str, str] | None:
    """(question, reference, response) from a grader prompt built by :func:`build_grader_prompt`
    (unescaped, exactly as given), else None. Each marker occurs once in such a prompt."""
    if not text.startswith(GRADER_HEADER):
        return None
    parts = []
    start = 0
    for opening, closing in (
        (QUESTION_OPEN, QUESTION_CLOSE),
        (REFERENCE_OPEN, REFERENCE_CLOSE),
        (RESPONSE_OPEN, RESPONSE_CLOSE),
    ):
        begin = text.find(opening, start)
        end = text.find(closing, begin + len(opening)) if begin >= 0 else -1
        if end < 0:
            return None
        parts.append(html.unescape(text[begin + len(opening) : end]))
        start = end + len(closing)
    return parts[0], parts[1], parts[2]
