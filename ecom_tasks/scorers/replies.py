"""Where a model's answer is in its reply: one reasoning-stripping rule and one echo rule for every benchmark.

Reasoning models write ``<think>…</think>`` before answering; some servers
drop the opening tag (a chat template already put it in the prompt), others
split the reasoning into a separate field and return only the answer.

Small models and base checkpoints often repeat their prompt: its
instructions, format lines, examples, level definitions, option lists. Text
that reproduces the prompt is never an answer, however the copy is dressed
(spacing, line breaks, markdown, case). :func:`find_echoes` finds it and
:func:`strip_echoes` blanks it out, so a parser reads only what the model
wrote itself:

- Reply and prompt are compared as *keys*: NFKC, casefolded, typographic
  quotes and dashes as ASCII, without whitespace and markdown characters (``*`` ``#`` `````` ``_`` ``~``), so
  ``** Valid Examples**`` and ``**Valid Examples**`` are the same text.
- A stretch of the reply that occurs in one of the prompt's parts (or runs on
  from one part into the next, as the model saw them) is an echo
  when it holds at least ``min_chars`` key characters that are not part of an
  answer (``answers``: the parser's pattern for what it reads as an answer,
  such as ``L3`` or ``<Label>B</Label>``). A bare answer that also occurs in
  the prompt (``L3``, ``<Label>A</Label>``, ``Answer: relevant``) is therefore
  never an echo on its own; it is one when it sits inside a longer copy
  (``**Valid Examples**`` followed by ``<Label>A</Label>``).
- An answer is kept whole: an echo never cuts one in two. Answers at the very
  start of an echo are kept when the model wrote words of its own before them
  on that line and the rest of the echo holds no answer (``Final answer: L4
  (Perfectly Relevant): Completely satisfies the query intent.`` is L4, while
  ``Final answer: L1, L3 or L4, or for L2 ...`` copies the prompt's list).
- The reply's last line, when it is a fragment of the prompt that breaks off
  in the middle of a word (``- L4 (Perfect``), or, when the reply was cut off
  by a limit (``truncated``), any fragment of the prompt beyond a bare answer,
  is an echo however short: a copy that stopped before it was long enough to
  be recognised.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

# (The slash takes the blanks after it: two runs meeting around an optional slash backtracked, quadratic in the run.)
_THINK_TAG = re.compile(r"<\s*(?:(?P<close>/)\s*)?think\s*>", re.IGNORECASE)
# End-of-turn tokens a server left in the text (ChatML, Qwen, Llama 3, Phi-3, Gemma, DeepSeek-R1 and its
# distilled models): what follows one is a turn the model made up (often "user: ..." and another "assistant"
# answer), not its answer.
_END_OF_TURN = re.compile(
    r"<\|(?:im_end|endoftext|eot_id|end_of_text|end)\|>|<end_of_turn>|<eos>|<｜end▁of▁sentence｜>", re.IGNORECASE
)


# A run of more than 8 blanks: read as one space, or as its line breaks (at most two). The readers' patterns meet
# around blanks, and degenerate replies pad with thousands of them ("L3" + 500 spaces took 24 s to read).
_BLANK_RUN = re.compile(r"\s{9,}")


def squeezed(text: str) -> str:
    """``text`` with each run of more than 8 blanks cut to one space, or to its line breaks (two at most)."""
    return _BLANK_RUN.sub(lambda run: "\n" * min(2, run.group().count("\n")) or " ", text)


def answer_region(completion: str | None) -> str | None:
    """The model's turn (up to its first end-of-turn token) outside its reasoning: the last stretch of text
    outside ``<think>…</think>`` that holds more than whitespace (text before a ``</think>`` with no opening
    tag is reasoning too); ``None`` when there is none and a ``<think>`` is never closed (the reply was cut
    off mid-reasoning). An answer the model wrote before reopening its reasoning stands unless a later one
    follows the reopened reasoning's ``</think>`` ("Answer: L3\\n<think>maybe L4" cut off is L3). Long runs of
    blanks are :func:`squeezed`."""
    # Squeezed before the tags are found: a tag stays a tag, and "<" + 100,000 spaces took the tag scan 34 s.
    text = squeezed(next((turn for turn in _END_OF_TURN.split(completion or "") if turn.strip()), ""))
    stretches, at, thinking = [""], 0, False
    for tag in _THINK_TAG.finditer(text):
        if thinking and tag.group("close"):
            thinking = False
            stretches.append("")
        elif not thinking:
            stretches[-1] += text[at : tag.start()]
            if tag.group("close"):
                stretches = [""]  # a closing tag with no opening one: everything before it was reasoning
            thinking = not tag.group("close")
        at = tag.end()
    if not thinking:
        stretches[-1] += text[at:]
    answered = [stretch for stretch in stretches if stretch.strip()]
    if answered:
        return answered[-1]
    return None if thinking else stretches[-1]


#: LaTeX's answer box as reasoning models write it ("\boxed{B}", "$\boxed{\text{Complement}}$"): group 1 is what it holds.
# (The opening dollars are taken from the first of their run only: read from each of them, a long run of dollars was
# rescanned from every one, quadratic. The same matches wherever a search goes: one never starts inside a run of them.
# The blanks after "{" are never given back to the content: they could only reach the same "}" the content does.)
BOXED = re.compile(r"(?:(?<!\$)\$+)?\\boxed\s*\{\s*+(?:\\text\s*\{)?([^{}]*)\}+\$*")
#: A correction: what a reply answers after it supersedes what it answered before ("L4. Wait, actually L3.",
#: "<Label>A</Label> Wait, that's wrong. <Label>B</Label>").
CORRECTION = re.compile(
    r"\b(?:actually|wait|on (?:second|further) thought|on reflection|correction|scratch that|let me reconsider"
    r"|i mean|or rather|revised|changing my answer)\b|其实|不对|更正|再想想|等等|修正|改为|重新考虑",
    re.IGNORECASE,
)
#: A concession: an answer offered tentatively ("could be L4 at first sight", "A might fit") and then turned from
#: (:data:`TURN`) gives way to a different answer the reply asserts after the turn, unless that one is offered
#: tentatively too (:data:`HEDGING`: "could be L3, but L4 is also plausible" is a hedge).
TENTATIVE = re.compile(
    r"\b(?:could|might|may|seems?|looks?|appears?|at first|initially|on the surface|superficially|tempting|plausible|possible)\b"
    r"|乍看|初看|看起来|看似|似乎",
    re.IGNORECASE,
)
TURN = re.compile(r"\b(?:but|however|yet)\b|但是?|不过|然而", re.IGNORECASE)
HEDGING = re.compile(
    TENTATIVE.pattern
    + r"|\b(?:maybe|perhaps|possibl[ey]|plausible|also|either|not sure|unsure|uncertain)\b|可能|也许|或许",
    re.IGNORECASE,
)


# --- echoes of the prompt ----------------------------------------------------------------------

#: Key characters an echo must hold outside answers, by default (about three words; a CJK character counts twice).
ECHO_MIN_CHARS = 16
#: Key characters, outside answers, of a last line that breaks off inside a copy of the prompt.
CUT_OFF_MIN_CHARS = 3
# Dropped from keys: markdown emphasis and headings, zero-width characters.
_MARKUP = frozenset("*#`_~\u200b\u200c\u200d\u2060\ufeff")
# What may join answers kept at the start of an echo ("L4 (Perfectly Relevant)").
_ANSWER_JOINS = frozenset("()[]【】（）-–—")
_LETTER = re.compile(r"[^\W\d_]")
# Characters of each part on either side of the seam between two consecutive prompt parts.
_SEAM = 200
# Typographic quotes and dashes read as their ASCII forms: a model (or its detokenizer) that curls the prompt's
# "Levi's" or dashes its hyphens still copies it.
_TYPOGRAPHIC = {"\u2018": "'", "\u2019": "'", "\u201b": "'", "\u2032": "'", "\u201c": '"', "\u201d": '"'}
_TYPOGRAPHIC |= {"\u201e": '"', "\u2033": '"', "\u2010": "-", "\u2011": "-", "\u2013": "-", "\u2014": "-"}
_ASCII_DROPPED = frozenset(char for char in map(chr, range(128)) if char.isspace() or char in _MARKUP)
# Above this (reply key length x part key length), a suffix automaton of the part beats repeated searches.
_SEARCH_BUDGET = 4_000_000


@functools.lru_cache(maxsize=4096)
def _folded(char: str) -> str:
    """A non-ASCII character as a key holds it: NFKC, casefolded, a typographic quote or dash as ASCII."""
    return "".join(_TYPOGRAPHIC.get(c, c) for c in unicodedata.normalize("NFKC", char).casefold())


def _keyed(text: str) -> tuple[str, list[int]]:
    """``text`` as a key, and for each key character the index of the character it came from."""
    if text.isascii():  # most replies and prompts: one lower-case character per character, no NFKC needed
        lowered = text.lower()
        kept = [index for index, char in enumerate(lowered) if char not in _ASCII_DROPPED]
        return "".join([lowered[index] for index in kept]), kept
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        for folded in char.lower() if char.isascii() else _folded(char):
            if not folded.isspace() and folded not in _MARKUP:
                chars.append(folded)
                origin.append(index)
    return "".join(chars), origin


class _Part:
    """One prompt part's key, and every stretch of it a reply's key copies."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.key, self.origin = _keyed(text)

    @functools.cached_property
    def _automaton(self) -> _Automaton:
        return _Automaton(self.key)

    def matching(self, key: str) -> list[int]:
        """For each position of ``key``, the length of the longest stretch ending there that occurs here."""
        if len(key) * len(self.key) > _SEARCH_BUDGET:
            return self._automaton.matching(key)  # linear however long the reply
        # The longest such stretch starts no earlier than the one before it: two pointers, C-speed searches.
        lengths, start = [], 0
        for end in range(1, len(key) + 1):
            while key[start:end] not in self.key:
                start += 1
            lengths.append(end - start)
        return lengths

    def occurs(self, key: str) -> bool:
        """Whether ``key`` is a non-empty stretch of this part's key."""
        return bool(key) and key in self.key

    def breaks_off(self, key: str) -> bool:
        """Whether ``key`` occurs here and its first occurrence stops inside a word of the prompt (a letter
        or digit follows it without a space: ``Perfect|ly``, ``对于L2，|请``)."""
        if not self.occurs(key):
            return False
        at = self.origin[self.key.find(key) + len(key) - 1] + 1
        return at < len(self.text) and self.text[at].isalnum()


