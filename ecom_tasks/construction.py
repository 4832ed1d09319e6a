"""What every ``ecom-tasks build`` pipeline shares: stages chained over one build folder.

A pipeline (``ecom_tasks/<benchmark>/construction/``) is a sequence of :class:`Stage`\\ s, each one
registered Inspect task, and exposes ``add_build_arguments(parser)`` and ``run_build(args) -> int`` for
``ecom-tasks build <benchmark>`` (``cli.py``). Resume, input hashes and abstentions: see the benchmarks'
READMEs ("Building ..."). Inspect is imported inside the functions that need it: the CLI imports every
pipeline package to build its parser.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import itertools
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ecom_tasks import files
from ecom_tasks.data import ConfigurationError, EcomTasksError, json_objects
from ecom_tasks.errors import printable
from ecom_tasks.files import FileRefused, OutputFolder
from ecom_tasks.images import data_uri_bytes
from ecom_tasks.provenance import file_sha256  # the one file hasher; construction's pipelines import it from here
from ecom_tasks.scorers.judge import failure_share as share  # the one reader of a share from 0 to 1
from ecom_tasks.scorers.judge import number_option


class StageFailed(EcomTasksError):
    """A stage did not finish (after Inspect's retries): re-running the same command resumes it."""


# --- files and hashes ---------------------------------------------------------------------------


def check_sha256(path: str | os.PathLike[str], expected: str | None, what: str, *, setting: str = "") -> str:
    """The file's sha256; a :class:`ConfigurationError` when ``expected`` is given and differs (a resumed
    stage must read what it started with), or is not text (``-T data_sha256=-5``): ``setting`` names it."""
    if expected and not isinstance(expected, str):  # 0, False: unset, as before
        raise ConfigurationError(
            f"{setting or f'the sha256 of {what}'} must be the file's sha256 (64 hex digits, as the build command "
            f"writes it) or empty, got {expected!r:.80}"
        )
    actual = file_sha256(path)
    if expected and actual != expected:
        raise ConfigurationError(
            f"{what} {os.fspath(path)} has changed since this stage was started (sha256 {actual[:12]}..., the stage's "
            f"task arguments say {expected[:12]}...): re-run the build command, which re-derives it"
        )
    return actual


def _placed(path: str | os.PathLike[str], output: OutputFolder) -> Path:
    """``path``'s name below ``output``: a name relative to it, or a path inside it."""
    target = Path(path)
    if not target.is_absolute():
        return target
    for root in (output.root, output.root.absolute()):
        if target.is_relative_to(root):
            return target.relative_to(root)
    raise FileRefused(f"{target}: not inside the {output.what} {output.root}; not written")


def write_jsonl(path: str | os.PathLike[str], rows: Iterable[Mapping[str, Any]], *, output: OutputFolder) -> str:
    """Write ``rows`` as strict JSON Lines through ``output``; the file's sha256."""
    lines = (files.dumps_strict(row, ensure_ascii=False) + "\n" for row in rows)
    return output.write_lines(_placed(path, output), lines)


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The objects of a JSON Lines file (a regular file); every line that is not a JSON object is a
    ``file:row`` problem (:class:`DataValidationError`)."""
    return json_objects(path, not_object="not a JSON object")


# --- stages ---------------------------------------------------------------------------------------


@dataclass
class Stage:
    """One stage: the registered Inspect task, its arguments, and what it costs.

    ``calls_per_item`` is 0 for a stage that calls no chat model (run with ``model="none"``);
    ``model_roles`` are this stage's only (another stage's roles are not part of its identity).
    """

    name: str
    task: str
    task_args: dict[str, Any]
    items: int
    calls_per_item: int = 1
    unit: str = "call"
    model: str | None = None
    model_roles: dict[str, str] = field(default_factory=dict)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _matches(header: Any, stage: Stage) -> bool:
    """Whether a log (header) is an earlier run of this stage, as ``eval_set`` decides when it reuses a
    log: the same task, task arguments, model (when the stage names one) and model roles."""
    if str(header.eval.task).removeprefix("ecom_tasks/") != stage.task.removeprefix("ecom_tasks/"):
        return False
    if stage.model is not None and str(header.eval.model) != stage.model:
        return False
    roles = {role: str(getattr(config, "model", config)) for role, config in (header.eval.model_roles or {}).items()}
    recorded = dict(header.eval.task_args_passed or header.eval.task_args or {})
    return roles == dict(stage.model_roles) and _canonical(recorded) == _canonical(_plain(stage.task_args))


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value))


def finished_items(folder: str | os.PathLike[str], stage: Stage) -> int:
    """How many of the stage's items an earlier run in ``folder`` (an existing folder) finished without an error:
    from a finished, cancelled or failed log, or a killed run's log that Inspect can recover (0 when none)."""
    from inspect_ai.log import list_eval_logs, read_eval_log, read_eval_log_sample_summaries, recoverable_eval_logs

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
    """``judge: 40 items x 5 judges = 200 model calls; 120 of them done by an earlier run, 80 to make``."""
    if stage.calls_per_item == 0:
        head = f"{stage.name}: {stage.items} items, no model call"
        return head + (f"; {done} done by an earlier run" if done else "")
    per = f" x {stage.calls_per_item} {stage.unit}" if stage.calls_per_item != 1 or stage.unit != "call" else ""
    total = stage.items * stage.calls_per_item
    head = f"{stage.name}: {stage.items} items{per} = {total} model call{'s' if total != 1 else ''}"
    if done:
        remaining = (stage.items - done) * stage.calls_per_item
        return f"{head}; {done * stage.calls_per_item} of them done by an earlier run, {remaining} to make"
    return head


