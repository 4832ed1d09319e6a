"""The careful exact reading of an option answer (``ecomeval_exact``): what a human grader accepts as the
option a reply picks, and what it does not (a listing of options, a copy of the question); and of a short
answer copied from the question."""

from __future__ import annotations

import pytest

from ecom_tasks.ecomeval.parsing import NO_GRADE, exact_match, option_letter, parse_grade

QUESTION = (
    "A customer buys 2 packs of socks at 10 dollars each. How much do they pay?\n"
    "A. 10\nB. 20\nC. 30\nD. Request a return or exchange from the order page\n"
    "Answer with the option letter only."
)

# (reply, the option a careful human reads in it, or None)
REPLIES = [
    ("B", "B"),
    ("**B**", "B"),
    ("The answer is B.", "B"),
    ("Answer: B", "B"),
    ("B. 20", "B"),
    ("(B) 20", "B"),
    ("Two packs at 10 dollars each cost 20 dollars.\nB. 20", "B"),
    ("2 x 10 = 20, so\n\nB", "B"),
    ("<think>2 x 10 = 20</think>B", "B"),
    ("D. Request a return or exchange from the order page", "D"),  # the chosen option restated, alone
    ("B\n\nExplanation: 2 x 10 = 20. A is one pack.", "B"),  # the letter alone on the first line, then why
    ("答案是B", "B"),  # in the question's language
    ("答案：B。", "B"),
    ("选B", "B"),
    # the data's other languages: Indonesian, Malay, Vietnamese, Thai, Portuguese
    ("Jawaban: B", "B"),
    ("Jawapan yang betul ialah B.", "B"),
    ("Đáp án đúng là B", "B"),
    ("คำตอบคือ B", "B"),
    ("A resposta correta é B.", "B"),
    ("Jawaban: B atau C", None),  # "or"
    ("The answer is B, C is 30.", "B"),
    # A lower-case letter after the answer marker, where nothing but the letter can be meant (was no choice).
    ("Answer: b", "B"),
    ("the answer is (c).", "C"),
    ("答案：b", "B"),
    ("Answer: a", "A"),  # alone on its line: the letter, not the article
    ("the answer is a bit unclear", None),
    ("Answer: i.e. the one for two packs", None),
    ("The answer is b or c.", None),
    # A choice stated in a sentence of its own; "I" before a word is the pronoun, not option I.
    ("I think B.", "B"),
    ("I'd go with (B).", "B"),
    ("It's B.", "B"),
    ("Answer: I think B.", "B"),
    ("I'll choose B.", "B"),
    ("The answer should be B.", "B"),
    ("B is the correct answer.", "B"),  # the letter said to be right
    ("C is not correct; B is correct.", "B"),
    ("I don't think B.", None),
    # A conclusion the letter ends, and the letter first followed by why (both were no choice).
    ("2 x 10 = 20. Therefore, B.", "B"),
    ("Hence B is the answer.", "B"),
    ("B is my answer", "B"),
    ("Hence, A is wrong and B is the answer.", "B"),
    ("A is the answer, not B", "A"),
    ("C is the answer? No.", None),
    ("Is C the answer? B is the answer.", "B"),
    ("所以B。", "B"),
    ("So the answer: B", "B"),
    ("Two packs cost 20 dollars, thus (B).", "B"),
    ("B, because the other options are one or three packs.", "B"),
    ("A, B and C are all shoes; the answer is D", "D"),  # a listing before a stated answer
    ("A, B, C", None),
    ("So A good option is the second one.", None),  # "A" the article
    ("So A, B and C are all prices.", None),
    ("It is not B.", None),
    ("Final answer: B\nB\nB", "B"),  # one letter repeated
    # The text of exactly one option, as the whole reply.
    ("20", "B"),
    ("Answer: 20", "B"),
    ("Request a return or exchange from the order page", "D"),
    ("20 or 30", None),
    ("D. Request a return or ex", "D"),  # its chosen option line, cut off: the letter leads it (not known cut off)
    # A concession, then the answer.
    ("It could be A at first sight, but on balance:\nB", "B"),
    # Hedges: two letters offered are no choice.
    ("I think the answer is B or C", None),
    ("The answer is B/C", None),
    ("Answer: (B) or (C)", None),
    ("Answer: A/B/C/D", None),  # the placeholder of a format line
    ("Answer: B,C", None),  # two options where the question has one correct option (the paper's D.1-D.4)
    ("Answer: B, C.", None),
    ("The answer is B C", None),
    ("I think B, but maybe C.", None),
    ("The answer is B, or possibly C.", None),
    ("Answer: B, or C", None),
    ("The answer is B or maybe C", None),
    ("Answer: B (or C)", None),
    ("Answer: B or, perhaps, C", None),
    ("It's B, or maybe C.", None),
    ("Answer: B, and C is 30.", "B"),  # goes on to say something of C
    # The answer, then why the other options are not it: "option C is ..." speaks of C, it does not pick it.
    ("The answer is B. Option C is wrong because 30 is three packs.", "B"),
    ("Answer: B\nOption A is one pack, option C is three packs and option D is not a price.", "B"),
    ("B. 20\nOption A is the price of one pack.", "B"),
    ("Answer: B. Choice D is about returns.", "B"),
    ("Option C is not right; option B is.", "B"),
    ("Option B is a good fit: 2 x 10 = 20.", "B"),  # speaks of B alone
    ("Option A is one pack. Option C is three packs.", None),
    ("A\nB\nC\nD", None),  # bare letters listed one a line
    ("A. 10\nB. 20\nC. 30\nD. 40\nThe answer is B.", "B"),  # a listing, then a stated answer
    # Listings of options, copied or made up: no choice in them.
    ("A. 10\nB. 20", None),
    ("A. 10 B. 20", None),
    ("A) 15\nB) 25\nC) 35", None),
    ("(A) 10\n(B) 20\n(C) 30", None),
    # Copies of the question, garbled and cut off: no choice either.
    ("A. 10\nB. 20\nC. 30\nD. REQUEST A RETURN OR EXCHANGE FROM THE ORDER PAGE\nANSWER WITH THE OPTION", None),
    ("**D. Request a return or exchange from the order page**\n\nAnswer  with  the  option  le", None),
    ("how much do they pay?\n## A. 10 B. 20", None),
    ("A customer buys 2 packs of socks at 10 dollars each. How much do they pay? A. 10", None),
    ("Answer with the option letter only.", None),
    ("I think it is probably the second one", None),
    # Full-width letters and brackets (NFKC, as the text answers are read), and a boxed answer.
    ("答案：Ｂ", "B"),
    ("（B）20", "B"),
    ("Ｂ．20", "B"),
    ("\\boxed{B}", "B"),
    ("2 x 10 = 20, so the answer is $\\boxed{B}$.", "B"),
    ("\\boxed{\\text{B}}", "B"),
    ("\\boxed{B} or \\boxed{C}", None),
    # A choice revised after it is made: the revised letter; a different letter left alone at the end: open.
    ("B. Sneaker\n\nOn second thought, C.", "C"),
    ("The answer is B. Wait, it's C.", "C"),
    ("Answer: B\n\nActually (C) is right.", "C"),
    ("I change my answer to D.", "D"),
    ("B or C. Actually, C.", "C"),
    ("Answer: B. Wait, C or D.", None),
    ("The answer is B.\n\nC", None),
    ("B. 20\n\nD", None),
    ("B\n\nActually, B is correct.", "B"),
    ("The answer is B.\n\nB", "B"),
    ("The answer is B. Actually C is wrong.", "B"),  # speaks of C
    ("The answer is B. Option A", None),  # a bare mention of another option after the choice (cut off?): open
    ("**B**\n\nOption C", None),
    ("The answer is option B. Option A is 10, option C is 30.", "B"),
    ("The answer is A. Option B would be wrong.", "A"),  # speaks of B (was read as B)
    ("The answer is B. Option C doesn't fit.", "B"),
    ("Option C isn't right; the answer is B.", "B"),
    ("Option B would be correct.", "B"),
    ("Actually, I think B.", "B"),
    # A lower-case letter after a choice verb, ended by a mark or a bracket (was no choice); a curly apostrophe.
    ("I think b.", "B"),
    ("I’d go with (b).", "B"),
    ("It’s B.", "B"),
    ("The answer’s B.", "B"),
    ("The answer is B. Wait, it’s C.", "C"),
    ("I think a good choice is B.", "B"),  # "a" the article
    ("I think a good choice is the second one.", None),
    ("I think b or c.", None),
    ("I think it is a", None),  # no mark after it: maybe cut off before a word
]


