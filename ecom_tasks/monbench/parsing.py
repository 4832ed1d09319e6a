"""MonBench answer extraction: the requested tags (strictly, or as a careful human reads them), and where the
format was not followed, the answer a careful human reads (:func:`_other_tag`, :func:`_untagged`).

A reply is classified, never raised on: ``ok`` or one of the invalid statuses. The two readings
(``grader``, the careful default, and ``strict``, task version 2.0's) and Label+Content grading are
stated in ``ecom_tasks/monbench/README.md`` ("Parsing", "Label+Content grading"); which tags the
``grader`` reading takes for an echo of the prompt, in :func:`_answer_tags`.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ecom_tasks.data import ConfigurationError
from ecom_tasks.monbench.prompts import (
    ANSWER_TAG,
    FEWSHOT_HEADER,
    LABEL_TAG,
    OPEN_CONTENT_PLACEHOLDER,
    PREAMBLE,
    TASK_INSTRUCTIONS,
    VALID_EXAMPLES_HEADER,
    output_format_block,
)
from ecom_tasks.monbench.schema import LETTERS, RELATION_LABELS, RELATION_LABELS_ZH, TASKS
from ecom_tasks.scorers.replies import BOXED, CORRECTION, HEDGING, TENTATIVE, TURN, Echoes, answer_region, find_echoes


def _tag_pattern(tag: str, loose: bool = False) -> re.Pattern[str]:
    # ``loose`` (the grader reading) also takes a value on one line closed by a tag with a backslash or without
    # its slash, as small models write it ("<Label>B<\\Label>", "<Label>B<Label>"); not an opening tag whose
    # own value is closed ("<Answer>X (<Answer>Y</Answer></Answer>").
    close, reopen = rf"<\s*/\s*{tag}\s*>", rf"<\s*{tag}\s*>"
    value = (
        rf"(?:([^<\n]*?)(?:<\s*[/\\]\s*{tag}\s*>|{reopen}(?![^<]*{close}))|(.*?){close})" if loose else rf"(.*?){close}"
    )
    return re.compile(rf"<\s*{tag}\s*>{value}", re.IGNORECASE | re.DOTALL)


_LABEL = _tag_pattern(LABEL_TAG)
_ANSWER = _tag_pattern(ANSWER_TAG)
_LOOSE_LABEL = _tag_pattern(LABEL_TAG, loose=True)
_LOOSE_ANSWER = _tag_pattern(ANSWER_TAG, loose=True)
#: What the echo rule keeps whole and does not count as copied text: the answer tags.
_TAGS = re.compile(rf"<\s*({LABEL_TAG}|{ANSWER_TAG})\s*>.*?<\s*/\s*\1\s*>", re.IGNORECASE | re.DOTALL)
#: Copied text (outside tags) that makes a stretch an echo: the length of ``Valid Examples``, a little less.
ECHO_MIN_CHARS = 12

OK = "ok"
MISMATCH = "mismatch"
NO_TAG = "no_tag"
CONFLICTING_TAGS = "conflicting_tags"
OUT_OF_RANGE = "out_of_range"
UNKNOWN_CONTENT = "unknown_content"
#: A tag naming two options: a hedge (``A or B``), a letter whose text names another option, or
#: text matching several options (the ``strict`` reading calls the latter two ``unknown_content``).
AMBIGUOUS = "ambiguous"
UNCLOSED_THINK = "unclosed_think"
INVALID_STATUSES = (NO_TAG, CONFLICTING_TAGS, OUT_OF_RANGE, UNKNOWN_CONTENT, AMBIGUOUS, UNCLOSED_THINK)

GRADER = "grader"
STRICT = "strict"
#: The readings of a tag's value (see the module docstring); ``grader`` is the default.
PARSINGS = (GRADER, STRICT)


@dataclass(frozen=True)
class ParsedAnswer:
    position: int | None  # chosen displayed position (0 = A), None unless status is ok
    status: str
    detail: str = ""
    #: Label+Content only: both tags parsed and name different options.
    disagreement: bool = False
    #: Which reading decided (``letter``, ``option_letter``, ``letter_text``, ``text``, ``morphology``,
    #: ``prefix``, ``abbreviation``, ``label_explained``, ``text_explained``, ``corrected``, ``translated``,
    #: ``letter_for_text``, ``conceded``, ``other_tag``, ``untagged``); empty unless ok.
    rule: str = ""

    @property
    def invalid(self) -> bool:
        return self.status in INVALID_STATUSES


def _ok(position: int, rule: str) -> ParsedAnswer:
    return ParsedAnswer(position, OK, rule=rule)


def _invalid(status: str, detail: str) -> ParsedAnswer:
    return ParsedAnswer(None, status, detail)


_QUOTES = "\"'`\u201c\u201d\u2018\u2019\u00ab\u00bb"
_TRAILING = ".,;:!"
# A shown letter before the option text: "a. ", "a) ", "a: ", "(a) " (after casefolding).
_LETTER_PREFIX = re.compile(r"^(?:\(\s*([a-z])\s*\)[.:]?|([a-z])\s*[.):])\s*(\S.*)$", re.DOTALL)


def _trim(text: str, ends: str) -> str:
    """``text`` without surrounding whitespace or ``ends`` characters, nor trailing ``.,;:!``."""
    previous = None
    while text != previous:
        previous, text = text, text.strip().strip(ends).strip().rstrip(_TRAILING)
    return text


def _normalize(text: str) -> str:
    """NFKC, casefold, single spaces, no surrounding quotes nor trailing ``.,;:!``."""
    return _trim(" ".join(unicodedata.normalize("NFKC", text).casefold().split()), _QUOTES)


@functools.lru_cache(maxsize=8192)  # option texts recur in every run of a question
def _key(text: str) -> str:
    """What two contents must share to name the same option: the normal form without spaces."""
    return _normalize(text).replace(" ", "")


# --- the strict reading (task version 2.0) ---------------------------------------------------------


def _strict_letter(value: str, displayed: tuple[str, ...]) -> ParsedAnswer:
    """A ``<Label>`` value (stripped of spaces and parentheses, upper case) that must be a letter."""
    if value not in LETTERS:
        return _invalid(OUT_OF_RANGE, f"label {value!r} is not one of A-D")
    return _ok(LETTERS.index(value), "letter")


def _strict_match(value: str, displayed: tuple[str, ...]) -> ParsedAnswer:
    """The one displayed option ``value`` names: its text, optionally after its own letter."""
    keys = [_key(choice) for choice in displayed]
    whole = [i for i, key in enumerate(keys) if key == _key(value)]
    prefixed = None if whole else _LETTER_PREFIX.match(_normalize(value))
    rest = [i for i, key in enumerate(keys) if key == _key(prefixed.group(3))] if prefixed else []
    if len(whole or rest) > 1:
        return _invalid(UNKNOWN_CONTENT, f"answer {value[:80]!r} matches options {_letters(whole or rest)}")
    if whole:
        return _ok(whole[0], "text")
    if prefixed and rest:
        letter = (prefixed.group(1) or prefixed.group(2)).upper()
        if letter in LETTERS[: len(displayed)] and LETTERS.index(letter) == rest[0]:
            return _ok(rest[0], "letter_text")
        return _invalid(
            UNKNOWN_CONTENT, f"answer {value[:80]!r}: letter {letter} but the text is option {LETTERS[rest[0]]}"
        )
    return _invalid(UNKNOWN_CONTENT, f"answer {value[:80]!r} matches no option")


# --- the grader reading ------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+")
_MARKDOWN = "*_`#~"
# The letter, bare or dressed: "B", "(B)", "[B]", "B.", "B)", "**B**" (markdown is stripped first).
# (No two runs of spaces meet around an optional sign: a long run then fails in linear time, not quadratic.)
_BARE_LETTER = re.compile(r"^[(\[【]?\s*([a-d])\s*(?:[)\]】]\s*)?[.:)]?$", re.IGNORECASE)
# Words that introduce the answer inside its tag: "Option", "the answer is", "my answer is", "Prediction" (the
# paper's replies open with it), "Label" (the tag's name), "I choose", "I'd pick", "I think", "选项", "答案是", "我选".
_ANSWER_WORDS = (
    r"(?:(?:(?:the|my|our)\s+)?(?:correct\s+|best\s+|final\s+|right\s+)?"
    r"(?:option|choice|answer|letter|label|prediction)(?:\s+is)?"
    r"|i(?:\s+|'d\s+|\s+would\s+)(?:choose|pick|select|go\s+with|think|say)|(?:正确|最终)?(?:选项|答案|选择)(?:应该|应当)?(?:是|为)?|(?:我|应该|应当)?选择?)"
)
# A word naming the letter: "Option B", "the answer is (B)", "Choice: B", "Label: B", "选项B", "答案：B", "B项".
_OPTION_WORD = re.compile(
    rf"^{_ANSWER_WORDS}\s*(?:[:：]\s*)?(?:[(\[【]\s*)?([a-d])\s*[)\]】]?\s*(?:项)?"  # (spaces as in _BARE_LETTER)
    r"(?:$|\s*[.:：,，;；)\-–—]\s*|\s*(?=\()|\s+)(.*)$",
    re.IGNORECASE | re.DOTALL,
)
# The same words before an option's text, with a colon, "is" or a verb (not "Choice Hotels"): "Answer: Complement",
# "The answer is Complement", "I choose Complement", "答案：互补"; also a sentence stating the relation ("The
# relationship is Complement", "Relationship: Complement", "It is a Complement relationship": not in _ANSWER_WORDS,
# where "It is a" would be letter A), its article dropped (lower case: "Answer: A Complement" keeps its letter).
_ANSWER_LEAD_IN = re.compile(
    rf"^(?:{_ANSWER_WORDS}\s*(?:[:：]|(?<=\bis)(?=\s)|(?:(?<=choose)|(?<=pick)|(?<=select)|(?<=with)|(?<=think)|(?<=say))(?=\s)|(?<=[是为选择]))"
    r"|(?:th(?:e|is)\s+)?relation(?:ship)?(?:\s+type)?\s*[:：]"
    r"|(?:th(?:e|is)\s+relation(?:ship)?|it|this)\s+is(?:\s*[:：]|(?=\s))|it['’]s(?=\s))\s*(?:(?-i:an?|the)\s+)?(\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
_LETTER_ITEM = re.compile(r"^([a-d])\s*项$", re.IGNORECASE)
# The letter then a separator then text: "B. Complement", "(B) Complement", "B - ...", "B, not A", "B (互补)".
_LETTER_THEN_TEXT = re.compile(
    r"^(?:[(\[【]\s*([a-d])\s*[)\]】]|([a-d])(?=\s*[.:：,，;；。、！？)\-–—(]))\s*[.:：,，;；。、！？)\-–—]?\s*(\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
# A capital letter written against Chinese text, as a label's answer: "B比较合适", "C而不是B".
_LETTER_BEFORE_CJK = re.compile(r"^([A-D])(?=[\u3400-\u9fff])(.*)$", re.DOTALL)
# A capital letter standing alone (as _LETTER_REF finds it) or after Chinese text, not before it (so not "A字裙", an
# A-line skirt): "或C", "不是B".
_LETTER_IN_CJK = re.compile(r"(?<![A-Za-z0-9\u00c0-\u024f])([A-D])(?![^\W_])")
# A capital letter standing alone, as a reference to an option (not the article "A word").
_LETTER_REF = re.compile(r"(?<![^\W_])([A-D])(?![^\W_])")
# What rejects the mention that follows it: "not A", "rather than A", "instead of Substitute", "不是A".
_NEGATION = re.compile(
    r"(?:\bnot|n't|\brather\s+than|\binstead\s+of|\bother\s+than|\bover|\bexcept|不是|而不是|而非|非|并非|排除)"
    r"\s*(?:(?:an?|the)\s+)?(?:(?:option|choice|answer)\s*)?[(\[【\"'“‘]?\s*$",
    re.IGNORECASE,
)
# How far before a mention a rejection of it is looked for (a long reply is then read in linear time).
_NEGATION_REACH = 200


def _negated(text: str, at: int) -> bool:
    """Whether the mention at ``at`` is rejected by the words right before it ("not Substitute")."""
    return _NEGATION.search(text, max(0, at - _NEGATION_REACH), at) is not None


# A relation label in Chinese ("互补"), by the label's key; the full-width punctuation a Chinese answer ends with.
_TRANSLATED = {_key(label): frozenset(map(_key, names)) for label, names in RELATION_LABELS_ZH.items()}
_CJK_TRAILING = "。，；：！、"
# Option texts of the relation tasks are labels: their sets decide whether a question is open-answer.
_LABEL_SETS = {frozenset(_key(label) for label in labels) for labels in RELATION_LABELS.values()}


def _relation_labels(displayed: tuple[str, ...]) -> bool:
    """Whether the options shown are a relation task's labels (else an open-answer question's texts)."""
    return frozenset(_key(d) for d in displayed) in _LABEL_SETS


# What the output-format line shows as a tag's value, and the header of its examples.
_LABEL_PLACEHOLDER = _key("/".join(LETTERS))
_ANSWER_PLACEHOLDERS = {_key("/".join(labels)) for labels in RELATION_LABELS.values()} | {
    _key(OPEN_CONTENT_PLACEHOLDER)
}
_EXAMPLES_HEADER = re.compile(
    # ... also without its first word, as a paraphrased copy of the format block writes it ("Example:")
    r"^[\s*_#]*(?:" + re.escape(VALID_EXAMPLES_HEADER.strip("* ")).replace(r"\ ", r"\s*)?") + r"?[\s*_#:：]*$",
    re.IGNORECASE,
)


def _letters(positions: list[int] | set[int]) -> str:
    return ", ".join(LETTERS[i] for i in sorted(positions))


def _clean(value: str) -> str:
    """A tag's value without markdown emphasis, a LaTeX answer box, surrounding quotes and trailing punctuation
    (NFKC)."""
    value = unicodedata.normalize("NFKC", value)
    if boxed := BOXED.fullmatch(value.strip()):  # the whole value in the box
        value = boxed.group(1)
    return _trim(value, _MARKDOWN + _QUOTES)


def _words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


@functools.lru_cache(maxsize=1)
def _stemmers():
    # nltk's stemmers are pure code (no corpus download); imported only when a reply needs them.
    from nltk.stem.lancaster import LancasterStemmer
    from nltk.stem.snowball import SnowballStemmer

    return SnowballStemmer("english"), LancasterStemmer()


@functools.lru_cache(maxsize=8192)
def _stem_keys(text: str) -> tuple[str, str]:
    """The text's words stemmed and joined, once per stemmer (joined, so ``Exact Matches`` is
    ``ExactMatch``)."""
    words = _words(text)
    return tuple("".join(stemmer.stem(w) for w in words) for stemmer in _stemmers())  # type: ignore[return-value]


def _morphology(value: str, displayed: tuple[str, ...]) -> list[int]:
    # (every word stems to a letter or more: a value of more words than an option has letters is not stemmed)
    if not 0 < len(_words(value)) <= max((len(_key(d)) for d in displayed), default=0):
        return []
    keys = _stem_keys(value)
    return [i for i, d in enumerate(displayed) if any(a and a == b for a, b in zip(keys, _stem_keys(d)))]


def _abbreviates(answer: tuple[str, ...], option: tuple[str, ...]) -> bool:
    """``answer``'s words, in order, are words of ``option`` or their first letters (3 or more)."""
    at = 0
    for word in answer:
        while at < len(option) and not (option[at] == word or (len(word) >= 3 and option[at].startswith(word))):
            at += 1
        if at == len(option):
            return False
        at += 1
    return True


