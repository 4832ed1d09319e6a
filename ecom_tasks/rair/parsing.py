"""RAIR answer extraction: the level a reply asserts, and the L2 mismatch dimension.

A reply is classified, never raised on. ``ecom_tasks/rair/README.md`` ("Parsing") states the careful
reading, ``tests/test_rair_replies.py`` grades realistic replies case by case, and each finer rule is
commented beside its pattern below. The answer region is read after NFKC (full-width ``Ｌ３``, ``：``
become ASCII). L2's dimension comes from the mismatch form holding that L2 (else the first asserted
one), else from ``<dimension> mismatch`` later on that L2's line, else from a field (``Mismatch type:
Brand``).

:func:`parse_strict` is the strict reading: exactly the output the prompt asks for after the reasoning
(``L3``, ``[L2-Brand Mismatch]``), nothing else.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from ecom_tasks.rair.prompts import build_system_prompt
from ecom_tasks.rair.schema import LANGUAGES, canonical_dimension
from ecom_tasks.scorers.replies import CORRECTION, HEDGING, TENTATIVE, TURN, answer_region, find_echoes

OK = "ok"
EMPTY = "empty"
UNCLOSED_THINK = "unclosed_think"
NO_LABEL = "no_label"
AMBIGUOUS = "ambiguous"
OUT_OF_RANGE = "out_of_range"
INVALID_STATUSES = (EMPTY, UNCLOSED_THINK, NO_LABEL, AMBIGUOUS, OUT_OF_RANGE)

#: A mismatch dimension was named but is none of the 16 (nor a known alias).
OTHER_DIMENSION = "other"

#: Which rule decided (``ParsedRelevance.rule``).
RULE_MARKER = "final-answer marker"
RULE_FORM = "mismatch form"
RULE_LONE_LINE = "level alone on a line"
RULE_START = "start of the answer"
RULE_STATED = "level stated in the text"
#: The strict reading's one rule: the reply is exactly the requested output.
RULE_STRICT = "the requested form"
#: ... and why a reply is ``ambiguous``.
RULE_CONFLICT = "conflicting levels"
RULE_HEDGE = "hedge"

# --- level mentions ----------------------------------------------------------------------

# "L3" standing alone ("L3.", "**L3**", "为L3", "[L2-Brand"), not inside a word or a longer number ("L3.5" is
# no level, as "Relevance: 3.5" is none).
_CODE = re.compile(r"(?<![A-Za-z0-9])L([0-9]{1,2})(?![0-9]|\.[0-9])", re.IGNORECASE)
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "一": 1, "二": 2, "三": 3, "四": 4}
# "Level 4", "level-4", "Level four".
_WORD = re.compile(
    r"(?<![A-Za-z])level[ \t_-]*#?[ \t]*([0-9]{1,2}|one|two|three|four)(?![0-9A-Za-z]|\.[0-9])", re.IGNORECASE
)
#: Level names (Fig. 9's definitions and the paper's text; the Chinese prompt's names). They count
#: only where a name can only be an answer: "the brand is irrelevant here" names no level.
LEVEL_NAMES: dict[str, int] = {
    **dict.fromkeys(
        ["irrelevant", "completely irrelevant", "totally irrelevant", "不相关", "完全不相关", "毫不相关"], 1
    ),
    **dict.fromkeys(["partially irrelevant", "explicit mismatch", "部分不相关"], 2),
    **dict.fromkeys(["closely relevant", "partial match", "较相关", "比较相关"], 3),
    **dict.fromkeys(["perfectly relevant", "perfect match", "完全相关"], 4),
}
_EN_NAMES = sorted((n for n in LEVEL_NAMES if n.isascii()), key=len, reverse=True)
_ZH_NAMES = sorted((n for n in LEVEL_NAMES if not n.isascii()), key=len, reverse=True)
_NAME = re.compile(
    r"(?<![A-Za-z])(?:" + "|".join(re.escape(n).replace("\\ ", r"\s+") for n in _EN_NAMES) + r")(?![A-Za-z])"
    r"|" + "|".join(map(re.escape, _ZH_NAMES)),
    re.IGNORECASE,
)
_ZH_GRADE = re.compile(r"(?<![A-Za-z0-9])第?([1-4一二三四])级(?!别)")

# Decoration that may surround an answer: markdown, quotes, brackets, bullets.
_DECOR = "\\s>#*_`•·\\-\\[\\]【】()\"'“”「」"
_DECOR_ONLY = re.compile(f"[{_DECOR}]*")
_LINE_REST = re.compile(f"[{_DECOR}.,;:!?。、]*")

# "[L2-Brand Mismatch]", "【L2-品牌不匹配】": a level and a named mismatch, bracketed.
_LEVEL_TOKEN = r"(?P<level>(?<![A-Za-z0-9])L[0-9]{1,2}|(?<![A-Za-z])level[ \t_-]*[0-9]{1,2})(?![0-9])"
_SQUARE_FORM = re.compile(
    r"[\[【][ \t]*" + _LEVEL_TOKEN + r"[ \t]*[-–—:_]?[ \t]*([^\[\]【】\n]{0,60}?)[ \t]*[\]】]", re.IGNORECASE
)
_MISMATCH_WORD = r"(?:mismatch(?:ed)?|conflict|不匹配|不符合?|不一致|冲突)"
# "... (Brand mismatch)" later on the line of an L2.
_NAMED_MISMATCH = re.compile(
    r"([^\n\[\]【】()\-–—:,.;!?。]{1,30}?)\s*" + _MISMATCH_WORD + r"(?![A-Za-z])", re.IGNORECASE
)
# "L2 - Brand Mismatch", "L2-尺码不匹配", "L2 (Brand mismatch)": unbracketed, the dimension must be known.
# ... and "L2 (Color)": a known dimension alone in parentheses.
_PLAIN_FORM = re.compile(
    _LEVEL_TOKEN
    + r"(?:\s*(?:[-–—:_(]\s*|\s+)"
    + _NAMED_MISMATCH.pattern
    + r"\s*\)?|\s*\(\s*(?P<bare>[^()\n]{1,30}?)\s*\))",
    re.IGNORECASE,
)
# "Mismatch type: Brand", "\"mismatch\": \"Brand\"", "不匹配类型：品牌".
_DIMENSION_FIELD = re.compile(
    r"(?:mismatch(?:[ _-]?(?:type|dimension|attribute))?|dimension|不匹配(?:类型|维度|属性)?)[\"'*]*\s*[:=]\s*[\"'*\[]*"
    r"([^\"'\n,;.\]}*]+)",
    re.IGNORECASE,
)

# What the echo rule keeps whole and does not count as copied text: levels, level names, bracketed forms.
_ANSWERS = re.compile(
    r"[\[【][ \t]*(?:L[0-9]{1,2}|level[ \t_-]*[0-9]{1,2})(?![0-9])[^\[\]【】\n]{0,60}[\]】]"
    f"|{_CODE.pattern}|{_WORD.pattern}|{_NAME.pattern}|{_ZH_GRADE.pattern}",
    re.IGNORECASE,
)

# --- markers ------------------------------------------------------------------------------

# A final-answer marker and its separator (":", "-", "=", "is", "为", "是", or a line break after a
# heading such as "## Final Answer"); the level must follow at once (decoration aside).
_MARKER = re.compile(
    r"<(?:final[_ ]?answer|answer|relevance|level|label)>"
    r"|(?<![A-Za-z])(?:"
    r"final[ _]+(?:answer|label|level|result|judge?ment|rating|verdict|grade|decision|classification"
    r"|relevance(?:[ _]+(?:level|label|grade|rating))?)"
    r"|answer|relevance(?:[ _]+(?:level|label|grade|rating|score))?|relevancy|level[ _]+of[ _]+relevance"
    r"|level|label|rating|score|grade|verdict|classification|judge?ment|conclusion|assessment|prediction|result|output"
    r"|overall"
    r"|最终答案|最终结果|最终等级|最终判断|最终判定|最终评级|最终结论|答案|结论|相关性等级|相关等级|相关性|相关度|等级|评级|判定"
    r")(?![A-Za-z])[ \t*_`#\"']*(?P<sep>[:=\-–—]|\bis\b|\bwould be\b|为|是|\n)",
    re.IGNORECASE,
)
_AFTER_MARKER = re.compile(r"[\s*_`#\"'\[【(:]*")
# A number right after a marker ("Final answer: 3"), also out of the four levels: "Relevance: 3 out of 4", "3 on a
# scale of 1 to 4"; "3/4" only after a score or relevance ("Score: 3/4"), as "Final answer: 3/4" may be a hedge between
# 3 and 4 ("L3/L4"). "3." is read, but not with text after it on its line ("1. Category ..." may open a list).
_SCALE = (
    r"(?P<scale>[ \t]*(?:out[ \t]+of|/|on[ \t]+a[ \t]+scale[ \t]+(?:of|from)[ \t]+1[ \t]*(?:-|–|to))[ \t]*"
    r"4(?![0-9]|\.[0-9]))?"
)
_MARKER_NUMBER = re.compile(r"[\s*_`#\"'\[【(:]*([0-9]{1,2})(?![0-9]|\.(?:[0-9]|[ \t]+\S))" + _SCALE, re.IGNORECASE)
# ...unless the text is a reason on the marker's own line and no next item follows ("Final answer: 3. The colour
# differs." is 3; "Final answer: 1. The brand matches. 2. ..." a list); a sentence opening on a hedge hedges it ("3. Or
# maybe 4.", as "3, or maybe 4" is no answer).
_MARKER_SENTENCE = re.compile(
    r"[ \t*_`\"'\[【(:]*([0-9]{1,2})\.[ \t]+(?=\S)(?P<hedge>(?:or|maybe|perhaps|possibly|could|might)\b)?",
    re.IGNORECASE,
)
_LIST_ITEM = re.compile(r"(?<![\w.])([0-9]{1,2})\.\s")
# The number is the whole answer when the clause ends after it ("3, or 4" hedges).
_NUMBER_END = r"(?=[ \t]*(?:[)\]】*_`\"'},;!?。]|\.(?![0-9])|$))(?![ \t]*,[ \t]*or\b)"
_ANSWER_NUMBER_END = re.compile(_NUMBER_END, re.MULTILINE | re.IGNORECASE)
_SCORE_MARKER = re.compile(r"score|rating|grade|relevan|相关|评级", re.IGNORECASE)
# A level number in prose as a rating verb's object: "I would rate this as a 3.", "I'd give it a solid 4", "I rate this 3
# out of 4". A count ("I see 3 problems") has no such verb; "a 3 or a 4" and "3 stars" do not end on the number. A name
# may follow ("a 3 (Closely Relevant)"): the number is read only if it is that number's level (_rated_numbers).
_RATED_END = r"(?:" + _NUMBER_END + r"|(?=[ \t]*[-–—:(\[]))"
_RATED = re.compile(
    r"(?<![A-Za-z])(?:(?:rat|scor|grad)(?:e|es|ed|ing)|giv(?:e|es|ing)|gave)[ \t]+"
    r"(?:it|this|that|the[ \t]+(?:item|product|listing|match|relevance))(?:[ \t]+(?:item|product|listing|one|match))?"
    r"(?:[ \t]+(?:as|at))?[ \t]+(?:an?[ \t]+)?(?:(?:solid|clear|strong|high|low|weak)[ \t]+)?[*_`\"']*([1-4])"
    r"(?![0-9]|\.[0-9])" + _SCALE + _RATED_END,
    re.IGNORECASE | re.MULTILINE,
)
# "I'd give it a 4, but it's really a 3": the number a contrast turns to is on the rating's scale, so it is a level
# too, and the reply names two, as "L4, but really L3" does (ambiguous: "really" is no correction cue).
_RATED_TURN = re.compile(
    r"[ \t]*[,;][ \t]*but(?=[ \t])[A-Za-z' \t]{1,40}?(?<![A-Za-z'])a[ \t]+[*_`\"']*([1-4])(?![0-9]|\.[0-9])"
    + _SCALE
    + _RATED_END,
    re.IGNORECASE | re.MULTILINE,
)
# What may precede a marker on its line for a line break to separate it from the level.
_HEADING_START = re.compile(r"[\s#*_>`]*")

# --- what makes a mention no answer -------------------------------------------------------

_CLAUSE_END = re.compile(r"[.!?;:,\n。、]")
_SENTENCE_END = re.compile(r"[.!?;\n。]")
# Negation, contrast, bounds and hypotheticals that come before a level, possibly with a few
# filler words between ("can't be L4", "not a perfect match (L4)", "rather than L4", "hard to rate this a 4").
_PRE_CUE = re.compile(
    r"(?:(?:^|[^a-z'])(?:not|never|no|cannot|nor|neither|rather than|instead of|as opposed to|other than|except(?: for)?"
    r"|excluding|exclude[sd]?|rul(?:e|es|ed|ing) out|reject(?:s|ed|ing)?|against|over|from|short of|beyond"
    r"|at least|at most|above|below|than|to reach|to qualify(?: as| for)?|to count as|to earn|to deserve|to warrant"
    r"|to merit|to justify|to achieve|for it to be|in order to be|in which case|considering|weighing|comparing|checking|evaluating"
    r"|examining|hardly|barely|scarcely|(?:hard|difficult|tough|reluctant|hesitant|loath|unwilling|unable) to"
    r"|hesitate to|struggle to)|n't)$"
)
_FILLER = frozenset(
    "be a an the quite really yet fully full strictly truly exactly entirely completely necessarily perfectly rated rate "
    "give given giving assign assigned call called label labelled labeled score scored qualify qualifies reach reaches "
    "merit merits deserve deserves warrant warrants as it this that at all even considered consider count counted get "
    "go with to higher high lower up level grade solid clear true perfect i we would should could can will say choose "
    "pick select is was one of match fit so too just simply any into in under within category territory range tier "
    "make makes meet meets achieve achieves justify justifies put place classify classified categorize categorized mark "
    "marked think believe feel it's i'd we'd".split()
)
# "for L4" is hypothetical ("For L4 the colour would need to match") unless a verb picks it ("go for L3").
_FOR_CUE = re.compile(r"(?:^|[^a-z'])(?:(?P<verb>[a-z']+)\s+)?for\s*$")
_FOR_PICKS = frozenset("go going opt opting settle settling vote voting argue arguing plump lean leaning aim".split())
_ZH_PRE_CUE = re.compile(
    r"(?:不(?:能|应该?|会|可能|太|宜)?(?:是|属于|算(?:是|作)?|到|够|评为?|给|选|定为|判为?|打|归为|视为)|达不到|算不上|够不上"
    r"|称不上|谈不上|不足以(?:评为|达到|算)?|(?:很难|难以)(?:评为?|达到|算(?:是|作)?|给|认定为?)?|并非|而非|绝非|非|而不|排除(?:了)?|除非|高于|低于|至少(?:是)?|最多(?:是)?"
    r"|(?:要|需要|若要|才能)达到|才(?:能)?(?:是|算|评为|给)?)\s*(?:一个|为|是|作|成)?[\s\"“「*]*$"
)
# "L3 would be appropriate", "L3 would be better", "L3 might also fit": a modal that states an answer, not a
# hypothetical (one with a condition or a turn after it is: "L4 would fit if ...", "L4 would fit, but ...").
_ACCEPTING = (
    r"\s+(?:also\s+)?(?:be\s+(?:the\s+)?(?:most\s+|more\s+)?(?:appropriate|right|correct|best|better|fair|suitable|reasonable"
    r"|accurate|apt|justified|warranted|my|the\s+(?:answer|final|right|correct|best)|a\s+fair)\b(?:\s+here)?"
    r"|(?:fit|suit|work|make\s+sense)(?:\s+(?:best|better|here))?\b)(?![\s,]*(?:if|only|unless|when|but|however|yet)\b)"
)
_POST_CUE = re.compile(
    r"[\s*_`\"')\]】」]*,?\s*(?:"
    r"(?:is|seems|feels|looks|sounds|was|would be)\s+(?:(?:a\s+)?(?:bit|little|clearly|definitely|certainly|simply|just"
    r"|probably|also|likewise|therefore)\s+)?(?:out\b|ruled out|excluded|not\b|too\b|wrong|incorrect|unlikely"
    r"|inappropriate|unjustified|unwarranted|overstated|off the table|a stretch|reserved for|for\b|only for|overly"
    r"|excessive)"
    r"|isn't|wasn't|doesn't|does not|did not|didn't|wouldn't|won't|can't|cannot|fails?\b"
    rf"|(?:would|could|might|may)\b(?!{_ACCEPTING})"
    r"|requires?\b|required\b|needs?\b|needed\b|demands?\b|calls? for\b|only (?:if|when|applies)"
    r"|if\b(?!\s+(?:i|we|one)\s+(?:had|have|must|were)\s+to\b)(?!\s+forced\b)|when\b|once\b|provided\b"
    r"|had it been|were it|means\b|implies\b|=|applies\b|is when|is defined|cases?\b"
    # the level's definition quoted ("Looking at the definitions, L3 says ..."), not an answer
    r"|says\b|states\b|refers to\b"
    r"|的话|需要|需|要求|必须|前提|才(?:行|可以|成立|对|能)|不(?:合适|成立|对|正确|妥当|适用|符合|可能|太合适|恰当|准确|行)"
    r"|(?:太|偏|过|有点|有些)(?:高|低|严|松)|被排除|(?:可以|应)?排除|意味着|表示|是指|指的是|适用于|对应|以上|以下|及以上|及以下"
    r")",
    re.IGNORECASE,
)
# A clause opened by a concession: "Although L4 is tempting, ...".
_CONCESSION = re.compile(
    r"\b(?:though|although|whereas|while|despite|even if)\b|虽然|尽管|虽说|即使|哪怕|即便", re.IGNORECASE
)
# "This is a solid L3 case": a level named a case of after "is" is asserted ("For an L2 case, ..." is not).
_ONE_CASE = re.compile(r"[\s*_`]*case\b", re.IGNORECASE)
_COPULA = re.compile(r"\b(?:is|it's|that's)\b", re.IGNORECASE)
# "L3 unless the shade matches": the level stands with a caveat, and gives way like a conceded one
# ("L4, unless the colour matters. It does, so L3.").
_UNLESS = re.compile(r"[\s*_`\"')\]】」]*,?\s*unless\b", re.IGNORECASE)
# Another party's view ("Some would call this L4", "Others might rate it a 4", "One could say L4", "You could rate it a
# 4") is not the reply's verdict when the reply gives its own (a different level, before or after); alone, it stands.
_OTHERS_VIEW = re.compile(
    r"(?:^|[^a-z'])(?:some(?:one|[ \t]+people)?|others|other[ \t]+people|many|one|you)[ \t]+(?:would|might|could|may)"
    r"(?:[ \t]++[a-z']++){0,4}$"
)
# A turn that says no to the level outright: "could be L4 at first sight, but it is not."
_TURNED_DOWN = re.compile(
    r"[\s,]*(?:(?:it|that|this)(?:\s+is|\s+was|'s)\s+not|(?:it|that|this)\s+(?:isn't|wasn't)|not\s+(?:really|quite))"
    r"[\s*_]*(?:[.,;:!\n]|$)",
    re.IGNORECASE,
)
# What leaves a level given after a correction tentative: "L4 is possible too", "L4 might also fit", "L4 as well".
_TENTATIVE_AFTER = re.compile(
    r"[\s*_`)]*(?:(?:is|seems|would\s+be|could\s+be|might\s+be)\s+)?(?:also\s+)?(?:possible|plausible)\b"
    r"|[\s*_`)]*(?:too|as\s+well)\b(?=[\s*_`]*(?:[.,;:!?)\]】。，；]|$))"  # (not "L3 too strict")
    r"|[\s*_`)]*(?:might|could|may)\s+(?:also\s+)?(?:fit|apply|work|be\s+better)\b"
    r"|[\s*_`)]*也(?:可能|可以|行)",
    re.IGNORECASE,
)
# A sentence opened by a condition and holding a modal: "If it were burgundy, it would be L4."
_CONDITION_OPENING = re.compile(
    r"(?:if|unless|had|were|should|suppose|supposing|assuming|provided|only if|only when|如果|若|假如|假设|要是|除非|只有|倘若)(?![a-z])",
    re.IGNORECASE,
)
_CONDITION_EXEMPT = re.compile(
    r"if\s+(?:i|we|one)\s+(?:had|have|must|were)\s+to\b|if\s+forced|如果(?:一定|必须|非要|硬要)", re.IGNORECASE
)
_MODAL = re.compile(r"\b(?:would|could|might)\b|'d\b|会|就|才|则", re.IGNORECASE)
# Where a conditional sentence turns to what is the case: "If it were burgundy I'd say L4, but it is red, so L3."
_CONDITION_TURN = re.compile(
    r"\b(?:but|so|therefore|hence|thus|however|instead|as it is)\b|但|所以|因此|然而|实际上", re.IGNORECASE
)
# A condition naming a level at the opening of a sentence: "For L2 cases, ...", "If L2, ...", "对于L2，".
_LEVEL_CONDITION = re.compile(
    r"(?:for|in|if|when|对于|如果是?|若是?|若为)\s*(?:the\s+|an?\s+)?(?:L|level\s*)([0-9]{1,2})(?![0-9])"
    r"(?:\s*(?:cases?|items?|answers?|replies|情况|的情况))?\s*[,:，：]",
    re.IGNORECASE,
)
_EXAMPLE = re.compile(
    r"(?:e\.g\.?|eg\.|for example|for instance|such as|例如|比如|譬如)\s*[,:]?\s*[\[【(\"'“]*\s*$", re.IGNORECASE
)
# The prompt's placeholder ("[L2-<attribute> Mismatch]"); a dimension written in its angle brackets ("<Brand>")
# is the model's own answer.
_PLACEHOLDER = re.compile(r"\s*[-–—:_]?\s*<\s*(?:attribute|属性)\s*>", re.IGNORECASE)
# Joins in a list of levels ("L1, L3 or L4"), a range ("L1-L4"), a hedge ("L1 or L3", "L3/L4"), and
# the words over which a negation carries ("not L4 or L3").
# (The first run is possessive: the join never starts with its characters, and two runs meeting around it backtracked,
# 30 s for "L3" + 100,000 commas.)
_LIST_GAP = re.compile(r"[\s,/、|]*+(?:(?:or|and|and/or|&|或者?|和|及|与|以及)\s*+)?[\s,/、|]*", re.IGNORECASE)
_RANGE_GAP = re.compile(r"\s*(?:-|–|—|~|to|through|至|到)\s*", re.IGNORECASE)
_HEDGE_GAP = re.compile(
    r"[\s,.;(]*(?:or|/|and|vs\.?|versus|或者?|还是|和|与|及|-|–|—|~|to|至|到)\s*"
    r"(?:maybe|perhaps|possibly|potentially|even|可能|也许|甚至)?\s*",
    re.IGNORECASE,
)
_DANGLING_HEDGE = re.compile(
    r"[\s,(]*(?:or|/|vs\.?|versus|或者?|还是)\s*(?:maybe|perhaps|possibly|可能|也许)?[\s.…]*", re.I
)
_CARRY_GAP = re.compile(r"\s*(?:,?\s*(?:or|nor|and)|/|或者?|和|、|也不是|也非|,)\s*", re.IGNORECASE)
_COMMA_GAP = re.compile(r"\s*,\s*")
# What separates the levels of a reply that loops ("L3 L4 L3", "L3, L4", "L3.\nL4").
_RUN_ON_GAP = re.compile(r"[\s,.;、。，；*_`\"'>#|]*")
_DEFINITION_TAIL = re.compile(r"[*_`]*\s*(?::|\s[-–—]\s)")
# A checklist's verdict on a level ("L1: no", "L3 - yes", "- L2: ✗", "L1 ❌", a table's "| L1 | No |"): not a
# definition; "no" rules the level out. A mark needs no separator.
_VERDICT_SEP = r"[:：\-–—=|]\s*[*_`]*\s*"
_VERDICT = re.compile(
    rf"[*_`]*\s*(?:{_VERDICT_SEP}(?=(?:no|false|yes|true)[ \t*_`|]*(?:[.,;!)\]\n]|$))|(?:{_VERDICT_SEP})?(?=[✗✘❌×✓✔✅]))"
    r"(?:(?P<no>no|false|✗|✘|❌|×)|yes|true|✓|✔|✅)",
    re.IGNORECASE,
)
_DEFINITION_HEAD = re.compile(r"[\s>#*_`•·\-]*(?:[0-9]+[.)]\s*)?")

_DECOR_CHARS = " \t\n>#*_`•·-[]【】()\"'“”「」"
_LOOK_BACK = 150
#: At most this much markdown, quoting or punctuation around a level alone on its line.
_LONE_DECORATION = 40

ASSERTED, REJECTED, HEDGED, ECHO, QUESTION = "asserted", "rejected", "hedged", "echo", "question"


@dataclass(frozen=True)
class ParsedRelevance:
    label: str | None  # "L1".."L4"; None unless status is ok
    status: str
    dimension: str | None = None  # for L2: one of DIMENSIONS, OTHER_DIMENSION, or None when not named
    detail: str = ""  # for ok: the rule that picked the level; else why the reply is invalid
    rule: str = ""  # a RULE_* constant: what decided (or, for ambiguous, why); "" when no level was asserted

    @property
    def valid(self) -> bool:
        return self.status == OK

    @property
    def display(self) -> str:
        """The answer as the prompt's output form (``[L2-Brand Mismatch]``), or the status."""
        if self.label is None:
            return self.status
        if self.label == "L2" and self.dimension:
            return f"[L2-{self.dimension} Mismatch]"
        return self.label


