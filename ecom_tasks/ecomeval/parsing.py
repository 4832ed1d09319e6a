"""Reading the grader's grade, strictly and only from its own final line (or a JSON reply), and exact-answer
matching for the ``ecomeval_exact`` tasks. Accepted forms and failure statuses: EcomEval's README ("Prompts
and the judge")."""

from __future__ import annotations

import functools
import html
import re
import string
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ecom_tasks import files
from ecom_tasks.ecomeval.prompts import GRADER_TEMPLATE
from ecom_tasks.scorers.core import RUBRIC_MAX
from ecom_tasks.scorers.replies import BOXED, answer_region, find_echoes, strip_echoes

OK = "ok"
NO_GRADE = "no_grade"
OUT_OF_RANGE = "out_of_range"
CONFLICTING = "conflicting"
FAILURE_STATUSES = (NO_GRADE, OUT_OF_RANGE, CONFLICTING)

_NUMBER = r"(-?\d+(?:\.\d+)?)"
# The grade's name (English, or Chinese: 最终得分 "final score", 评分 "rating").
_GRADE_NAME = r"final[\s_-]*(?:score|grade)|score|grade|最终得分|最终评分|得分|评分|分数"
# The grade's name, markdown or quotes, an optional ":" "=" "：" (or "is" after "final score"), markdown or quotes,
# the number, optionally "/ 3" or "out of 3". LaTeX's answer box ("Final Score: \boxed{2}") is read through
# scorers.replies.BOXED: the final line is unboxed before it is matched. (The separator takes the marks before it: two
# runs of marks meeting around an optional separator backtracked, quadratic in the run.)
_GRADE = re.compile(
    r"(?<![A-Za-z])(?:final[\s_-]*(?:score|grade)[\s*_\"'`]*\s+is\b|" + _GRADE_NAME + r")"
    r"(?:[\s*_\"'`]*[:=：])?[\s*_\"'`$]*[(\[]?" + _NUMBER + r"(?:[\s*]*(?:/|out\s+of)\s*" + _NUMBER + r")?[)\]]?",
    re.IGNORECASE,
)
# What the echo rule keeps whole as the grader's answer: a grade, boxed too ("Final Score: \boxed{2}" after a copied
# instruction is the grader's grade, its "Final Score:" no part of the copy).
_GRADE_ANSWER = re.compile(
    _GRADE.pattern + r"|(?<![A-Za-z])(?:" + _GRADE_NAME + r")(?:[\s*_\"'`]*[:=：])?[\s*_\"'`]*" + BOXED.pattern,
    re.IGNORECASE,
)
# The grade's name closing a line, its number alone on the next ("Final Score:\n3", "**Final Score:**\n**3**",
# a heading "## Final Score" then "3").
_NAME_ALONE = re.compile(
    r"(?:(?:" + _GRADE_NAME + r")[\s*_\"'`]*[:=：]"
    r"|^[\s#*_]*(?:final[\s_-]*(?:score|grade)|最终得分|最终评分))[\s*_\"'`]*$",
    re.I,
)
_NUMBER_ALONE = re.compile(r"^[\s*_\"'`(\[]*-?\d+(?:\.\d+)?[)\]]?(?:\s*(?:/|out\s+of)\s*\d+)?[\s*_\"'`]*$", re.I)
# What follows a grade when the grader hedges or revises it: "2 or 3", "2-3", "2 to 3", "2~3", "2或3", "3 → 1".
_HEDGE = re.compile(r"^[\s*_\"'`]*(?:or|to|->|=>|→|⇒|-|–|~|或|至|到)\s*\d", re.IGNORECASE)
# Another grade after the grade ("Final Score: 3, no wait, 2", "3 (maybe 2)"): the grader revises or hedges;
# the scale named after it ("(on the 0-3 scale)", "(out of 3)") is none, nor the grade restated ("3 (3 = fully correct)").
_LATER_GRADE = re.compile(r"(?<![\w.])[0-3](?![\w.])")
_SCALE = re.compile(r"(?:(?<![\w.])0\s*(?:-|–|~|to)|out\s+of|/)\s*3(?![\w.])", re.IGNORECASE)
# A quoted span of a line ("...", “...”, 「...」, `...`, '...', ‘...’; not an apostrophe's "response's"): a grade
# inside one, beside words of the grader's own, is a quotation (of the response, of the format line), not the grade.
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|「[^」\n]*」|`[^`\n]*`|(?<!\w)'[^'\n]*'(?!\w)|‘[^’\n]*’")
# Marks that open a quote with a mark of their own to close it: one after the last of its closing mark opens none (a
# line of thousands of them, each scanned to the line's end, was quadratic).
_OPENERS = (("“", "”"), ("「", "」"), ("‘", "’"))
# A grade the grader reports the response wrote, unquoted ("The response claims Final Score: 3, but ...", "The answer
# ends with Final Score: 3 and Score: 10/10.", "The answer, which claims Final Score: 3, ..."): the response, the
# answer or the model (or "it": a grader never names itself so), then a reporting verb right before the grade. Like a quoted grade it is not the grader's own; "The response
# deserves Final Score: 2" (the grader grading) and "The answer is right, so I say Final Score: 3" are. After the verb
# the number may stand alone ("Final Score: 1; the response claims 3", "... claims it is 3", "... a score of 3/3"):
# whatever the response is said to claim is no grade of the grader's (a lone number starts no "and" list: "The
# response claims 3 and Final Score: 1" ends on the grader's grade).
_CLAIMED = (
    r"(?:" + _GRADE.pattern + r")(?:\s*,?\s*(?:and|与|和)\s*(?:" + _GRADE.pattern + r"))*"
    r"|[(\[]?" + _NUMBER + r"(?:\s*(?:/|out\s+of)\s*" + _NUMBER + r")?[)\]]?"
)
_REPORTED = re.compile(
    r"(?P<report>(?<![A-Za-z])(?:response|answer|model|reply|it|回答|答案|模型|回复)"
    r"(?:['’]s\s+(?:own\s+)?(?:text|output|reply|answer|last\s+line|final\s+line))?(?:\s*,?\s+(?:which|that))?"
    r"(?:\s+(?:itself|also|then|again|still|even|now|clearly|explicitly|wrongly|falsely|just|only|already))*\s*"
    r"(?:claim(?:s|ed)?|says?|said|stat(?:es?|ed)|writes?|wrote|reads?|(?:ends?|ended|clos(?:es?|ed)|conclud(?:es?|ed))"
    r"\s+(?:with|on)|asserts?|reports?|declares?|includes?|contains?|adds?|appends?|outputs?"
    r"|(?:gives|awards?|assigns?|grades?|rates?)\s+itself|声称|自称|写道|写着|称)"
    r"(?:\s+(?:that|with|itself|its(?:\s+own)?|it(?:\s+is|['’]s)|an?|the|(?:score|grade)\s+of))*[\s:,，：]*)"
    r"(?:" + _CLAIMED + ")",
    re.IGNORECASE,
)
_FENCE = re.compile(r"^```[A-Za-z]*\s*\n(.*)\n```$", re.DOTALL)
_JSON_KEYS = ("final_score", "final score", "score", "grade")


@dataclass(frozen=True)
class ParsedGrade:
    grade: int | None
    status: str
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.grade is None


def _value(number: str, scale: str | None) -> ParsedGrade:
    value = float(number)
    if scale and float(scale) != RUBRIC_MAX:
        return ParsedGrade(None, OUT_OF_RANGE, f"grade {number}/{scale} is not on the 0..{RUBRIC_MAX} scale")
    if not value.is_integer() or not 0 <= value <= RUBRIC_MAX:
        return ParsedGrade(None, OUT_OF_RANGE, f"grade {number} is outside 0..{RUBRIC_MAX}")
    return ParsedGrade(int(value), OK)


def _json_object(text: str) -> dict[str, Any] | None:
    text = text.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None
    value, _ = files.json_problem(text, allow_nan=True)  # nested too deep or a huge number: no object, no crash
    return value if isinstance(value, dict) else None


def _from_json(obj: dict[str, Any]) -> ParsedGrade:
    keys = {str(k).strip().casefold(): v for k, v in obj.items()}
    for key in _JSON_KEYS:
        if key in keys:
            value = keys[key]
            number = isinstance(value, (int, float, str)) and not isinstance(value, bool)
            match = re.fullmatch(r"\s*" + _NUMBER + r"(?:\s*/\s*" + _NUMBER + r")?\s*", str(value)) if number else None
            if not match:
                return ParsedGrade(None, NO_GRADE, f"the {key!r} value {value!r} is not a number")
            return _value(match.group(1), match.group(2))
    return ParsedGrade(None, NO_GRADE, "a JSON reply without a 'score' key")


def _unquoted(line: str) -> str:
    """``line`` with each span of :data:`_QUOTED` that holds a grade blanked to a space. An opening mark after the last
    of its closing mark is read as a character that opens no quote (as it opens none): the same spans, in linear time."""
    masked = line
    for opener, closer in _OPENERS:
        last = masked.rfind(closer) + 1
        masked = masked[:last] + masked[last:].replace(opener, "\0")
    parts, at = [], 0
    for quote in _QUOTED.finditer(masked):
        text = line[quote.start() : quote.end()]
        parts += [line[at : quote.start()], " " if _GRADE.search(text) else text]
        at = quote.end()
    return "".join(parts) + line[at:]


def final_line(region: str) -> str | None:
    """The last line with a letter or digit (trailing rules, fences and blank lines skipped)."""
    for line in reversed(region.splitlines()):
        if any(c.isalnum() for c in line):
            return line.strip()
    return None


@functools.lru_cache(maxsize=1)
def fixed_prompt_parts() -> tuple[str, ...]:
    """The grader prompt's fixed text (between the inserted question, reference and response)."""
    return tuple(literal for literal, _, _, _ in string.Formatter().parse(GRADER_TEMPLATE) if literal.strip())


def _sent(prompt: Iterable[str | None] | str | None) -> list[str]:
    if prompt is None:
        return list(fixed_prompt_parts())
    parts = [p for p in ([prompt] if isinstance(prompt, str) else prompt) if p]
    # The inserted texts are escaped in the prompt; a grader may copy them unescaped.
    return parts + [html.unescape(p) for p in parts if html.unescape(p) != p]


def parse_grade(reply: str | None, *, prompt: Iterable[str | None] | str | None = None) -> ParsedGrade:
    """The grade on the grader's final line, or a judge failure saying why (never raises).

    ``prompt``: the grader prompt sent (default: its fixed text); what the reply copies from it is not read.
    """
    region = answer_region(reply)
    if region is None:
        return ParsedGrade(None, NO_GRADE, "the grader's reasoning was never closed")
    echoes = find_echoes(region, _sent(prompt), answers=_GRADE_ANSWER)
    own = echoes.stripped()
    if not any(c.isalnum() for c in own) and any(c.isalnum() for c in region):
        return ParsedGrade(None, NO_GRADE, "the grader's reply only repeats its prompt")
    region = own
    whole = _json_object(region)
    if whole is not None:
        return _from_json(whole)
    line = final_line(region)
    if line is None:
        return ParsedGrade(None, NO_GRADE, "an empty reply")
    if line.startswith(">"):
        return ParsedGrade(None, NO_GRADE, "the last line is a quotation, not the grader's 'Final Score: N'")
    # A grade line the response itself holds, copied with the line before it ("Size M.\nFinal Score: 3"):
    # a copy too short for the echo rule, not the grader's own last line.
    previous = final_line(region[: region.rfind(line)])
    if previous is not None and echoes.in_prompt(f"{previous}\n{line}"):
        return ParsedGrade(None, NO_GRADE, "the last line continues a copy of the prompt")
    last = _json_object(line)
    if last is not None:
        return _from_json(last)
    line = BOXED.sub(r"\1", line)  # "Final Score: \boxed{2}", "$\boxed{3}$": the box's grade
    unquoted = _unquoted(line)
    if any(c.isalnum() for c in unquoted):
        line = unquoted
    if previous is not None and _NAME_ALONE.search(previous) and _NUMBER_ALONE.match(line):
        line = f"{previous} {line}"
    own_line = _REPORTED.sub(lambda report: report.group("report") + " ", line)
    if own_line != line and not _GRADE.search(own_line):
        return ParsedGrade(None, NO_GRADE, "the last line reports the response's grade, not the grader's own")
    line = own_line
    found = list(_GRADE.finditer(line))
    if not found:
        return ParsedGrade(None, NO_GRADE, "no 'Final Score: N' on the last line")
    grades = []
    for match in found:
        parsed = _value(match.group(1), match.group(2))
        if parsed.failed:
            return parsed
        grades.append(parsed.grade)
    if len(set(grades)) > 1:
        return ParsedGrade(
            None, CONFLICTING, f"the last line names different grades {', '.join(map(str, dict.fromkeys(grades)))}"
        )
    if _HEDGE.match(line[found[-1].end() :]):
        return ParsedGrade(None, CONFLICTING, f"the last line hedges: {line!r}")
    if set(map(int, _LATER_GRADE.findall(_SCALE.sub(" ", line[found[-1].end() :])))) - {grades[0]}:
        return ParsedGrade(None, CONFLICTING, f"the last line names another grade after its grade: {line!r}")
    return ParsedGrade(grades[0], OK)


# --- exact answers (the deterministic ecomeval_exact tasks) ---------------------------------------

#: References that are one option letter (App. D.1, D.3, D.4 multiple choice).
OPTION_LETTER = re.compile(r"^[A-J]$")
#: A short exact answer: one line of at most this many words (App. A.2's "1", A.6's "Nike").
EXACT_MAX_WORDS = 3
EXACT_MAX_CHARS = 32

_TAG = re.compile(r"<[^<>\n]{1,40}>")
# A boxed answer (math-tuned models' habit): "\\boxed{B}", "$\\boxed{\\text{20}}$" read as "B", "20".
# "B." "(B)" "B)" "B:" or "B" alone on the first line, or "B, because ..." (the letter, then why); not "I think ..."
# (I is a letter too), nor "A, B and C are shoes" (a comma before anything but a reason lists).
_LEADING_LETTER = re.compile(
    r"^[(\[]?([A-J])(?:[).:\]]|$|,\s*(?:because|since|as(?!\s+well)|given\s+that|因为))", re.MULTILINE
)
# "answer is B", "Answer: B", "option (B)", "答案是B", "选B", in the data's other languages too ("Jawaban: B",
# "Jawapan yang betul ialah B", "Đáp án đúng là B", "คำตอบคือ B", "A resposta correta é B"): the letter itself is
# matched case-sensitively (and "I" followed by a word is the pronoun: "Answer: I think B"); a lower-case letter only
# where nothing but the letter can be meant, a bracket or the sentence's or line's end after it ("Answer: b", "the
# answer is (c).", "答案：b"; not "the answer is a bit unclear", nor "i.e."). Or a choice stated in
# a sentence of its own: "I think B.", "I'd go with (B).", "It's B." (the letter ends it: "It is A good fit"), a
# lower-case letter too when a bracket or a closing mark follows ("I think b."; not "I think a good choice is ...",
# nor "... it is a" cut off by a limit).
# Or the letter said to be right or the answer: "B is correct.", "B is the right answer", "B is my answer" (not asked:
# "C is the answer?"). Or a conclusion whose sentence the letter ends: "Therefore, B.", "So B", "Thus (B).", "所以B。"
# (not "So A good option is ...": "A" the article, a word follows).
# The answer's name in the data's languages (answer, 答案, jawaban/jawapan, đáp án, câu trả lời, คำตอบ, resposta).
_ANSWER_WORD = r"答案|jawa[bp]an(?:nya)?|đáp\s*án|câu\s+trả\s+lời|ค(?:ำ|\u0e4dา)ตอบ|resp(?:o|ue)sta"
# A stated answer's words before the answer itself ("answer is", "Answer:", "答案是", "Jawapan yang betul ialah").
# (Each optional word or sign takes the blanks after it: two runs meeting around one backtracked, cubic in a long run,
# as removing markdown leaves one, "Answer" + " *" x 2,000.)
_ANSWER_MARKER = (
    r"(?:answer|(?P<option>option|choice)|选项|选择|选|" + _ANSWER_WORD + r")"
    r"(?:\s+(?:yang\s+)?(?:benar|betul|tepat|đúng|correta|certa|correcta)|ที่ถูกต้อง)?"
    r"\s*(?:(?:is|['’]s|(?:should|must|would|will)\s+be|:|是|为|：|adalah|ialah|là|é|es|คือ)\s*)?(?:[:\-]\s*)?[*\"'(\[]*"
)
# A choice said as the reply's own before the answer itself ("I think", "I'd go with", "It's", "I believe it is"); the
# apostrophe straight or curly ("It’s", GPT-style replies' habit).
_CHOICE_SAID = (
    r"(?<![A-Za-z'’])(?:i\s*(?:think|believe|guess|choose|pick|select|(?:would|['’]d|will|['’]ll)\s+(?:say|go\s+with"
    r"|pick|choose))|it\s+is|it['’]s|it\s+must\s+be|go\s+with)\s+(?:(?:it\s+is|it['’]s|option)\s+)?[*\"'(\[]*"
)
_ANSWER_IS = re.compile(
    _ANSWER_MARKER + r"((?-i:[A-J])|(?<![A-Za-z])(?-i:[a-j])"
    r"(?=[*\"']*[)\]]|[*\"']*[ \t]*(?:[.!;。！](?![A-Za-z])|\n|$)))"
    r"(?![A-Za-z])(?!(?<=I)\s+[a-z])"
    r"|" + _CHOICE_SAID + r"((?-i:[A-J])(?=[*\"')\]]*[ \t]*(?:[.!,;\n]|$))"
    r"|(?-i:[a-j])(?=[*\"']*[)\]]|[*\"']*[ \t]*[.!;。！](?![A-Za-z])))"
    r"|(?<![A-Za-z'])((?-i:[A-J]))[*\"')\]]*\s+is\s+(?:(?:the\s+)?(?:correct|right)\b|(?:the|my)\s+(?:final\s+)?answer\b"
    r"(?![^.!?\n]*\?))"
    r"|(?<![A-Za-z'])(?:therefore|so|thus|hence|所以|因此)\s*(?:,\s*)?(?:option\s+)?[*\"'(\[]*((?-i:[A-J]))"
    r"(?=[*\"')\]]*[ \t]*(?:[.!。！\n]|$))",
    re.IGNORECASE,
)
# What follows "option C" that speaks of the option rather than for it: "option C is wrong", "choice D is a belt",
# "option C would be too small", "option C isn't" (not "option C is correct", "... is the right answer").
_DESCRIBED = re.compile(
    r"[\"')\]]*\s+(?:(?:is|was|(?:would|could|might|may|will)\s+be|seems)\s+(?!(?:the\s+|my\s+)?(?:correct|right|best|answer)\b)"
    r"|(?:describes|refers|means|isn't|wasn't|doesn't|does\s+not|fails)\b)",
    re.IGNORECASE,
)
# A second letter offered beside the stated one: "the answer is B or C" ("B atau C"), "B, or maybe C", "B (or C)", "B/C",
# "B, but maybe C", "B, C", "B C" (but "B, C is 30" goes on to say something of C).
# (As in _ANSWER_MARKER, each optional sign or word takes the blanks after it.)
_OTHER_LETTER = re.compile(
    r"[\s*)\]]*(?:(?:(?:[,;(]\s*)?(?:or|或|atau|hoặc|ou|หรือ)\s*(?:,\s*)?(?:(?:maybe|perhaps|possibly)\s*(?:,\s*)?)?"
    r"|(?:/|and|(?:[,;]\s*)?(?:but\s+)?(?:maybe|perhaps|possibly))\s*)[(\[]?((?-i:[A-J]))(?![A-Za-z])"
    r"|(?:[,，、]\s*|\s)[(\[]?((?-i:[A-J]))[)\]]?(?=[ \t*.]*(?:$|\n|[,，、;/]|(?:or|and)\b)))",
    re.IGNORECASE,
)
# "Option B" with no "is" or ":" between (a mention as much as a choice).
_BARE_OPTION = re.compile(r"(?:option|choice)\s*[*\"'(\[]*[A-J]", re.IGNORECASE)
# A letter alone on its line ("A\nB\nC"): two or more such lines list the options.
_LONE_LETTER = re.compile(r"^[\s*_#`]*[(\[]?((?-i:[A-J]))[)\].:]?[\s*_`]*$", re.MULTILINE)
# An option entry of a listing: "A. 10", "(B) 20", "C) shoes" at the start of a line or after a space.
_OPTION_ENTRY = re.compile(r"(?:^|(?<=\s))[(\[]?((?-i:[A-J]))[).:\]](?=\s)", re.MULTILINE)
# A reply that is one option line ("D. Request a return ...", cut off or not) and nothing else.
# (The line's first non-blank character is found at once, and only what follows its end may be blank or markdown: the
# same replies, but a long line no longer backtracks between three runs that take the same characters, cubic.)
_ONE_OPTION_LINE = re.compile(r"^[\s*_#`]*[(\[]?[A-J][).:\]][^\S\n]*\S[^\n]*(?:\n[\s*_`]*)?$")
# An option of the question: a line "A. 10", "(B) 20", "C) shoes".
_OPTION_LINE = re.compile(r"^[ \t]*[(\[]?((?-i:[A-J]))[).:\]][ \t]*(\S[^\n]*)$", re.MULTILINE)
# What reads as an answer (kept whole, never an echo on its own): a stated choice or a lone letter.
_LETTER_ANSWER = re.compile(_ANSWER_IS.pattern + r"|(?<![A-Za-z])(?-i:[A-J])(?![A-Za-z])", re.IGNORECASE)
_PREFIX = re.compile(r"^(?:final\s+answer|answer|output|result)\s*[:：]\s*", re.IGNORECASE)
# A choice revised after it is made: "On second thought, C.", "Wait, it's C.", "Actually (C) is right".
_REVISION = re.compile(
    r"(?<![A-Za-z])(?:on\s+(?:second|further)\s+thought|actually|wait|correction|scratch\s+that"
    r"|i\s+change\s+my\s+(?:answer|mind)(?:\s+to)?)[\s,:;.!-]*"
    r"(?:(?:it['’]?s|it\s+is|make\s+it|(?:i['’]?ll\s+)?go\s+with|i\s+(?:say|pick|choose)|the\s+answer\s+is)\s+)?"
    r"(?:option\s+)?[\"'(\[]*((?-i:[A-J]))[\"')\]]*"
    r"(?=[ \t]*(?:[.!,;/\n]|$|or\b|is\s+(?:correct|right|better|the\s+(?:answer|best|right))))",
    re.IGNORECASE,
)

# A short answer's lead-in, opening the reply: the stated answer's and the said choice's words above ("The answer is",
# "Answer is:", "Final answer:", "I think (it is)", "I believe", "It's", "答案是", "Jawaban:"), one or more of them
# ("I think the answer is"), after an article ("the", "my"; Portuguese "a": "A resposta correta é"). Nothing
# follows the loop in the pattern, so its greedy match never backtracks (a reply of 7000 "The answer is").
_LEAD_IN = re.compile(
    r"^(?:\s*(?:(?:the|my|a)\s+)?(?:final\s+|correct\s+)?(?:" + _ANSWER_MARKER + "|" + _CHOICE_SAID + "))+",
    re.IGNORECASE,
)
# Where a short answer may end inside a reply: at a mark that can close a sentence or clause ("Nike." "Nike,"
# "Nike\n"), or at its end; the text up to there is compared with the reference.
_ANSWER_END = re.compile(r"[.,;!?。，；！？\n]")
# What may follow a short answer before more text: a sentence break or a line break (then an explanation), or
# ", because/since/as ..." (why: not ", as well as") or ", not ..." (what it is not: "Nike, not Adidas"); not
# ", or ..." nor ", but ...". A later sentence opening with why ("Nike. Because the logo.") is no answer of its own.
_WHY = re.compile(r"(?:because|since|as(?!\s+well)|given\s+that)\b|因为", re.IGNORECASE)
_THEN = re.compile(
    r"[\"'”’)\]]*(?:[.!。！]+[\"'”’)\]]*(?=\s)|[ \t]*\n|[ \t]*[,，]\s*"
    r"(?:(?P<why>" + _WHY.pattern + r")|(?P<not>not\b)))",
    re.IGNORECASE,
)
# Words in the explanation that offer or state another answer ("Nike. Or maybe Adidas", "Nike. Actually, it could
# be Puma", "Nike. The answer is Adidas"): no credit, whatever else they say. An English "or" offers one when it opens
# the explanation or a clause of it ("Nike. Or Adidas", "..., or Adidas", "(or Adidas)") or sits beside the answer ("It
# is Nike or Adidas", checked in _explained); inside a clause it is innocent ("because the swoosh or the logo shows it").
# (No mark before "or" is a space: each run of spaces is scanned from one mark at most.)
_ALTERNATIVE = re.compile(
    r"(?<![^\W\d_])(?:maybe|perhaps|possibly|either|alternatively|otherwise|actually|wait|unless|unsure"
    r"|not\s+(?:sure|certain)|(?:could|might|may)\s+(?:also\s+)?be|answer|atau|hoặc|ou|หรือ)(?![^\W\d_])"
    r"|(?:^|[,;:.!?()/—–])\s*or(?![^\W\d_])|或|" + _ANSWER_WORD,
    re.IGNORECASE,
)
# (A run of spaces splits only after a mark or at a line break: a pattern starting with one would rescan it.)
_SENTENCES = re.compile(r"(?<=[.!?。！？])\s+|\n\s*")
# A number as written: "20", "20.00", "-3.5", "1,000" (thousands grouped by commas); equal values are one answer.
_NUMBER_WRITTEN = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_CLOSING = " \t\n.,;:!?\"'“”‘’()[]{}"


def exact_answer(reference: str) -> str | None:
    """The reference as an exact answer (an option letter or a short one-line answer), else None."""
    text = reference.strip()  # an option letter is a short one-line answer too
    short = len(text) <= EXACT_MAX_CHARS and len(text.split()) <= EXACT_MAX_WORDS
    return text if text and "\n" not in text and short else None


def _plain(text: str) -> str:
    """NFKC text (full-width ``Ｂ`` ``（B）`` are ``B`` ``(B)``) with boxed answers unboxed."""
    return BOXED.sub(r"\1", unicodedata.normalize("NFKC", text))


def _unmarked(text: str) -> str:
    """:func:`_plain` text with tags and markdown emphasis or code marks blanked out."""
    return _TAG.sub(" ", _plain(text)).replace("*", " ").replace("`", " ")


def normalise(text: str) -> str:
    """Case-folded NFKC text without markdown, tags, surrounding quotes/punctuation and extra spaces; an
    apostrophe curly or straight alike ("Levi’s" is "Levi's": NFKC keeps them apart)."""
    text = _PREFIX.sub("", _unmarked(text).replace("’", "'").strip())
    text = " ".join(text.split()).casefold()
    return text.strip(" .,;:!?\"'“”‘’()[]{}")


def option_letter(reply: str) -> str | None:
    """The option a reply picks: the last "answer is B" / "Answer: B" / "Therefore, B.", else its leading letter
    ("B. Trousers ...", "(B)", "B, because ...") or its final line's ("... so\nB. 20"). A reply listing two or
    more options ("A. 10\nB. 20", copied or made up) picks none of them unless it states its answer. "Option C
    is wrong" speaks of C: it picks C only when the reply states and leads with no other letter and speaks of
    no other option. A revision after the choice ("On second thought, C.") picks the revised letter; a
    different letter left alone on the last line ("The answer is B.\n\nC") leaves the choice open: none."""
    text = _TAG.sub(" ", _plain(reply)).replace("*", "").strip()
    letter, end = _first_choice(text)
    revisions = list(_REVISION.finditer(text, end if letter else 0))
    if revisions:
        last = revisions[-1]
        other = _OTHER_LETTER.match(text, last.end())
        return None if other and last.group(1) not in other.groups() else last.group(1)
    if letter is None:
        return None
    lone = _LONE_LETTER.fullmatch(text, text.rfind("\n") + 1) if "\n" in text[end:] else None
    return None if lone and lone.group(1) != letter else letter


def _first_choice(text: str, *, before: bool = False) -> tuple[str | None, int]:
    """The letter a reply picks before any revision, and where its choice ends in ``text``. A bare "Option A"
    after a choice of another letter ("The answer is B. Option A", cut off) leaves it open, like a lone letter
    (``before``: reading the text before one, for a stated or leading choice only)."""
    stated = list(_ANSWER_IS.finditer(text))
    described = [m for m in stated if m.group("option") and _DESCRIBED.match(text, m.end())]
    stated = [m for m in stated if m not in described]
    if stated:
        last = stated[-1]
        letter = _stated_letter(last)
        other = _OTHER_LETTER.match(text, last.end())
        unsure = other is not None and letter not in other.groups()
        if not before and not unsure and _BARE_OPTION.fullmatch(last.group(0)):
            unsure = _first_choice(text[: last.start()], before=True)[0] not in (None, letter)
        return (None if unsure else letter), last.end()
    if len(set(_OPTION_ENTRY.findall(text))) > 1 or len(_lone_letters(text)) > 1:
        return None, len(text)
    lead = _LEADING_LETTER.match(text)
    if lead:
        return lead.group(1).upper(), lead.end()
    lead = _LEADING_LETTER.match(final_line(text) or "")
    if lead:
        return lead.group(1).upper(), len(text)
    spoken_of = {_stated_letter(m) for m in described}
    return (spoken_of.pop() if len(spoken_of) == 1 and not before else None), len(text)


def _lone_letters(text: str) -> set[str]:
    """The letters of :data:`_LONE_LETTER` in ``text``, line by line: the letters its search finds (a match holds one
    letter, on a line that is a lone letter's), but linear in a run of blank lines (a search from each of their starts
    rescanned the rest of the run)."""
    return {m.group(1) for line in text.split("\n") if (m := _LONE_LETTER.fullmatch(line))}


def _stated_letter(match: re.Match[str]) -> str:
    return (match.group(2) or match.group(3) or match.group(4) or match.group(5)).upper()


def named_option(reply: str, question: str) -> str | None:
    """The option of ``question`` whose text (or whole option line) the whole ``reply`` is, after
    normalisation ("20", "D. Request a return ..."); None when it is no option's or several options'."""
    said = normalise(reply)
    named = {
        letter
        for letter, text in _OPTION_LINE.findall(question)
        if said in (normalise(text), normalise(f"{letter}. {text}"))
    }
    return named.pop() if len(named) == 1 else None


def exact_match(reference: str, reply: str | None, *, prompt: str | None = None, truncated: bool | None = None) -> bool:
    """Whether ``reply`` gives the exact answer ``reference`` (after normalisation).

    An option-letter reference matches the letter the reply picks in what it wrote itself: text copied
    from ``prompt`` (the question, with its options and instructions; ``scorers.replies.find_echoes``) is
    not read, except a reply that is one of the question's option lines and nothing else. Any other
    reference is read by :func:`says` in what the reply wrote itself (the reference is never a copy on its
    own). ``truncated``: the reply was stopped by a limit.
    """
    region = answer_region(reply) or ""
    target = reference.strip()
    if OPTION_LETTER.match(target):
        own = strip_echoes(region, prompt, answers=_LETTER_ANSWER, truncated=truncated) if prompt else region
        picked = option_letter(own)
        if truncated and prompt and picked != option_letter(strip_echoes(region, prompt, answers=_LETTER_ANSWER)):
            picked = None  # the line the limit cut, read as written, changes the choice ("A. 10\nB. 20": a listing)
        if picked is None and prompt and region.strip() and not truncated:
            # the option it chose, restated as its whole reply: its line ("D. Request a ...") or its text ("20")
            picked = option_letter(region) if _ONE_OPTION_LINE.match(region) else named_option(region, prompt)
        return picked == target.upper()
    own = strip_echoes(region, prompt, answers=_short_answer(target), truncated=truncated) if prompt else region
    return bool(own.strip()) and says(target, own)


def _short_answer(reference: str) -> re.Pattern[str]:
    """A short answer as the echo rule keeps it whole (never an echo on its own): the reference's words. (Its
    lead-in is no part of it: "\\s*" runs on either side of an optional lead-in would backtrack over long spaces.)"""
    words = r"[\s*_`]+".join(map(re.escape, reference.split()))
    return re.compile(rf"(?<![^\W_]){words}(?![^\W_])", re.IGNORECASE)


def says(reference: str, reply: str) -> bool:
    """Whether ``reply`` gives the short (non-letter) answer ``reference``: as its whole text, or after a lead-in
    ("The answer is Nike.", "I think it is Nike"), or as its first sentence or clause followed by why ("Nike. The
    logo shows it.", "Nike, because ...", "Nike, not Adidas") that offers no other answer; a number by its value
    ("20.00" and "20", "1,000" and "1000"). Normalised as :func:`normalise`; a mention in prose is no answer."""
    text = _unmarked(reply).strip()
    target = normalise(reference)
    lead = _LEAD_IN.match(text)
    reach = 2 * len(reference) + 16  # an answer's text, with spaces and marks, is not much longer than the reference
    for start in dict.fromkeys((0, lead.end() if lead else 0)):
        ends = [m.start() for m in _ANSWER_END.finditer(text, start, start + reach)] + [len(text)]
        for end in ends:
            if _same(normalise(text[start:end]), target) and _explained(text[end:], target):
                return True
    return False


def _same(said: str, target: str) -> bool:
    """Two normalised answers alike, or two numbers of equal value (not "200" and "20")."""
    if said == target:
        return True
    numbers = [_NUMBER_WRITTEN.fullmatch(text) for text in (said, target) if len(text) <= EXACT_MAX_CHARS]
    return len(numbers) == 2 and all(numbers) and len({Decimal(t.replace(",", "")) for t in (said, target)}) == 1


def _explained(rest: str, target: str) -> bool:
    """Whether what follows a short answer is nothing, or an explanation naming no other answer: no alternative
    offered, and no later sentence or line that is a short answer of its own ("Nike.\nAdidas")."""
    if not rest.strip(_CLOSING):
        return True
    then = _THEN.match(rest)
    said = f" {normalise(rest)} "
    if then is None or _ALTERNATIVE.search(rest) or f" {target} or " in said or f" or {target} " in said:
        return False
    sentences = _SENTENCES.split(rest[then.end() :].strip())
    if then.group("why") or then.group("not"):
        sentences = sentences[1:]  # the reason, or what it is not
    return not any(
        exact_answer(sentence) and not _same(normalise(sentence), target) and normalise(sentence)
        for sentence in sentences
        if not _WHY.match(sentence)  # a reason ("Because the logo."), not an answer of its own
    )
