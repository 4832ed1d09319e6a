"""RMIR's construction pipeline (Sec. 3.1, App. A): from seed images to RMIR data files.

``ecom-tasks build rmir`` (see the RMIR README, "Building a data set"). This module only declares the
command's arguments: importing it stays light.
"""

from __future__ import annotations

import argparse

from ecom_tasks.construction import (
    add_input_arguments,
    add_options,
    add_run_arguments,
    confidence_share,
    positive_int,
    sampling_seed,
    share,
    temperature,
)


def _json_object(text: str) -> dict:
    from ecom_tasks.rmir.scoring import parse_retriever_args

    try:
        return parse_retriever_args(text, "the value")
    except ValueError as exc:  # a ConfigurationError: argparse prints its message as a usage error
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_build_arguments(parser: argparse.ArgumentParser) -> None:
    from ecom_tasks.rmir.construction.assembly import (
        DEFAULT_CONFIDENCE,
        DEFAULT_K_IMAGE,
        DEFAULT_K_TEXT,
        DEFAULT_TSR_THRESHOLD,
    )

    add_input_arguments(
        parser,
        "Build an RMIR data set from seed images (the paper's Sec. 3.1): query generation, filtration, candidate "
        "retrieval, a judge panel, confidence filtering, pool and TSR split. Re-run the same command to resume; "
        "change --confidence / --tsr-threshold afterwards without any model call.",
        out="the build folder: logs/, work/ and the data set in data/",
        source=(
            "--seeds",
            "seed table (file, or folder with seeds.jsonl): id, image, optional description and input (default: the bundled synthetic seeds)",
        ),
        model_help="Inspect model for generation, filtration and every judge role not bound (e.g. openai/gpt-4o, ecom/baseline)",
        roles_help="a judge of the panel: judge_1 .. judge_N (repeat; unbound judges are --model)",
    )
    add_options(
        parser,
        ("--judges", positive_int, None, "panel size N (default 5)"),
        ("--judge-temperature", temperature, None, "the panel's sampling temperature (default 0.85)"),
        ("--seed", sampling_seed, None, "sampling seed; judge i gets seed + i"),
        (
            "--inputs",
            positive_int,
            None,
            "draw this many input images (default: every seed flagged input, else every seed)",
        ),
        ("--sample-seed", int, 0, "random seed of --inputs (default 0)"),
        ("--retriever", str, "lexical", "embedder of the image index (a registered retriever; default lexical)"),
        ("--retriever-args", _json_object, {}, "JSON object for the retriever"),
        (
            "--k",
            int,
            DEFAULT_K_IMAGE,
            f"candidates per query from the image index (K_img, default {DEFAULT_K_IMAGE}; TSR's K)",
        ),
        ("--text-retriever", str, None, "embedder of a caption index (none by default)"),
        ("--text-retriever-args", _json_object, {}, "JSON object for the text retriever"),
        (
            "--text-k",
            int,
            DEFAULT_K_TEXT,
            f"candidates per query from the caption index (K_desc, default {DEFAULT_K_TEXT})",
        ),
        (
            "--confidence",
            confidence_share,
            DEFAULT_CONFIDENCE,
            f"keep triplets whose panel agrees at least this much (default {DEFAULT_CONFIDENCE:g})",
        ),
        (
            "--tsr-threshold",
            share,
            DEFAULT_TSR_THRESHOLD,
            f"queries with TSR above it form the test split (default {DEFAULT_TSR_THRESHOLD:g})",
        ),
        (
            "--max-tokens",
            positive_int,
            None,
            "output limit of every model call (default: generation 4096, filter and judges 2048; raise it for reasoning models)",
        ),
    )
    parser.add_argument(
        "--captions",
        action="store_true",
        help="show each image's caption beside it in every prompt (ours; off in the paper)",
    )
    parser.add_argument(
        "--cache",
        default="true",
        choices=("true", "read", "false"),
        help="the embedding cache of the seed index (as rmir's -T cache=)",
    )
    parser.add_argument(
        "--until",
        default="judge",
        choices=("generate", "filter", "retrieve", "judge"),
        help="stop after this stage (default: all, then write the data)",
    )
    add_run_arguments(parser, source="seed table")


def run_build(args: argparse.Namespace) -> int:
    from ecom_tasks.rmir.construction.pipeline import BuildOptions, build

    build(BuildOptions.from_args(args))
    return 0
