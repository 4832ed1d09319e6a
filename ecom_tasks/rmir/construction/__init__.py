"""RMIR's construction pipeline (Sec. 3.1, App. A): from seed images to RMIR data files.

``ecom-tasks build rmir`` (see the RMIR README, "Building a data set"). This module only declares the
command's arguments: importing it stays light.
"""

from __future__ import annotations

import argparse

from ecom_tasks.construction import add_input_arguments, add_run_arguments, positive_int


def _json_object(text: str) -> dict:
    from ecom_tasks import files

    value, problem = files.json_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text[:200]!r}: {problem}")
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r}")
    return value


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
    parser.add_argument("--judges", type=positive_int, default=None, help="panel size N (default 5)")
    parser.add_argument(
        "--judge-temperature", type=float, default=None, help="the panel's sampling temperature (default 0.85)"
    )
    parser.add_argument("--seed", type=int, default=None, help="sampling seed; judge i gets seed + i")
    parser.add_argument(
        "--inputs",
        type=positive_int,
        default=None,
        help="draw this many input images (default: every seed flagged input, else every seed)",
    )
    parser.add_argument("--sample-seed", type=int, default=0, help="random seed of --inputs (default 0)")
    parser.add_argument(
        "--captions",
        action="store_true",
        help="show each image's caption beside it in every prompt (ours; off in the paper)",
    )
    parser.add_argument(
        "--retriever", default="lexical", help="embedder of the image index (a registered retriever; default lexical)"
    )
    parser.add_argument("--retriever-args", type=_json_object, default={}, help="JSON object for the retriever")
    parser.add_argument(
        "--k",
        type=int,
        default=DEFAULT_K_IMAGE,
        help=f"candidates per query from the image index (K_img, default {DEFAULT_K_IMAGE}; TSR's K)",
    )
    parser.add_argument("--text-retriever", default=None, help="embedder of a caption index (none by default)")
    parser.add_argument(
        "--text-retriever-args", type=_json_object, default={}, help="JSON object for the text retriever"
    )
    parser.add_argument(
        "--text-k",
        type=int,
        default=DEFAULT_K_TEXT,
        help=f"candidates per query from the caption index (K_desc, default {DEFAULT_K_TEXT})",
    )
    parser.add_argument(
        "--cache",
        default="true",
        choices=("true", "read", "false"),
        help="the embedding cache of the seed index (as rmir's -T cache=)",
    )
    parser.add_argument(
        "--confidence",
        type=float,
        default=DEFAULT_CONFIDENCE,
        help=f"keep triplets whose panel agrees at least this much (default {DEFAULT_CONFIDENCE:g})",
    )
    parser.add_argument(
        "--tsr-threshold",
        type=float,
        default=DEFAULT_TSR_THRESHOLD,
        help=f"queries with TSR above it form the test split (default {DEFAULT_TSR_THRESHOLD:g})",
    )
    parser.add_argument(
        "--until",
        default="judge",
        choices=("generate", "filter", "retrieve", "judge"),
        help="stop after this stage (default: all, then write the data)",
    )
    parser.add_argument(
        "--max-tokens",
        type=positive_int,
        default=None,
        help="output limit of every model call (default: generation 4096, filter and judges 2048; raise it for "
        "reasoning models)",
    )
    add_run_arguments(parser, source="seed table")


def run_build(args: argparse.Namespace) -> int:
    from ecom_tasks.rmir.construction.pipeline import BuildOptions, build

    build(BuildOptions.from_args(args))
    return 0