class _Automaton:
    """The suffix automaton of a key: every substring of it, recognised in linear time."""

    def __init__(self, key: str) -> None:
        self.next: list[dict[str, int]] = [{}]
        self.link = [-1]
        self.length = [0]
        last = 0
        for char in key:
            current = len(self.length)
            self.next.append({})
            self.link.append(0)
            self.length.append(self.length[last] + 1)
            state = last
            while state != -1 and char not in self.next[state]:
                self.next[state][char] = current
                state = self.link[state]
            if state != -1:
                target = self.next[state][char]
                if self.length[state] + 1 == self.length[target]:
                    self.link[current] = target
                else:
                    clone = len(self.length)
                    self.next.append(dict(self.next[target]))
                    self.link.append(self.link[target])
                    self.length.append(self.length[state] + 1)
                    while state != -1 and self.next[state].get(char) == target:
                        self.next[state][char] = clone
                        state = self.link[state]
                    self.link[target] = self.link[current] = clone
            last = current

    def matching(self, key: str) -> list[int]:
        """For each position of ``key``, the length of the longest stretch ending there that occurs here."""
        lengths = []
        state, length = 0, 0
        for char in key:
            while state and char not in self.next[state]:
                state = self.link[state]
                length = self.length[state]
            if char in self.next[state]:
                state = self.next[state][char]
                length += 1
            else:
                state, length = 0, 0
            lengths.append(length)
        return lengths


