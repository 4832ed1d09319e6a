"""The reason-then-embed instruction (our own wording; the paper has no such prompt: README, "Deviations")."""

from __future__ import annotations

from ecom_tasks import files

PROMPT_VERSION = "rmir-reason-1"
DESCRIPTION_MARKER = "Description:"
#: What the format line asks for in place of the caption.
PLACEHOLDER = "<the caption>"

#: The prompt; its last line asks for the marker and the placeholder (the file's final newline is not part of it).
REASON_TEMPLATE = (
    files.package_text("ecom_tasks.rmir", "prompt_texts/reason.txt")
    .removesuffix("\n")
    .replace("{format_line}", f"{DESCRIPTION_MARKER} {PLACEHOLDER}")
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