@pytest.mark.parametrize(("reply", "picked"), REPLIES)
def test_the_option_a_careful_reader_accepts(reply, picked):
    matched = {letter for letter in "ABCD" if exact_match(letter, reply, prompt=QUESTION)}
    assert matched == ({picked} if picked else set())


# (options, reply, the option whose text the reply is): text matching several options names none.
@pytest.mark.parametrize(
    ("options", "reply", "picked"),
    [
        ("A. M\nB. L\nC. m\nD. XL", "XL", "D"),
        ("A. M\nB. L\nC. m\nD. XL", "M", None),  # A and C read alike
        ("(A) Nike\n(B) Adidas", "**Adidas**", "B"),
        ("A. Nike\nB. Adidas", "Nike Air", None),  # not an option's whole text
    ],
)
def test_an_options_whole_text_names_that_option(options, reply, picked):
    question = f"Which one?\n{options}\nAnswer with the option letter only."
    assert {letter for letter in "ABCD" if exact_match(letter, reply, prompt=question)} == (
        {picked} if picked else set()
    )


def test_a_listing_is_no_choice_without_the_prompt_too():
    assert option_letter("A. 10\nB. 20") is None and option_letter("B. 20") == "B"
    assert exact_match("A", "A. 10\nB. 20") is False and exact_match("B", "Total: 20\nB. 20") is True


