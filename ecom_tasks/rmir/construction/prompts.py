"""The three model prompts of RMIR's construction pipeline (Sec. 3.1.1, 3.1.2, 3.1.4), in our own words
(the RMIR README, "Prompts are ours", "--captions is ours"). Each prompt is a sequence of parts (texts,
and images where the model sees them); the Inspect stages turn them into one user message.
"""

from __future__ import annotations

from dataclasses import dataclass

PROMPT_VERSION = "rmir-build-1"

#: Category tags of the generation output, in the order the prompt asks for them.
CATEGORY_TAGS = ("functional", "temporal", "causal")
ABSTAIN = "ABSTAIN"
#: The whole reply of a generator that declines the image itself.
SENSITIVE_ABSTAIN = "ABSTAIN: SENSITIVE IMAGE"
CAPTION_LABEL = "Caption supplied with this image (may be incomplete):"
QUERY_LABEL = "Query:"
TARGET_LABEL = "Target description:"

_CATEGORIES = """\
The three kinds of reasoning:

FUNCTIONAL: which tool or object is needed to do something with, or to, what the image shows.
  Image: a nail driven halfway into a wooden plank.
  Query: What would finish the job started here?
  Target: a claw hammer with a wooden handle.
  Why: a half-driven nail needs striking, and a hammer is the tool for it.
  Image: a wine bottle closed with a cork.
  Query: What would you need to pour a glass from this?
  Target: a metal corkscrew.
  Why: the cork has to come out first, and a corkscrew pulls it.

TEMPORAL: what comes before, after, or at the same time as what the image shows.
  Image: a striped caterpillar eating a leaf.
  Query: What will this look like once it leaves its cocoon?
  Target: a monarch butterfly with open orange wings on a flower.
  Why: the caterpillar pupates and comes out as a butterfly.
  Image: a bunch of bright green bananas on a counter.
  Query: How will these look after two weeks left where they are?
  Target: overripe bananas with brown spotted skins.
  Why: bananas ripen and then brown as days pass.

CAUSAL: what a cause shown in the image leads to, or what caused what it shows.
  Image: a tray of ice cubes on a sunny windowsill.
  Query: What will be in the tray an hour from now?
  Target: an ice cube tray holding only water.
  Why: the sun's heat melts the ice.
  Image: a potted houseplant in cracked, bone-dry soil.
  Query: What will this look like if nobody waters it for a week?
  Target: a wilted houseplant with drooping brown leaves.
  Why: without water the plant dries out and wilts.
"""

GENERATION_INSTRUCTIONS = (
    """\
You are writing test questions for image search engines that must reason. Each question pairs the \
photograph attached below (the input image) with a short text query; the answer is a different \
photograph, which you describe (the target description). A search engine will later have to find \
photographs matching your target description among a large collection of everyday photos.

Write one query and target description for each of the three kinds of reasoning below, all about the \
same input image. Every pair must meet all three rules:

1. The image matters. The target must follow from the image and the query together. If the query \
alone, without the image, would already point to the target, rewrite the query so that it only \
refers to what the image shows ("this", "these", "what is happening here").
2. It takes reasoning. Getting from the image and the query to the target needs one or two steps \
of inference about relationships, consequences or purpose, and can be explained in a sentence or \
two. Naming an object that is visible, or matching a colour or shape, is not enough.
3. There is one answer. Given the image, the query admits a single correct target. Add a detail to \
the query (a time span, who does it, what goes wrong) when several targets would otherwise fit, \
without giving the answer away. The target description names what a matching photograph must \
show and nothing more: common things, in ordinary scenes, that would appear in public photo \
collections such as Open Images or Visual Genome, specific enough that only a handful of photos \
there would match, and no invented detail (no "red umbrella" when any umbrella answers the query). \
Never describe the same object or place at another time: collections do not hold such pairs.

Keep the query under 25 words, in plain everyday English, and the target description to 50 words \
or fewer.

"""
    + _CATEGORIES
    + """
When the image does not suit one kind of reasoning, or you cannot meet all three rules for it, write \
ABSTAIN for that kind instead of a weak pair. Write ABSTAIN for all three when the image is a \
screenshot, a poster or other graphic rather than a photograph. If the image shows politically \
sensitive content (protests, riots, police action, armed conflict, political figures) or sexually \
explicit content, reply with exactly this and nothing else:
"""
    + SENSITIVE_ABSTAIN
    + """

Reply in this format, the three kinds in this order:
<image>one sentence describing the input image</image>
<functional>
<query>the query</query>
<target>the target description</target>
<reasoning>one or two sentences linking image, query and target</reasoning>
</functional>
<temporal>
...the same three fields, or ABSTAIN...
</temporal>
<causal>
...the same three fields, or ABSTAIN...
</causal>

Input image:"""
)

