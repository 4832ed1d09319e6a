"""Baseline responders for RMIR's prompts (reason-then-embed and the construction stages): no image is seen,
captions and query words stand in (their rules: the RMIR README, "The offline baseline")."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ecom_tasks.rmir.construction import prompts as build_prompts
from ecom_tasks.rmir.prompts import DESCRIPTION_MARKER

_REQUEST = re.compile(r"^Request:[ \t]*(.+)$", re.MULTILINE)
_WORD = re.compile(r"[A-Za-z0-9]+(?:'[a-z]+)?")
_QUESTION_WORDS = frozenset(
    "what which who whom whose when where why how would could should will can do does did is are was were be "
    "this these that those it its the a an of to in on at for by with you your i my me".split()
)
_CAPTION = re.compile(rf"^{re.escape(build_prompts.CAPTION_LABEL)}[ \t]*(.+)$", re.MULTILINE)
_QUERY = re.compile(rf"^{re.escape(build_prompts.QUERY_LABEL)}[ \t]*(.+)$", re.MULTILINE)
_TARGET = re.compile(rf"^{re.escape(build_prompts.TARGET_LABEL)}[ \t]*(.+)$", re.MULTILINE)
#: What each construction prompt starts with (its instructions are the first text part).
_GENERATION = build_prompts.GENERATION_INSTRUCTIONS[:80]
_FILTER = build_prompts.FILTER_INSTRUCTIONS[:80]
_JUDGE = build_prompts.JUDGE_INSTRUCTIONS[:80]
#: Templated pairs: (query, target description around the input caption).
_TEMPLATES = {
    "functional": ("What would someone need in order to use this?", "a tool used with {caption}"),
    "temporal": ("What will this look like some hours from now?", "{caption}, some hours later"),
    "causal": ("What does the situation shown here lead to?", "the result of {caption}"),
}


def _content_words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if w.lower() not in _QUESTION_WORDS and len(w) > 2}


def respond_generation(text: str) -> str:
    captions = _CAPTION.findall(text)
    if not captions:
        abstentions = "\n".join(f"<{c}>{build_prompts.ABSTAIN}</{c}>" for c in build_prompts.CATEGORY_TAGS)
        return f"I cannot see the image and no caption came with it.\n<image>unknown</image>\n{abstentions}"
    caption = captions[-1].strip().rstrip(".")
    blocks: list[str] = []
    for category in build_prompts.CATEGORY_TAGS:
        query, target = _TEMPLATES[category]
        blocks.append(
            f"<{category}>\n<query>{query}</query>\n<target>{target.format(caption=caption)}</target>\n"
            f"<reasoning>Restated from the caption; the baseline does not reason.</reasoning>\n</{category}>"
        )
    return f"<image>{caption}</image>\n" + "\n".join(blocks)


def respond_filter(text: str) -> str:
    queries, targets = _QUERY.findall(text), _TARGET.findall(text)
    if not queries or not targets:
        return "<reasoning>The question is incomplete.</reasoning>\n<verdict>no</verdict>"
    query, target = queries[-1], targets[-1]
    shared = _content_words(query) & _content_words(target)
    valid = not shared and len(query.split()) < 25
    reason = f"the query already names {', '.join(sorted(shared))}" if shared else "the query does not name the target"
    return f"<reasoning>Lexical check: {reason}.</reasoning>\n<verdict>{'yes' if valid else 'no'}</verdict>"


def respond_judge(text: str) -> str:
    captions, queries = _CAPTION.findall(text), _QUERY.findall(text)
    if len(captions) < 2 or not queries:
        return f"<reasoning>I cannot see the images and a caption is missing.</reasoning>\n<verdict>{build_prompts.ABSTAIN}</verdict>"
    source, candidate = _content_words(captions[0]), _content_words(captions[-1])
    shared = candidate & (source | _content_words(queries[-1]))
    verdict = "True" if len(shared) >= 2 else "False"
    return f"<reasoning>The captions share {len(shared)} content word(s).</reasoning>\n<verdict>{verdict}</verdict>"


def respond_rmir(messages: Sequence[tuple[str, str]]) -> str | None:
    """Answer an RMIR prompt (reason-then-embed or a construction stage), else None."""
    text = "\n".join(t for _, t in messages)
    first = next((t for role, t in messages if role == "user"), "")
    for start, respond in ((_GENERATION, respond_generation), (_FILTER, respond_filter), (_JUDGE, respond_judge)):
        if first.startswith(start):
            return respond(first)
    if DESCRIPTION_MARKER not in text:
        return None
    found = _REQUEST.findall(text)
    if not found:
        return None
    words = [w for w in _WORD.findall(found[-1]) if w.lower() not in _QUESTION_WORDS]
    return f"The request names no object I can see; restating it.\n{DESCRIPTION_MARKER} {' '.join(words) or found[-1].strip()}"
