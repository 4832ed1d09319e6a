"""lm-eval glue for RAIR: loading, per-document scoring and aggregations.

Thin by design: records, prompts, parsing and metrics all come from
``ecom_tasks.rair`` and ``ecom_tasks.scorers.relevance``, exactly as for
Inspect. These are the text versions (no image is sent). User options arrive
through ``--metadata``: ``data`` (file, folder or hub id), ``language``
(``en`` | ``zh``; default all) and, for the ``*_rules`` tasks, ``rules``
(``builtin`` by default, or a rules file path).
"""

from __future__ import annotations

import logging
from typing import Any

import datasets

from ecom_tasks.rair.prompts import build_items
from ecom_tasks.rair.rules import BUILTIN, NONE, load_rules
from ecom_tasks.rair.schema import SUBSETS, load_records
from ecom_tasks.rair.scoring import rair_metrics, score_reply, subset_metric_keys
from ecom_tasks.scorers.lm_eval_aggregations import define_aggregations

logger = logging.getLogger(__name__)

METRIC_KEYS = {subset: subset_metric_keys(subset) for subset in SUBSETS}


def load_docs(
    subset: str,
    rules_mode: str = NONE,
    rules: str | None = None,
    data: str | None = None,
    language: str | None = None,
    **_: Any,
):
    """Documents of one subset; ``rules_mode: guided`` (the ``*_rules`` tasks) puts the rules in the system prompt."""
    if rules_mode == "guided":
        ruleset = load_rules(rules or BUILTIN)
    else:
        if rules not in (None, "", NONE):
            logger.warning("rair_%s shows no rules; rules=%r applies to the *_rules tasks only", subset, rules)
        ruleset = None
    records = load_records(data, subset=subset, language=language or None, check_images=False)
    if not records:
        raise ValueError(f"no RAIR records of subset {subset!r} in {data or 'the bundled fixtures'}")
    docs = [
        {"id": item.id, "system_prompt": item.system_prompt, "user_prompt": item.user_prompt, "target": item.target, **item.fields}
        for item in build_items(records, rules=ruleset, image=False)
    ]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(docs)})


def process_results(doc: dict, results: list[str]) -> dict[str, dict[str, int]]:
    """Every metric of the document's subset receives the whole outcome; aggregations pick what they need."""
    _, outcome = score_reply(doc, results[0])
    return {key: outcome for key in METRIC_KEYS[doc["subset"]]}


ALL_METRIC_KEYS = sorted({k for keys in METRIC_KEYS.values() for k in keys})


def summarize_for_lm_eval(items: list[dict[str, int]]) -> dict[str, float]:
    """``rair_metrics``, with a count of 0 for groups absent from the data (other absent keys: nan)."""
    return {**{k: 0.0 for k in ALL_METRIC_KEYS if k.startswith("n/")}, **rair_metrics(items)}


# One module-level function per metric key, as lm-eval's YAML `!function utils.<name>` needs.
define_aggregations(globals(), ALL_METRIC_KEYS, summarize_for_lm_eval)