@dataclass
class _Mention:
    start: int  # span in the region, the mismatch form's brackets or a merged level name included
    end: int
    at: int  # where the level itself is
    number: int
    kind: str  # "code" L3, "word" Level 3, "name" Closely Relevant, "digit" after a marker, "rated" rate it a 3
    form: bool = False
    dimension_text: str = ""
    role: str = ASSERTED
    why: str = ""
    carries: bool = False  # rejected by a negation that carries over a list

    def reject(self, why: str, carries: bool = False) -> None:
        if self.role == ASSERTED:
            self.role, self.why, self.carries = REJECTED, why, carries


def _number(match: re.Match[str]) -> int:
    """The level a mention names: by a name of ``LEVEL_NAMES``, in digits, or as an English or Chinese number."""
    if match.re is _NAME:
        return LEVEL_NAMES[" ".join(match.group(0).lower().split())]
    number = match.group(1)
    return int(number) if number.isdigit() else _NUMBER_WORDS[number.lower()]


def _find_mentions(region: str) -> list[_Mention]:
    def found(pattern: re.Pattern[str], kind: str) -> list[_Mention]:
        return [_Mention(m.start(), m.end(), m.start(), _number(m), kind) for m in pattern.finditer(region)]

    names = found(_NAME, "name") + found(_ZH_GRADE, "name")
    mentions = found(_CODE, "code") + found(_WORD, "word") + _rated_numbers(region, names)
    mentions.sort(key=lambda m: m.start)
    levels, ats = list(mentions), [m.at for m in mentions]
    for name in names:
        if not _merge_name(region, levels, ats, name):
            mentions.append(name)
    mentions.sort(key=lambda m: m.start)
    return mentions


