"""MonBench prompt builder (paper App. A, B.3 Table 10, C Table 11; README "Where our protocol differs"): the
system prompt depends only on (task, format, shots), the user prompt holds the question and options in run order."""

from __future__ import annotations

from collections.abc import Sequence

from ecom_tasks.monbench.schema import LETTERS, RELATION_LABELS, MonBenchRecord

#: The prompts' wording, recorded by every run (Inspect ``eval.metadata``): bump it when a model would
#: see different text for the same question, format and shots.
PROMPT_VERSION = "monbench-appA/1"

PREAMBLE = "You are a helpful online shopping assistant. Please answer the following question about online shopping."

#: Per-task instruction, as in the paper's per-task system prompts (Tables 3-6).
TASK_INSTRUCTIONS = {
    "query_ad_relevance": (
        "You will be given a user query along with the location and market where the query was made. "
        "Using this information, choose the most relevant advertisement from the provided options."
    ),
    "product_co_purchase": "Select the product that the user may also buy.",
    "query_product_relation": "Choose the option that best describes the relationship between the product and the query.",
    "query_query_intent": "Choose the option that best describes the relationship between the two queries.",
}

FEWSHOT_HEADER = "Here are some examples to help you answer the question:"
OUTPUT_FORMAT_HEADER = "** Output Format **"
VALID_EXAMPLES_HEADER = "**Valid Examples**"
#: Open-content tasks have no fixed vocabulary to list in the Content format.
OPEN_CONTENT_PLACEHOLDER = "full text of the chosen option"


LABEL_TAG = "Label"
ANSWER_TAG = "Answer"


def label_tag(letter: str) -> str:
    return f"<{LABEL_TAG}>{letter}</{LABEL_TAG}>"


def answer_tag(text: str) -> str:
    return f"<{ANSWER_TAG}>{text}</{ANSWER_TAG}>"


def _tags(fmt: str, label: str, content: str) -> str:
    """The tags of format ``fmt`` holding ``label`` and ``content``."""
    if fmt == "label":
        return label_tag(label)
    if fmt == "content":
        return answer_tag(content)
    if fmt == "label_content":
        return f"{label_tag(label)} {answer_tag(content)}"
    raise ValueError(f"unknown format {fmt!r}")


def render_answer(fmt: str, position: int, displayed: Sequence[str]) -> str:
    """The reply a perfect model gives in format ``fmt`` choosing ``displayed[position]``."""
    return _tags(fmt, LETTERS[position], displayed[position])


def output_format_block(task: str, fmt: str) -> str:
    vocab = RELATION_LABELS.get(task)
    spec = _tags(fmt, "/".join(LETTERS), "/".join(vocab) if vocab else OPEN_CONTENT_PLACEHOLDER)
    lines = [OUTPUT_FORMAT_HEADER, spec]
    if vocab or fmt == "label":  # an open-content task has no answer text to show as an example
        lines += [VALID_EXAMPLES_HEADER, _tags(fmt, "A", vocab[0] if vocab else "")]
    return "\n".join(lines)


def build_user_prompt(question: str, displayed: tuple[str, ...] | list[str]) -> str:
    options = "\n".join(f"{letter}. {text}" for letter, text in zip(LETTERS, displayed))
    return f"{question}\nOptions:\n{options}"


def build_system_prompt(task: str, fmt: str, examples: list[MonBenchRecord]) -> str:
    """Static prefix; few-shot examples in canonical order, answered in ``fmt`` (App. C)."""
    parts = [f"{PREAMBLE} {TASK_INSTRUCTIONS[task]}", output_format_block(task, fmt)]
    if examples:
        shots = [
            f"{build_user_prompt(ex.question, ex.choices)}\n{render_answer(fmt, ex.answer, ex.choices)}"
            for ex in examples
        ]
        parts.append("\n\n".join([FEWSHOT_HEADER, *shots]))
    return "\n\n".join(parts)
