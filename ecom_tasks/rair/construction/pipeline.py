"""``ecom-tasks build rair``: the three voting stages over one folder, then the RAIR records (the layout of
``--out`` and why thresholds need no model call: RAIR README, "Building the Hard and Visually Salient subsets").
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ecom_tasks import construction
from ecom_tasks.construction import (
    Stage,
    file_sha256,
    given,
    image_access_args,
    image_file_name,
    log_vote_outcomes,
    logged_votes,
    open_build_folder,
    place_image,
    say,
    write_jsonl,
)
from ecom_tasks.data import fixtures_dir
from ecom_tasks.files import FileRefused, OutputFolder
from ecom_tasks.images import DEFAULT_ACCESS, ImageAccess
from ecom_tasks.rair.construction.assembly import Assembly, Thresholds, assemble, unique_queries
from ecom_tasks.rair.construction.stages import PANELS, RULE_RUNS, RULE_TEMPERATURE, VOTERS, structured_rules
from ecom_tasks.rair.construction.votes import rules_for_label
from ecom_tasks.rair.rules import BUILTIN, RuleSet
from ecom_tasks.rair.schema import RairRecord, load_records
from ecom_tasks.scorers.settings import whole_number
from ecom_tasks.solvers.panel_votes import MAX_JUDGES

#: The stages in their order, and their scorers' names (the votes are read from their scores' metadata).
SCORERS = {"intent": "rair_intent_votes", "visual": "rair_visual_votes", "rules": "rair_rule_votes"}
#: What the build writes below ``--out`` (besides the stages' Inspect logs in ``logs/``).
DATA = "data/rair.jsonl"
IMAGES = "data/images"
DECISIONS = "work/decisions.jsonl"


def default_candidates() -> Path:
    """The bundled synthetic candidate pairs."""
    return fixtures_dir("rair_build") / "candidates.jsonl"


@dataclass
class BuildOptions(construction.BuildOptions):
    candidates: Path = field(default_factory=default_candidates)
    voters: int = VOTERS
    vlms: int = VOTERS
    rule_runs: int = RULE_RUNS
    temperature: float = 0.0
    rule_temperature: float = RULE_TEMPERATURE
    seed: int | None = None
    max_tokens: int | None = None  # None: the stages' default (stages.MAX_TOKENS)
    rules: str = BUILTIN
    thresholds: Thresholds = field(default_factory=Thresholds)
    images: str = construction.IMAGES_DEFAULT  # copy | link (a hard link, else a copy)
    image_access: ImageAccess = DEFAULT_ACCESS


@dataclass
class BuildResult:
    logs: dict[str, Any] = field(default_factory=dict)
    assembly: Assembly | None = None
    data: Path | None = None


def stages(options: BuildOptions, records: list[RairRecord], ruleset: RuleSet, data_sha256: str) -> list[Stage]:
    """The three stages, with their items and calls (what the cost lines print)."""
    common = {"data": str(Path(options.candidates).resolve()), "data_sha256": data_sha256}
    common.update(given(max_tokens=options.max_tokens), **image_access_args(options.image_access))
    rules_args = {"rules": options.rules, "rules_sha256": ruleset.sha256, "runs": options.rule_runs}
    rules_args.update(temperature=options.rule_temperature, **given(seed=options.seed))

    def panel(name: str, args: dict[str, Any], items: int, seats: int, unit: str) -> Stage:
        task = f"ecom_tasks/rair_build_{name}"
        return options.panel_stage(name, task, {**common, **args}, items, seats, unit, role=PANELS[name][0])

    intent_args = {"voters": options.voters, "temperature": options.temperature}
    visual_args = {"vlms": options.vlms, "temperature": options.temperature}
    with_rules = sum(1 for r in records if rules_for_label(ruleset, r.label))
    return [
        panel("intent", intent_args, len(unique_queries(records)), options.voters, "voters"),
        panel("visual", visual_args, sum(1 for r in records if r.image), options.vlms, "VLMs"),
        panel("rules", rules_args, with_rules, options.rule_runs, "runs"),
    ]


# --- the data set --------------------------------------------------------------------------------


def check_image_targets(records: list[RairRecord], output: OutputFolder) -> None:
    """Refuse, before the first model call, a candidate whose image is where the build would place another
    candidate's (``data/images/<name>``): placing it would replace an input."""
    sources = {Path(r.image).resolve() for r in records if r.image and Path(r.image).is_absolute()}
    for record in records:
        if record.image:
            target = output.path(f"{IMAGES}/{image_file_name(record.id, record.image)}")
            if target.resolve() in sources and target.resolve() != Path(record.image).resolve():
                raise FileRefused(f"{target}: is another candidate's image (an input); choose another --out")