def scored_samples(log: Any, scorer: str) -> Iterator[tuple[Any, Any]]:
    """``(sample, score)`` for every sample of a log that ``scorer`` (with or without ``ecom_tasks/``) scored."""
    wanted = scorer.removeprefix("ecom_tasks/")
    for sample in (log.samples or []) if log is not None else []:
        for name, score in (sample.scores or {}).items():
            if name.removeprefix("ecom_tasks/") == wanted:
                yield sample, score
                break


def logged_votes(log: Any, scorer: str) -> dict[str, list[Any]]:
    """sample id -> the votes its scorer read (its ``votes`` metadata; abstentions as None); {} without a log."""
    return {
        str(sample.id): list((score.metadata or {}).get("votes", [])) for sample, score in scored_samples(log, scorer)
    }


# --- a voting stage's task ---------------------------------------------------------------------


def stage_metadata(
    benchmark: str, stage: str, *, version: str, prompt_version: str, data: Any, fixtures: str = "", **extra: Any
) -> dict[str, Any]:
    """A stage log's provenance: ``benchmark`` is the builder's own (``<benchmark>_build``), so the report never
    takes a stage log for a run of the benchmark; ``fixtures`` names the bundled fixtures folder (default its own)."""
    from ecom_tasks.provenance import fixtures_location, task_metadata

    return task_metadata(
        benchmark,
        task_version=version,
        prompt_version=prompt_version,
        data=data,
        fixtures=fixtures_location(fixtures or benchmark),
        construction_stage=stage,
        **extra,
    )


def panel_task(
    name: str,
    samples: list[Any],
    location: str,
    *,
    role: str,
    seats: int,
    temperature: float | None,
    max_tokens: int,
    parse: Callable[[str], Any],
    reminders: tuple[str, str],
    scorer: Any,
    version: str,
    metadata: dict[str, Any],
    seed: int | None = None,
) -> Any:
    """A voting stage: every seat ``<role>_1..seats`` answers each sample; a reply ``parse`` cannot read
    is asked once more with ``reminders`` (the first; the second after a reply cut off by a limit)."""
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset

    from ecom_tasks.solvers.panel_votes import panel_generate

    reminder, limit_reminder = reminders
    solver = panel_generate(
        judges=seats,
        role_prefix=role,
        temperature=temperature,
        max_tokens=max_tokens,
        parse=parse,
        retries=1,
        reminder=reminder,
        limit_reminder=limit_reminder,
        seed=seed,
    )
    dataset = MemoryDataset(samples, name=name, location=location)
    return Task(dataset=dataset, solver=solver, scorer=scorer, version=version, metadata=metadata)


