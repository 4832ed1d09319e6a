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
- **Costs.** :func:`run_stage` says, before a stage starts, how many items
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
import binascii
import hashlib
import json
import math
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ecom_tasks import files
from ecom_tasks.data import ConfigurationError, DataValidationError, EcomTasksError, Problem
from ecom_tasks.files import FileRefused, OutputFolder
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


def _placed(path: str | os.PathLike[str], output: OutputFolder | None) -> tuple[OutputFolder, Path]:
    """The output folder a file is written through and its name there: ``path`` below ``output`` (a name
    relative to it, or a path inside it), or, without ``output``, the file's own folder."""
    target = Path(path)
    if output is None:
        files.create_parents(target.parent)
        return OutputFolder(target.parent), Path(target.name)
    if not target.is_absolute():
        return output, target
    for root in (output.root, output.root.absolute()):
        if target.is_relative_to(root):
            return output, target.relative_to(root)
    raise FileRefused(f"{target}: not inside the {output.what} {output.root}; not written")


def write_jsonl(
    path: str | os.PathLike[str], rows: Iterable[Mapping[str, Any]], *, output: OutputFolder | None = None
) -> str:
    """Write ``rows`` as JSON Lines (UTF-8, one object a line, keys in the given order, strict JSON)
    through ``output`` (default: the file's own folder): a temporary file renamed over ``path``, never
    written through a symlink. Returns the file's sha256."""
    folder, name = _placed(path, output)
    return folder.write_lines(name, (files.dumps_strict(row, ensure_ascii=False) + "\n" for row in rows))