_part = functools.lru_cache(maxsize=256)(_Part)  # a run's fixed prompt parts recur in every reply


@dataclass(frozen=True)
class Echoes:
    """The spans of a reply that copy its prompt (start, end), in order."""

    text: str
    spans: tuple[tuple[int, int], ...]
    #: The prompt's parts the reply was compared with.
    prompt: tuple[str, ...] = ()

    @property
    def chars(self) -> int:
        return sum(end - start for start, end in self.spans)

    def covers(self, start: int, end: int) -> bool:
        """Whether the reply's characters ``start..end`` (whitespace and markdown aside) are all echo."""
        at = start  # walked from the last span opening at or before start (in order, they do not overlap)
        for index in range(max(bisect.bisect_right(self.spans, (start, end)) - 1, 0), len(self.spans)):
            first, last = self.spans[index]  # (by index: islice would step over every span before it)
            if first >= end:
                break
            if first > at and self._own(at, first):
                return False
            at = max(at, last)
        return at >= end or not self._own(at, end)

    def _own(self, start: int, end: int) -> bool:
        return any(not char.isspace() and char not in _MARKUP for char in self.text[start:end])

    def in_prompt(self, fragment: str) -> bool:
        """Whether ``fragment`` (spacing, markdown and case aside) occurs in the prompt."""
        key = _keyed(fragment)[0]
        return any(_part(part).occurs(key) for part in self.prompt)

    def joined(self, other: Echoes) -> Echoes:
        """These echoes and ``other``'s, found in two spellings of one reply (its characters in the same places),
        over ``other``'s text."""
        spans: list[tuple[int, int]] = []
        for start, end in sorted(self.spans + other.spans):
            if spans and start <= spans[-1][1]:
                spans[-1] = (spans[-1][0], max(spans[-1][1], end))
            else:
                spans.append((start, end))
        return Echoes(other.text, tuple(spans), other.prompt)

    def stripped(self) -> str:
        """The reply with every echo replaced by a line break (when it spanned lines) or a space."""
        parts, at = [], 0
        for start, end in self.spans:
            parts += [self.text[at:start], "\n" if "\n" in self.text[start:end] else " "]
            at = end
        parts.append(self.text[at:])
        return "".join(parts)


