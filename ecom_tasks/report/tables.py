"""The papers' table layouts, filled from merged runs, with the papers' own rows beside ours.

Every cell of a run row is a metric value exactly as the log holds it (no
rounding, no rescaling: fractions stay fractions, EcomEval's 0-100 scores stay
0-100); reference rows are converted to the same unit. Rendering (percent,
decimals) happens in ``render.py``.

A row is one (model, framework, settings) combination: the layout's own
dimensions (RAIR subset, rules and image; MonBench design; RMIR mode and
embedder; EcomEval judge) become its ``setting`` text, and any other setting
that differs between rows of the same model and framework is appended as
``name=value`` so that different settings are never shown as one row.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ecom_tasks.report.reference import reference_rows
from ecom_tasks.report.runs import MergedRun

PAPER = "paper"


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    #: Overrides the table's ``display`` for this column (e.g. a 0-1 rate in a 0-100 table).
    display: str | None = None


@dataclass
class Row:
    model: str
    setting: str
    source: str  # inspect | lm-eval | paper
    cells: dict[str, float]
    reference: bool = False
    group: str = ""  # the paper's row group (e.g. "Closed-source Models")
    part: str = ""  # a sub-row: a MonBench task, a RAIR gold level
    runs: tuple[str, ...] = ()  # the log files behind the row
    residual: tuple[tuple[str, str], ...] = ()
    merged: tuple[MergedRun, ...] = field(default=(), repr=False)


@dataclass
class Table:
    benchmark: str
    name: str
    title: str
    columns: list[Column]
    rows: list[Row]
    #: How values display: ``percent`` (fraction x 100), ``fraction``, ``score`` (0-100), ``count``.
    display: str = "percent"
    note: str = ""
    #: ``heatmap`` | ``confusion`` | ``bars`` | None
    plot: str | None = None

    @property
    def slug(self) -> str:
        return f"{self.benchmark}_{self.name}"

    @property
    def has_parts(self) -> bool:
        return any(row.part for row in self.rows)

    def run_rows(self) -> list[Row]:
        return [row for row in self.rows if not row.reference]


# --- assembling rows from runs --------------------------------------------------------


@dataclass
class _Slots:
    """The merged runs behind one row, by slot (a RAIR subset, a MonBench task or ``all``)."""

    model: str
    source: str
    setting: str
    residual: tuple[tuple[str, str], ...]
    runs: dict[str, MergedRun] = field(default_factory=dict)

    def metric(self, slot: str, name: str) -> float | None:
        run = self.runs.get(slot)
        return None if run is None else run.metrics.get(name)

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(source for run in self.runs.values() for source in run.sources)


def _residual(run: MergedRun, excluded: Iterable[str]) -> tuple[tuple[str, str], ...]:
    skip = set(excluded)
    return tuple((k, v) for k, v in run.settings if k not in skip)


def _assemble(
    runs: Iterable[MergedRun],
    classify: Callable[[MergedRun], tuple[str, str] | None],
    excluded: Iterable[str] = (),
    model: Callable[[MergedRun], str] | None = None,
) -> list[_Slots]:
    """Group runs into rows: ``classify(run) -> (setting text, slot)`` or None to leave it out.
    Runs of different tasks that would fill the same cell (a preset and the parametric task
    with the same arguments) are kept apart: the task name joins their settings."""
    excluded = tuple(excluded)
    placed = []
    for run in runs:
        where = classify(run)
        if where is not None:
            setting, slot = where
            name = model(run) if model else run.model
            placed.append((run, (name, run.framework, _residual(run, excluded), setting), slot))
    tasks: dict[tuple, set[str]] = {}
    for run, key, slot in placed:
        tasks.setdefault((key, slot), set()).add(run.task)
    rows: dict[tuple, _Slots] = {}
    for run, key, slot in placed:
        if len(tasks[(key, slot)]) > 1:
            key = (*key[:2], (*key[2], ("task", run.task)), key[3])
        row = rows.setdefault(key, _Slots(key[0], run.framework, key[3], key[2]))
        current = row.runs.get(slot)
        if current is None or (run.created, run.source) > (current.created, current.source):
            row.runs[slot] = run
    return list(rows.values())


def _distinguish(rows: list[Row]) -> None:
    """Append the settings that differ between rows of the same model and framework to ``setting``."""
    by_identity: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        if not row.reference:
            by_identity.setdefault((row.model, row.source), []).append(row)
    for group in by_identity.values():
        keys = sorted({k for row in group for k, _ in row.residual})
        differing = [k for k in keys if len({dict(row.residual).get(k) for row in group}) > 1]
        for row in group:
            values = dict(row.residual)
            extra = ", ".join(f"{k}={_short(values.get(k, '-'))}" for k in differing)
            if extra:
                row.setting = f"{row.setting}; {extra}" if row.setting else extra


def _short(value: str, limit: int = 60) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _row(slots: _Slots, cells: Mapping[str, float | None], part: str = "", setting: str | None = None) -> Row:
    return Row(
        model=slots.model,
        setting=slots.setting if setting is None else setting,
        source=slots.source,
        cells={k: v for k, v in cells.items() if v is not None},
        part=part,
        runs=slots.sources,
        residual=slots.residual,
        merged=tuple(slots.runs.values()),
    )


def _references(benchmark: str, table: str, log_unit: str, setting: Callable[[str], str] | None = None) -> list[Row]:
    return [
        Row(
            model=ref.model,
            setting=setting(ref.setting) if setting else ref.setting,
            source=PAPER,
            cells=dict(ref.values),
            reference=True,
            group=ref.group,
        )
        for ref in reference_rows(benchmark, table, log_unit)
    ]


def _finish(table: Table) -> Table | None:
    """Drop a table without run rows (the paper's rows alone are in the benchmark README)."""
    if not table.run_rows():
        return None
    _distinguish(table.rows)
    return table


def _info(run: MergedRun, key: str, default: Any = None) -> Any:
    value = run.info.get(key, default)
    return default if value is None else value


# --- RAIR -------------------------------------------------------------------------------

RAIR_METRICS = (("acc2", "Acc@2"), ("acc4", "Acc@4"), ("macro_f1", "Macro-F1"))
RAIR_EXCLUDED = ("rules", "image", "subset", "variant_rules", "rules_source", "rules_version", "rules_sha256")
RAIR_LEVELS = ("L1", "L2", "L3", "L4")
RAIR_PREDICTED = (*RAIR_LEVELS, "invalid")


def _rair_dims(run: MergedRun) -> tuple[str, bool, str] | None:
    from ecom_tasks.rair.variants import VARIANTS

    variant = VARIANTS.get(run.task)
    subset = _info(run, "subset", variant.subset if variant else None)
    if subset is None:
        return None
    image = _info(run, "image", variant.image if variant else False) in (True, "true", "True")
    source = str(_info(run, "rules_source", variant.rules if variant else "none"))
    if source == "none":
        rules = "Base"
    elif source == "builtin":
        rules = "w/ rule (our built-in rules)"
    else:
        # A user's rule file: its version and content hash, so two files never share a row.
        rules = f"w/ rule ({_info(run, 'rules_version', source)}, {str(_info(run, 'rules_sha256', ''))[:8]})"
    return subset, image, rules


def rair_tables(runs: Sequence[MergedRun]) -> list[Table]:
    from ecom_tasks.rair.metrics import key_name
    from ecom_tasks.rair.schema import INDUSTRIES, INTENTS

    dims = {id(run): _rair_dims(run) for run in runs}
    tables: list[Table | None] = []

    def text_subsets(run: MergedRun) -> tuple[str, str] | None:
        d = dims[id(run)]
        return (d[2], d[0]) if d and d[0] in ("general", "hard") and not d[1] else None

    columns = [
        Column(f"{s}/{m}", f"{title} {label}")
        for s, title in (("general", "General"), ("hard", "Hard"))
        for m, label in RAIR_METRICS
    ]
    rows = [
        _row(slots, {c.key: slots.metric(*c.key.split("/", 1)) for c in columns})
        for slots in _assemble(runs, text_subsets, RAIR_EXCLUDED)
    ]
    tables.append(
        _finish(
            Table(
                "rair",
                "table5",
                "RAIR Table 5: General and Hard subsets, Base vs w/ rule",
                columns,
                rows + _references("rair", "table5", "fraction"),
                display="fraction",
                note="The paper's closed-source rows are on a random 1,000-item sample; its rule file is not our built-in one.",
            )
        )
    )

    def visual(run: MergedRun) -> tuple[str, str] | None:
        d = dims[id(run)]
        if not d or d[0] != "visual":
            return None
        text = "w/ image" if d[1] else "w/o image"
        return (text if d[2] == "Base" else f"{text}, {d[2]}"), "visual"

    columns = [Column(f"visual/{m}", label) for m, label in RAIR_METRICS]
    rows = [
        _row(slots, {c.key: slots.metric("visual", c.key.split("/", 1)[1]) for c in columns})
        for slots in _assemble(runs, visual, RAIR_EXCLUDED)
    ]
    tables.append(
        _finish(
            Table(
                "rair",
                "table4",
                "RAIR Table 4: Visually Salient subset, w/o vs w/ image",
                columns,
                rows + _references("rair", "table4", "fraction"),
                display="fraction",
            )
        )
    )

    def any_subset(run: MergedRun) -> tuple[str, str] | None:
        d = dims[id(run)]
        if not d:
            return None
        return f"{d[0]}, {d[2]}" + (", w/ image" if d[1] else ""), d[0]

    subset_rows = _assemble(runs, any_subset, RAIR_EXCLUDED)

    def only(slots: _Slots) -> MergedRun:
        return next(iter(slots.runs.values()))

    present = {name for slots in subset_rows for name in only(slots).metrics}
    industries = [(key_name(name), name) for name in INDUSTRIES if f"acc2/industry/{key_name(name)}" in present]
    columns = [Column("acc2", "All"), *(Column(f"acc2/industry/{slug}", name) for slug, name in industries)]
    rows = [_row(slots, {c.key: only(slots).metrics.get(c.key) for c in columns}) for slots in subset_rows]
    refs = _references("rair", "table7_industry", "fraction")
    tables.append(
        _finish(
            Table(
                "rair",
                "industry",
                "RAIR Acc@2 by industry (App. A, Table 7)",
                columns,
                rows + refs,
                display="fraction",
                note="Columns: the industries present in the runs. Acc@4 and Macro-F1 by industry are in the logs too.",
            )
        )
    )

    columns = [
        Column("acc2", "All"),
        *(Column(f"acc2/intent/{i}", i) for i in INTENTS if f"acc2/intent/{i}" in present),
    ]
    rows = [
        _row(slots, {c.key: only(slots).metrics.get(c.key) for c in columns})
        for slots in subset_rows
        if "acc2/intent/" in " ".join(only(slots).metrics)
    ]
    tables.append(
        _finish(
            Table(
                "rair",
                "intent",
                "RAIR Acc@2 by hard intent (DJ ER SS QA NC MA)",
                columns,
                rows,
                display="fraction",
                note="The paper prints no per-intent results; Acc@4 and Macro-F1 by intent are in the logs too.",
            )
        )
    )

    columns = [Column(p, f"pred {p}") for p in RAIR_PREDICTED]
    rows = [
        _row(slots, {p: only(slots).metrics.get(f"confusion/{g}/{p}") for p in RAIR_PREDICTED}, part=f"gold {g}")
        for slots in subset_rows
        for g in RAIR_LEVELS
        if f"confusion/{g}/L1" in only(slots).metrics
    ]
    tables.append(
        _finish(
            Table(
                "rair",
                "confusion",
                "RAIR confusion matrices (items; gold rows, predicted columns)",
                columns,
                rows,
                display="count",
                plot="confusion",
            )
        )
    )

    dimensions: list[str] = []
    for slots in subset_rows:
        for name in only(slots).metrics:
            if name.startswith("error_share/") and name not in dimensions:
                dimensions.append(name)
    for ref in reference_rows("rair", "fig5_errors", "fraction"):
        dimensions += [name for name in ref.values if name not in dimensions]
    columns = [Column(name, name.split("/", 1)[1]) for name in dimensions]
    rows = [_row(slots, {c.key: only(slots).metrics.get(c.key) for c in columns}) for slots in subset_rows]
    tables.append(
        _finish(
            Table(
                "rair",
                "errors",
                "RAIR errors by the gold rule's mismatch dimension (Fig. 5)",
                columns,
                rows + _references("rair", "fig5_errors", "fraction"),
                display="percent",
                plot="bars",
                note="Share of all Acc@4 errors by the dimension of the item's gold rules; 'none': no dimension. "
                "The paper's values are the ones its text states (the figure itself is an image).",
            )
        )
    )
    return [t for t in tables if t is not None]


# --- MonBench ---------------------------------------------------------------------------

MONBENCH_DESIGNS = {"full": "perm (72 runs)", "cyclic": "cyclic (12 runs)", "canonical": "canonical (1 run)"}
MONBENCH_EXCLUDED = ("task", "design", "formats")


def _monbench_dims(run: MergedRun) -> tuple[str, tuple[str, ...]] | None:
    from ecom_tasks.monbench.schema import TASKS
    from ecom_tasks.monbench.variants import VARIANTS

    variant = VARIANTS.get(run.task)
    if variant is not None:
        design, tasks, formats = variant.design, variant.tasks, variant.formats
        text = MONBENCH_DESIGNS.get(design, design)
    elif run.task == "monbench":
        settings = run.settings_dict
        design = settings.get("design", "full")
        task = settings.get("task", "all")
        tasks = TASKS if task == "all" else (task,)
        formats = settings.get("formats")
        text = MONBENCH_DESIGNS.get(design, design) + (
            f", formats={formats}" if formats and formats != "label,content,label_content" else ""
        )
    else:
        return None
    return text, tuple(tasks)


def monbench_tables(runs: Sequence[MergedRun]) -> list[Table]:
    from ecom_tasks.monbench.schema import TASKS
    from ecom_tasks.monbench.variants import TASK_TITLES

    def classify(run: MergedRun) -> tuple[str, str] | None:
        dims = _monbench_dims(run)
        if dims is None:
            return None
        text, tasks = dims
        return text, ("all" if len(tasks) > 1 else tasks[0])

    rows_slots = _assemble(runs, classify, MONBENCH_EXCLUDED)

    def value(slots: _Slots, task: str | None, metric: str) -> float | None:
        """``metric`` of ``task`` (None: all tasks) from the all-task run, else from the task's own run."""
        if task is None:
            return slots.metric("all", metric)
        found = slots.metric("all", f"{task}/{metric}")
        return found if found is not None else slots.metric(task, metric)

    columns = [
        *(Column(f"{t}/acc", TASK_TITLES[t]) for t in TASKS),
        Column("acc", "Avg."),
        Column("acc_ci", "95% CI ±"),
    ]
    rows = [
        _row(
            slots,
            {
                **{f"{t}/acc": value(slots, t, "acc") for t in TASKS},
                "acc": value(slots, None, "acc"),
                "acc_ci": value(slots, None, "acc_ci"),
            },
        )
        for slots in rows_slots
    ]
    tables: list[Table | None] = [
        _finish(
            Table(
                "monbench",
                "table2",
                "MonBench Table 2: accuracy per task, average ± 95% CI",
                columns,
                rows
                + _references(
                    "monbench", "table2", "fraction", lambda s: MONBENCH_DESIGNS["full"] if s == "perm" else s
                ),
                note="Avg. and its CI come from the all-task run (Inspect) or group (lm-eval; lm-eval groups carry no CI).",
            )
        )
    ]

    def breakdown(name: str, title: str, metrics: Sequence[tuple[str, str]], plot: str | None) -> Table | None:
        columns = [Column(metric, header) for metric, header in metrics]
        rows = []
        for slots in rows_slots:
            for task in (None, *TASKS):
                cells = {metric: value(slots, task, metric) for metric, _ in metrics}
                if any(v is not None for v in cells.values()):
                    rows.append(_row(slots, cells, part=TASK_TITLES[task] if task else "all tasks"))
        return _finish(Table("monbench", name, title, columns, rows, plot=plot))

    tables.append(
        breakdown(
            "position",
            "MonBench accuracy by the correct option's position (Fig. 3)",
            [(f"acc_pos_{p}", f"at {p}") for p in "ABCD"],
            "heatmap",
        )
    )
    tables.append(
        breakdown(
            "format",
            "MonBench accuracy by return format (Fig. 4)",
            [("acc_fmt_label", "Label"), ("acc_fmt_content", "Content"), ("acc_fmt_label_content", "Label+Content")],
            "heatmap",
        )
    )
    tables.append(
        breakdown(
            "robustness",
            "MonBench consistency and failure rates",
            [
                ("consistency", "consistency"),
                ("invalid_rate", "invalid"),
                ("mismatch_rate", "mismatch"),
                ("truncated_rate", "truncated"),
            ],
            None,
        )
    )
    return [t for t in tables if t is not None]


# --- EcomEval ---------------------------------------------------------------------------

ECOMEVAL_TEXT_CATEGORIES = (
    ("ecom_generation", "Ecom Generative Ability"),
    ("user_understanding", "User Understanding"),
    ("shopping_reasoning", "Shopping Reasoning"),
    ("shopping_concepts", "Shopping Concept"),
    ("ecom_qa", "Ecom QA"),
)
ECOMEVAL_LANGUAGES = (
    ("en", "English"),
    ("id", "Indonesian"),
    ("ms", "Malay"),
    ("pt", "Portuguese"),
    ("th", "Thai"),
    ("zh", "Chinese"),
    ("vi", "Vietnamese"),
)
#: Table 4's columns: the paper's abbreviations of the eight multimodal tasks.
ECOMEVAL_MULTIMODAL_TASKS = (
    ("product_cover_image_selection", "PCISel"),
    ("product_image_content_analysis", "PICA"),
    ("multimodal_brand_recognition", "MBR"),
    ("multimodal_product_similarity", "MPS"),
    ("multimodal_pickup_reschedule_detection", "MPRD"),
    ("product_comment_image_summarization", "PCISum"),
    ("multimodal_search_relevance", "MSR"),
    ("multimodal_violation_content_detection", "MVCD"),
)
ECOMEVAL_DIFFICULTIES = ("easy", "medium", "hard")


def _judge(run: MergedRun) -> str:
    judge = run.roles.get("grader") or run.settings_dict.get("role:grader")
    if judge:
        return f"judge {judge}"
    from ecom_tasks.ecomeval.variants import DEFAULT_GRADER

    return f"judge {DEFAULT_GRADER} (default)"


EXACT = "exact match (no judge)"


def ecomeval_tables(runs: Sequence[MergedRun]) -> list[Table]:
    from ecom_tasks.report.runs import LM_EVAL

    def classify(run: MergedRun) -> tuple[str, str] | None:
        if "score" not in run.metrics and not any(k.startswith("category/") for k in run.metrics):
            return None
        if run.framework == LM_EVAL:
            # lm-eval: the ``ecomeval_exact`` group holds the averages, each ``ecomeval_exact_<category>``
            # task its category's items (its language/task breakdowns mix categories: left to "other").
            prefix = "ecomeval_exact_"
            return EXACT, (run.task[len(prefix) :] if run.task.startswith(prefix) else "")
        return (EXACT if run.info.get("scoring") == "exact" else _judge(run)), ""

    rows_slots = _assemble(runs, classify, ("role:grader",))

    def cell(slots: _Slots, key: str) -> float | None:
        found = slots.metric("", key)
        if found is None and key.startswith("category/"):
            found = slots.metric(key.split("/", 1)[1], key)
        return found

    def table(name: str, title: str, columns: list[Column], note: str = "", refs: bool = True) -> Table | None:
        rows = [_row(slots, {c.key: cell(slots, c.key) for c in columns}) for slots in rows_slots]
        rows = [row for row in rows if any(k != "judge_failure_rate" for k in row.cells)]
        reference = _references("ecomeval", name, "0-100") if refs else []
        return _finish(Table("ecomeval", name, title, columns, rows + reference, display="score", note=note))

    present = {name for slots in rows_slots if "" in slots.runs for name in slots.runs[""].metrics}
    tables = [
        table(
            "table2",
            "EcomEval Table 2: average and per category (0-100)",
            [
                Column("score", "Average"),
                *(Column(f"category/{slug}", title) for slug, title in ECOMEVAL_TEXT_CATEGORIES),
                Column("score_items", "item mean"),
                Column("judge_failure_rate", "judge failures %", display="percent"),
            ],
            note="Average: the log's score, the mean of the category means of the categories in the run (with multimodal "
            "items that is six; the paper's Table 2 averages the five text categories: run with -T multimodal=false to match); "
            "item mean: over all graded items. "
            "judge failures: share of items the judge did not grade (left out of every mean, never a 0).",
        ),
        table(
            "table3",
            "EcomEval Table 3: per language (0-100)",
            [Column(f"language/{code}", title) for code, title in ECOMEVAL_LANGUAGES],
        ),
        table(
            "table4",
            "EcomEval Table 4: multimodal tasks (0-100)",
            [
                Column("multimodal_average", "Average of tasks"),
                Column("category/ecom_multimodal", "category mean"),
                *(Column(f"task/{slug}", abbrev) for slug, abbrev in ECOMEVAL_MULTIMODAL_TASKS),
            ],
            note="The paper's Average is the mean of its eight task columns; the logs hold no such number, so our rows "
            "show the multimodal category mean (over items) in its own column instead.",
        ),
        table(
            "difficulty",
            "EcomEval by difficulty (0-100)",
            [Column(f"difficulty/{d}", d) for d in ECOMEVAL_DIFFICULTIES if f"difficulty/{d}" in present],
            refs=False,
        ),
        table(
            "tasks",
            "EcomEval per task (0-100)",
            [Column(name, name.split("/", 1)[1]) for name in sorted(present) if name.startswith("task/")],
            refs=False,
        ),
    ]
    return [t for t in tables if t is not None]


# --- RMIR -------------------------------------------------------------------------------

RMIR_CATEGORIES = (("functional", "Functional"), ("temporal", "Temporal"), ("causal", "Causal"))
RMIR_EXCLUDED = ("retriever", "retriever_args", "mode")


def _rmir_setting(run: MergedRun, name: str, default: Any = None) -> Any:
    """A setting of an RMIR run: the task metadata records the effective one (presets fix some)."""
    if run.info.get(name) is not None:
        return run.info[name]
    value = run.settings_dict.get(name, default)
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _rmir_embedder(run: MergedRun) -> str:
    retriever = _rmir_setting(run, "retriever", "lexical")
    args = _rmir_setting(run, "retriever_args", {})
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            args = {}
    model = args.get("model") if isinstance(args, dict) else None
    return f"{retriever}:{model}" if model else str(retriever)


def rmir_tables(runs: Sequence[MergedRun]) -> list[Table]:
    def classify(run: MergedRun) -> tuple[str, str] | None:
        if "recall@20" not in run.metrics and "recall@50" not in run.metrics:
            return None
        mode = _rmir_setting(run, "mode", "embed")
        text = mode if mode == "embed" else f"{mode} with {run.model}"
        return text, ""

    columns = [
        *(Column(f"{c}/recall@{k}", f"{title} R@{k}") for c, title in RMIR_CATEGORIES for k in (20, 50)),
        Column("recall@20", "Average R@20"),
        Column("recall@50", "Average R@50"),
        Column("category_mean/recall@20", "category mean R@20"),
        Column("category_mean/recall@50", "category mean R@50"),
        Column("mrr", "MRR"),
        Column("ndcg@10", "nDCG@10"),
        Column("failure_rate", "failures"),
    ]
    rows = [
        _row(slots, {c.key: slots.metric("", c.key) for c in columns})
        for slots in _assemble(runs, classify, RMIR_EXCLUDED, model=_rmir_embedder)
    ]
    table = _finish(
        Table(
            "rmir",
            "table2",
            "RMIR Table 2: Recall@20 / Recall@50 per reasoning category",
            columns,
            rows + _references("rmir", "table2", "fraction"),
            note="Rows: embedder (retriever:model) and mode. Average: over all queries; category mean: mean of the three "
            "category values. The paper's Average matches neither exactly; it is shown under Average.",
        )
    )
    return [table] if table else []


# --- anything else ----------------------------------------------------------------------


def other_table(benchmark: str, runs: Sequence[MergedRun]) -> Table | None:
    """Runs no layout above uses (e.g. a benchmark's lm-eval exact-match group): their top-level metrics."""
    names: list[str] = []
    for run in runs:
        names += [n for n in run.metrics if "/" not in n and n not in names]
    if not names:
        return None
    rows = [
        Row(
            run.model,
            run.task,
            run.framework,
            {n: run.metrics[n] for n in names if n in run.metrics},
            runs=run.sources,
            residual=_residual(run, ()),
        )
        for run in runs
    ]
    display = "score" if benchmark == "ecomeval" else "fraction"
    table = Table(
        benchmark or "other",
        "other",
        f"{benchmark or 'Other'}: other runs (top-level metrics)",
        [Column(n, n) for n in names],
        rows,
        display=display,
    )
    _distinguish(table.rows)
    return table


BUILDERS: dict[str, Callable[[Sequence[MergedRun]], list[Table]]] = {
    "rair": rair_tables,
    "ecomeval": ecomeval_tables,
    "rmir": rmir_tables,
    "monbench": monbench_tables,
}


def build_tables(runs: Sequence[MergedRun]) -> list[Table]:
    """Every table for the runs, benchmark by benchmark, then the runs no layout used."""
    tables: list[Table] = []
    by_benchmark: dict[str, list[MergedRun]] = {}
    for run in runs:
        by_benchmark.setdefault(run.benchmark, []).append(run)
    for benchmark, group in by_benchmark.items():
        built = BUILDERS[benchmark](group) if benchmark in BUILDERS else []
        tables += built
        used = {id(run) for table in built for row in table.run_rows() for run in row.merged}
        unused = [run for run in group if id(run) not in used]
        extra = other_table(benchmark, unused)
        if extra is not None:
            tables.append(extra)
    order = {name: i for i, name in enumerate(BUILDERS)}
    return sorted(tables, key=lambda t: order.get(t.benchmark, len(order)))
