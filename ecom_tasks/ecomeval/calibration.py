"""Difficulty calibration (Sec. 3.2, App. C) from EcomEval's Inspect logs (``ecom-tasks calibrate``): item
and task scores averaged across models in exact arithmetic, labelled hard < 70 <= medium <= 80 < easy;
the rules are in EcomEval's README ("Difficulty calibration")."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from ecom_tasks import files
from ecom_tasks.data import ConfigurationError, load_rows
from ecom_tasks.ecomeval.metrics import FAILURE_THRESHOLD, Outcome
from ecom_tasks.ecomeval.schema import FIXTURES_LOCATION, column_field, fixture_file, load_records
from ecom_tasks.ecomeval.tasks import canonical_task
from ecom_tasks.files import OutputFolder
from ecom_tasks.images import DEFAULT_ACCESS, ImageAccess
from ecom_tasks.scorers.core import RUBRIC_MAX
from ecom_tasks.tables import csv_text

HARD_BELOW = 70
EASY_ABOVE = 80


def label(score: Fraction | float | None) -> str | None:
    """``hard`` < 70 <= ``medium`` <= 80 < ``easy``; None for no score."""
    if score is None:
        return None
    return "hard" if score < HARD_BELOW else "easy" if score > EASY_ABOVE else "medium"


def _to_100(grade: float) -> Fraction:
    # Grades are whole numbers or epoch means of a few of them: 2.3333333333333335 is 7/3.
    exact = Fraction(grade).limit_denominator(10_000)
    if not 0 <= exact <= RUBRIC_MAX:
        raise ValueError(f"grade {grade!r} is outside 0..{RUBRIC_MAX}")
    return exact * 100 / RUBRIC_MAX


def _mean(values: list[Fraction]) -> Fraction | None:
    return sum(values, Fraction(0)) / len(values) if values else None


def _by_task(items: Iterable[str], tasks: Mapping[str, str]) -> dict[str, list[str]]:
    by_task: dict[str, list[str]] = {}
    for item in items:
        by_task.setdefault(tasks.get(item, ""), []).append(item)
    return by_task


@dataclass(frozen=True)
class Calibrated:
    """One item's or task's score across models (0-100), how many models/items it rests on, its label."""

    score: float | None
    n_models: int
    n_items: int
    difficulty: str | None


@dataclass(frozen=True)
class Unreliable:
    """One model's grades of one task, left out: the judge failed on ``failed`` of its ``items``."""

    model: str
    task: str
    failed: int
    items: int
    threshold: float

    def __str__(self) -> str:
        return (
            f"left out {self.model}'s grades of task {self.task!r}: the judge failed on {self.failed} of "
            f"{self.items} items ({self.failed / self.items:.0%}, above the {self.threshold:.0%} threshold)"
        )


def drop_unreliable(
    grades: Mapping[str, Mapping[str, float | None]], tasks: Mapping[str, str], threshold: float = FAILURE_THRESHOLD
) -> tuple[dict[str, dict[str, float | None]], list[Unreliable]]:
    """``grades`` without each (model, task) whose judge failure share is above ``threshold``, and
    what was left out. The share counts the task's items in that model's grades (None: a failure)."""
    kept: dict[str, dict[str, float | None]] = {}
    dropped: list[Unreliable] = []
    for model, by_item in grades.items():
        kept[model] = {}
        for task, members in _by_task(by_item, tasks).items():
            failed = sum(by_item[i] is None for i in members)
            if failed / len(members) > threshold:
                dropped.append(Unreliable(model, task, failed, len(members), threshold))
                continue
            kept[model].update({i: by_item[i] for i in members})
    return kept, dropped