def _prompt_parts(prompt: str | Iterable[str | None] | None) -> list[str]:
    """The prompt's parts, and where one part meets the next (a copy runs on from the system message
    into the user message as the model saw them, one after the other)."""
    if prompt is None:
        return []
    parts = [prompt] if isinstance(prompt, str) else list(prompt)
    parts = list(dict.fromkeys(p for p in parts if p and p.strip()))
    seams = [f"{a[-_SEAM:]}\n{b[:_SEAM]}" for a, b in zip(parts, parts[1:])]
    return parts + seams


def find_echoes(
    reply: str,
    prompt: str | Iterable[str | None] | None,
    *,
    answers: re.Pattern[str] | None = None,
    min_chars: int = ECHO_MIN_CHARS,
    truncated: bool | None = None,
) -> Echoes:
    """The spans of ``reply`` that copy a part of ``prompt`` (see the module docstring).

    ``prompt``: the prompt's texts in the order sent (system message, user message, or fixed parts);
    an echo lies within one of them or runs on from one into the next. ``answers``: what the parser reads as
    an answer (kept whole, and not counted towards ``min_chars``). ``truncated``: the reply was stopped by a
    limit (None: unknown).
    """
    parts = tuple(_prompt_parts(prompt))
    keyed_parts = [_part(part) for part in parts]
    key, origin = _keyed(reply or "")
    if not key or not keyed_parts:
        return Echoes(reply or "", (), parts)
    size = len(key)
    # Which key characters belong to an answer, and each answer's key span.
    in_answer = [False] * size
    answer_spans: list[tuple[int, int]] = []
    if answers is not None:
        for match in answers.finditer(reply):
            first = bisect.bisect_left(origin, match.start())
            last = bisect.bisect_left(origin, match.end())
            if first < last:
                answer_spans.append((first, last))
                in_answer[first:last] = [True] * (last - first)
    outside = [0, *itertools.accumulate(not flag for flag in in_answer)]  # prefix counts outside answers
    # ... towards min_chars, a wide (CJK) character counts twice: a word is one or two of them, not five.
    wide = [
        0,
        *itertools.accumulate(not flag and unicodedata.east_asian_width(c) in "WF" for flag, c in zip(in_answer, key)),
    ]
    longest = [max(lengths) for lengths in zip(*(a.matching(key) for a in keyed_parts))]
    # Mark every long enough stretch (a difference array keeps long echoes linear).
    change = [0] * (size + 1)
    for end in range(1, size + 1):
        start = end - longest[end - 1]
        if start < end and outside[end] - outside[start] + wide[end] - wide[start] >= min_chars:
            change[start] += 1
            change[end] -= 1
    echo = [depth > 0 for depth in itertools.accumulate(change[:size])]
    _keep_answers_whole(echo, answer_spans)
    _keep_leading_answers(reply, origin, echo, in_answer, answer_spans)
    _mark_cut_off_line(reply, key, origin, echo, outside, keyed_parts, truncated)
    return Echoes(reply, _spans(reply, origin, echo), parts)