def system_user(system: str, user: Any) -> list[Any]:
    """A voting stage's input: the instructions (identical for every item, so provider prompt caching
    applies) and the item (a text, or text and image parts)."""
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser

    return [ChatMessageSystem(content=system), ChatMessageUser(content=user)]


def read_panel(state: Any, parse: Callable[..., Vote], reminders: tuple[str, str]) -> tuple[list[Vote], dict[str, Any]]:
    """Each seat's vote read from its last reply by ``parse(reply, prompt=...)`` (a reply stopped by a limit
    abstains) and the score's metadata: who sat, what each voted and why not, how often each was asked.
    ``prompt`` is every text a seat was sent, the stage's ``reminders`` too: an echo of a reminder's example
    answer (``<answer>SS</answer>``) is no vote."""
    from ecom_tasks.scorers.judge import LIMIT_STOP_REASONS
    from ecom_tasks.solvers.panel_votes import panel_replies

    sent = (*(message.text for message in state.messages if message.role in ("system", "user")), *reminders)
    replies = panel_replies(state)
    parsed = [
        Vote(None, CUT_OFF)
        if r.get("stop_reasons") and r["stop_reasons"][-1] in LIMIT_STOP_REASONS
        else parse(r.get("reply", ""), prompt=sent)
        for r in replies.values()
    ]
    votes = [list(read.vote) if isinstance(read.vote, tuple) else read.vote for read in parsed]
    return parsed, {
        "roles": list(replies),
        "models": [r.get("model", "") for r in replies.values()],
        "votes": votes,
        "statuses": [read.status for read in parsed],
        "attempts": [len(r.get("replies") or []) for r in replies.values()],
    }


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


def place_image(source: str, target: str | os.PathLike[str], mode: str, *, output: OutputFolder) -> None:
    """Put ``source`` (a file path or a data URI) at ``target`` through ``output``: a hard link when ``mode`` is ``link`` and the file system allows it, else a copy. A
    regular file already there with the same content is kept (a resumed build); anything else there
    (another picture, a symlink, dangling or not) is replaced, never written through."""
    name = _placed(target, output)
    path = output.path(name)
    if source.startswith("data:"):
        try:
            data = data_uri_bytes(source)
        except ValueError:
            raise ConfigurationError(f"not a readable base64 data URI image: {source[:60]}...") from None
        if not (output.exists(name) and files.read_bytes(path) == data):
            output.write_bytes(name, data)
        return
    if source.startswith(("http://", "https://")):
        raise ConfigurationError(
            f"cannot copy a URL image into the data set: {source[:80]} (load the inputs with URL images allowed)"
        )
    source_path = files.regular_file(source)
    if output.exists(name) and (_same_file(path, source_path) or files.sha256(path) == files.sha256(source_path)):
        return
    # the load resolved the path: a symlink found there now was planted since, and is refused
    output.copy_in(source_path, name, link=mode == "link", exact=True)


# --- the build folder ---------------------------------------------------------------------------


#: The file that makes a folder a build folder of one benchmark (``{"benchmark": ...}``): a build
#: replaces and removes files in data/, work/ and logs/, so it only ever works in a folder it made.
BUILD_MARKER = ".ecom-tasks-build.json"