def read_jsonl(path: str | os.PathLike[str], *, inside: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """The objects of a JSON Lines file (a regular file, within ``inside`` when given); every line that
    is not a JSON object is a ``file:row`` problem (:class:`DataValidationError`)."""
    values, problems = files.json_lines(path, inside=inside)
    source = os.fspath(path)
    problems += [Problem(source, row, "-", "not a JSON object") for row, value in values if not isinstance(value, dict)]
    if problems:
        raise DataValidationError(sorted(problems, key=lambda p: p.row))
    return [value for _, value in values]


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
    #: The build folder holding ``log_root``: a stage's log folder is checked to be a real folder below
    #: it (Inspect writes into it; a planted symlink there would send the logs elsewhere).
    output: OutputFolder | None = None

    def folder(self, index: int, stage: Stage) -> Path:
        folder = Path(self.log_root) / f"{index}_{stage.name}"
        if self.output is not None:
            _, name = _placed(folder, self.output)
            self.output.folder(name)
        return folder


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
    say(f"stage {index}/{of} {cost_line(stage, done)}")
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


def logged_votes(log: Any, scorer: str) -> dict[str, list[Any]]:
    """sample id -> the votes its scorer read (its ``votes`` metadata; abstentions as None); {} without a log."""
    if log is None:
        return {}
    return {
        str(sample.id): list((score.metadata or {}).get("votes", [])) for sample, score in scored_samples(log, scorer)
    }


# --- a voting stage's task ---------------------------------------------------------------------


def stage_metadata(
    benchmark: str, stage: str, *, version: str, prompt_version: str, data: Any, fixtures: str, **extra: Any
) -> dict[str, Any]:
    """A stage log's provenance: ``benchmark`` is the builder's own (``<benchmark>_build``), so the report
    never takes a stage log for a run of the benchmark; ``fixtures`` names the bundled fixtures folder."""
    from ecom_tasks.provenance import fixtures_location, task_metadata

    return task_metadata(
        benchmark,
        task_version=version,
        prompt_version=prompt_version,
        data=data,
        fixtures=fixtures_location(fixtures),
        construction_stage=stage,
        **extra,
    )


def panel_solver(
    role_prefix: str,
    judges: int,
    temperature: float | None,
    max_tokens: int,
    parse: Callable[[str], Any],
    reminder: str,
    limit_reminder: str,
    seed: int | None = None,
) -> Any:
    """Every seat ``<role_prefix>_1..judges`` answers each sample; an unreadable reply is asked once more."""
    from ecom_tasks.solvers.panel_votes import panel_generate

    return panel_generate(
        judges=judges,
        role_prefix=role_prefix,
        temperature=temperature,
        max_tokens=max_tokens,
        parse=parse,
        retries=1,
        reminder=reminder,
        limit_reminder=limit_reminder,
        seed=seed,
    )


def panel_stage_votes(state: Any, parse: Callable[[str], Any], cut_off: Any) -> tuple[list[Any], dict[str, dict]]:
    """Each seat's vote, read from its last reply by ``parse``; a reply stopped by a limit is ``cut_off``
    (an abstention)."""
    from ecom_tasks.scorers.judge import LIMIT_STOP_REASONS
    from ecom_tasks.solvers.panel_votes import panel_replies

    replies = panel_replies(state)
    votes = []
    for record in replies.values():
        limited = bool(record.get("stop_reasons")) and record["stop_reasons"][-1] in LIMIT_STOP_REASONS
        votes.append(cut_off if limited else parse(record.get("reply", "")))
    return votes, replies


def vote_metadata(votes: list[Any], statuses: list[str], replies: dict[str, dict]) -> dict[str, Any]:
    """A voting stage's score metadata: who sat, what each voted and why not, how often each was asked."""
    return {
        "roles": list(replies),
        "models": [r.get("model", "") for r in replies.values()],
        "votes": votes,
        "statuses": statuses,
        "attempts": [len(r.get("replies") or []) for r in replies.values()],
    }


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


def build_options(args: Any, *, images: bool = False) -> dict[str, Any]:
    """The ``BuildOptions`` fields every build's command line gives alike (with ``images``, also those of
    :func:`add_image_arguments`)."""
    shared: dict[str, Any] = dict(
        out=Path(args.out),
        model=args.model,
        model_roles=dict(args.model_role),
        stage_options=stage_options(args),
        max_abstention_share=args.max_abstention_share,
    )
    if images:
        from ecom_tasks.images import ImageAccess

        shared.update(
            images=args.images, image_access=ImageAccess.from_options(args.allow_outside_images, args.allow_url_images)
        )
    return shared


def image_access_args(access: Any) -> dict[str, bool]:
    """The task arguments that let a stage read the images the build may read (none for the default)."""
    return {
        name: True
        for name, allowed in (("allow_outside_images", access.outside), ("allow_url_images", access.urls))
        if allowed
    }


def roles_of(model_roles: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """The roles bound to one stage's panel (a stage's identity includes only its own roles)."""
    return {role: model for role, model in model_roles.items() if role.startswith(prefix)}


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


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samestat(a.lstat(), b.stat())
    except OSError:
        return False


def _data_uri_bytes(source: str) -> bytes:
    header, _, payload = source.partition(",")
    if not header.endswith(";base64"):
        return payload.encode()
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise ConfigurationError(f"not a readable base64 data URI image: {source[:60]}...") from None


def place_image(source: str, target: str | os.PathLike[str], mode: str, *, output: OutputFolder | None = None) -> None:
    """Put ``source`` (a file path or a data URI) at ``target`` through ``output`` (default: the target's
    own folder): a hard link when ``mode`` is ``link`` and the file system allows it, else a copy. A
    regular file already there with the same content is kept (a resumed build); anything else there
    (another picture, a symlink, dangling or not) is replaced, never written through."""
    folder, name = _placed(target, output)
    path = folder.path(name)
    if source.startswith("data:"):
        data = _data_uri_bytes(source)
        if not (folder.exists(name) and files.read_bytes(path) == data):
            folder.write_bytes(name, data)
        return
    if source.startswith(("http://", "https://")):
        raise ConfigurationError(
            f"cannot copy a URL image into the data set: {source[:80]} (load the inputs with URL images allowed)"
        )
    source_path = files.regular_file(source)
    if folder.exists(name) and (_same_file(path, source_path) or files.sha256(path) == files.sha256(source_path)):
        return
    folder.copy_in(source_path, name, link=mode == "link")


# --- the build folder ---------------------------------------------------------------------------


def prepare_output(output: OutputFolder, *, files_out: Iterable[str] = (), folders: Iterable[str] = ()) -> None:
    """Before the first model call: the build folder can be written; no planned file is (or lies in) an
    input; every planned file's folder and every named folder that already exists is a real folder
    below it (a planted symlink such as ``data -> elsewhere`` is refused) and can be written."""
    output.check_writable()
    wanted: dict[str, None] = {}
    for name in files_out:
        target = output.check_target(name)
        if target.is_dir() and not target.is_symlink():
            raise FileRefused(f"{target}: a folder where the build writes a file; move it away")
        for parent in reversed(Path(name).parents[:-1]):
            wanted[parent.as_posix()] = None
    for name in folders:
        for parent in reversed(Path(name).parents[:-1]):
            wanted[parent.as_posix()] = None
        wanted[Path(name).as_posix()] = None
    for name in wanted:
        if os.path.lexists(output.path(name)):
            output.folder(name, create=False)
            probe = f"{name}/.ecom-tasks-probe.{os.urandom(6).hex()}"
            output.write_bytes(probe, b"")
            output.remove(probe)


def open_build_folder(
    out: str | os.PathLike[str], *, inputs: Iterable[Path], files_out: Iterable[str], folders: Iterable[str]
) -> OutputFolder:
    """The build folder ``out``, made and checked (:func:`prepare_output`) before anything is read or asked."""
    files.create_parents(Path(out).absolute())  # first: a path through a file is one short message
    output = OutputFolder(Path(out).absolute(), inputs=list(inputs), what="build folder")
    prepare_output(output, files_out=files_out, folders=folders)
    return output


def say(text: str) -> None:
    """A line of the build's report (stdout, flushed: it interleaves with Inspect's display)."""
    print(text, file=sys.stdout, flush=True)


# --- reading a vote's reply ---------------------------------------------------------------------

#: Why a reply gave no vote: nothing after the reasoning, a ``<think>`` never closed, no answer in the
#: format asked for, two answers (or two offered as alternatives).
EMPTY = "empty"
UNCLOSED_THINK = "unclosed_think"
NO_ANSWER = "no_answer"
AMBIGUOUS = "ambiguous"
#: What a vote's reply is compared with: the texts sent, or (None) the stage's instructions.
Prompt = Iterable[str | None] | str | None
# Two answers offered as alternatives: "<answer>NC</answer> or <answer>Other</answer>".
_OR = re.compile(r"\s*(?:,?\s*or|/|或)\s*", re.IGNORECASE)


def reply_region(reply: str | None, prompt: Prompt, answers: re.Pattern[str]) -> tuple[str | None, str]:
    """The text a vote is read from: the reply after its reasoning, without what it copies from ``prompt``
    (:func:`ecom_tasks.scorers.replies.strip_echoes`); None with why when nothing is left to read."""
    from ecom_tasks.scorers.replies import answer_region, strip_echoes

    region = answer_region(reply)
    if region is None:
        return None, UNCLOSED_THINK
    if not region.strip():
        return None, EMPTY
    own = strip_echoes(region, prompt, answers=answers)
    if not any(c.isalnum() for c in own):
        return None, NO_ANSWER  # only a copy of the instructions
    return own.strip(), ANSWERED


def offered_as_alternatives(region: str, matches: list[re.Match[str]]) -> bool:
    """Whether the last answer is offered as an alternative to the one before it."""
    return len(matches) >= 2 and bool(_OR.fullmatch(region, matches[-2].end(), matches[-1].start()))


# --- vote outcomes --------------------------------------------------------------------------------

#: A vote the stage read (``ok``) and one whose reply was stopped by a token limit (``limit``): the
#: statuses the stages' scorers record; every other status of a missing vote is an unreadable reply.
ANSWERED = "ok"
CUT_OFF = "limit"
#: A missing vote the model declined to give in the prompt's own words (RMIR's ``ABSTAIN`` verdict, a
#: generation reply that declines every category): an abstention, but neither cut off nor unreadable.
DECLINED = "declined"
#: A stage whose votes are more than this share abstentions (cut off or unreadable) stops the build:
#: its data set would be decided by tie-breaks, not votes (``--max-abstention-share``).
MAX_ABSTENTION_SHARE = 0.5


class TooManyAbstentions(EcomTasksError):
    """A stage's votes were mostly abstentions: the build stops before writing a data set."""


@dataclass
class VoteOutcomes:
    """What became of every vote of one stage: answered, cut off by the token limit, declined, or
    unreadable (by the parser's status: ``no_answer``, ``ambiguous``, ``empty``, ``unclosed_think``, ...)."""

    stage: str
    answered: int = 0
    cut_off: int = 0
    unreadable: Counter = field(default_factory=Counter)
    declined: int = 0

    def add(self, vote: Any, status: str | None) -> None:
        if vote is not None:
            self.answered += 1
        elif status == CUT_OFF:
            self.cut_off += 1
        elif status == DECLINED:
            self.declined += 1
        else:
            self.unreadable[status or "no_vote"] += 1

    @property
    def abstained(self) -> int:
        return self.cut_off + self.declined + sum(self.unreadable.values())

    @property
    def total(self) -> int:
        return self.answered + self.abstained

    @property
    def share(self) -> float:
        return self.abstained / self.total if self.total else 0.0

    def counts(self) -> str:
        """``12 votes: 3 answered, 9 abstained (8 cut off by the token limit, 1 unreadable: 1 no_answer)``."""
        declined = f"{self.declined} declined, " if self.declined else ""
        why = f"{self.cut_off} cut off by the token limit, {declined}{sum(self.unreadable.values())} unreadable"
        if self.unreadable:
            why += ": " + ", ".join(f"{count} {status}" for status, count in sorted(self.unreadable.items()))
        return f"{self.total} votes: {self.answered} answered, {self.abstained} abstained ({why})"


def vote_outcomes(stage: str, scored: Iterable[tuple[Sequence[Any], Sequence[str]]]) -> VoteOutcomes:
    """The outcomes of ``(votes, statuses)`` of every item of a stage (a vote None is an abstention)."""
    outcomes = VoteOutcomes(stage)
    for votes, statuses in scored:
        statuses = list(statuses)
        for position, vote in enumerate(votes):
            outcomes.add(vote, statuses[position] if position < len(statuses) else None)
    return outcomes


def log_vote_outcomes(log: Any, scorer: str, stage: str) -> VoteOutcomes:
    """:func:`vote_outcomes` of a finished stage log (its scorer's ``votes`` and ``statuses`` metadata)."""
    if log is None:
        return VoteOutcomes(stage)
    return vote_outcomes(
        stage,
        (
            (list((score.metadata or {}).get("votes", [])), list((score.metadata or {}).get("statuses", [])))
            for _, score in scored_samples(log, scorer)
        ),
    )


def check_abstentions(outcomes: VoteOutcomes, max_share: float = MAX_ABSTENTION_SHARE, *, log: Any = None) -> None:
    """Print the stage's outcomes; stop (:class:`TooManyAbstentions`) when every vote, or more than
    ``max_share`` of them, abstained."""
    print(f"  {outcomes.stage}: {outcomes.counts()}", file=sys.stdout, flush=True)
    if not outcomes.total or (outcomes.abstained < outcomes.total and outcomes.share <= max_share):
        return
    advice = []
    if outcomes.cut_off:
        advice.append("raise --max-tokens (replies were stopped by the token limit)")
    if outcomes.unreadable:
        advice.append("use a model that answers in the prompt's format")
    if outcomes.declined:
        advice.append("read why the model declined (the stage's log) and change the inputs or the model")
    how_many = "every vote" if outcomes.abstained == outcomes.total else f"more than {max_share:.0%} of the votes"
    where = f"; the stage's replies are in {log.location}" if getattr(log, "location", None) else ""
    raise TooManyAbstentions(
        f"stage {outcomes.stage} stopped the build: {outcomes.counts()}. With {how_many} abstaining, the data set "
        f"would be decided by tie-breaks, not votes: no data set written{where}. To go on, "
        f"{' or '.join(advice)} and re-run the same command (--max-abstention-share sets the accepted share)."
    )


def stop_on_abstentions(
    outcomes: VoteOutcomes, max_share: float, *, log: Any, output: OutputFolder, data: Iterable[str]
) -> None:
    """:func:`check_abstentions`; when it stops the build, an earlier build's data set (``data`` below
    ``output``) is removed first: it must not pass for this one's."""
    try:
        check_abstentions(outcomes, max_share, log=log)
    except TooManyAbstentions:
        for name in data:
            output.remove(name)
        raise


def abstention_share(text: str) -> float:
    """An argparse type: a share in [0, 1]."""
    import argparse

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 <= value <= 1):
        raise argparse.ArgumentTypeError(f"expected a share between 0 and 1, got {text!r}")
    return value


def add_abstention_argument(parser: Any) -> None:
    parser.add_argument(
        "--max-abstention-share",
        type=abstention_share,
        default=MAX_ABSTENTION_SHARE,
        help=(
            "stop when more than this share of a stage's votes abstained (cut off by the token limit, unreadable,"
            " or declined)"
            f" instead of writing a data set decided by tie-breaks (default {MAX_ABSTENTION_SHARE})"
        ),
    )
