"""EcomEval's 37 tasks (the official repository's task figure, in its order): ids, names, categories and the
other spellings that load as them. Where the list and the aliases come from: EcomEval's README ("The 37 tasks")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ecom_tasks.names import key_name, nearest


@dataclass(frozen=True)
class EcomEvalTask:
    id: str  # snake_case, the key of per-task results (``task/<id>``)
    name: str  # as the figure (or, for PICA, the paper's text) writes it
    category: str  # a slug of ``schema.CATEGORIES``
    abbreviation: str = ""  # Table 4's, for the multimodal tasks
    aliases: tuple[str, ...] = ()  # other spellings releases, the paper or our earlier fixtures use

    @property
    def spellings(self) -> tuple[str, ...]:
        """Every accepted spelling: the id, the name, the abbreviation and the aliases."""
        return tuple(s for s in (self.id, self.name, self.abbreviation, *self.aliases) if s)


def _tasks(category: str, *tasks: tuple) -> tuple[EcomEvalTask, ...]:
    return tuple(EcomEvalTask(task[0], task[1], category, *task[2:]) for task in tasks)


#: The 37 tasks, in the figure's order within each category, the categories in ``schema.CATEGORIES``' order.
TASKS: tuple[EcomEvalTask, ...] = (
    *_tasks(
        "ecom_qa",
        ("after_sales_service", "After-Sales Service"),
        ("shopping_guide", "Shopping Guide"),
        ("brand_model", "Brand Model"),
        ("brand_knowledge", "Brand Knowledge"),
        ("product_inquiry", "Product Inquiry"),
    ),
    *_tasks(
        "shopping_concepts",
        ("product_attribute_extraction", "Product Attribute Extraction"),
        ("product_categorization", "Product Categorization", "", ("Product Categorisation",)),
        ("order_classification", "Order Classification"),
        ("product_type_understanding", "Product Type Understanding"),
        ("prohibited_item_identification", "Prohibited Item Identification"),
        ("logistics_dialogue_classification", "Logistics Dialogue Classification"),
    ),
    *_tasks(
        "user_understanding",
        ("query_understanding", "Query Understanding", "", ("query_intent_classification",)),
        ("query_product_matching", "Query-Product Matching", "", ("Query-Product Relation",)),
        ("user_review", "User Review"),
        ("review_sentiment_classification", "Review Sentiment Classification"),
        ("search_relevance", "Search Relevance", "", ("Search Relevance Assessment",)),
        ("fraud_risk_analysis", "Fraud Risk Analysis"),
    ),
    *_tasks(
        "shopping_reasoning",
        ("product_recommendation", "Product Recommendation"),
        ("numerical_reasoning", "Numerical Reasoning"),
        ("similar_product_identification", "Similar Product Identification"),
        ("description_similarity_evaluation", "Description Similarity Evaluation"),
        ("complementary_product_recommendation", "Complementary Product Recommendation"),
        ("selling_point_analysis", "Selling Point Analysis"),
    ),
    *_tasks(
        "ecom_generation",
        ("product_information_generation", "Product Information Generation"),
        ("product_title_generation", "Product Title Generation"),
        ("product_title_refinement", "Product Title Refinement"),
        ("product_tag_generation", "Product Tag Generation"),
        (
            "after_sales_issue_summarization",
            "After-Sales Issue Summarization",
            "",
            ("After-Sales Issue Summarisation",),
        ),
        ("product_translation", "Product Translation", "", ("Product Title Translation", "attribute_translation")),
    ),
    *_tasks(
        "ecom_multimodal",
        ("multimodal_violation_content_detection", "Multimodal Violation Content Detection", "MVCD"),
        ("multimodal_search_relevance", "Multimodal Search Relevance", "MSR"),
        (
            "product_comment_image_summarization",
            "Product Comment & Image Summarization",
            "PCISum",
            ("Product Comment and Image Summarisation",),
        ),
        ("multimodal_pickup_reschedule_detection", "Multimodal Pickup Reschedule Detection", "MPRD"),
        ("multimodal_product_similarity", "Multimodal Product Similarity", "MPS"),
        ("multimodal_brand_recognition", "Multimodal Brand Recognition", "MBR"),
        (
            "product_image_content_analysis",
            "Product Image Content Analysis",
            "PICA",
            ("Product Image Context Analysis",),
        ),
        ("product_cover_image_selection", "Product Cover Image Selection", "PCISel"),
    ),
)
TASKS_BY_ID: dict[str, EcomEvalTask] = {task.id: task for task in TASKS}
#: Table 4's column order (its abbreviations: PCISel, PICA, MBR, MPS, MPRD, PCISum, MSR, MVCD).
TABLE4_ORDER = (
    "product_cover_image_selection",
    "product_image_content_analysis",
    "multimodal_brand_recognition",
    "multimodal_product_similarity",
    "multimodal_pickup_reschedule_detection",
    "product_comment_image_summarization",
    "multimodal_search_relevance",
    "multimodal_violation_content_detection",
)


def task_key(name: str) -> str:
    """``"Product Comment & Image Summarization"`` -> ``"product_comment_and_image_summarization"``:
    how task names are compared (case-folded; ``&`` as "and"; other non-alphanumerics as one ``_``)."""
    return key_name(str(name).replace("&", " and ")).strip("_")


#: Normalised spelling (:func:`task_key`) -> task. No spelling names two tasks: the tests load every spelling.
SPELLINGS: dict[str, EcomEvalTask] = {task_key(spelling): task for task in TASKS for spelling in task.spellings}


def find_task(name: str) -> EcomEvalTask | None:
    """The listed task a name spells (any accepted spelling, see :func:`task_key`), else None."""
    return SPELLINGS.get(task_key(name))


def canonical_task(name: str) -> str:
    """The canonical id of a listed task's spelling; any other name as given (stripped)."""
    found = find_task(name)
    return found.id if found else str(name).strip()


def unlisted_hint(names: Iterable[str]) -> str:
    """``" ('aftersale' is none of EcomEval's 37 tasks; did you mean after_sales_service?)"`` for each
    name that spells no listed task; empty when all do."""
    hints = []
    for name in names:
        if find_task(name) is None:
            meant = nearest(task_key(name), TASKS_BY_ID)
            hints.append(f"{name!r} is none of EcomEval's 37 tasks" + (f"; did you mean {meant[0]}?" if meant else ""))
    return f" ({'; '.join(hints)})" if hints else ""