_NAME_GAP = re.compile(r"\s*(?:[-–—:=]\s*)?([(\[]?)\s*")


def _rated_numbers(region: str, names: list[_Mention]) -> list[_Mention]:
    """Numbers given as ratings (``_RATED``): ending their clause or followed by their own level's name; and the
    number a contrast turns to right after one (``_RATED_TURN``)."""
    name_at = {name.start: name for name in names}

    def read(match: re.Match[str]) -> bool:
        name = name_at.get(_match_end(_NAME_GAP, region, match.end()))
        return bool(_ANSWER_NUMBER_END.match(region, match.end())) or (
            name is not None and name.number == _number(match)
        )

    rated, turns = [], []
    for match in _RATED.finditer(region):
        if read(match):
            rated.append(_Mention(match.start(), match.end(), match.start(), _number(match), "rated"))
            if (turn := _RATED_TURN.match(region, match.end())) and read(turn):
                turns.append(_Mention(turn.start(1), turn.end(), turn.start(1), _number(turn), "rated"))
    ends = {m.end for m in rated}
    return rated + [m for m in turns if m.end not in ends]  # "..., but I'd give it a 3" is a rating of its own


def _merge_name(region: str, levels: list[_Mention], ats: list[int], name: _Mention) -> bool:
    """Fold a level name written beside a level ("L4 (Perfectly Relevant)", "Closely Relevant (L3)") into it."""
    index = bisect.bisect_left(ats, name.start)
    for level in levels[max(0, index - 1) : index + 1]:
        if level.end <= name.start and (gap := _NAME_GAP.fullmatch(region, level.end, name.start)):
            level.end = _close(region, name.end, gap.group(1))
            return True
        if name.end <= level.start and (gap := _NAME_GAP.fullmatch(region, name.end, level.start)):
            level.start = name.start
            level.end = _close(region, level.end, gap.group(1))
            return True
    return False


