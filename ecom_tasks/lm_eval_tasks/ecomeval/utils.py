"""lm-eval glue for EcomEval (thin; the benchmark is in ``ecom_tasks.ecomeval``): the judged tasks log
responses for ``ecom-tasks judge`` (:class:`EcomEvalResponseTask`), the ``ecomeval_exact`` tasks score by exact
match (:class:`EcomEvalExactTask`). Tasks, settings and metrics: EcomEval's README."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

import datasets

from ecom_tasks.ecomeval.judging import refused_values
from ecom_tasks.ecomeval.metrics import Outcome, item_groups, summarize
from ecom_tasks.ecomeval.protocol import load_items
from ecom_tasks.ecomeval.scoring import exact_metric_keys, score_exact
from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.images import ImageAccess, data_uri_bytes, file_image_bytes
from ecom_tasks.scorers import context_limit
from ecom_tasks.scorers.kinds import RUBRIC
from ecom_tasks.scorers.lm_eval import OutcomeTask


def load_docs(
    category: str | None = None,
    data: str | None = None,
    language: str | None = None,
    task: str | None = None,
    difficulty: str | None = None,
    multimodal: bool | str | None = None,
    allow_outside_images: bool | str = False,
    allow_url_images: bool | str = False,
    judged: bool = False,
    **_: Any,
) -> datasets.DatasetDict:
    """``custom_dataset``, the question as it is. A ``judged`` task takes every selected item, as Inspect's
    task of the same name selects them, its images (file paths or ``data:`` URIs) in ``images``; an exact
    task the exact-answer text items of its categories (a comma list), a category without any skipped with
    a message."""
    access = ImageAccess.from_options(allow_outside_images, allow_url_images)
    selection = {"multimodal": multimodal} if judged else {"exact": True}
    filters: dict[str, Any] = dict(category=category or None, language=language, task=task, difficulty=difficulty)
    items = load_items(data, image_access=access, **filters, **selection)
    docs = [
        {"id": item.id, "question": item.prompt, "target": item.target, **item.fields}
        | ({"images": list(item.images)} if judged else {})
        for item in items
    ]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(docs)})


def doc_images(doc: dict) -> list[Any]:
    """``doc_to_image``: the item's images (file paths or ``data:`` URIs, checked with pillow when the data
    loaded) as PIL images; a file is read and checked again now (``images.file_image_bytes``), not reopened
    by pillow wherever its path leads by now."""
    from PIL import Image

    return [
        Image.open(io.BytesIO(data_uri_bytes(ref) if ref.startswith("data:") else file_image_bytes(ref)))
        for ref in doc.get("images") or []
    ]


class EcomEvalResponseTask(OutcomeTask):
    """The judge-graded items' responses, for ``ecom-tasks judge`` (``n`` is the only metric here).

    A task whose selected items carry no image is no multimodal task: any model class runs it.
    """

    metric_kind = RUBRIC

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__(config)
        if not any(doc.get("images") for doc in self.eval_docs):
            self.config.doc_to_image = None
            self.MULTIMODAL = False

    def metric_keys(self, config: Mapping[str, Any], specs: Sequence[MetricSpec]) -> list[str]:
        return ["n", context_limit.RATE]

    def summarize(self, outcomes: list[Any], specs: Sequence[MetricSpec]) -> Mapping[str, float]:
        return {"n": float(len(outcomes)), context_limit.RATE: context_limit.rate(outcomes)}

    def score(self, doc: dict, reply: str) -> Any:
        # A question the server refused (longer than its context) has no response for the judge.
        return {"n": 1.0, context_limit.CONTEXT_EXCEEDED: float(context_limit.from_reply(reply) is not None)}


class EcomEvalExactTask(OutcomeTask):
    """EcomEval's ``rubric`` metrics over exact-match grades, with the category/language/difficulty means.
    A document's object holds its numbers and its groups (lm-eval hands an aggregation nothing else)."""

    metric_kind = RUBRIC

    def metric_keys(self, config: Mapping[str, Any], specs: Sequence[MetricSpec]) -> list[str]:
        categories = str(config["dataset_kwargs"]["category"]).split(",")  # every exact variant names them
        return [*exact_metric_keys(specs, categories), context_limit.RATE]

    def summarize(self, outcomes: list[Any], specs: Sequence[MetricSpec]) -> Mapping[str, float]:
        records = [Outcome.of(o, o) for o in outcomes]
        return {**summarize(records, specs), context_limit.RATE: context_limit.rate(outcomes)}

    def score(self, doc: dict, reply: str) -> Any:
        if context_limit.from_reply(reply) is not None:  # the server refused the question: 0, counted apart
            return {**refused_values(()), **item_groups(doc)}
        return {**score_exact(doc, reply)[1], context_limit.CONTEXT_EXCEEDED: 0.0, **item_groups(doc)}
