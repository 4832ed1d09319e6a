"""The reason-then-embed instruction (our own wording; the paper has no such prompt: README, "Deviations")."""

from __future__ import annotations

PROMPT_VERSION = "rmir-reason-1"
DESCRIPTION_MARKER = "Description:"
#: What the format line asks for in place of the caption.
PLACEHOLDER = "<the caption>"

REASON_TEMPLATE = (
    """\
You are helping an image search engine find a photograph. Look at the attached image and read the request about it.

Request: {query}

Work out what the request is asking for, using what the image shows; think it through step by step if that helps. \
Then describe the photograph that would answer the request, as you would caption it: the objects, their state and \
the scene, in one or two plain sentences, without repeating the request or your reasoning.

Finish with one last line of the form:
"""
    + DESCRIPTION_MARKER
    + " "
    + PLACEHOLDER
)
#: The instructions before and after the request: what every prompt holds.
FIXED_PARTS = tuple(REASON_TEMPLATE.split("{query}"))
_BEFORE, _AFTER = FIXED_PARTS


def build_reason_prompt(query_text: str) -> str:
    return REASON_TEMPLATE.format(query=query_text.strip())


def prompt_query(prompt: str) -> str | None:
    """The request of a prompt :func:`build_reason_prompt` built, else None (another prompt)."""
    if len(prompt) >= len(_BEFORE) + len(_AFTER) and prompt.startswith(_BEFORE) and prompt.endswith(_AFTER):
        return prompt[len(_BEFORE) : len(prompt) - len(_AFTER)]
    return None