def strip_echoes(
    reply: str,
    prompt: str | Iterable[str | None] | None,
    *,
    answers: re.Pattern[str] | None = None,
    min_chars: int = ECHO_MIN_CHARS,
    truncated: bool | None = None,
) -> str:
    """``reply`` with every copy of ``prompt`` blanked out (see :func:`find_echoes`)."""
    return find_echoes(reply, prompt, answers=answers, min_chars=min_chars, truncated=truncated).stripped()


def _keep_answers_whole(echo: list[bool], answer_spans: list[tuple[int, int]]) -> None:
    """An answer only partly inside an echo is the model's own: the echo never cuts an answer."""
    for first, last in answer_spans:
        if not all(echo[first:last]):
            echo[first:last] = [False] * (last - first)


def flag_runs(flags: list[bool]) -> list[tuple[int, int]]:
    """The (start, end) of each run of True in ``flags``."""
    runs, at = [], 0
    for flag, group in itertools.groupby(flags):
        end = at + sum(1 for _ in group)
        if flag:
            runs.append((at, end))
        at = end
    return runs


def _keep_leading_answers(
    reply: str, origin: list[int], echo: list[bool], in_answer: list[bool], answer_spans: list[tuple[int, int]]
) -> None:
    """Answers opening an echo, after the model's own words on that line, when the rest holds none."""
    starts = {first: last for first, last in answer_spans}
    for start, end in flag_runs(echo):
        if start not in starts:
            continue
        line_start = reply.rfind("\n", 0, origin[start]) + 1
        if not _LETTER.search(reply[line_start : origin[start]]):
            continue
        kept = start
        while kept < end and (kept in starts or reply[origin[kept]] in _ANSWER_JOINS):
            kept = starts.get(kept, kept + 1)
        if any(in_answer[kept:end]):
            continue
        echo[start : min(kept, end)] = [False] * (min(kept, end) - start)


def _mark_cut_off_line(
    reply: str,
    key: str,
    origin: list[int],
    echo: list[bool],
    outside: list[int],
    keyed_parts: list[_Part],
    truncated: bool | None,
) -> None:
    """The last line, when it is a copy of the prompt that broke off (see the module docstring)."""
    last = len(key)
    line_start = reply.rfind("\n", 0, origin[last - 1]) + 1
    first = bisect.bisect_left(origin, line_start)
    if outside[last] - outside[first] < CUT_OFF_MIN_CHARS:
        return
    fragment = key[first:last]
    if any(p.breaks_off(fragment) for p in keyed_parts) or (truncated and any(p.occurs(fragment) for p in keyed_parts)):
        echo[first:last] = [True] * (last - first)


def _spans(reply: str, origin: list[int], echo: list[bool]) -> tuple[tuple[int, int], ...]:
    """Echo runs as spans of the reply, widened over the markdown around them (``**Valid Examples**``)."""
    spans: list[tuple[int, int]] = []
    for start, end in flag_runs(echo):
        begin, stop = origin[start], origin[end - 1] + 1
        while begin > 0 and reply[begin - 1] in _MARKUP:
            begin -= 1
        while stop < len(reply) and reply[stop] in _MARKUP:
            stop += 1
        if spans and begin <= spans[-1][1]:
            begin = spans[-1][0]
            spans.pop()
        spans.append((begin, stop))
    return tuple(spans)