def calibrate(
    grades: Mapping[str, Mapping[str, float | None]], tasks: Mapping[str, str]
) -> tuple[dict[str, Calibrated], dict[str, Calibrated]]:
    """(items, tasks): ``grades[model][item_id]`` -> per-item and per-task scores and labels.

    ``tasks`` maps every item id to its task. An item missing from a model's grades, or a
    judge failure (None), is averaged over the models that have a grade.
    """
    unknown = sorted({item for by_item in grades.values() for item in by_item} - set(tasks))
    if unknown:
        raise ValueError(f"graded items without a task: {', '.join(unknown[:5])}")

    def row(means: list[Fraction], n_items: int) -> Calibrated:
        mean = _mean(means)
        return Calibrated(None if mean is None else float(mean), len(means), n_items, label(mean))

    def scores(by_item: Mapping[str, float | None], members: Iterable[str]) -> list[Fraction]:
        return [_to_100(grade) for i in members if (grade := by_item.get(i)) is not None]

    items = {item: row([s for g in grades.values() for s in scores(g, [item])], 1) for item in tasks}
    task_rows = {}
    for task, members in sorted(_by_task(tasks, tasks).items()):
        model_means = [m for g in grades.values() if (m := _mean(scores(g, members))) is not None]
        task_rows[task] = row(model_means, len(members))
    return items, task_rows


def placed_image(image: str, base: Path | None, output: OutputFolder) -> str:
    """How the calibrated copy in ``output`` names ``image``: a data URI or URL as it is, a file of the
    dataset's folder ``base`` copied (through ``output``) to the same relative place, any other file by a
    relative path. An existing different file is an error; a symlink there is replaced, never followed."""
    if not os.path.isabs(image):
        return image
    source, out_real = Path(image), output.root.resolve()
    if source.is_relative_to(out_real):  # a resolved path: no symlinked folder on its way
        return source.relative_to(out_real).as_posix()
    if base is None or not source.is_relative_to(base.resolve()):
        return os.path.relpath(source, out_real)
    relative = source.relative_to(base.resolve())
    target = output.check_target(relative)
    if relative.parent.parts and os.path.lexists(target.parent):
        output.folder(relative.parent, create=False)  # a symlinked sub-folder is refused, never written through
    if output.exists(relative):
        if files.sha256(source) != files.sha256(target):
            raise ConfigurationError(
                f"{target} exists and differs from {source}: calibrate --out would overwrite it; write to another folder"
            )
    else:
        output.copy_in(source, relative, exact=True)  # the load resolved it: a link there now was planted since
    return relative.as_posix()


def local_inputs(paths: Iterable[str | os.PathLike[str] | None]) -> list[Path]:
    """The paths that name local files or folders (a Hugging Face id reads nothing here to protect)."""
    return [Path(p) for p in paths if p is not None and os.path.lexists(p)]


def write_calibrated(
    data: str | os.PathLike[str],
    items: Mapping[str, Calibrated],
    out: Path,
    *,
    image_access: ImageAccess = DEFAULT_ACCESS,
    output: OutputFolder | None = None,
) -> tuple[int, int]:
    """Write ``data``'s rows (every column kept) as JSON Lines to ``out`` with ``difficulty`` and
    ``difficulty_score`` filled from ``items``, images placed by :func:`placed_image`. ``out`` is written
    through ``output`` (default: its own folder, with ``data`` as its input): an ``out`` that is ``data``,
    or lies in a data folder, is refused before anything is read. Returns (rows written, rows in no log)."""
    out = Path(out)
    if output is None:
        files.create_parents(out.parent)
        output = OutputFolder(out.parent, inputs=local_inputs([data]))
    output.check_target(out.name)
    records = {r.id: r for r in load_records(data, image_access=image_access)}
    lines = []
    for row in load_rows(data):
        values = dict(row.values)
        id_column = next(c for c in values if column_field(c) == "id")
        record = records[str(values[id_column]).strip()]
        found = items.get(record.id)
        # The columns written below replace whichever spelling gave them ("difficulty level").
        for column in [c for c in values if column_field(c) in ("difficulty", "images")]:
            del values[column]
        values["difficulty"] = found.difficulty if found else None
        values["difficulty_score"] = round(found.score, 4) if found and found.score is not None else None
        values["images"] = [placed_image(image, row.base_dir, output) for image in record.images]
        lines.append(files.dumps_strict(values, ensure_ascii=False, default=str) + "\n")
    output.write_lines(out.name, lines)
    return len(lines), sum(1 for r in records if r not in items)