def write_data(assembly: Assembly, folder: Path, *, images: str, output: OutputFolder) -> Path:
    """``rair.jsonl`` (images placed in ``images/``) in ``folder``, written through ``output``: never
    through a symlink, never over another candidate's image (:func:`check_image_targets`)."""
    rows = []
    for row in assembly.rows:
        image = row["image"]
        if image:
            name = image_file_name(row["candidate"], image)
            place_image(image, folder / "images" / name, images, output=output)
        rows.append({**row, "image": f"images/{name}" if image else None})
    path = folder / "rair.jsonl"
    write_jsonl(path, rows, output=output)
    return path


def _inputs(options: BuildOptions) -> list[Path]:
    """The files the build reads: the candidates, and a rules file given by path."""
    inputs = [Path(options.candidates)]
    if options.rules != BUILTIN and Path(options.rules).exists():
        inputs.append(Path(options.rules))
    return inputs


def build(options: BuildOptions) -> BuildResult:
    """Run (or resume) the three stages, then write the records with the thresholds given."""
    for name in ("voters", "vlms", "rule_runs"):  # each panel's size, before the first stage's calls (as its stage)
        whole_number(name, getattr(options, name), 1, MAX_JUDGES)
    t = options.thresholds
    construction.check_thresholds(
        ("--min-intent-votes", t.intent, options.voters, "voters"),
        ("--min-visual-votes", t.visual, options.vlms, "VLMs"),
        ("--min-rule-votes", t.rules, options.rule_runs, "rule runs"),
    )
    logs = [f"logs/{index}_{name}" for index, name in enumerate(SCORERS, 1)]
    output = open_build_folder(
        options.out, benchmark="rair", inputs=_inputs(options), files_out=(DATA, DECISIONS), folders=(*logs, IMAGES)
    )
    out = output.root
    records = load_records(options.candidates, check_images=True, image_access=options.image_access)
    check_image_targets(records, output)
    ruleset = structured_rules(options.rules, "--rules must be")
    result = BuildResult()
    planned = stages(options, records, ruleset, file_sha256(options.candidates))
    for index, stage in enumerate(planned, 1):
        outcomes = functools.partial(log_vote_outcomes, scorer=SCORERS[stage.name], stage=stage.name)
        result.logs[stage.name] = options.run(stage, output, outcomes, data=(DATA,), index=index, of=len(planned))

    votes = {name: logged_votes(log, SCORERS[name]) for name, log in result.logs.items()}
    assembly = assemble(records, votes["intent"], votes["visual"], votes["rules"], options.thresholds, ruleset)
    result.assembly = assembly
    write_jsonl(DECISIONS, assembly.decisions, output=output)
    counts = assembly.counts()
    say(
        f"  {counts['candidates']} candidates: {counts['hard']} hard (>= {t.intent} voters on one hard intent), "
        f"{counts['visual']} visually salient (>= {t.visual} VLMs), {counts['left_out']} in neither; rules named by >= {t.rules} runs"
    )
    if not assembly.rows:
        output.remove(DATA)  # an earlier build's records must not pass for this one's
        say(f"  no candidate reached a threshold: nothing to write (see {out / DECISIONS})")
        return result
    result.data = write_data(assembly, out / "data", images=options.images, output=output)
    say(
        f"RAIR records in {result.data}\n  check: ecom-tasks validate rair {result.data}\n"
        f"  run:   inspect eval ecom_tasks/rair_hard -T data={result.data} --model ..."
    )
    return result
