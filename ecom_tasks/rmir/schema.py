"""RMIR canonical records, their validation and loading (README: "Data")."""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ecom_tasks import files
from ecom_tasks.data import (
    ConfigurationError,
    DataValidationError,
    Problem,
    Row,
    choice,
    collect_records,
    fixtures_dir,
    id_list,
    is_blank,
    load_rows,
    looks_like_local_path,
    read_id,
    refusal,
    require_text,
)
from ecom_tasks.images import DEFAULT_ACCESS, ImageAccess, resolve_image

CATEGORIES = ("functional", "temporal", "causal")
CATEGORY_ALIASES = {"func": "functional", "temp": "temporal", "caus": "causal"}
TABLES = ("queries", "pool", "qrels")
SUFFIXES = (".jsonl", ".parquet", ".csv")
DEFAULT_SPLIT = "test"
ALL_SPLITS = "all"


@dataclass(frozen=True)
class PoolRecord:
    id: str
    image: str | None  # absolute path, data: URI or URL
    description: str
    source: str = ""  # file:row

    table = "pool"


@dataclass(frozen=True)
class QueryRecord:
    id: str
    category: str
    query_text: str
    query_image: str | None  # absolute path, data: URI or URL
    positives: tuple[str, ...]
    source: str = ""

    table = "queries"


@dataclass(frozen=True)
class RmirData:
    queries: tuple[QueryRecord, ...]
    pool: tuple[PoolRecord, ...]
    location: str
    split: str | None = None  # the split scored: a split name, "all", or None when the data has no splits

    def __len__(self) -> int:
        return len(self.queries) + len(self.pool)

    def records(self) -> list[QueryRecord | PoolRecord]:
        return [*self.queries, *self.pool]


# --- images ---------------------------------------------------------------------------------


def _query_or_pool_image(
    row: Row, field: str, problems: list[Problem], *, check: bool, access: ImageAccess = DEFAULT_ACCESS
) -> str | None:
    value = row.values.get(field)
    if is_blank(value):
        problems.append(Problem(row.source, row.index, field, "missing"))
        return None
    return resolve_image(value, row, field, problems, check=check, access=access)


# --- rows -> records ---------------------------------------------------------------------------


#: A category's name or one of the paper's codes (case-folded) -> the category.
_CATEGORY_SPELLINGS = {**{name: name for name in CATEGORIES}, **CATEGORY_ALIASES}


def validate_pool(
    rows: Sequence[Row], problems: list[Problem], *, check_images: bool, image_access: ImageAccess = DEFAULT_ACCESS
) -> list[PoolRecord]:
    def build(row: Row, record_id: str, problems: list[Problem]) -> PoolRecord:
        return PoolRecord(
            id=record_id,
            image=_query_or_pool_image(row, "image", problems, check=check_images, access=image_access),
            description=require_text(row, "description", problems, optional=True),
            source=f"{row.source}:{row.index}",
        )

    return collect_records(rows, build, problems)


def _qrels(rows: Sequence[Row], problems: list[Problem]) -> dict[str, dict[str, tuple[Row, float]]]:
    """query id -> corpus id -> (row, score), MTEB column names (``_`` forms accepted)."""
    found: dict[str, dict[str, tuple[Row, float]]] = {}
    for row in rows:
        qid = read_id(row, problems, "query-id" if "query-id" in row.values else "query_id")
        did = read_id(row, problems, "corpus-id" if "corpus-id" in row.values else "corpus_id")
        score = row.values.get("score", 1)
        if isinstance(score, str):
            try:
                score = float(score)
            except ValueError:
                pass
        if isinstance(score, bool) or not isinstance(score, (int, float)) or math.isnan(score):
            problems.append(Problem(row.source, row.index, "score", f"must be a number, got {score!r}"))
            continue
        if qid and did:
            found.setdefault(qid, {})[did] = (row, float(score))
    return found