def _close(region: str, end: int, opened: str) -> int:
    if opened and (m := re.compile(r"\s*[)\]]").match(region, end)):
        return m.end()
    return end


def _mark_forms(region: str, mentions: list[_Mention]) -> None:
    by_position = {m.at: m for m in mentions if m.kind in ("code", "word")}
    for match in _SQUARE_FORM.finditer(region):
        mention = by_position.get(match.start("level"))
        content = match.group(2)
        if mention is None or not content or _CODE.search(content) or content.strip().lower() in LEVEL_NAMES:
            continue
        if _PLACEHOLDER.match(content):
            mention.role, mention.why = ECHO, "the prompt's placeholder"
            continue
        mention.start, mention.end, mention.form, mention.dimension_text = match.start(), match.end(), True, content
    for match in _PLAIN_FORM.finditer(region):
        mention = by_position.get(match.start("level"))
        named = match.group(2) or match.group("bare")
        if mention is None or mention.form or canonical_dimension(named) is None:
            continue
        mention.end, mention.form, mention.dimension_text = max(mention.end, match.end()), True, named


class _Boundaries:
    """Clause and sentence boundaries of a region, looked up by position (replies can be long)."""

    def __init__(self, region: str) -> None:
        self.clause_ends = [m.end() for m in _CLAUSE_END.finditer(region)]
        sentences = list(_SENTENCE_END.finditer(region))
        self.sentence_starts = [m.start() for m in sentences]
        self.sentence_ends = [m.end() for m in sentences]
        self.line_starts = [0, *(m.end() for m in re.finditer("\n", region))]
        self.size = len(region)

    def line_start(self, at: int) -> int:
        return self.line_starts[bisect.bisect_right(self.line_starts, at) - 1]

    def line_end(self, at: int) -> int:
        index = bisect.bisect_right(self.line_starts, at)
        return self.line_starts[index] - 1 if index < len(self.line_starts) else self.size

    def clause_start(self, at: int) -> int:
        index = bisect.bisect_right(self.clause_ends, at) - 1
        return self.clause_ends[index] if index >= 0 else 0

    def sentence(self, at: int) -> tuple[int, int]:
        """The sentence holding position ``at``: from after the last end before it to its own end."""
        index = bisect.bisect_right(self.sentence_ends, at) - 1
        start = self.sentence_ends[index] if index >= 0 else 0
        following = bisect.bisect_left(self.sentence_starts, at)
        end = self.sentence_ends[following] if following < len(self.sentence_ends) else self.size
        return start, end


