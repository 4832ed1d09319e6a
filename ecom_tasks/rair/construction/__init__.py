"""RAIR's hard-case mining (Sec. 4.2-4.4, App. D-E): intent votes, visual-necessity votes and rule pre-annotation -> RAIR records.

``ecom-tasks build rair`` (see the RAIR README, "Building the Hard and Visually Salient subsets"). This module
only declares the command's arguments: importing it stays light.
"""

from __future__ import annotations

import argparse

from ecom_tasks.construction import (
    add_input_arguments,
    add_options,
    add_run_arguments,
    positive_int,
    sampling_seed,
    temperature,
)


def add_build_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_arguments(
        parser,
        "Mine RAIR's Hard and Visually Salient subsets from candidate query-item pairs: hard-intent votes of k LLMs "
        "(Fig. 11), visual-necessity votes of k VLMs (Fig. 12) and k rule pre-annotation runs (Eq. 4). Re-run the same "
        "command to resume; change the --min-*-votes thresholds afterwards without any model call.",
        out="the build folder: logs/, work/decisions.jsonl and the records in data/",
        source=(
            "--candidates",
            "candidate pairs: a RAIR data file with human labels (subset, intent, rule_ids are replaced; default: the bundled synthetic candidates)",
        ),
        model_help="Inspect model for every panel seat not bound by a role (e.g. openai/gpt-4o, ecom/baseline)",
        roles_help="a panel seat: voter_1..k (intent), vlm_1..k (visual necessity), annotator_1..k (rule runs); repeat",
    )
    add_options(
        parser,
        ("--voters", positive_int, None, "intent panel size (default 3, the paper's tri-model ensemble)"),
        ("--vlms", positive_int, None, "visual-necessity panel size (default 3)"),
        ("--rule-runs", positive_int, None, "rule pre-annotation runs k (default 3)"),
        ("--temperature", temperature, 0.0, "the intent and visual panels' temperature (default 0)"),
        (
            "--rule-temperature",
            temperature,
            None,
            "the rule runs' sampling temperature (default 0.7; the paper gives none)",
        ),
        ("--seed", sampling_seed, None, "sampling seed of the rule runs; run i gets seed + i"),
        (
            "--max-tokens",
            positive_int,
            None,
            "output limit of every panel call (default 4096; raise it for reasoning models)",
        ),
        ("--rules", str, "builtin", "structured rules JSON (default builtin: our rules_v1.json)"),
        ("--min-intent-votes", positive_int, 2, "voters that must give the same hard intent (default 2, Eq. 2)"),
        ("--min-visual-votes", positive_int, 2, "VLMs that must find the image essential (default 2, Eq. 3)"),
        ("--min-rule-votes", positive_int, 2, "runs that must name a rule (default 2, Eq. 4)"),
    )
    add_run_arguments(parser, source="candidate file")


def run_build(args: argparse.Namespace) -> int:
    from ecom_tasks.rair.construction.assembly import Thresholds
    from ecom_tasks.rair.construction.pipeline import BuildOptions, build

    thresholds = Thresholds(intent=args.min_intent_votes, visual=args.min_visual_votes, rules=args.min_rule_votes)
    build(BuildOptions.from_args(args, thresholds=thresholds))
    return 0