def _prefix(answer: tuple[str, ...], option: tuple[str, ...]) -> bool:
    """``answer`` is ``option``'s first words (the last one possibly cut: ``Noise Canc...``)."""
    n = len(answer)
    if not 0 < n <= len(option) or answer[:-1] != option[: n - 1]:
        return False
    last, full = answer[-1], option[n - 1]
    return last == full or (len(last) >= 3 and full.startswith(last))


def _resolve_text(value: str, displayed: tuple[str, ...], *, partial: bool) -> tuple[list[int], str]:
    """The options ``value`` names as text, by the first reading that names any: the normalised text,
    then its stem; with ``partial`` (open-answer options) a word prefix, then an abbreviation."""
    key = _key(value)
    if not key:
        return [], ""
    whole = [i for i, d in enumerate(displayed) if _key(d) == key]
    if whole:
        return whole, "text"
    translated = [i for i, d in enumerate(displayed) if key.rstrip(_CJK_TRAILING) in _TRANSLATED.get(_key(d), ())]
    if translated:
        return translated, "translated"
    stems = _morphology(value, displayed)
    if stems:
        return stems, "morphology"
    if partial:
        answer = _words(value)
        if answer:
            options = [_words(d) for d in displayed]
            # A prefix names its option (``Sony``, ``Bassetts Liquorice Allsorts``, ``Gold Fish Cr...``,
            # compared with and without spaces); two or more words also abbreviate (``Liquorice
            # Allsorts``). Any other option the words abbreviate makes it ambiguous (``Noise``).
            prefixed = {
                i
                for i, (o, d) in enumerate(zip(options, displayed))
                if _prefix(answer, o) or (len(key) >= 3 and _key(d).startswith(key))
            }
            shortened = {i for i, o in enumerate(options) if _abbreviates(answer, o)}
            if prefixed or (shortened and len(answer) >= 2):
                return sorted(prefixed | shortened), "prefix" if prefixed else "abbreviation"
    return [], ""