def _chains(region: str, mentions: list[_Mention], gap: re.Pattern[str]) -> list[list[_Mention]]:
    """Runs of consecutive mentions joined only by ``gap``."""
    chains: list[list[_Mention]] = []
    for mention in mentions:
        if chains and chains[-1][-1].end <= mention.start and gap.fullmatch(region, chains[-1][-1].end, mention.start):
            chains[-1].append(mention)
        else:
            chains.append([mention])
    return chains


def _mark_echoes(region: str, mentions: list[_Mention], bounds: _Boundaries) -> None:
    for mention in mentions:
        if _PLACEHOLDER.match(region, mention.end) and not mention.form:
            mention.role, mention.why = ECHO, "the prompt's placeholder"
        elif _EXAMPLE.search(region[max(0, mention.start - 30) : mention.start]):
            mention.role, mention.why = ECHO, "an example"
    # The value of a product attribute in a filled-in form ("- Size: L2", "Color: L1") is that attribute's
    # value (clothing sizes look like levels), not the item's level.
    for mention in mentions:
        if mention.role == ECHO or mention.form:
            continue
        head = bounds.line_start(mention.start)
        if mention.start - head > 48:  # a form's label is short: a long line is prose (and stays linear)
            continue
        label = _FIELD_LABEL.search(region, head, mention.start)
        if label and label.end() == mention.start and _is_attribute(label.group(1)):
            mention.role, mention.why = ECHO, "a product attribute's value in a form"
    listed = [m for m in mentions if m.role != ECHO]
    list_or_range = re.compile(f"(?:{_LIST_GAP.pattern})|(?:{_RANGE_GAP.pattern})", re.IGNORECASE)
    for chain in _chains(region, listed, list_or_range):
        numbers = {m.number for m in chain}
        scale = len(chain) == 2 and numbers == {1, 4} and _RANGE_GAP.fullmatch(region, chain[0].end, chain[1].start)
        if len(numbers) >= 3 or scale:
            for m in chain:
                m.role, m.why = ECHO, "the level scale"
    # A list of level definitions ("L1 (Irrelevant): ...", one per line) echoes the prompt.
    heads = [
        m
        for m in listed
        if _DEFINITION_HEAD.fullmatch(region, bounds.line_start(m.start), m.start)
        and _DEFINITION_TAIL.match(region, m.end)
        and not _VERDICT.match(region, m.end)
    ]
    if len({m.number for m in heads}) >= 2:
        for m in heads:
            m.role, m.why = ECHO, "a list of level definitions"


#: "- Size: " before a level: a field label on its own line head.
_FIELD_LABEL = re.compile(r"^[\s>#*_`•·\-]*([^\n:：]{1,30}?)[\s*_`]*[:：][\s\"'*_`]*", re.MULTILINE)
#: Item fields of RAIR's inputs that are not Table 8 dimensions.
_ITEM_FIELDS = frozenset({"sku", "version", "model id", "price", "year", "pattern", "cpv", "title", "item title"})


