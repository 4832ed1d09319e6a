"""RAIR as Inspect tasks: ``rair_general``, ``rair_hard``, ``rair_visual``.

``inspect eval ecom_tasks/rair_visual --model ecom/baseline`` runs the
Visually Salient subset with item images. Parameters (``-T name=value``):

- ``rules``: ``none`` (default; the paper's "Base"), ``builtin`` (our
  versioned rules document, ``ecom_tasks/rair/rules_v1.json``) or a path to a
  rules file (JSON in that schema, or any text file inserted verbatim, e.g.
  the official rules). The rules go into the system message, the static
  prefix shared by every sample, so provider prompt caching applies.
- ``image``: attach the item image to the user message (default ``true`` for
  ``rair_visual``, ``false`` for the others; the paper's "w/ image" / "w/o image").
- ``data``: a local JSONL/CSV/Parquet file or folder, or a Hugging Face id;
  default: the bundled fixtures (paper examples + labelled synthetic items).
- ``language``: ``en`` or ``zh`` to evaluate only records in that language;
  default: all, each asked in its own language.
- ``max_tokens``: generation budget (default 4096; reasoning comes first).

Decoding is greedy (temperature 0), as in the paper. The rules version and
prompt version are recorded in the task metadata and every sample's metadata;
``rules`` and ``image`` are in the log's task args.

Metrics: ``acc2`` (Acc@2, {L1,L2} vs {L3,L4}), ``acc4`` (Acc@4), ``macro_f1``
(over L1-L4, the paper's primary metric), ``invalid_rate``, ``n``,
``l2_dim_acc`` (predicted vs gold mismatch dimension); per industry and hard
intent ``acc2|acc4|macro_f1|n/<industry|intent>/<name>``,
``confusion/<gold>/<pred>`` (pred includes ``invalid``) and
``error_share/<dimension>`` (share of Acc@4 errors by gold rule dimension, Fig. 5).

Paper reference rows (Acc@2 / Acc@4 / Macro-F1):
General, Table 5: GPT-5 base 0.781 / 0.654 / 0.434, w/ rule 0.845 / 0.714 / 0.433;
Qwen3-235B-Instruct base 0.839 / 0.714 / 0.466.
Hard, Table 5: GPT-5 w/ rule 0.681 / 0.435 / 0.407; Gemini 2.5 Pro w/ rule 0.627 / 0.481 / 0.392.
Visually Salient, Table 4: Gemini 2.5 Pro w/o image 0.578 / 0.481 / 0.285, w/ image
0.670 / 0.561 / 0.377; GPT-5 w/ image 0.682 / 0.508 / 0.369.
(RAIR paper: Lu et al., 2025, "RAIR: A Rule-Aware Multimodal Benchmark for
Challenging E-Commerce Relevance Assessment".)
"""

from __future__ import annotations

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import HeadlineMetric
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ContentImage, ContentText, GenerateConfig

from ecom_tasks.rair.prompts import PROMPT_VERSION, RairItem, build_items
from ecom_tasks.rair.rules import RuleSet, load_rules, rules_version
from ecom_tasks.rair.schema import SUBSETS, load_records
from ecom_tasks.scorers.inspect_rair import rair_scorer
from ecom_tasks.scorers.inspect_scorers import outcome_mean

_FIXTURES = "ecom_tasks/fixtures/rair"


def _flag(value: bool | str | int) -> bool:
    """``-T image=false`` may arrive as a string."""
    if isinstance(value, str):
        if value.strip().lower() in ("1", "true", "yes", "on"):
            return True
        if value.strip().lower() in ("0", "false", "no", "off", ""):
            return False
        raise ValueError(f"image must be true or false, got {value!r}")
    return bool(value)


def _sample(item: RairItem) -> Sample:
    user = ChatMessageUser(
        content=[ContentText(text=item.user_prompt), ContentImage(image=item.image)] if item.image else item.user_prompt
    )
    return Sample(
        id=item.id,
        input=[ChatMessageSystem(content=item.system_prompt), user],
        target=item.target,
        metadata=item.fields,
    )


def _dataset(subset: str, ruleset: RuleSet | None, image: bool, data: str | None, language: str | None) -> MemoryDataset:
    if subset not in SUBSETS:
        raise ValueError(f"unknown RAIR subset {subset!r}; expected one of {', '.join(SUBSETS)}")
    records = load_records(data, subset=subset, language=language or None, check_images=image)
    if not records:
        where = data or "the bundled fixtures"
        raise ValueError(f"no RAIR records of subset {subset!r}{f' in language {language!r}' if language else ''} in {where}")
    items = build_items(records, rules=ruleset, image=image)
    return MemoryDataset([_sample(i) for i in items], name=f"rair_{subset}", location=str(data or _FIXTURES))


def rair_dataset(
    subset: str,
    rules: str | None = "none",
    image: bool = False,
    data: str | None = None,
    language: str | None = None,
) -> MemoryDataset:
    """One Sample per record of ``subset``; images are checked with pillow when they will be sent."""
    return _dataset(subset, load_rules(rules), image, data, language)


def rair_task(
    subset: str,
    *,
    rules: str | None,
    image: bool | str,
    data: str | None,
    language: str | None,
    max_tokens: int,
) -> Task:
    show_image = _flag(image)
    ruleset = load_rules(rules)
    return Task(
        dataset=_dataset(subset, ruleset, show_image, data, language),
        scorer=rair_scorer(),
        config=GenerateConfig(temperature=0.0, max_tokens=max_tokens),
        version="1.0.0",
        epochs=Epochs(1, outcome_mean()),
        # The paper's primary metric (Sec. 6.1): it penalizes majority-class answering.
        headline_metric=HeadlineMetric(metric="macro_f1"),
        metadata={
            "benchmark": "rair",
            "subset": subset,
            "rules_version": rules_version(ruleset),
            "prompt_version": PROMPT_VERSION,
            "image": show_image,
            "language": language or "all",
        },
    )


@task
def rair_general(
    rules: str = "none", image: bool = False, data: str | None = None, language: str | None = None, max_tokens: int = 4096
) -> Task:
    """RAIR General subset (industry-balanced; Table 5). Parameters: see the module docstring."""
    return rair_task("general", rules=rules, image=image, data=data, language=language, max_tokens=max_tokens)


@task
def rair_hard(
    rules: str = "none", image: bool = False, data: str | None = None, language: str | None = None, max_tokens: int = 4096
) -> Task:
    """RAIR Hard subset (intents DJ ER SS QA NC MA; Table 5). Parameters: see the module docstring."""
    return rair_task("hard", rules=rules, image=image, data=data, language=language, max_tokens=max_tokens)


@task
def rair_visual(
    rules: str = "none", image: bool = True, data: str | None = None, language: str | None = None, max_tokens: int = 4096
) -> Task:
    """RAIR Visually Salient subset, image on by default (Table 4). Parameters: see the module docstring."""
    return rair_task("visual", rules=rules, image=image, data=data, language=language, max_tokens=max_tokens)