def validate_queries(
    rows: Sequence[Row],
    pool_ids: set[str],
    problems: list[Problem],
    *,
    qrel_rows: Sequence[Row] = (),
    check_images: bool,
    image_access: ImageAccess = DEFAULT_ACCESS,
) -> list[QueryRecord]:
    qrels = _qrels(qrel_rows, problems)

    def build(row: Row, record_id: str, problems: list[Problem]) -> QueryRecord:
        before = len(problems)
        listed = id_list(row, "positives", problems, "pool ids")  # None when the column is absent or blank
        judged = qrels.get(record_id)
        if listed is not None and judged is not None:
            problems.append(Problem(row.source, row.index, "positives", "given both here and in qrels; keep one"))
        positives: tuple[str, ...] = ()
        if judged is not None:
            for did, (qrow, _score) in judged.items():
                if did not in pool_ids:
                    problems.append(Problem(qrow.source, qrow.index, "corpus-id", f"{did!r} is not a pool id"))
            positives = tuple(did for did, (_, score) in judged.items() if score > 0)
        elif listed is not None:
            positives = tuple(dict.fromkeys(listed))  # each once
            for i, did in enumerate(positives):
                if did not in pool_ids:
                    problems.append(Problem(row.source, row.index, f"positives[{i}]", f"{did!r} is not a pool id"))
        if not positives and len(problems) == before:
            message = "the query has no positive (every query needs at least one)"
            problems.append(Problem(row.source, row.index, "positives", message))
        return QueryRecord(
            id=record_id,
            category=choice(row, "category", CATEGORIES, problems, _CATEGORY_SPELLINGS),
            query_text=require_text(row, "query_text", problems),
            query_image=_query_or_pool_image(row, "query_image", problems, check=check_images, access=image_access),
            positives=positives,
            source=f"{row.source}:{row.index}",
        )

    records = collect_records(rows, build, problems)
    known = {read_id(row, []) for row in rows}
    for qid, judged in qrels.items():
        if qid not in known:
            qrow = next(iter(judged.values()))[0]
            problems.append(Problem(qrow.source, qrow.index, "query-id", f"{qid!r} is not a query id"))
    return records


# --- loading ---------------------------------------------------------------------------------


def table_files(
    folder: Path, tables: Sequence[str] = TABLES, needed: Sequence[str] = ("queries", "pool"), what: str = "RMIR data"
) -> dict[str, Path]:
    """The files of ``folder`` holding ``tables`` (``<table>.jsonl``/``.parquet``/``.csv``, in any case, as the other
    benchmarks' loaders read them): regular files, or symlinks that stay inside it; a table file that is anything
    else (a FIFO, a symlink leading out), two files for one table, or a ``needed`` one missing is a problem."""

    def is_table(path: Path) -> bool:
        return path.stem.casefold() in tables and path.suffix.casefold() in SUFFIXES

    try:
        candidates = files.folder_files(folder, match=is_table)
        refused = [refusal(path, error) for path, error in files.refused_entries(folder, match=is_table)]
    except files.FileRefused as error:
        raise DataValidationError([refusal(folder, error)]) from None
    if refused:
        raise DataValidationError(refused)
    found: dict[str, Path] = {}
    for table in tables:
        matches = [p for p in candidates if p.stem.casefold() == table]
        if len(matches) > 1:
            raise DataValidationError(
                [Problem(str(folder), 0, table, f"several files for one table: {', '.join(p.name for p in matches)}")]
            )
        if matches:
            found[table] = matches[0]
    missing = [t for t in needed if t not in found]
    if missing:
        names = " and ".join(f"{t}.jsonl (or .parquet/.csv)" for t in missing)
        raise DataValidationError([Problem(str(folder), 0, "-", f"the {what} folder needs {names}")])
    return found


def _hub_rows(data: str) -> dict[str, list[Row]]:
    """Every split of every config; each row's ``split`` column is its hub split (as local rows carry it)."""
    import datasets

    tables: dict[str, list[Row]] = {}
    for table in TABLES:
        try:
            loaded = datasets.load_dataset(data, table)
        except Exception as exc:
            if table == "qrels":
                continue
            message = f"not a local folder, and loading config {table!r} from the Hugging Face hub failed: {exc}"
            raise DataValidationError([Problem(str(data), 0, "-", message)]) from exc
        tables[table] = [
            Row(f"{data}[{table}/{split}]", index, {**dict(values), "split": split})
            for split in loaded
            for index, values in enumerate(loaded[split], start=1)
        ]
    return tables


# --- splits ------------------------------------------------------------------------------------


def _row_split(row: Row) -> str | None:
    value = row.values.get("split")
    return None if is_blank(value) else str(value).strip()


def splits_of(rows: Sequence[Row]) -> list[str]:
    """The split names the rows carry, in order of first appearance."""
    return list(dict.fromkeys(s for s in map(_row_split, rows) if s is not None))


def select_split(
    tables: dict[str, list[Row]], split: str | None, where: str
) -> tuple[dict[str, list[Row]], str | None, set[str]]:
    """``(tables of the chosen split, that split, ids of queries in other splits)``; the rules are the
    README's ("Parameters": ``split``; "Data": splits)."""
    queries = tables["queries"]
    available = splits_of(queries)
    if not available:
        if split not in (None, ALL_SPLITS):
            raise ConfigurationError(
                f"{where}: split {split!r} was asked for, but the queries carry no split (no hub splits, no `split` "
                "column): leave split unset to score all of them"
            )
        return tables, None, set()
    unlabelled = [row for row in queries if _row_split(row) is None]
    if unlabelled:
        raise DataValidationError(
            [
                Problem(row.source, row.index, "split", f"missing, while other rows name one ({', '.join(available)})")
                for row in unlabelled
            ]
        )
    chosen = DEFAULT_SPLIT if split is None else str(split).strip()
    if chosen == ALL_SPLITS:
        return tables, ALL_SPLITS, set()
    if chosen not in available:
        raise ConfigurationError(
            f"{where}: unknown split {chosen!r}; the queries have {', '.join(available)} (or {ALL_SPLITS})"
        )
    selected = {"queries": [row for row in queries if _row_split(row) == chosen]}
    others = {
        str(row.values.get("id")).strip()
        for row in queries
        if _row_split(row) != chosen and row.values.get("id") is not None
    }
    for table in ("pool", "qrels"):
        if table not in tables:
            continue
        rows = tables[table]
        found = splits_of(rows)
        if chosen in found:
            selected[table] = [row for row in rows if _row_split(row) == chosen]
        elif len(found) <= 1:
            selected[table] = list(rows)  # unsplit, or one split (a hub config's lone "train") serving every split
        else:
            raise ConfigurationError(f"{where}: the {table} table has splits {', '.join(found)} but not {chosen!r}")
    return selected, chosen, others