def _is_attribute(label: str) -> bool:
    name = " ".join(label.split()).strip(" -–—*_`'\"").casefold()
    return name in _ITEM_FIELDS or canonical_dimension(name) is not None


# A level the item only comes near ("almost L4", "close to L4"); right before the level only: "nearly a perfect
# match: L4" asserts L4.
_NEAR_CUE = re.compile(r"(?:^|[^a-z'])(?:almost|nearly|close to|bordering on|verging on)$")


def _pre_cue(pre: str) -> bool:
    text = pre.lower().rstrip(" \t\"'*([【“「")
    if _NEAR_CUE.search(text[-20:]):
        return True
    for _ in range(6):
        if _PRE_CUE.search(text[-40:]):  # a cue is at most 15 characters
            return True
        word = re.search(r"(?:^|\s)([a-z']+)$", text)
        if not word or word.group(1) not in _FILLER:
            return False
        text = text[: word.start(1)].rstrip()
    return False


def _for_cue(pre: str) -> bool:
    match = _FOR_CUE.search(pre[-60:].lower().rstrip(" \t\"'*([【“「").removesuffix(" an").removesuffix(" a"))
    return match is not None and (match.group("verb") or "") not in _FOR_PICKS


def _conditional(region: str, start: int, end: int, at: int) -> bool:
    """``at`` is in the conditional part of a sentence opened by a condition and holding a modal
    ("If it were burgundy, it would be L4."), before any turn to what is the case ("..., so L3")."""
    opening = region[start : start + 80].lstrip(_DECOR_CHARS)
    if not _CONDITION_OPENING.match(opening):
        return False
    turn = _CONDITION_TURN.search(region, start, end)
    conditional = region[start : turn.start() if turn else end]
    if turn and at >= turn.start():
        return False
    return not _CONDITION_EXEMPT.search(conditional) and bool(_MODAL.search(conditional))


def _mark_rejections(region: str, mentions: list[_Mention], bounds: _Boundaries) -> None:
    tentative: dict[int, int] = {}  # levels offered tentatively and turned from: start -> end of the turn
    others: set[int] = set()  # starts of levels given as another party's view
    for mention in mentions:
        if mention.role != ASSERTED or mention.kind == "digit":
            continue
        # cues sit close to the level: a bounded look-back keeps long replies linear
        clause = region[max(bounds.clause_start(mention.start), mention.start - _LOOK_BACK) : mention.start]
        sentence_start, sentence_end = bounds.sentence(mention.end)
        if region[sentence_end - 1 : sentence_end] == "?":
            mention.role, mention.why = QUESTION, "a question"
        elif _pre_cue(clause) or _ZH_PRE_CUE.search(clause[-30:]):
            mention.reject("negated or contrasted", carries=True)
        elif _for_cue(clause) or clause.strip().lower() in ("to be", "to"):  # "To rate it a 4, it would need ..."
            mention.reject("hypothetical")
        elif unless := _UNLESS.match(region, mention.end):
            tentative[mention.start] = unless.end()
        elif _POST_CUE.match(region, mention.end) and not (
            _ONE_CASE.match(region, mention.end) and _COPULA.search(region, sentence_start, mention.start)
        ):
            mention.reject("hypothetical or rejected")
        elif (verdict := _VERDICT.match(region, mention.end)) and verdict.group("no"):
            mention.reject("ruled out by its verdict")
        elif _CONCESSION.search(clause):
            mention.reject("conceded")
        elif _conditional(region, sentence_start, sentence_end, mention.start):
            mention.reject("hypothetical")
        elif (turn := TURN.search(region, mention.end, min(sentence_end, mention.end + _LOOK_BACK))) and (
            TENTATIVE.search(region, max(sentence_start, mention.start - _LOOK_BACK), turn.start())
        ):
            if _TURNED_DOWN.match(region, turn.end()):
                mention.reject("turned down")
            else:
                tentative[mention.start] = turn.end()
        elif _OTHERS_VIEW.search(clause.lower().rstrip(" \t\"'*([【“「")):
            others.add(mention.start)
    # A level conceded in its sentence gives way to a different level asserted firmly after it.
    nearest: dict[int, _Mention] = {}  # by level, the next asserted mention
    for mention in reversed(mentions):
        following = [m for number, m in nearest.items() if number != mention.number]
        if mention.start in tentative and following:
            firm = min(following, key=lambda m: m.start)
            end = min(bounds.sentence(firm.end)[1], firm.end + _LOOK_BACK)
            if not HEDGING.search(region, max(tentative[mention.start], firm.start - _LOOK_BACK), end):
                mention.reject("conceded")
        if mention.role == ASSERTED:
            nearest[mention.number] = mention
    # A sentence opened by a condition naming a level is an instruction for that level, not an answer:
    # "For L2 cases, output [L2-Mismatch]".
    for mention in mentions:
        if mention.role == ASSERTED:
            start, end = bounds.sentence(mention.at)
            opening = _LEVEL_CONDITION.match(region[start:end].lstrip(_DECOR_CHARS))
            if opening and int(opening.group(1)) == mention.number:
                mention.reject("an instruction for that level")
    # A negation carries over a list: "not L4 or L3", "neither L1 nor L2"; over a comma only when a later join
    # closes the list ("neither L1, L2 nor L4", but "not L4, L3" is L3).
    for chain in _chains(region, mentions, _CARRY_GAP):
        joins = [not _COMMA_GAP.fullmatch(region, a.end, b.start) for a, b in zip(chain, chain[1:])]
        for index, (previous, mention) in enumerate(zip(chain, chain[1:])):
            if previous.role == REJECTED and previous.carries and any(joins[index:]):
                mention.reject(previous.why, carries=True)
    # A correction supersedes the levels asserted before it (when a level is asserted after it); one offered
    # tentatively ("L3. Actually, maybe L4.", "Wait, it might be L4", "Actually L4 is possible too") leaves the
    # reply between its levels: a hedge.
    asserted = [m.start for m in mentions if m.role == ASSERTED]
    cues = [c for c in CORRECTION.finditer(region) if asserted and c.end() <= max(asserted)]
    if cues:
        cue = cues[-1]
        before = [m for m in mentions if m.end <= cue.start() and m.role == ASSERTED]
        after = next(m for m in mentions if m.role == ASSERTED and m.start >= cue.end())
        # (hedged in the later level's own sentence: "Wait, the colour could differ. L3." is firm)
        hedge_from = max(cue.end(), bounds.sentence(after.start)[0], after.start - _LOOK_BACK)
        unsure = bool({m.number for m in before} - {after.number}) and bool(
            HEDGING.search(region, hedge_from, after.start) or _TENTATIVE_AFTER.match(region, after.end)
        )
        for m in mentions:
            if m.end <= cue.start():
                if unsure and m.role == ASSERTED:
                    m.role, m.why = HEDGED, "a tentative correction"
                m.reject("superseded by a correction")
        if unsure:
            after.role, after.why = HEDGED, "a tentative correction"
    # Another party's view gives way to the reply's own, different level.
    own = {m.number for m in mentions if m.role == ASSERTED and m.start not in others}
    for m in mentions:
        if m.start in others and own - {m.number}:
            m.reject("another party's view")


