"""The three model prompts of RMIR's construction pipeline (Sec. 3.1.1, 3.1.2, 3.1.4), in our own words
(the RMIR README, "Prompts are ours", "--captions is ours"). Each prompt is a sequence of parts (texts,
and images where the model sees them); the Inspect stages turn them into one user message.
"""

from __future__ import annotations

from dataclasses import dataclass

from ecom_tasks import files

PROMPT_VERSION = "rmir-build-1"

#: Category tags of the generation output, in the order the prompt asks for them.
CATEGORY_TAGS = ("functional", "temporal", "causal")
ABSTAIN = "ABSTAIN"
#: The whole reply of a generator that declines the image itself.
SENSITIVE_ABSTAIN = "ABSTAIN: SENSITIVE IMAGE"
CAPTION_LABEL = "Caption supplied with this image (may be incomplete):"
QUERY_LABEL = "Query:"
TARGET_LABEL = "Target description:"


def _text(name: str, **fields: str) -> str:
    """A prompt text of ``prompt_texts/`` (the file's final newline is not part of it), its ``{fields}`` filled in."""
    text = files.package_text("ecom_tasks.rmir.construction", f"prompt_texts/{name}.txt")
    return text.removesuffix("\n").format(**fields)


#: The three kinds of reasoning with examples, shown by the generation and filtration prompts.
_CATEGORIES = _text("categories")
GENERATION_INSTRUCTIONS = _text("generation", categories=_CATEGORIES, sensitive_abstain=SENSITIVE_ABSTAIN)
GENERATION_CLOSING = "Now write the three pairs for this input image."
FILTER_INSTRUCTIONS = _text("filter", categories=_CATEGORIES)
JUDGE_INSTRUCTIONS = _text("judge")
JUDGE_CANDIDATE = "Candidate image:"
JUDGE_CLOSING = "Is the candidate image a correct answer to the query about the input image?"

#: What a judge is told when its verdict could not be read (scorers.judge.run_judge asks once more).
JUDGE_REMINDER = (
    "Your verdict could not be read. Reply again with one sentence of reasoning and then "
    "<verdict>True</verdict>, <verdict>False</verdict> or <verdict>ABSTAIN</verdict>."
)
JUDGE_LIMIT_REMINDER = (
    "Keep your reply short: a previous reply was cut off before its verdict. Write at most two "
    "sentences, then <verdict>True</verdict>, <verdict>False</verdict> or <verdict>ABSTAIN</verdict>."
)


@dataclass(frozen=True)
class Image:
    """An image part of a prompt: a resolved path, data URI or URL."""

    image: str


Part = str | Image


def _with_caption(image: str | None, caption: str | None, captions: bool) -> list[Part]:
    parts: list[Part] = [Image(image)] if image else []
    if captions and caption:
        parts.append(f"{CAPTION_LABEL} {caption}")
    return parts


def generation_prompt(image: str | None, caption: str | None = None, *, captions: bool = False) -> list[Part]:
    return [GENERATION_INSTRUCTIONS, *_with_caption(image, caption, captions), GENERATION_CLOSING]


def filter_prompt(
    image: str | None, query: str, target: str, caption: str | None = None, *, captions: bool = False
) -> list[Part]:
    return [
        FILTER_INSTRUCTIONS,
        *_with_caption(image, caption, captions),
        f"{QUERY_LABEL} {query.strip()}\n{TARGET_LABEL} {target.strip()}",
    ]


def judge_prompt(
    input_image: str | None,
    query: str,
    candidate_image: str | None,
    *,
    input_caption: str | None = None,
    candidate_caption: str | None = None,
    captions: bool = False,
) -> list[Part]:
    return [
        JUDGE_INSTRUCTIONS,
        *_with_caption(input_image, input_caption, captions),
        f"{QUERY_LABEL} {query.strip()}",
        JUDGE_CANDIDATE,
        *_with_caption(candidate_image, candidate_caption, captions),
        JUDGE_CLOSING,
    ]