def open_build_folder(
    out: str | os.PathLike[str],
    *,
    benchmark: str,
    inputs: Iterable[Path],
    files_out: Iterable[str],
    folders: Iterable[str],
) -> OutputFolder:
    """The build folder ``out`` of ``benchmark``, checked before anything is read or asked: a new or empty
    folder, or one an earlier build of it marked (:data:`BUILD_MARKER`); it can be written; no planned
    file is (or lies in) an input; every planned file's folder and every named folder that already
    exists is a real folder below it (a planted symlink such as ``data -> elsewhere`` is refused) and
    can be written."""
    files.create_parents(Path(out).absolute())  # first: a path through a file is one short message
    output = OutputFolder(Path(out).absolute(), inputs=list(inputs), what="build folder")
    output.check_writable()
    wanted: dict[str, None] = {}
    for name in files_out:
        target = output.check_target(name)
        if target.is_dir() and not target.is_symlink():
            raise FileRefused(f"{target}: a folder where the build writes a file; move it away")
        wanted.update((parent.as_posix(), None) for parent in reversed(Path(name).parents[:-1]))
    for name in folders:
        wanted.update((parent.as_posix(), None) for parent in reversed(Path(name).parents[:-1]))
        wanted[Path(name).as_posix()] = None
    for name in wanted:
        if os.path.lexists(output.path(name)):
            output.folder(name, create=False)
            check_inspect_files(output, name)
            probe = f"{name}/.ecom-tasks-probe.{os.urandom(6).hex()}"
            output.write_bytes(probe, b"")
            output.remove(probe)
    # Last: a planted link or FIFO is named by the checks above.
    files.claim_folder(output, BUILD_MARKER, "benchmark", benchmark, option="--out")
    return output


#: What Inspect's ``eval_set`` reads and rewrites by name in a stage's log folder.
INSPECT_FILES = (".eval-set-id", "eval-set.json", "logs.json")


def check_inspect_files(output: OutputFolder, folder: str) -> None:
    """Refuse an :data:`INSPECT_FILES` name below ``folder`` that is there but no regular file: Inspect would
    write through a planted symlink (a colleague's file overwritten) or wait forever on a FIFO; and a log there
    that Inspect's log reader would crash on or inflate past the limit (:func:`files.check_inspect_log`)."""
    for name in INSPECT_FILES:
        path = output.path(f"{folder}/{name}")
        if os.path.lexists(path) and not output.exists(f"{folder}/{name}"):
            kind = "a symbolic link" if path.is_symlink() else "not a regular file"
            raise FileRefused(f"{path}: {kind} where Inspect keeps its eval-set records; not followed, move it away")
    for log in files.folder_files(output.path(folder), match=lambda path: path.suffix in (".json", ".eval")):
        # eval_set reads every log's header, the resume its samples: a hostile one kills the build or its memory,
        # one that is no log raised a traceback from Inspect's reader. (Each check once: read_inspect_log holds a
        # .json log to the JSON rules itself; an .eval one's samples are counted here, as its header read does not.)
        if log.suffix == ".eval" or log.name in INSPECT_FILES:
            files.check_inspect_log(log, samples=True)
        if log.name not in INSPECT_FILES:  # (eval_set's own records are JSON, no log)
            files.read_inspect_log(log, header_only=True)


def say(text: str) -> None:
    """A line of the build's report (stdout, flushed: it interleaves with Inspect's display)."""
    print(printable(text), file=sys.stdout, flush=True)


# --- reading a vote's reply ---------------------------------------------------------------------

#: Why a reply gave no vote: nothing after the reasoning, a ``<think>`` never closed, no answer in the
#: format asked for, two answers (or two offered as alternatives).
EMPTY = "empty"
UNCLOSED_THINK = "unclosed_think"
NO_ANSWER = "no_answer"
AMBIGUOUS = "ambiguous"
#: What a vote's reply is compared with: the texts sent, or (None) the stage's instructions.
Prompt = Iterable[str | None] | str | None
# Two answers offered as alternatives: "<answer>NC</answer> or <answer>Other</answer>", "**or**" between lines too.
_OR = re.compile(r"[\s*_#>-]*+(?:,\s*)?(?:or|/|或)[\s*_#>-]*+", re.IGNORECASE)
#: What may open a marked answer line ("**Answer:**", "> - Answer:") before its word: blanks and markdown of that line
#: only (a prefix that ran over line breaks was scanned from every line start of a run of "\n*", quadratic).
LINE_START = r"^(?:[^\S\n]|[*#>-])*+"