_ARTICLE_WORD = re.compile(r"\s+[^\W\d_]")
_ARTICLE_JOINED = re.compile(r"\s+(?:or|and|is)\b")


def _unnegated_letters(text: str, pattern: re.Pattern[str] = _LETTER_REF) -> set[int]:
    """Option letters ``text`` points to without rejecting them (``or A`` does, ``not A`` does not)."""
    found = set()
    for m in pattern.finditer(text):
        if m.group(1) == "A" and _ARTICLE_WORD.match(text, m.end()) and not _ARTICLE_JOINED.match(text, m.end()):
            continue  # the article: "A complementary product"
        if not _negated(text, m.start()):
            found.add(LETTERS.index(m.group(1)))
    return found


def _unnegated_labels(text: str, displayed: tuple[str, ...], *, open_answer: bool = False) -> set[int]:
    """Options named in ``text`` without being rejected (``not Substitute`` rejects), from each word by the
    longest run of words that names one: a relation label in one or two words ("Exact Match"); an open-answer
    option by its whole text, or, in two words or more, a prefix or abbreviation ("SweetLeaf Sweetener")."""
    found = set()
    words = list(_WORD.finditer(unicodedata.normalize("NFKC", text)))
    longest = max(len(_words(d)) for d in displayed) if open_answer else 2
    start = 0
    while start < len(words):
        for end in range(min(len(words), start + longest), start, -1):
            window = text[words[start].start() : words[end - 1].end()]
            hits, _ = _resolve_text(window, displayed, partial=open_answer and end - start >= 2)
            if len(hits) == 1:
                if not _negated(text, words[start].start()):
                    found.add(hits[0])
                start = end - 1  # a mention is read once: "not SweetLeaf Sweetener" rejects all of it
                break
        start += 1
    return found


