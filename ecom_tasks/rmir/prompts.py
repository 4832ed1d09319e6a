"""The reason-then-embed instruction (our own wording; the paper has no such prompt).

The model sees the query image and this text, reasons if it wants to, and
ends with one line ``Description: ...``: a caption of the picture that would
answer the request. That caption alone is then embedded and searched.
"""

from __future__ import annotations

PROMPT_VERSION = "rmir-reason-1"
DESCRIPTION_MARKER = "Description:"

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
    + " <the caption>"
)


def build_reason_prompt(query_text: str) -> str:
    return REASON_TEMPLATE.format(query=query_text.strip())