def reply_region(reply: str | None, prompt: Prompt, answers: re.Pattern[str]) -> tuple[str | None, str]:
    """The text a vote is read from: the reply after its reasoning, without what it copies from ``prompt``
    (:func:`ecom_tasks.scorers.replies.strip_echoes`: the format's own examples are no vote; nor are two
    answers offered as alternatives, :func:`offered_as_alternatives`); None with why when nothing is left."""
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


def last_marked(region: str, marker: re.Pattern[str], one_line: int) -> str | None:
    """The text of the last ``marker`` line (``Answer: ...``), else the region when it is a single line of
    at most ``one_line`` characters."""
    marked = marker.findall(region)
    if marked:
        return marked[-1]
    lines = [line for line in region.splitlines() if line.strip()]
    return lines[0] if len(lines) == 1 and len(lines[0]) <= one_line else None


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


@dataclass(frozen=True)
class Vote:
    """One reply read: ``vote`` (what the stage asks for) or None, an abstention, with why (``status``)."""

    vote: object | None
    status: str = ANSWERED
    unknown: tuple[str, ...] = ()  # names read that the stage does not know (RAIR's rule ids)

    @property
    def failed(self) -> bool:
        """An abstention: the panel asks such a voter once more (``scorers.judge.run_judge``)."""
        return self.vote is None


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
        for vote, status in itertools.zip_longest(votes, list(statuses)[: len(votes)]):
            outcomes.add(vote, status)
    return outcomes


def log_vote_outcomes(log: Any, scorer: str, stage: str) -> VoteOutcomes:
    """:func:`vote_outcomes` of a finished stage log (its scorer's ``votes`` and ``statuses`` metadata)."""
    metadata = [score.metadata or {} for _, score in scored_samples(log, scorer)]
    return vote_outcomes(stage, ((m.get("votes", []), m.get("statuses", [])) for m in metadata))


def check_abstentions(
    outcomes: VoteOutcomes,
    max_share: float = MAX_ABSTENTION_SHARE,
    *,
    log: Any = None,
    output: OutputFolder | None = None,
    data: Iterable[str] = (),
) -> None:
    """Print the stage's outcomes; stop (:class:`TooManyAbstentions`) when every vote, or more than
    ``max_share`` of them, abstained, removing an earlier build's data set first (``data`` below
    ``output``: it must not pass for this one's)."""
    say(f"  {outcomes.stage}: {outcomes.counts()}")
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
    for name in data:
        output.remove(name)  # type: ignore[union-attr]
    raise TooManyAbstentions(
        f"stage {outcomes.stage} stopped the build: {outcomes.counts()}. With {how_many} abstaining, the data set "
        f"would be decided by tie-breaks, not votes: no data set written{where}. To go on, "
        f"{' or '.join(advice)} and re-run the same command (--max-abstention-share sets the accepted share)."
    )


#: Numeric options (scorers.judge.number_option): GPUs and CPUs per actor, a panel size or token limit, a count
#: of retries or votes, rmir's --confidence (the panel agreement a decision needs).
finite_number = number_option(float, 0)
positive_int = number_option(int, 0, above=True)
non_negative_int = number_option(int, 0)
confidence_share = number_option(float, 0, above=True, high=1, what="a share")


# --- the build command ----------------------------------------------------------------------------

#: Inspect settings a build passes to each stage's ``eval_set``, as given on the command line.
STAGE_OPTION_NAMES = ("display", "max_connections", "max_samples", "retry_attempts", "log_level")


def model_role(text: str) -> tuple[str, str]:
    """An argparse type: ``ROLE=MODEL`` -> ``(role, model)``."""
    role, sep, model = text.partition("=")
    if not sep or not role.strip() or not model.strip():
        raise argparse.ArgumentTypeError(f"expected ROLE=MODEL (e.g. judge_2=openai/gpt-4o-mini), got {text!r}")
    return role.strip(), model.strip()


