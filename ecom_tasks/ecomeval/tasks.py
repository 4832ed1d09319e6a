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


def _tasks(category: str, *tasks: str | tuple[str, ...]) -> tuple[EcomEvalTask, ...]:
    """A category's tasks: a name, or (name, abbreviation, aliases...); the id is the name's key."""
    found = []
    for task in tasks:
        name, abbreviation, *aliases = (task, "") if isinstance(task, str) else task
        found.append(EcomEvalTask(key_name(name), name, category, abbreviation, tuple(aliases)))
    return tuple(found)


#: The 37 tasks, in the figure's order within each category, the categories in ``schema.CATEGORIES``' order.
TASKS: tuple[EcomEvalTask, ...] = (
    *_tasks(
        "ecom_qa",
        "After-Sales Service",
        "Shopping Guide",
        "Brand Model",
        "Brand Knowledge",
        "Product Inquiry",
    ),
    *_tasks(
        "shopping_concepts",
        "Product Attribute Extraction",
        ("Product Categorization", "", "Product Categorisation"),
        "Order Classification",
        "Product Type Understanding",
        "Prohibited Item Identification",
        "Logistics Dialogue Classification",
    ),
    *_tasks(
        "user_understanding",
        ("Query Understanding", "", "query_intent_classification"),
        ("Query-Product Matching", "", "Query-Product Relation"),
        "User Review",
        "Review Sentiment Classification",
        ("Search Relevance", "", "Search Relevance Assessment"),
        "Fraud Risk Analysis",
    ),
    *_tasks(
        "shopping_reasoning",
        "Product Recommendation",
        "Numerical Reasoning",
        "Similar Product Identification",
        "Description Similarity Evaluation",
        "Complementary Product Recommendation",
        "Selling Point Analysis",
    ),
    *_tasks(
        "ecom_generation",
        "Product Information Generation",
        "Product Title Generation",
        "Product Title Refinement",
        "Product Tag Generation",
        ("After-Sales Issue Summarization", "", "After-Sales Issue Summarisation"),
        ("Product Translation", "", "Product Title Translation", "attribute_translation"),
    ),
    *_tasks(
        "ecom_multimodal",
        ("Multimodal Violation Content Detection", "MVCD"),
        ("Multimodal Search Relevance", "MSR"),
        ("Product Comment & Image Summarization", "PCISum", "Product Comment and Image Summarisation"),
        ("Multimodal Pickup Reschedule Detection", "MPRD"),
        ("Multimodal Product Similarity", "MPS"),
        ("Multimodal Brand Recognition", "MBR"),
        ("Product Image Content Analysis", "PICA", "Product Image Context Analysis"),
        ("Product Cover Image Selection", "PCISel"),
    ),
)
TASKS_BY_ID: dict[str, EcomEvalTask] = {task.id: task for task in TASKS}
_BY_ABBREVIATION = {task.abbreviation: task.id for task in TASKS if task.abbreviation}
#: Table 4's column order, by its abbreviations.
TABLE4_ORDER = tuple(_BY_ABBREVIATION[a] for a in ("PCISel", "PICA", "MBR", "MPS", "MPRD", "PCISum", "MSR", "MVCD"))


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