# Where an explanation may start after an open-answer option's full text (its closing brackets and quotes
# kept with it): a separator ("Running shoes, because ...", "Running shoes. The query ...") or a joining
# word ("Running shoes because ...", "Running shoes not hiking boots", "Running shoes or hiking boots").
_EXPLANATION = re.compile(
    r"[)\]）】\"'”’]*(?=\s*[,.;:!?/(\[（【，。；：—–]|\s+-\s|"
    r"\s+(?:because|since|as|so|or|not|rather|instead|which|given|due)\b)",
    re.IGNORECASE,
)
# An explanation that offers another answer: "Running shoes or hiking boots", "... (or SweetLeaf)", ".../...".
_ANOTHER_ANSWER = re.compile(r"[\s,;(\[]*(?:or\b|/)", re.IGNORECASE)
#: Words of an explanation read for the options it names; a longer one is not read as an explained option.
EXPLANATION_MAX_WORDS = 60


def _explained_label(value: str, displayed: tuple[str, ...], *, open_answer: bool = False) -> tuple[int | None, str]:
    """An option at the start of ``value`` followed by an explanation: a relation label (its first two or one
    words), or an open-answer option's full text before a separator or joining word (:data:`_EXPLANATION`,
    the longest first: an option that starts a longer one is not the longer one). The option, unless the
    explanation names another without rejecting it or offers another answer (a hedge); an open-answer
    option's explanation holds no correction (:func:`_corrected` reads one that names an option)."""
    words = list(_WORD.finditer(value))
    if open_answer:
        # Only as many words as an option has (and a few, for spacing), and an explanation short enough to read.
        reach = max(len(_words(d)) for d in displayed) + 3
        too_long = len(words) > reach + EXPLANATION_MAX_WORDS
        heads = (
            [] if too_long else [m.end() for w in reversed(words[:reach]) if (m := _EXPLANATION.match(value, w.end()))]
        )
    else:
        heads = [words[length - 1].end() for length in (2, 1) if len(words) > length]
    for end in heads:
        hits, _ = _resolve_text(value[:end], displayed, partial=False)
        if len(hits) > 1 and open_answer:
            return None, f"{value[:80]!r} starts with options {_letters(hits)}"
        if len(hits) == 1:
            rest = value[end:]
            if open_answer and CORRECTION.search(rest):
                return None, ""  # "red shoes — correction: purple shoes": corrected to no option
            others = _unnegated_labels(rest, displayed, open_answer=open_answer) - {hits[0]}
            if others:
                return None, f"{value[:80]!r} names {_letters({hits[0], *others})}"
            if open_answer and _ANOTHER_ANSWER.match(rest):
                return None, f"{value[:80]!r} offers another answer after option {LETTERS[hits[0]]}"
            return hits[0], ""
    return None, ""


@functools.lru_cache(maxsize=16)  # a letter's text is named to decide it is one, then read (_spaced_letter)
def _named(value: str, displayed: tuple[str, ...]) -> tuple[list[int], str, str]:
    """The options ``value`` names as text (open-answer options: also partly), or an option's text followed
    by an explanation (:func:`_explained_label`), the rule that found them, and why it names two ("" unless
    it does)."""
    label_set = _relation_labels(displayed)
    named, rule = _resolve_text(value, displayed, partial=not label_set)
    if named:
        return named, rule, ""
    explained, problem = _explained_label(value, displayed, open_answer=not label_set)
    if explained is None:
        return [], "", problem
    return [explained], "label_explained" if label_set else "text_explained", ""


def _split_letter(value: str) -> tuple[str, str] | None:
    """``(letter, rest)`` when ``value`` names an option letter: bare, dressed or followed by text."""
    for pattern in (_BARE_LETTER, _LETTER_ITEM, _OPTION_WORD, _LETTER_THEN_TEXT):
        if m := pattern.match(value):
            letter = next(group for group in m.groups() if group)  # the first group that took part
            rest = m.group(pattern.groups) if pattern.groups > 1 else ""  # the text after it: the last group
            return letter.upper(), rest.strip()
    return None


# An upper-case letter, blanks, then text: "B Complement".
_LETTER_SPACE_TEXT = re.compile(r"^([A-D])\s+(\S.*)$", re.DOTALL)


def _spaced_letter(value: str, displayed: tuple[str, ...]) -> tuple[str, str] | None:
    """``(letter, rest)`` of a letter followed by an option's text with no sign between ("B Complement"); an "A" may
    be an article ("A good fit", "A Complement"), so it is a letter only before its own option's text."""
    if not (m := _LETTER_SPACE_TEXT.match(value)) or not (named := _named(_letter_rest(m.group(2)), displayed)[0]):
        return None
    return None if m.group(1) == "A" and named != [0] else (m.group(1), m.group(2))


def _letter_before_cjk(value: str) -> tuple[str, str] | None:
    """``(letter, rest)`` of a label's letter written against Chinese text ("B比较合适")."""
    return (m.group(1), m.group(2)) if (m := _LETTER_BEFORE_CJK.match(value)) else None


def _letter_rest(rest: str) -> str:
    """The text after an option letter as it is read: without its brackets (``B (Complement)``), cleaned."""
    return _clean(rest.strip("()[]【】（）")) if rest else ""


def _letter_with_text(letter: str, rest: str, displayed: tuple[str, ...], *, content: bool) -> ParsedAnswer:
    """An option letter followed by ``rest``: the letter, unless the text names another option or hedges.
    In ``<Answer>`` (``content``) the text itself must name the letter's option."""
    position = LETTERS.index(letter)
    rest = _letter_rest(rest)
    if not rest:  # (a letter where the option's text was asked names its option as clearly)
        return _ok(position, "letter_for_text" if content else "letter")
    named, rule, problem = _named(rest, displayed)
    if problem:
        return _invalid(AMBIGUOUS, problem)
    if named:
        if set(named) == {position}:
            return _ok(position, "letter_text")
        return _invalid(AMBIGUOUS, f"letter {letter} but the text names {_letters(named)}")
    if content:
        return _invalid(UNKNOWN_CONTENT, f"answer {letter}. {rest[:80]!r}: the text matches no option")
    hedged = _unnegated_letters(rest, _LETTER_IN_CJK) - {position}
    if hedged:
        return _invalid(AMBIGUOUS, f"label {letter} hedged towards {_letters(hedged)}")
    return _ok(position, "option_letter")


