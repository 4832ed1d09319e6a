"""Chaining a dataset-construction pipeline's stages over one folder: what every ``ecom-tasks build``
pipeline shares.

A pipeline (``ecom_tasks/<benchmark>/construction/``) is a sequence of
:class:`Stage`\\ s, each one Inspect task (registered as ``ecom_tasks/<name>``)
whose inputs are files the previous stage's log was turned into. The pipeline
package exposes ``add_build_arguments(parser)`` and ``run_build(args) -> int``;
``ecom-tasks build <benchmark>`` discovers it (see ``cli.py``).

- **Resume.** :func:`run_stage` runs the stage with ``inspect_ai.eval_set``
  into a folder of its own (``<out>/logs/<n>_<stage>/``). A finished log of the
  same task (same task arguments, model and roles) is reused without a model
  call; an interrupted one (cancelled, failed, or a killed process's log
  left ``started``, which Inspect recovers from its sample buffer) is retried
  with its finished samples reused. So re-running the same command asks only
  for the unfinished items, and a re-run that changes only thresholds applied
  after the stages asks nothing.
- **Input hashes.** A stage's inputs are files; their sha256 (:func:`file_sha256`)
  goes into the task arguments (``<name>_sha256``), so the log records them
  and a changed input is a different task (never a stale log reused). The
  task checks the hash against the file it reads (:func:`check_sha256`).
- **Costs.** :func:`print_cost` says, before a stage starts, how many items
  it has, how many model calls each makes (``items x judges``) and how many
  an earlier run already finished (:func:`finished_items`).
- **Reading.** :func:`scored_samples` yields each sample's score of a named
  scorer from a finished log; pipelines turn those into the next stage's
  input file (:func:`write_jsonl`) and into the benchmark's data files.

Inspect is imported inside the functions that need it: importing this module
stays light (the CLI imports every pipeline package to build its parser).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ecom_tasks.data import ConfigurationError, EcomTasksError
from ecom_tasks.provenance import file_sha256  # the one file hasher; construction's pipelines import it from here

#: Task-argument suffix of an input's hash (``input_sha256``, ``seeds_sha256``).
SHA256_SUFFIX = "_sha256"


class StageFailed(EcomTasksError):
    """A stage did not finish (after Inspect's retries): re-running the same command resumes it."""


# --- files and hashes ---------------------------------------------------------------------------


def json_sha256(value: Any) -> str:
    """sha256 of ``value`` as canonical JSON (sorted keys, no spaces)."""
    return hashlib.sha256(
        json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()


def check_sha256(path: str | os.PathLike[str], expected: str | None, what: str) -> str:
    """The file's sha256; a :class:`ConfigurationError` when ``expected`` is given and differs (the
    file changed since the stage's log was started: a resumed stage must read what it started with)."""
    actual = file_sha256(path)
    if expected and actual != expected:
        raise ConfigurationError(
            f"{what} {os.fspath(path)} has changed since this stage was started (sha256 {actual[:12]}..., the stage's "
            f"task arguments say {expected[:12]}...): re-run the build command, which re-derives it"
        )
    return actual


def write_jsonl(path: str | os.PathLike[str], rows: Iterable[Mapping[str, Any]]) -> str:
    """Write ``rows`` as JSON Lines (UTF-8, one object a line, keys in the given order), atomically
    (a temporary file renamed over ``path``); returns the file's sha256."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            for row in rows:
                line = json.dumps(row, ensure_ascii=False) + "\n"
                digest.update(line.encode("utf-8"))
                fh.write(line)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return digest.hexdigest()


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# --- stages ---------------------------------------------------------------------------------------


@dataclass
class Stage:
    """One stage: the registered Inspect task, its arguments, and what it costs.

    ``calls_per_item`` model calls per item (0 for a stage that calls no chat
    model, e.g. retrieval: run with ``model="none"``); ``unit`` names the calls
    (``"judges"``). ``model_roles`` are given to this stage only (a judge panel's
    roles are not part of the other stages' identity).
    """

    name: str
    task: str
    task_args: dict[str, Any]
    items: int
    calls_per_item: int = 1
    unit: str = "call"
    model: str | None = None
    model_roles: dict[str, str] = field(default_factory=dict)

    @property
    def calls(self) -> int:
        return self.items * self.calls_per_item


@dataclass
class StageOptions:
    """Where stages log and how Inspect runs them (the ``eval_set`` options a build passes on)."""

    log_root: Path
    display: str | None = None
    max_connections: int | None = None
    max_samples: int | None = None
    retry_attempts: int | None = None
    log_level: str | None = None
    fail_on_error: bool | float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def folder(self, index: int, stage: Stage) -> Path:
        return Path(self.log_root) / f"{index}_{stage.name}"


def _matches(header: Any, stage: Stage) -> bool:
    """Whether a log (header) is an earlier run of this stage, as ``eval_set`` decides when it reuses a
    log: the same task, task arguments, model (when the stage names one) and model roles. (The cost
    line counted another model's answers as done when only the task was compared.)"""
    task = stage.task.removeprefix("ecom_tasks/")
    if str(header.eval.task).removeprefix("ecom_tasks/") != task:
        return False
    if stage.model is not None and str(header.eval.model) != stage.model:
        return False
    roles = {role: str(getattr(config, "model", config)) for role, config in (header.eval.model_roles or {}).items()}
    if roles != dict(stage.model_roles):
        return False
    recorded = dict(header.eval.task_args_passed or header.eval.task_args or {})
    return json_sha256(recorded) == json_sha256(_plain(stage.task_args))


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value))


def finished_items(folder: str | os.PathLike[str], stage: Stage) -> int:
    """How many of the stage's items an earlier run in ``folder`` finished without an error: from a
    finished, cancelled or failed log, or a killed run's log that Inspect can recover (0 when none)."""
    from inspect_ai.log import list_eval_logs, read_eval_log, read_eval_log_sample_summaries, recoverable_eval_logs

    folder = Path(folder)
    if not folder.is_dir():
        return 0
    best = 0
    recoverable = None
    for info in list_eval_logs(str(folder), recursive=False):
        try:
            header = read_eval_log(info, header_only=True)
        except Exception:  # an unreadable log is retried by eval_set or left alone; it finished nothing we can use
            continue
        if not _matches(header, stage):
            continue
        if header.status == "started":
            if recoverable is None:
                try:
                    recoverable = {r.log.name: r for r in recoverable_eval_logs(str(folder))}
                except Exception:
                    recoverable = {}
            found = recoverable.get(info.name)
            done = (found.flushed_samples + found.completed_samples) if found is not None else 0
        else:
            try:
                done = sum(
                    1 for s in read_eval_log_sample_summaries(info) if s.error is None and s.completed is not False
                )
            except Exception:
                done = 0
        best = max(best, done)
    return min(best, stage.items)


def cost_line(stage: Stage, done: int = 0) -> str:
    """``judge: 40 triplets x 5 judges = 200 model calls; 120 of them done by an earlier run, 80 to make``."""
    if stage.calls_per_item == 0:
        head = f"{stage.name}: {stage.items} items, no model call"
        return head + (f"; {done} done by an earlier run" if done else "")
    per = f" x {stage.calls_per_item} {stage.unit}" if stage.calls_per_item != 1 or stage.unit != "call" else ""
    total = stage.calls
    head = f"{stage.name}: {stage.items} items{per} = {total} model call{'s' if total != 1 else ''}"
    if done:
        remaining = (stage.items - done) * stage.calls_per_item
        return f"{head}; {done * stage.calls_per_item} of them done by an earlier run, {remaining} to make"
    return head


def print_cost(
    stage: Stage, done: int = 0, *, index: int | None = None, of: int | None = None, file: TextIO | None = None
) -> None:
    where = f"stage {index}/{of} " if index is not None and of is not None else "stage "
    print(where + cost_line(stage, done), file=file or sys.stdout, flush=True)


def run_stage(stage: Stage, options: StageOptions, *, index: int = 1, of: int = 1) -> Any:
    """Print the stage's cost, then run it with ``eval_set`` in its folder (reusing or resuming an
    earlier run of the same task there) and return its finished log, samples included.

    A stage with no item is not run (``None``). A stage that does not finish
    after Inspect's retries raises :class:`StageFailed` naming the folder.
    """
    from inspect_ai import eval_set
    from inspect_ai.log import read_eval_log

    folder = options.folder(index, stage)
    done = finished_items(folder, stage)
    print_cost(stage, done, index=index, of=of)
    if stage.items == 0:
        return None
    kwargs: dict[str, Any] = dict(
        log_dir=str(folder),
        task_args=_plain(stage.task_args),
        model=stage.model,
        model_roles=dict(stage.model_roles) or None,
        log_dir_allow_dirty=True,  # logs of an earlier, different run of this stage (other inputs) stay, unused
    )
    for name in ("display", "max_connections", "max_samples", "retry_attempts", "log_level", "fail_on_error"):
        value = getattr(options, name)
        if value is not None:
            kwargs[name] = value
    kwargs.update(options.extra)
    success, logs = eval_set([stage.task], **kwargs)
    log = logs[0] if logs else None
    if not success or log is None or log.status != "success":
        where = log.location if log is not None else str(folder)
        error = getattr(getattr(log, "error", None), "message", None) if log is not None else None
        raise StageFailed(
            f"stage {stage.name} did not finish ({error or (log.status if log is not None else 'no log')}); its log: {where}. "
            "Re-run the same command to resume it: finished items are not asked again"
        )
    return read_eval_log(log.location)


def scored_samples(log: Any, scorer: str) -> Iterator[tuple[Any, Any]]:
    """``(sample, score)`` for every sample of a finished log that ``scorer`` scored (by the scorer's
    name, with or without the ``ecom_tasks/`` prefix)."""
    wanted = scorer.removeprefix("ecom_tasks/")
    for sample in log.samples or []:
        for name, score in (sample.scores or {}).items():
            if name.removeprefix("ecom_tasks/") == wanted:
                yield sample, score
                break


def stage_log_summary(log: Any) -> str:
    """``<location> (<n> samples)``: where a stage's log is, for the build's report."""
    return f"{log.location} ({len(log.samples or [])} samples)" if log is not None else "(not run: no items)"


# --- the build command's shared arguments ------------------------------------------------------

#: Inspect settings every stage passes through to ``eval_set`` (``StageOptions`` fields).
STAGE_OPTION_NAMES = ("display", "max_connections", "max_samples", "retry_attempts", "log_level")


def model_role(text: str) -> tuple[str, str]:
    """An argparse type: ``ROLE=MODEL`` -> ``(role, model)``."""
    import argparse

    role, sep, model = text.partition("=")
    if not sep or not role.strip() or not model.strip():
        raise argparse.ArgumentTypeError(f"expected ROLE=MODEL (e.g. judge_2=openai/gpt-4o-mini), got {text!r}")
    return role.strip(), model.strip()


def add_panel_arguments(parser: Any, *, model_help: str, roles_help: str) -> None:
    """``--model`` (every seat not bound by a role) and the repeatable ``--model-role ROLE=MODEL``."""
    parser.add_argument("--model", required=True, help=model_help)
    parser.add_argument(
        "--model-role", action="append", default=[], type=model_role, metavar="ROLE=MODEL", help=roles_help
    )


def add_stage_arguments(parser: Any) -> None:
    """The Inspect settings a build passes to each stage (see :data:`STAGE_OPTION_NAMES`)."""
    parser.add_argument("--max-connections", type=int, default=None, help="Inspect's concurrent model connections")
    parser.add_argument("--max-samples", type=int, default=None, help="Inspect's concurrent samples")
    parser.add_argument(
        "--retry-attempts", type=int, default=None, help="eval-set retries of a failed stage (Inspect's default 10)"
    )
    parser.add_argument("--display", default=None, help="Inspect display (full, rich, plain, none)")
    parser.add_argument("--log-level", default=None, help="Inspect log level")


def add_image_arguments(parser: Any, *, images_default: str, source: str) -> None:
    """How images reach the data set (``--images link|copy``) and may be read (outside ``source``'s folder, URLs)."""
    parser.add_argument(
        "--images",
        default=images_default,
        choices=("link", "copy"),
        help=f"put images into data/images by hard link (copy where not possible) or copy (default {images_default})",
    )
    parser.add_argument(
        "--allow-outside-images", action="store_true", help=f"read image paths outside the {source}'s folder"
    )
    parser.add_argument("--allow-url-images", action="store_true", help="fetch http(s) image URLs")


def stage_options(args: Any) -> dict[str, Any]:
    """The stage settings the user gave (None: Inspect's default)."""
    return {name: getattr(args, name) for name in STAGE_OPTION_NAMES if getattr(args, name, None) is not None}


# --- images of a built data set -----------------------------------------------------------------

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


def image_file_name(item_id: str, source: str) -> str:
    """A file name for an item's image: its id made safe (plus a short hash when that changed it, so
    two ids never share a file) and the source's suffix (a data URI's media type)."""
    if source.startswith("data:"):
        suffix = "." + (source[5:].split(";")[0].split(",")[0].split("/")[-1] or "png")
    else:
        suffix = Path(source).suffix.lower() or ".png"
    safe = _UNSAFE_NAME.sub("_", item_id)
    if safe != item_id or safe.startswith("."):
        safe = f"{safe.lstrip('.')}-{hashlib.sha256(item_id.encode()).hexdigest()[:8]}"
    return safe + suffix


def place_image(source: str, target: Path, mode: str) -> None:
    """Put ``source`` (a file path or a data URI) at ``target``: a hard link when ``mode`` is ``link``
    and the file system allows it, else a copy. An existing ``target`` is kept (a resumed build)."""
    if target.exists():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.startswith("data:"):
        header, payload = source.split(",", 1)
        target.write_bytes(base64.b64decode(payload) if header.endswith(";base64") else payload.encode())
        return
    if source.startswith(("http://", "https://")):
        raise ConfigurationError(
            f"cannot copy a URL image into the data set: {source[:80]} (load the inputs with URL images allowed)"
        )
    if mode == "link":
        try:
            os.link(source, target)
            return
        except OSError:
            pass  # another file system, or links not allowed: copy
    shutil.copy2(source, target)