# (reply stopped by the token limit, the option a careful human reads in it, or None): the cut line may be a copy.
CUT_OFF = [
    ("D. Request a return or ex", None),  # its option line, or a copy of the question's
    ("B\n\nExplanation: 2 x 10 = 20, so A is", "B"),
    ("The answer is B.\n\nAnswer with the opt", "B"),
    ("A. 10\nB. 20", None),  # the options copied, one after the other: no choice, the last line cut or not
    ("B. 20\nC. 30", None),
]


@pytest.mark.parametrize(("reply", "picked"), CUT_OFF)
def test_the_option_a_reply_cut_off_picks(reply, picked):
    matched = {letter for letter in "ABCD" if exact_match(letter, reply, prompt=QUESTION, truncated=True)}
    assert matched == ({picked} if picked else set())


SHORT_QUESTION = (
    'Customer message: "It\'s Nike. The logo on the box shows it." Which brand does the customer name? '
    "Answer with the brand name only."
)

# (reply, whether a careful human credits it with "Nike"): a copy of the question is not the reply's own answer.
SHORT_REPLIES = [
    ("Nike", True),
    ("It's Nike.", True),  # too short to be a copy
    ("The answer is Nike.", True),
    ("It's Nike. The logo on the box shows it.", False),  # copied (was a match once short answers read lead-ins)
    ("Nike. The logo on the box shows it.", False),
    ('Customer message: "It\'s Nike. The logo on the box shows it."', False),
    (SHORT_QUESTION, False),
    ("Which brand does the customer name? Answer with the brand name only.\nNike", True),  # the copy, then its own
    ("It’s Nike.", True),  # a curly apostrophe
    ("It’s Nike. The logo on the box shows it.", False),  # copied, but for the apostrophe
]


@pytest.mark.parametrize(("reply", "matched"), SHORT_REPLIES)
def test_a_short_answer_copied_from_the_question_earns_nothing(reply, matched):
    assert exact_match("Nike", reply, prompt=SHORT_QUESTION) is matched