# What may stand between a correction cue and the corrected answer: "A, actually B", "A (wait, no: C)",
# "red shoes — correction: blue shoes", "A. Wait, actually B".
_CORRECTION_FILLER = re.compile(
    r"(?:[\s,.;:!?\-–—(\[（【，；：]+|(?:no|nope|sorry|that'?s\s+wrong|it'?s|it\s+is)\b)+", re.IGNORECASE
)
# Readings that take free text after the answer: a correction cue inside that text is part of the explanation
# ("B, as the second query is actually narrowing" stays B).
_EXPLAINED_RULES = ("option_letter", "label_explained", "text_explained", "corrected")
#: Correction cues a tag value may hold and still be read as corrected.
MAX_CORRECTIONS = 5
# A letter beyond the options' (upper case: not "I think"), alone before punctuation or the end: "E", "(E)", "E, ...";
# or one word alone, as an answer is given ("Substitute, actually Compliment": a word of no option), not a word that
# keeps the answer ("A, actually yes").
_OTHER_LETTER = re.compile(r"[(\[【]?([E-Z])(?=$|[,.;:!?)\]】])")
_OTHER_WORD = re.compile(
    r"(?!(?:yes|yeah|yep|right|correct|sure|indeed|fine|ok|okay)\W*$)([^\W\d_]{2,})[.!]?$", re.IGNORECASE
)


def _corrected(
    value: str, displayed: tuple[str, ...], read: Callable[[str, tuple[str, ...]], ParsedAnswer]
) -> ParsedAnswer | None:
    """A bare answer corrected inside its own value (a cue of
    :data:`~ecom_tasks.scorers.replies.CORRECTION` right after it): the corrected answer, read by ``read``, or
    the invalid reading of a letter of no option it is corrected to; None when there is no such correction or
    it names nothing readable (the value is then read whole), or when the value holds more than
    :data:`MAX_CORRECTIONS` cues (no reading of a value that corrects itself thousands of times, nor a
    recursion as deep)."""
    # (An underscore is emphasis here, yet a word character: "wait_" hides no cue from the count, or a run of them,
    # each exposed in turn by _clean, recursed once per cue.)
    marked = value.replace("_", " ")
    cues = list(itertools.islice(CORRECTION.finditer(marked), MAX_CORRECTIONS + 1))
    if not cues:
        return None
    head = value[: cues[0].start()].rstrip(" \t\n,.;:!?-–—([（【，；：")
    if head.strip(_MARKDOWN + " "):  # (a cue opening the value corrects the reasoning before the tag: "Actually B")
        before = read(head, displayed)  # (the head holds no cue: no recursion)
        if before.status != OK or before.rule in _EXPLAINED_RULES:
            return None
    at = cues[0].end()  # (positions, not slices: a run of thousands of cues is skipped in linear time)
    # a further cue: "wait, actually B"
    while m := _CORRECTION_FILLER.match(marked, at) or CORRECTION.match(marked, at):
        at = m.end()
    rest = value[at:]
    if rest.count(")") > rest.count("("):  # the bracket the correction opened before its cue
        rest = rest.rstrip(")]）】 ")
    if len(cues) <= MAX_CORRECTIONS and rest.strip() and (after := read(rest, displayed)).status == OK:
        return _ok(after.position, "corrected")  # type: ignore[arg-type]
    # "A, actually E": the answer withdrawn for a letter or a word of no option, invalid as "<Label>E</Label>" is
    # (also past the guard: no further reading is needed). Any other unreadable correction leaves the value read whole.
    other = _OTHER_LETTER.match(rest) or _OTHER_WORD.match(rest.strip())
    return read(other.group(1), displayed) if other else None


#: Characters after the turn read for the answer a concession turns to (it follows the turn closely).
CONCEDED_MAX_CHARS = 120
_SENTENCE_END = re.compile(r"[.;!?。；！？\n](?:\s|$)")
# Where the first clause of a value ends: punctuation, or a reason ("B, because it could ...": the answer came first).
_CLAUSE_BREAK = re.compile(r"[,.;:!?，。；：！？\n]|\b(?:because|since|as)\b", re.IGNORECASE)


@functools.lru_cache(maxsize=16)  # a value is read as a label, then as a content (_read_either)
def _conceded(value: str, displayed: tuple[str, ...]) -> ParsedAnswer | None:
    """A value that opens tentatively and turns (:data:`~ecom_tasks.scorers.replies.TENTATIVE` in its first clause,
    then a :data:`~ecom_tasks.scorers.replies.TURN`): "It could be A at first sight, but on balance: B", "Substitute
    might fit, but it is a Complement". The one option the text after the turn names, unless that text is tentative
    too (a hedge: "..., but B is also plausible"); else None. Read only where the value gives no answer otherwise."""
    turn = TURN.search(value, 0, UNTAGGED_MAX_CHARS)
    if turn is None:
        return None
    head, rest = value[: turn.start()], value[turn.end() : turn.end() + CONCEDED_MAX_CHARS]
    if end := _SENTENCE_END.search(rest):  # the answer turned to is in the turn's sentence
        rest = rest[: end.start()]
    first_clause = _CLAUSE_BREAK.search(head)
    if not TENTATIVE.search(head, 0, first_clause.start() if first_clause else len(head)) or HEDGING.search(rest):
        return None
    named = _unnegated_letters(rest) | _unnegated_labels(rest, displayed, open_answer=not _relation_labels(displayed))
    return _ok(named.pop(), "conceded") if len(named) == 1 else None


def _read_label(value: str, displayed: tuple[str, ...]) -> ParsedAnswer:
    reading = _label_value(value, displayed)
    return reading if reading.status == OK else _conceded(_clean(value), displayed) or reading


def _label_value(value: str, displayed: tuple[str, ...]) -> ParsedAnswer:
    cleaned = _clean(value)
    if corrected := _corrected(cleaned, displayed, _read_label):
        return corrected
    split = _split_letter(cleaned)
    if split and not split[1]:
        return _ok(LETTERS.index(split[0]), "letter")
    # An option's whole text (also one that starts like a letter: "A. O. Smith ...").
    named, rule = _resolve_text(cleaned, displayed, partial=False)
    if len(named) == 1:
        return _ok(named[0], rule)
    if named:
        return _invalid(AMBIGUOUS, f"label {cleaned[:80]!r} matches options {_letters(named)}")
    if split := split or _spaced_letter(cleaned, displayed) or _letter_before_cjk(cleaned):
        return _letter_with_text(*split, displayed, content=False)
    letters = {m.group(1).upper() for m in re.finditer(r"(?<![^\W_])([a-dA-D])(?![^\W_])", cleaned)}
    if len(letters) > 1:
        return _invalid(AMBIGUOUS, f"label {cleaned[:80]!r} names {', '.join(sorted(letters))}")
    return _invalid(OUT_OF_RANGE, f"label {cleaned[:80]!r} is not one of A-D")