def _mark_hedges(region: str, mentions: list[_Mention]) -> None:
    live = [m for m in mentions if m.role in (ASSERTED, REJECTED)]
    for chain in _chains(region, live, _HEDGE_GAP):
        members = [m for m in chain if m.role == ASSERTED]
        if len({m.number for m in members}) >= 2:
            for m in members:
                m.role, m.why = HEDGED, "a hedge"
    # A level offered tentatively after another ("L2. L3 might fit too.", "L2. L3 is possible too."): a hedge, as
    # after a correction.
    asserted = [m for m in mentions if m.role == ASSERTED]
    numbers: set[int] = set()
    hedged_to = 0  # asserted[:hedged_to] are hedged already (each mention is marked once: linear)
    for index, mention in enumerate(asserted):
        if numbers - {mention.number} and _TENTATIVE_AFTER.match(region, mention.end):
            for m in asserted[hedged_to : index + 1]:
                m.role, m.why = HEDGED, "a level offered tentatively after another"
            hedged_to = index + 1
        numbers.add(mention.number)
    # A reply that stops on "L3 or" was naming a second level: a hedge, cut off.
    for mention in mentions:
        if mention.role == ASSERTED and _DANGLING_HEDGE.fullmatch(region, mention.end):
            mention.role, mention.why = HEDGED, "a hedge cut off"


def _marker_mentions(region: str, mentions: list[_Mention]) -> list[_Mention]:
    """The level after each final-answer marker whose level is not negated, echoed or asked, in order."""
    found = []
    starts = [m.start for m in mentions]
    items: dict[int, int] | None = None

    def last_item(number: int) -> int:
        """Where the last list item numbered ``number`` ("2. ...") starts, -1 if none (found once per region)."""
        nonlocal items
        if items is None:
            items = {int(m.group(1)): m.start() for m in _LIST_ITEM.finditer(region)}
        return items.get(number, -1)

    for marker in _MARKER.finditer(region):
        if marker.group("sep") == "\n":
            line_start = region.rfind("\n", 0, marker.start()) + 1
            if not _HEADING_START.fullmatch(region, line_start, marker.start()):
                continue
        lead = _match_end(_AFTER_MARKER, region, marker.end())
        index = bisect.bisect_left(starts, marker.end())
        if index < len(mentions) and mentions[index].start <= lead:
            mention = mentions[index]
            if mention.role in (ASSERTED, HEDGED):
                found.append(mention)
        elif (digit := _MARKER_NUMBER.match(region, marker.end())) and _scale_read(digit, marker):
            if _ANSWER_NUMBER_END.match(region, digit.end()):
                found.append(_Mention(digit.start(1), digit.end(1), digit.start(1), int(digit.group(1)), "digit"))
            elif name := _named_digit(region, digit, mentions[index] if index < len(mentions) else None):
                found.append(name)
        elif (digit := _MARKER_SENTENCE.match(region, marker.end())) and last_item(
            int(digit.group(1)) + 1
        ) < digit.end():
            number = _Mention(digit.start(1), digit.end(1), digit.start(1), int(digit.group(1)), "digit")
            if digit.group("hedge"):
                number.role, number.why = HEDGED, "a hedge"
            found.append(number)
    return found


def _scale_read(digit: re.Match[str], marker: re.Match[str]) -> bool:
    """A marker's number is read: no scale after it, "out of 4", or "/4" after a score or relevance."""
    return "/" not in (digit.group("scale") or "") or bool(_SCORE_MARKER.search(marker.group(0)))


def _named_digit(region: str, digit: re.Match[str], following: _Mention | None) -> _Mention | None:
    """The level name after a marker's number when it names that number's level ("Score: 4 — Perfectly
    Relevant", "Level: 3 (Closely Relevant)"), and is not negated, echoed or asked; another level's name
    leaves the number unread."""
    if following is None or following.kind != "name" or following.role not in (ASSERTED, HEDGED):
        return None
    if following.number != int(digit.group(1)) or not _NAME_GAP.fullmatch(region, digit.end(), following.start):
        return None
    return following


def _loops(region: str, answers: list[_Mention], mentions: list[_Mention]) -> list[_Mention]:
    """The levels of a final answer that loops ("Final answer: L3 L4 L3 L4", or markers giving L3, L4, L3):
    the levels run on after the last marker's, or the markers' levels when one comes back after another;
    [] when the answer names one level."""
    run_on = [answers[-1]]
    for mention in mentions:
        if mention.start < run_on[-1].end or mention.role not in (ASSERTED, HEDGED):
            continue
        if not _RUN_ON_GAP.fullmatch(region, run_on[-1].end, mention.start):
            break
        run_on.append(mention)
    if len({m.number for m in run_on}) > 1:
        return run_on
    turned_from: set[int] = set()
    for previous, answer in zip(answers, answers[1:]):
        if previous.number != answer.number:
            if answer.number in turned_from:
                return answers
            turned_from.add(previous.number)
    return []


def _is_lone(region: str, mention: _Mention, bounds: _Boundaries) -> bool:
    line_start, line_end = bounds.line_start(mention.start), bounds.line_end(mention.end)
    if mention.start - line_start > _LONE_DECORATION or line_end - mention.end > _LONE_DECORATION:
        return False
    return bool(
        _LINE_REST.fullmatch(region, line_start, mention.start) and _LINE_REST.fullmatch(region, mention.end, line_end)
    )


def _match_end(pattern: re.Pattern[str], region: str, at: int) -> int:
    """Where ``pattern`` (one that also matches the empty string) stops matching from ``at``."""
    match = pattern.match(region, at)
    return at if match is None else match.end()


def _first_sentence_end(region: str) -> int:
    opening = _match_end(_DECOR_ONLY, region, 0)
    end = re.compile(r"[.!?。](?=[\s*_`\"')\]】]|$)|\n").search(region, opening)
    return end.start() if end else len(region)


def _tier(region: str, mention: _Mention, first_sentence_end: int, bounds: _Boundaries) -> str | None:
    """The formal assertion a mention makes (a RULE_*), RULE_STATED for plain prose, None for a name in prose."""
    if mention.form:
        return RULE_FORM
    if _is_lone(region, mention, bounds):
        return RULE_LONE_LINE
    if mention.kind == "name":
        return RULE_START if _DECOR_ONLY.fullmatch(region, 0, mention.start) else None
    if mention.start < first_sentence_end:
        return RULE_START
    return RULE_STATED


def _dimension(region: str, decided: _Mention, mentions: list[_Mention]) -> str | None:
    forms = [decided] if decided.form else [m for m in mentions if m.form and m.number == 2 and m.role == ASSERTED]
    if forms:
        return canonical_dimension(forms[0].dimension_text) or OTHER_DIMENSION
    line_end = region.find("\n", decided.end)
    named = _NAMED_MISMATCH.finditer(region, decided.end, len(region) if line_end < 0 else line_end)
    found = (canonical_dimension(m.group(1)) for m in itertools.chain(named, _DIMENSION_FIELD.finditer(region)))
    return next(filter(None, found), None)