def _source_key(data: str) -> tuple:
    path = files.checked_path(Path(data).expanduser())
    if path.is_dir():
        tables = sorted(table_files(path).values())
        return (str(path.resolve()), *((f.name, f.stat().st_mtime_ns, f.stat().st_size) for f in tables))
    return (data,)


@functools.lru_cache(maxsize=4)
def _tables(key: tuple, data: str) -> dict[str, list[Row]]:
    path = Path(data).expanduser()
    if path.is_dir():
        return {table: load_rows(file) for table, file in table_files(path).items()}
    if path.exists():
        raise DataValidationError(
            [Problem(data, 0, "-", "RMIR data is a folder holding queries.* and pool.* (or a Hugging Face id)")]
        )
    if looks_like_local_path(data):  # a typo of a folder is never sent to the hub
        raise DataValidationError(
            [Problem(data, 0, "-", "no such folder (a Hugging Face dataset id has the form owner/name)")]
        )
    return _hub_rows(data)


@functools.lru_cache(maxsize=8)
def _load(key: tuple, data: str, split: str | None, check_images: bool, image_access: ImageAccess) -> RmirData:
    path = Path(data).expanduser()
    tables, chosen, other_split_ids = select_split(_tables(key, data), split, data)
    problems: list[Problem] = []
    pool = validate_pool(tables["pool"], problems, check_images=check_images, image_access=image_access)
    # Every row's id, also of rows with problems (not in ``pool``): positives naming them are not reported twice.
    pool_ids = {str(r.values.get("id")).strip() for r in tables["pool"] if r.values.get("id") is not None}
    # qrels rows about queries of another split belong to that split, not to this run.
    qrel_rows = [r for r in tables.get("qrels", ()) if _qrel_query(r) not in other_split_ids]
    queries = validate_queries(
        tables["queries"], pool_ids, problems, qrel_rows=qrel_rows, check_images=check_images, image_access=image_access
    )
    if problems:
        raise DataValidationError(problems)
    return RmirData(tuple(queries), tuple(pool), str(path.resolve()) if path.is_dir() else data, chosen)


def _qrel_query(row: Row) -> str:
    value = row.values.get("query-id", row.values.get("query_id"))
    return "" if value is None else str(value).strip()


def load_data(
    data: str | os.PathLike[str] | None = None,
    *,
    split: str | None = None,
    check_images: bool = True,
    image_access: ImageAccess = DEFAULT_ACCESS,
) -> RmirData:
    """Validated queries of one split and the pool (bundled fixtures by default); raises
    DataValidationError listing every problem. ``check_images``: open every image with pillow."""
    source = os.fspath(data) if data is not None else str(fixtures_dir("rmir"))
    return _load(_source_key(source), source, split, bool(check_images), image_access)


def query_splits(data: str | os.PathLike[str] | None = None) -> list[str]:
    """The splits the queries carry ([] when none)."""
    source = os.fspath(data) if data is not None else str(fixtures_dir("rmir"))
    return splits_of(_tables(_source_key(source), source)["queries"])


def load_every_split(
    data: str | os.PathLike[str] | None = None, *, check_images: bool = True, image_access: ImageAccess = DEFAULT_ACCESS
) -> list[RmirData]:
    """Each split validated on its own against its pool (``ecom-tasks validate``); one item when unsplit."""
    splits: list[str | None] = [*query_splits(data)] or [None]
    return [load_data(data, split=s, check_images=check_images, image_access=image_access) for s in splits]


def select_queries(data: RmirData, category: str | None) -> list[QueryRecord]:
    """The queries of one category (all when None); an unknown category is an error."""
    if category in (None, "", "all"):
        return list(data.queries)
    key = _CATEGORY_SPELLINGS.get(str(category).casefold())
    if key is None:
        raise ConfigurationError(f"unknown RMIR category {category!r}; expected one of {', '.join(CATEGORIES)}")
    return [q for q in data.queries if q.category == key]