@pytest.mark.parametrize(
    ("reference", "reply", "expected"),
    [
        # Long hostile replies against the lead-in, reason and number readings: read, never hung or raised.
        ("Nike", "The answer is " * 7000 + "Nike", True),
        ("Nike", "Nike. " * 16000, True),  # one answer repeated
        ("20", "1," * 50000 + "20", False),
        # Read as "Nike , because" (a run of blanks is squeezed), as "Nike" + 8 spaces + ", because" is (was no match).
        ("Nike", "Nike" + " " * 100000 + ", because", True),
        ("B", "Therefore, " * 10000 + "B.", True),
        ("B", "I think " * 12500 + "b.", True),
        ("B", "It’s " * 20000 + "b.", True),
        ("Nike", "It’s " * 20000 + "Nike.", True),
        ("Nike", "The answer’s " * 7700 + "Nike", True),
        ("Nike", "Nike. " + "Because " * 12500 + "the logo.", True),
        ("Nike", "Nike." + " Because." * 11000, True),
        ("Nike", "Nike, because the swoosh" + " or " * 25000 + "the logo shows it", True),
        ("Nike", "Nike, because the swoosh." + " " * 100000 + "or the logo", False),
        ("Nike", "Nike" + ", or" * 25000, False),
        ("Nike", "Nike, because " + "Nike or " * 12500, False),
        ("B", "Option" + " " * 100000 + "x", False),  # blanks after an answer marker (was minutes)
        ("B", "答案" + "\t" * 100000 + "B", True),
        ("B", "B. " + "$" * 100000, True),  # dollars opening no box (was 3.4 s: rescanned from each dollar)
        # Markdown between words is removed, leaving runs of blanks squeezed before (were a minute at 4,000 characters).
        ("B", "Answer" + " *" * 50000 + "x", False),
        ("B", "Therefore" + " *" * 50000 + "x", False),
        ("B", "The answer is B" + " *" * 50000 + "x", True),
        ("B", "The answer is B or" + " *" * 50000 + "x", True),
        ("B", "Nike" + "\n*" * 50000 + "x", False),  # blank lines before no letter (was 28 s: each rescanned them)
        ("Nike", "\\boxed{" + " *" * 50000 + "Nike", False),  # a box never closed (was 49 s: blanks given back)
        # A long first option line, then another (was 3.5 s at 20,000 characters; with markdown 30 s at 4,000).
        ("B", "A. " + "x" * 100000 + "\nB. y", False),
        ("B", "A. x" + " *" * 50000 + "\nB. y", False),
    ],
    ids=(
        "lead-ins repeats digit-groups spaces conclusions lower-case-choices curly-choices curly-lead-ins curly-answer-is "
        "because-words because-sentences inner-ors spaces-before-or comma-ors ors-beside-the-answer "
        "blanks-after-a-marker tabs-after-an-answer-word dollars stars-after-a-marker stars-after-a-conclusion "
        "stars-after-the-answer stars-after-or blank-lines unclosed-box "
        "long-option-line long-option-line-markdown"
    ).split(),
)
def test_a_long_hostile_reply_is_read(reference, reply, expected):
    assert exact_match(reference, reply, prompt="Which brand is it? Answer briefly.") is expected


@pytest.mark.parametrize(
    ("reply", "grade"),
    [
        ("The response claims " * 5000 + "Final Score: 3", NO_GRADE),
        ("The response claims Final Score: 3" + " and Final Score: 3" * 5000, NO_GRADE),
        ("Final Score: " + "\\boxed{" * 5000 + "3" + "}" * 5000, NO_GRADE),
        ("The response claims " * 5000 + "3", NO_GRADE),
        ("Final Score: 1" + "; the response claims 3" * 4300, 1),
        ("Final Score: 1; the response claims " + "it is " * 16000 + "3", 1),
        ("Final Score: 1; the response claims " + "a score of " * 9000 + "3", 1),
        ("Final Score: 1; the response claims 3" + " " * 100000 + "/ 3", 1),
        # Marks between the name and the grade (were minutes: two runs of marks met around an optional colon).
        ("Final Score" + "*" * 100000 + "x", NO_GRADE),
        ("Final Score" + "*" * 100000 + "\\boxed{2}", 2),
        ("Final Score: 2 " + "“" * 100000, 2),  # quotes never closed (was 13 s: each scanned to the line's end)
    ],
    ids=(
        "reporting-verbs reported-grades nested-boxes reporting-verbs-bare reported-numbers it-is score-of scale-spaces "
        "marks-before-text marks-before-box unclosed-quotes"
    ).split(),
)
def test_a_long_hostile_grader_line_is_read(reply, grade):
    parsed = parse_grade(reply)
    assert (parsed.status if parsed.failed else parsed.grade) == grade