#: The task table's columns: its first line, by which calibrate knows a table it wrote (:func:`task_table_path`).
TASK_TABLE_COLUMNS = ("task", "items", "models", "score", "difficulty")


def task_table_path(out: Path, tasks_out: str | None) -> Path:
    """Where the task table goes: ``tasks_out``, else ``<out stem>.tasks.csv`` beside ``out``. A name the user never
    gave replaces only a task table calibrate wrote (a regular file whose first line is :data:`TASK_TABLE_COLUMNS`);
    anything else there is refused untouched."""
    if tasks_out:
        return Path(tasks_out)
    table = out.with_name(f"{out.stem}.tasks.csv")
    if os.path.lexists(table):
        header = ",".join(TASK_TABLE_COLUMNS).encode()
        ours = False
        if stat.S_ISREG(table.lstat().st_mode):
            with files.open_regular(table) as handle:
                ours = handle.readline(len(header) + 2).rstrip(b"\r\n") == header
        if not ours:
            raise files.FileRefused(
                f"{table}: not a task table calibrate wrote (its first line is not {header.decode()}); not replaced:"
                " give --tasks-out, or move it away"
            )
    return table


def task_table_text(task_rows: Mapping[str, Calibrated]) -> str:
    """The task-level labels as CSV: :data:`TASK_TABLE_COLUMNS`."""
    return csv_text(
        list(TASK_TABLE_COLUMNS),
        (
            [task, row.n_items, row.n_models, "" if row.score is None else f"{row.score:.4f}", row.difficulty or ""]
            for task, row in task_rows.items()
        ),
        line_end="\r\n",
    )


# --- the grades in EcomEval's Inspect logs ---------------------------------------------------


def log_grades(paths: list[str]) -> tuple[dict[str, dict[str, float | None]], dict[str, str], list[str]]:
    """(grades[model][item_id], task of each item, data locations recorded) from EcomEval Inspect logs.

    A grade is the item's mean over its graded epochs (None: a judge failure in every epoch). Logs
    of one model are merged (e.g. one log per category); the same item graded twice for one model
    is an error.
    """
    grades: dict[str, dict[str, float | None]] = {}
    tasks: dict[str, str] = {}
    data: list[str] = []
    for path in paths:
        log = files.read_inspect_log(path)  # a FIFO, a folder or not a log: refused by name
        if (log.eval.metadata or {}).get("benchmark") != "ecomeval" or not log.samples:
            raise ValueError(f"{path}: not an EcomEval log with samples (task {log.eval.task})")
        location = (log.eval.metadata or {}).get("data")
        if location and location not in data:
            data.append(location)
        by_item = grades.setdefault(log.eval.model, {})
        for sample in log.samples:
            values = [
                s.value for s in (sample.scores or {}).values() if isinstance(s.value, dict) and "graded" in s.value
            ]
            if not values:
                raise ValueError(f"{path}: sample {sample.id} has no EcomEval score")
            value, metadata = values[0], sample.metadata or {}
            if "task" not in metadata:
                raise ValueError(f"{path}: sample {sample.id} has no metadata.task (not a log of ecom_tasks/ecomeval?)")
            item = str(metadata.get("record_id", sample.id))
            if item in by_item:
                raise ValueError(f"{path}: item {item} is graded twice for model {log.eval.model}")
            try:
                by_item[item] = Outcome.of(value, metadata).item_grade
            except (KeyError, TypeError, ValueError):
                raise ValueError(f"{path}: sample {sample.id}: its EcomEval score holds no numeric grade") from None
            tasks[item] = canonical_task(str(metadata["task"]))  # an older log may hold another spelling
    return grades, tasks, data


def recorded_data(location: str) -> str:
    """The data a log's recorded location names: the bundled fixture file for the fixtures' location."""
    return str(fixture_file()) if location == FIXTURES_LOCATION else location