def _read_content(value: str, displayed: tuple[str, ...], *, lead_in: bool = True) -> ParsedAnswer:
    """An ``<Answer>`` value: an option's text (or letter and text); ``lead_in``: also the text after answer
    words ("Answer: Complement"), once; else a concession's answer (:func:`_conceded`)."""
    reading = _content_value(value, displayed, lead_in=lead_in)
    return reading if reading.status == OK else _conceded(_clean(value), displayed) or reading


def _content_value(value: str, displayed: tuple[str, ...], *, lead_in: bool) -> ParsedAnswer:
    cleaned = _clean(value)
    if corrected := _corrected(cleaned, displayed, _read_content):
        return corrected
    named, rule = _resolve_text(cleaned, displayed, partial=False)
    words = _ANSWER_LEAD_IN.match(cleaned) if lead_in and not named else None
    # "Answer: Complement": the text after the words (once: "Answer: " x 5000 is no deep recursion), read before a
    # letter when it names an option ("The answer is a Complement": the article is no letter A)
    after_words = _read_content(words.group(1), displayed, lead_in=False) if words else None
    if after_words and after_words.status == OK:
        return after_words
    if not named:
        split = _split_letter(cleaned) or _spaced_letter(cleaned, displayed)
        if split:
            return _letter_with_text(*split, displayed, content=True)
        named, rule, problem = _named(cleaned, displayed)
        if problem:
            return _invalid(AMBIGUOUS, problem)
    if len(named) == 1:
        return _ok(named[0], rule)
    if named:
        return _invalid(AMBIGUOUS, f"answer {cleaned[:80]!r} matches options {_letters(named)}")
    if after_words:
        return after_words
    return _invalid(UNKNOWN_CONTENT, f"answer {cleaned[:80]!r} matches no option")


# A tag the reply rules out: "Not <Label>A</Label> but <Label>B</Label>", "<Label>B</Label>, not <Label>A</Label>".
_NEGATED_TAG = re.compile(r"(?:\b(?:not|rather than|instead of)|不是|而非)[\s*_`\"'(]*$", re.IGNORECASE)


def _answer_tags(text: str, displayed: tuple[str, ...], echoes: Echoes | None = None) -> tuple[list[str], list[str]]:
    """The values of the ``<Label>`` and ``<Answer>`` tags that are not an echo of the prompt: tags
    inside ``echoes``, placeholder values (``A/B/C/D``), an ``<Answer>`` copied from the prompt that
    names none of the options shown (another question's example), a tag beside either on its line,
    and the valid example after a ``Valid Examples`` header (with the tags beside it on its line). A tag after a
    correction (:data:`~ecom_tasks.scorers.replies.CORRECTION`) supersedes the tags of its kind before it; a tag
    right after "not" is ruled out."""
    labels: list[str] = []
    answers: list[str] = []
    # Each kind found on its own (as in the strict reading), then read in reply order.
    tags = sorted(
        [*(("label", m) for m in _LOOSE_LABEL.finditer(text)), *(("answer", m) for m in _LOOSE_ANSWER.finditer(text))],
        key=lambda tag: tag[1].start(),
    )
    values = [m.group(1) if m.group(1) is not None else m.group(2) for _, m in tags]
    copied_format = [
        (_key(value) == _LABEL_PLACEHOLDER if kind == "label" else _key(value) in _ANSWER_PLACEHOLDERS)
        or (
            kind == "answer"
            and echoes is not None
            and echoes.in_prompt(m.group(0))
            and _read_content(value, displayed).status != OK
        )
        for (kind, m), value in zip(tags, values)
    ]
    # blank[i]: only spaces and markdown, on one line, between tag i - 1 and tag i
    blank = [False, *(not text[a.end() : b.start()].strip(" \t" + _MARKDOWN) for (_, a), (_, b) in zip(tags, tags[1:]))]
    echo = False
    kept_end = {"label": 0, "answer": 0}  # where the last tag read of each kind ends
    for index, (kind, m) in enumerate(tags):
        before = text[tags[index - 1][1].end() if index else 0 : m.start()].rstrip()
        line_before = before[before.rfind("\n") + 1 :]
        echo = (
            copied_format[index]
            or (blank[index] and echo)  # beside a copied tag, or next on the line after an echoed one
            or (index + 1 < len(tags) and copied_format[index + 1] and blank[index + 1])
            or (echoes is not None and echoes.covers(m.start(), m.end()))
            or bool(_EXAMPLES_HEADER.match(line_before))  # the example a copied format shows
        )
        if not echo and not _NEGATED_TAG.search(line_before):
            read = labels if kind == "label" else answers
            if read and CORRECTION.search(text, kept_end[kind], m.start()):
                read.clear()  # "<Label>A</Label> Wait, that's wrong. <Label>B</Label>": the correction stands
            read.append(values[index])
            kept_end[kind] = m.end()
    return labels, answers


def _combine(readings: list[ParsedAnswer], tag: str) -> ParsedAnswer:
    """One answer from every tag of a kind: repeats of one option count once."""
    if not readings:
        return _invalid(NO_TAG, f"{NO_TAG} <{tag}>")
    if len(readings) == 1 or (all(r.status == OK for r in readings) and len({r.position for r in readings}) == 1):
        return readings[0]  # e.g. "<Answer>B. Complement</Answer> ... <Answer>Complement</Answer>"
    return _invalid(CONFLICTING_TAGS, f"{CONFLICTING_TAGS} <{tag}>")