def _levels(mentions: list[_Mention]) -> str:
    return ", ".join(f"L{n}" for n in dict.fromkeys(m.number for m in mentions))


def _result(region: str, decided: _Mention, rule: str, mentions: list[_Mention]) -> ParsedRelevance:
    if not 1 <= decided.number <= 4:
        return ParsedRelevance(None, OUT_OF_RANGE, detail=f"L{decided.number} ({rule}) is not one of L1-L4", rule=rule)
    label = f"L{decided.number}"
    dimension = _dimension(region, decided, mentions) if label == "L2" else None
    return ParsedRelevance(label, OK, dimension, detail=rule, rule=rule)


@functools.lru_cache(maxsize=1)
def fixed_prompt_parts() -> tuple[str, ...]:
    """The instructions every RAIR prompt holds (each language, with and without the image), what a
    reply is compared with when the caller does not pass the prompt it sent."""
    return tuple(build_system_prompt(language, None, image) for language in LANGUAGES for image in (False, True))


def _answer(completion: str | None) -> str | ParsedRelevance:
    """The answer region (see :func:`answer_region`), or why there is none (``unclosed_think``, ``empty``)."""
    region = answer_region(completion)
    if region is None:
        return ParsedRelevance(None, UNCLOSED_THINK, detail="<think> is never closed")
    if not region.strip():
        return ParsedRelevance(None, EMPTY, detail="no answer after the reasoning")
    return region


def parse_reply(
    completion: str | None, *, prompt: Iterable[str | None] | str | None = None, truncated: bool | None = None
) -> ParsedRelevance:
    """Classify a model reply to a RAIR prompt (see the module docstring).

    ``prompt``: the texts the model was sent (system and user message; default: the fixed
    instructions of every RAIR prompt); whatever the reply copies from them is not read.
    ``truncated``: the reply was stopped by the output limit (None: unknown).
    """
    region = _answer(completion)
    if isinstance(region, ParsedRelevance):
        return region
    region = unicodedata.normalize("NFKC", region).replace("’", "'").replace("‘", "'")
    echoes = find_echoes(
        region, fixed_prompt_parts() if prompt is None else prompt, answers=_ANSWERS, truncated=truncated
    )
    if echoes.spans:
        region = echoes.stripped()
        if not any(c.isalnum() for c in region):
            return ParsedRelevance(None, NO_LABEL, detail="the reply only repeats the prompt")
    parsed = _read(region)
    if echoes.spans and parsed.status == NO_LABEL:
        detail = f"{parsed.detail}; {echoes.chars} characters copied from the prompt were not read"
        return ParsedRelevance(None, NO_LABEL, detail=detail)
    return parsed


_STRICT_LEVEL = re.compile(r"L([134])")
_STRICT_L2 = re.compile(r"\[L2-\s*([^\[\]<>\n]*?\S)\s*Mismatch\]|【L2-([^【】<>\n]*?\S)不匹配】")


def parse_strict(completion: str | None) -> ParsedRelevance:
    """The strict reading: after the reasoning, exactly the output the prompt asks for (``L1``, ``L3``,
    ``L4``, or ``[L2-<attribute> Mismatch]`` / ``【L2-<属性>不匹配】``), surrounding whitespace aside;
    anything else is ``no_label`` (a bare ``L2``, a marker, markdown, an explanation)."""
    region = _answer(completion)
    if isinstance(region, ParsedRelevance):
        return region
    text = unicodedata.normalize("NFKC", region).strip()
    if level := _STRICT_LEVEL.fullmatch(text):
        return ParsedRelevance(f"L{level.group(1)}", OK, detail=RULE_STRICT, rule=RULE_STRICT)
    if form := _STRICT_L2.fullmatch(text):
        dimension = canonical_dimension(form.group(1) or form.group(2)) or OTHER_DIMENSION
        return ParsedRelevance("L2", OK, dimension, detail=RULE_STRICT, rule=RULE_STRICT)
    return ParsedRelevance(None, NO_LABEL, detail=f"not exactly the requested output: {text[:80]!r}")


def _read(region: str) -> ParsedRelevance:
    mentions = _find_mentions(region)
    _mark_forms(region, mentions)
    bounds = _Boundaries(region)
    _mark_echoes(region, mentions, bounds)
    _mark_rejections(region, mentions, bounds)
    _mark_hedges(region, mentions)

    answers = _marker_mentions(region, mentions)
    if answers:
        marked = answers[-1]
        if marked.role != HEDGED and (looped := _loops(region, answers, mentions)):  # (a hedge says so below)
            return ParsedRelevance(
                None, AMBIGUOUS, detail=f"the final answer loops: {_levels(looped)}", rule=RULE_MARKER
            )
        if (
            marked.kind == "digit"
        ):  # (found after the hedges: "Final answer: 3. Or maybe L4." as "... L3. Or maybe L4.")
            _mark_hedges(region, [marked, *(m for m in mentions if m.start >= marked.end)])
        if marked.role == HEDGED:
            hedge = [m for m in mentions if m.role == HEDGED] + ([marked] if marked.kind == "digit" else [])
            return ParsedRelevance(
                None, AMBIGUOUS, detail=f"the final answer hedges: {_levels(hedge)}", rule=RULE_MARKER
            )
        return _result(region, marked, RULE_MARKER, mentions)

    first_end = _first_sentence_end(region)
    tiers: dict[str, list[_Mention]] = {RULE_FORM: [], RULE_LONE_LINE: [], RULE_START: [], RULE_STATED: []}
    for mention in mentions:
        if mention.role == ASSERTED and (tier := _tier(region, mention, first_end, bounds)) is not None:
            tiers[tier].append(mention)
    for rules in ((RULE_FORM, RULE_LONE_LINE, RULE_START), (RULE_STATED,)):
        found = [rule for rule in rules if tiers[rule]]
        group = [m for rule in found for m in tiers[rule]]
        if len({m.number for m in group}) > 1:
            where = "; ".join(f"{_levels(tiers[rule])} ({rule})" for rule in found)
            return ParsedRelevance(None, AMBIGUOUS, detail=f"several levels asserted: {where}", rule=RULE_CONFLICT)
        if group:
            return _result(region, group[0], found[0], mentions)
    hedged = [m for m in mentions if m.role == HEDGED]
    if hedged:
        return ParsedRelevance(None, AMBIGUOUS, detail=f"a hedge: {_levels(hedged)}", rule=RULE_HEDGE)
    rejected = [m for m in mentions if m.role in (REJECTED, ECHO, QUESTION)]
    if rejected:
        why = "; ".join(f"L{m.number}: {m.why}" for m in rejected[:4])
        return ParsedRelevance(None, NO_LABEL, detail=f"no level asserted ({why})")
    return ParsedRelevance(None, NO_LABEL, detail=f"no level in {region.strip()[:80]!r}")