def _stage_setting(name: str, kind: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse type: ``kind(text)``, after refusing ``text`` as the stages' settings check refuses their
    ``name`` (its range, declared there), here: at its stage it was refused only after the earlier stages' model calls."""

    def read(text: str) -> Any:
        from ecom_tasks.scorers.settings import check_settings

        try:
            check_settings({name: text})
        except ConfigurationError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return kind(text)

    return read


#: A stage's sampling temperature and sampling seed.
temperature = _stage_setting("temperature", float)
sampling_seed = _stage_setting("seed", int)


def check_thresholds(*limits: tuple[str, int, int, str]) -> None:
    """Refuse, before the first model call, a vote threshold above its panel's seats, each ``(option, threshold,
    seats, panel)``: no item could reach it, so the build would pay every call and select nothing."""
    for option, threshold, seats, panel in limits:
        if threshold > seats:
            raise ConfigurationError(
                f"{option} {threshold} exceeds the {seats} {panel} that vote: nothing could reach it"
            )


def add_options(parser: argparse.ArgumentParser, *options: tuple[str, Any, Any, str]) -> None:
    """A pipeline's own options, each ``(flag, type, default, help)``, in the order given."""
    for flag, kind, default, text in options:
        parser.add_argument(flag, type=kind, default=default, help=text)


def add_input_arguments(
    parser: argparse.ArgumentParser,
    description: str,
    *,
    out: str,
    source: tuple[str, str],
    model_help: str,
    roles_help: str,
) -> None:
    """What every build is given first: ``--out``, its input (``source``: flag and help), ``--model``
    (every seat not bound by a role) and the repeatable ``--model-role ROLE=MODEL``."""
    parser.description = description
    parser.add_argument("--out", required=True, help=out)
    parser.add_argument(source[0], default=None, help=source[1])
    parser.add_argument("--model", required=True, help=model_help)
    parser.add_argument(
        "--model-role", action="append", default=[], type=model_role, metavar="ROLE=MODEL", help=roles_help
    )


#: How a build puts images into data/images (``--images``): a copy, so editing a built image never edits the input;
#: ``link`` (a hard link where the file system allows it) makes each built image the very file it came from.
IMAGES_DEFAULT = "copy"


def add_run_arguments(parser: argparse.ArgumentParser, *, source: str | None = None) -> None:
    """What every build is given last: ``--max-abstention-share``; for a build of images (``source`` names their
    list), how images reach the data set and may be read (outside ``source``'s folder, URLs); the stages' Inspect
    settings."""
    parser.add_argument(
        "--max-abstention-share",
        type=share,
        default=MAX_ABSTENTION_SHARE,
        help=(
            "stop when more than this share of a stage's votes abstained (cut off by the token limit, unreadable,"
            " or declined)"
            f" instead of writing a data set decided by tie-breaks (default {MAX_ABSTENTION_SHARE})"
        ),
    )
    if source is not None:
        parser.add_argument(
            "--images",
            default=IMAGES_DEFAULT,
            choices=("link", "copy"),
            help=f"put images into data/images as copies (default {IMAGES_DEFAULT}) or as hard links (copies where not"
            f" possible): a linked image is the {source}'s own file, so editing either edits both",
        )
        parser.add_argument(
            "--allow-outside-images", action="store_true", help=f"read image paths outside the {source}'s folder"
        )
        parser.add_argument("--allow-url-images", action="store_true", help="fetch http(s) image URLs")
    add_options(
        parser,
        ("--max-connections", positive_int, None, "Inspect's concurrent model connections"),
        ("--max-samples", positive_int, None, "Inspect's concurrent samples"),
        ("--retry-attempts", non_negative_int, None, "eval-set retries of a failed stage (Inspect's default 10)"),
        ("--display", None, None, "Inspect display (full, rich, plain, none)"),
        ("--log-level", None, None, "Inspect log level"),
    )


@dataclass
class BuildOptions:
    """What every build is given (a pipeline's own options extend it)."""

    out: Path
    model: Any
    model_roles: dict[str, Any] = field(default_factory=dict)
    #: Inspect settings of every stage (``STAGE_OPTION_NAMES``: display, max_connections, ...).
    stage_options: dict[str, Any] = field(default_factory=dict)
    #: A stage whose votes abstain more than this share (or all of them) stops the build.
    max_abstention_share: float = MAX_ABSTENTION_SHARE

    @classmethod
    def from_args(cls, args: argparse.Namespace, **extra: Any) -> Any:
        """The options of a command line: every field an argument of the same name gives (an argument
        left None keeps the field's default), then ``extra``."""
        values: dict[str, Any] = {}
        for option in dataclasses.fields(cls):
            value = getattr(args, option.name, None)
            if option.type == "Path" and value:
                values[option.name] = Path(value)
            elif option.type != "Path" and value is not None:
                values[option.name] = value
        values["model_roles"] = dict(args.model_role)
        values["stage_options"] = {
            name: getattr(args, name) for name in STAGE_OPTION_NAMES if getattr(args, name) is not None
        }
        if hasattr(args, "allow_outside_images"):
            from ecom_tasks.images import ImageAccess

            values["image_access"] = ImageAccess.from_options(args.allow_outside_images, args.allow_url_images)
        return cls(**values, **extra)

    def panel_stage(
        self, name: str, task: str, task_args: dict[str, Any], items: int, seats: int, unit: str, *, role: str
    ) -> Stage:
        """A stage whose ``seats`` panel seats (roles ``<role>_1..``) answer each of ``items``; of the roles
        given, only its own panel's are part of its identity."""
        roles = {bound: model for bound, model in self.model_roles.items() if bound.startswith(role + "_")}
        return Stage(
            name, task, task_args, items=items, calls_per_item=seats, unit=unit, model=self.model, model_roles=roles
        )

    def run(
        self,
        stage: Stage,
        output: OutputFolder,
        outcomes: Callable[[Any], VoteOutcomes] | None,
        *,
        data: Iterable[str],
        index: int = 1,
        of: int = 1,
    ) -> Any:
        """Print the stage's cost, then run it with ``eval_set`` in ``logs/<index>_<name>`` of the build folder,
        reusing or resuming an earlier run there; its finished log, samples included (None for a stage with no
        item). A stage that does not finish after Inspect's retries raises :class:`StageFailed` naming the
        folder. Then (``outcomes`` of its log) print its votes' outcomes and stop the build when too many
        abstained, removing an earlier build's ``data`` first (it must not pass for this one's)."""
        from inspect_ai import eval_set
        from inspect_ai.log import read_eval_log

        folder = output.folder(f"logs/{index}_{stage.name}")  # a real folder: a planted symlink would send logs away
        check_inspect_files(output, f"logs/{index}_{stage.name}")
        say(f"stage {index}/{of} {cost_line(stage, finished_items(folder, stage))}")
        log = None
        if stage.items:
            success, logs = eval_set(
                [stage.task],
                log_dir=str(folder),
                task_args=_plain(stage.task_args),
                model=stage.model,
                model_roles=dict(stage.model_roles) or None,
                log_dir_allow_dirty=True,  # logs of an earlier, different run of this stage (other inputs) stay, unused
                **self.stage_options,
            )
            last = logs[0] if logs else None
            if not success or last is None or last.status != "success":
                where = last.location if last is not None else str(folder)
                error = getattr(getattr(last, "error", None), "message", None) if last is not None else None
                raise StageFailed(
                    f"stage {stage.name} did not finish ({error or (last.status if last is not None else 'no log')}); "
                    f"its log: {where}. Re-run the same command to resume it: finished items are not asked again"
                )
            log = read_eval_log(last.location)
        if outcomes is not None:
            check_abstentions(outcomes(log), self.max_abstention_share, log=log, output=output, data=data)
        return log


def given(**values: Any) -> dict[str, Any]:
    """The task arguments a build was given (None: left out, so a build without them resumes its earlier logs)."""
    return {name: value for name, value in values.items() if value is not None}


def image_access_args(access: Any) -> dict[str, bool]:
    """The task arguments that let a stage read the images the build may read (none for the default)."""
    return given(allow_outside_images=access.outside or None, allow_url_images=access.urls or None)