# An answer stated outside the tags: "Answer: B", "**Final answer:** Complement", "Prediction: B Explanation: ..."
# (the paper's replies), "So the answer is B.", '{"label": "B"}', "答案：B", "我选择B"; the value runs to the end of its line.
_STATED = re.compile(
    r"(?<![^\W_])(?:(?:final|correct|best|right)\s+)?(?:answer|label|prediction|choice)[\"']?"
    r"(?:\s*[:：=]|\s+(?:is|would\s+be|will\s+be)(?![^\W_]))[\s\"']*(\S[^\n]*)"
    r"|(?:最终|正确)?(?:答案|选项|选择|预测)\s*(?:(?:应该|应当|应)\s*)?(?:是|为|[:：])\s*(\S[^\n]*)"
    # "我选择B", "应该选B", "我认为是B", "我觉得选B", "选B，因为 ..." (not "不应该是B": a negation)
    r"|(?:(?<![不非没])(?:我(?:会|想|认为|觉得|倾向于)?(?:\s*(?:应该|应当))?|应该|应当)|^)\s*(?:选择?(?!项)|(?<=[为得该当])是)"
    r"\s*(\S[^\n]*)"
    r"|(?<![^\W_])i(?:\s+|'d\s+|\s+would\s+)(?:think|believe|say|choose|pick|select|go\s+with)"
    r"\s+(?:(?:it|this)\s+is\s+|it's\s+)?(\S[^\n]*)",
    re.IGNORECASE,
)
# Where a stated answer's explanation starts ("B Explanation: ...", "B. The query ...", "Complement because ...").
_STATED_END = re.compile(r"[.;!?。；！？](?:\s|$)|\s+(?=(?:explanation|reason(?:ing)?|because|since|as)\b)", re.I)
#: Characters of a line read for an untagged answer (a longer line: its end, where a stated answer stands).
UNTAGGED_MAX_CHARS = 300


def _read_either(value: str, displayed: tuple[str, ...]) -> ParsedAnswer:
    """A value read as a label, else as a content: untagged, either is what the model chose."""
    label = _read_label(value, displayed)
    if label.status == OK:
        return label
    content = _read_content(value, displayed)
    return label if content.status != OK and label.status == AMBIGUOUS else content  # (a hedge stays one)


def _stated_answer(value: str, displayed: tuple[str, ...]) -> ParsedAnswer:
    """The answer a stated value gives: the whole value, else its head before an explanation."""
    value = value[:UNTAGGED_MAX_CHARS].strip(" \"'{}[],")
    read = _read_either(value, displayed)
    if read.status != OK and (end := _STATED_END.search(value)):
        head = _read_either(value[: end.start()], displayed)
        return head if head.status == OK else read
    return read


def _untagged(text: str, displayed: tuple[str, ...], echoes: Echoes, truncated: bool | None) -> ParsedAnswer:
    """The answer a reply without any tag read gives outside tags, as a careful human reads it: the stated answers
    ("Answer: B"; a correction between two supersedes the first), else the lines that are nothing but an answer
    ("B", "Complementary", "互补"), else a one-line reply read as a tag's value would be ("B, because ...").
    Several options named are ``ambiguous``, none ``no_tag``. Not read: a line wholly copied from the prompt (an
    option line, even as the whole reply: a copy), the letter that goes on a listing of options, the tags (all
    unread ones), the last line of a reply the limit cut."""
    own = _tags_blanked(text).translate(_NO_EMPHASIS)
    spans = [m.span() for m in _LINE.finditer(own)]
    if truncated and spans:
        spans.pop()
    lines = [
        own[a:b][-UNTAGGED_MAX_CHARS:]
        for index, (a, b) in enumerate(spans)
        if not echoes.covers(a, b) and not (index and _listed(own[slice(*spans[index - 1])], own[a:b]))
    ]
    stated: list[ParsedAnswer] = []
    read: dict[str, ParsedAnswer] = {}  # (a value repeated on thousands of lines is read once)
    for line in lines:
        for m in _STATED.finditer(line):
            if stated and CORRECTION.search(line, 0, m.start()):
                stated.clear()  # "Answer: A. Wait, actually the answer is B."
            value = next(group for group in m.groups() if group)
            stated.append(read.get(value) or read.setdefault(value, _stated_answer(value, displayed)))
    readings = [r for r in stated if r.status in (OK, AMBIGUOUS)]
    if not readings:
        readings = [r for line in dict.fromkeys(lines) if (r := _whole_answer(line, displayed))]
    if not readings and len(lines) == 1:
        readings = [r for r in [_read_either(lines[0], displayed)] if r.status in (OK, AMBIGUOUS)]
    positions = {r.position for r in readings}
    if not readings:
        return _invalid(NO_TAG, "no tag, and no answer stated outside one")
    if len(positions) > 1 or None in positions:
        named = {p for p in positions if p is not None}
        return _invalid(AMBIGUOUS, f"untagged answers name {_letters(named)}" if named else readings[0].detail)
    return _ok(readings[0].position, "untagged")  # type: ignore[arg-type]


def _whole_answer(line: str, displayed: tuple[str, ...]) -> ParsedAnswer | None:
    """``line`` as nothing but an answer: an option's text or a letter, dressed ("Complementary", "互补", "B",
    "Option B"); None for anything more. (A letter with its option's text is the shape of the prompt's option lines,
    which a copy cut off or garbled leaves uncovered: "A. <text>" counts only stated, "Answer: A. <text>".)"""
    cleaned = _clean(line)
    if len(cleaned) > UNTAGGED_MAX_CHARS:
        return None
    named, _ = _resolve_text(cleaned, displayed, partial=False)
    split = None if named else _split_letter(cleaned)
    if len(named) == 1 or (split and not split[1]):
        return _ok(named[0] if named else LETTERS.index(split[0]), "untagged")  # type: ignore[index]
    return None


# An option line of a listing ("B. Everything ...", "Options:"), and the letter that starts the next one ("C.").
_LISTED = re.compile(r"^\s*(?:([A-C])\s*[.)]\s+\S|options\s*[:：]?\s*$)", re.IGNORECASE)
_NEXT_ITEM = re.compile(r"^\s*([a-d])\s*[.)]?\s*$", re.IGNORECASE)


def _listed(previous: str, line: str) -> bool:
    """Whether ``line`` is the letter of the option after ``previous``'s in a listing being copied ("B. ..." then
    "C." cut off; "Options:" then "A."), not a letter the model answers with."""
    listed, item = _LISTED.match(previous), _NEXT_ITEM.match(line)
    if not (listed and item):
        return False
    return LETTERS.index(item.group(1).upper()) == (
        LETTERS.index(listed.group(1).upper()) + 1 if listed.group(1) else 0
    )