GENERATION_CLOSING = "Now write the three pairs for this input image."

FILTER_INSTRUCTIONS = (
    """\
You are checking a test question for image search engines that must reason. The question pairs the \
photograph below (the input image) with a text query; its answer is a photograph matching the \
target description. Decide whether the question meets every rule:

1. The image matters: the target follows from the image and the query together, not from the \
query alone. A query such as "What do you need to vacuum a carpet?" fails: it is answered without \
looking at any image.
2. It takes reasoning: one or two steps of inference about relationships, consequences or purpose \
link the image and query to the target, explainable in a sentence or two; naming something visible \
or matching a colour is not enough.
3. There is one answer: given the image, the query admits a single correct target, and ordinary \
photo collections could hold photographs matching the description (never the same object or place \
at another time).
4. The query reads naturally to a native English speaker.

"""
    + _CATEGORIES
    + """
First describe the input image in your own words, from the image alone: the query may have been \
written for another image, so do not let it colour what you see. Then check each rule. Approve \
the question when it reasonably meets all four rules; reject it when it clearly breaks at least one.

Reply in this format:
<image>your description of the input image</image>
<reasoning>your check of the rules, briefly</reasoning>
<verdict>yes or no</verdict>

Input image:"""
)

JUDGE_INSTRUCTIONS = """\
You are checking one answer to a test question for image search engines that must reason. The \
question is an input image with a text query; the answer offered is a candidate image. Decide whether \
the candidate image correctly answers the query about the input image. The link may take one or two \
steps of reasoning rather than visual similarity. Be strict: accept only a connection an ordinary \
adult would see within about thirty seconds, and check every detail the query asks for (a query \
about a scene "at night with guests" is not answered by an empty pool at night).

- True: the candidate image follows clearly from applying the query to the input image.
- False: no reasonable reading of the query and the input image leads to the candidate image.
- ABSTAIN: something you need in order to decide is missing or unclear (you cannot tell what an \
image shows, or reasonable people would read the query differently), or either image shows \
politically sensitive content (protests, riots, police action, armed conflict, political figures) \
or sexually explicit content.

Examples (images described in brackets):
- Input [a padlock on a gate], query "What would open this?", candidate [a ring of keys]: True.
- Input [a swimming pool by day], query "What does this look like at 9pm with guests?", candidate [an \
empty lit pool at night]: False, there are no guests.
- Input [a grazing cow], query "What does this animal leave behind on the field?", candidate [pine \
needles and seed pods on a forest floor]: False, it only looks alike.
- Input [a woman with dark hair tied back], query "How does this hairstyle look after a long day?", \
candidate [a different person with messy red hair]: ABSTAIN, it is unclear whether another person \
can answer.

Describe the candidate image and then the input image, each in your own words, then give your \
reasoning and your verdict.

Reply in this format:
<candidate>your description of the candidate image</candidate>
<input>your description of the input image</input>
<reasoning>why the candidate does or does not answer the query</reasoning>
<verdict>True, False or ABSTAIN</verdict>

Input image:"""

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