# An opening tag never closed, and a closing tag broken off at the end of its line ("<Label>B</Lab").
_TAG_DEBRIS = re.compile(
    rf"<\s*(?:{LABEL_TAG}|{ANSWER_TAG})\s*>|<\s*/\s*(?:l(?:a(?:b(?:el?)?)?)?|a(?:n(?:s(?:w(?:er?)?)?)?)?)?\s*>?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_LINE = re.compile(r"[^\n]*\S[^\n]*")
_NO_EMPHASIS = str.maketrans({"*": " ", "`": " "})


def _without_unclosed_tags(text: str) -> str:
    """``text`` with each opening tag that is never closed, and a closing tag broken off at the end of its line,
    blanked: the reply then reads as it would without them ("<Label>B" as "B"; "<Answer>Compl", cut off, as "Compl",
    a cut copy of the prompt's option)."""
    pieces, at = [], 0
    for m in _TAG_DEBRIS.finditer(_tags_blanked(text)):
        pieces += [text[at : m.start()], " " * (m.end() - m.start())]
        at = m.end()
    return "".join(pieces) + text[at:] if pieces else text


def _tags_blanked(text: str) -> str:
    """``text`` with every tag it closes (as the careful reading finds them) blanked in place."""
    return _LOOSE_ANSWER.sub(_blanked, _LOOSE_LABEL.sub(_blanked, text))


def _blanked(match: re.Match[str]) -> str:
    """A match blanked in place (its line breaks kept: offsets stay those of the echoes)."""
    return re.sub(r"[^\n]", " ", match.group(0))


def _other_tag(values: list[str], displayed: tuple[str, ...], tag: str) -> ParsedAnswer:
    """The answer of the tags of the kind the format did not ask for ("<Answer>Complement</Answer>" where the label
    was asked): each read as a value of either kind."""
    combined = _combine([_read_either(v, displayed) for v in dict.fromkeys(values)], tag)
    return _ok(combined.position, "other_tag") if combined.status == OK else combined  # type: ignore[arg-type]


@functools.lru_cache(maxsize=8)
def fixed_prompt_parts(fmt: str) -> tuple[str, ...]:
    """The fixed text of every MonBench prompt in format ``fmt`` (preamble and instruction, output format
    block and few-shot header of every task): what a reply is compared with when the caller does not
    pass the prompt it sent."""
    return (
        *(f"{PREAMBLE} {TASK_INSTRUCTIONS[task]}" for task in TASKS),
        *(output_format_block(task, fmt) for task in TASKS),
        FEWSHOT_HEADER,
    )


def parse_reply(
    completion: str | None,
    fmt: str,
    displayed: tuple[str, ...] | list[str],
    *,
    strict: bool = False,
    parsing: str = GRADER,
    prompt: Iterable[str | None] | str | None = None,
    truncated: bool | None = None,
) -> ParsedAnswer:
    """Classify a model reply for one item shown with options ``displayed``.

    ``parsing``: what a tag may hold (``grader`` or ``strict``, see the module docstring).
    ``strict`` only affects Label+Content: both tags must parse and agree.
    ``prompt``: the texts the model was sent (system and user message; default: the fixed parts of
    every prompt in ``fmt``); the ``grader`` reading reads no tag the reply copies from them.
    ``truncated``: the reply was stopped by the output limit (None: unknown).
    """
    if fmt not in ("label", "content", "label_content"):
        raise ValueError(f"unknown format {fmt!r}")
    if parsing not in PARSINGS:
        raise ConfigurationError(f"MonBench parsing must be one of {', '.join(PARSINGS)}, got {parsing!r}")
    text = answer_region(completion)
    if text is None:
        return _invalid(UNCLOSED_THINK, "<think> is never closed (reply cut off while reasoning)")
    displayed = tuple(displayed)
    read_label: Callable[[str, tuple[str, ...]], ParsedAnswer]
    read_content: Callable[[str, tuple[str, ...]], ParsedAnswer]
    if parsing == GRADER:
        sent = fixed_prompt_parts(fmt) if prompt is None else prompt
        echoes = find_echoes(text, sent, answers=_TAGS, min_chars=ECHO_MIN_CHARS, truncated=truncated)
        if (unbroken := _without_unclosed_tags(text)) is not text:
            # read without its broken tags; a copy is one as written ("<Label>A</Label" cut off in a copied example)
            # or as read ("<Answer>Compl": a cut copy of an option)
            found = find_echoes(unbroken, sent, answers=_TAGS, min_chars=ECHO_MIN_CHARS, truncated=truncated)
            text, echoes = unbroken, echoes.joined(found)
        labels, answers = _answer_tags(text, displayed, echoes)
        read_label, read_content = _read_label, _read_content
        # The requested tag missing: an answer in the other tag, or outside any tag, is read (the strict figure
        # beside the headline shows what such readings add); Label+Content with ``strict`` asks for both tags.
        if not labels and (fmt == "label" or (fmt == "label_content" and not strict)):
            return (
                _other_tag(answers, displayed, ANSWER_TAG) if answers else _untagged(text, displayed, echoes, truncated)
            )
        if not answers and fmt == "content":
            return _other_tag(labels, displayed, LABEL_TAG) if labels else _untagged(text, displayed, echoes, truncated)
    else:  # every tag; a letter's repeats count once
        labels = list(dict.fromkeys(v.strip().strip("().").strip().upper() for v in _LABEL.findall(text)))
        answers = _ANSWER.findall(text)
        read_label, read_content = _strict_letter, _strict_match
    # Only the tags the format asks for are read (a reply may hold thousands of the other kind).
    if fmt != "content":
        label = _combine([read_label(v, displayed) for v in labels], LABEL_TAG)
        if fmt == "label" or label.status != OK:
            return label
    contents = {_key(v): v for v in answers}.values()  # repeats of one answer count once
    content = _combine([read_content(v, displayed) for v in contents], ANSWER_TAG)
    if fmt == "content":
        return content
    if strict and content.status != OK:
        return content
    disagree = content.status == OK and label.position != content.position
    detail = f"label names {LETTERS[label.position]}, content names {LETTERS[content.position]}" if disagree else ""  # type: ignore[index]
    if strict and disagree:
        return ParsedAnswer(None, MISMATCH, detail, disagreement=True)
    return ParsedAnswer(label.position, OK, detail, disagreement=disagree, rule=label.rule)


def parse_strict(
    completion: str | None, fmt: str, displayed: tuple[str, ...] | list[str], *, strict: bool = False
) -> ParsedAnswer:
    """The strict reading (task version 2.0's: exactly the requested tags, see the module docstring)."""
    return parse_reply(completion, fmt, displayed, strict=strict, parsing=STRICT)
