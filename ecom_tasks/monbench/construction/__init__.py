"""``ecom-tasks build monbench`` (App. B.1.2; MonBench README, "Building Query-Ad Relevance questions"): this module
only declares the command's arguments, so importing it stays light."""

from __future__ import annotations

import argparse

from ecom_tasks.construction import add_input_arguments, add_run_arguments, non_negative_int, positive_int, temperature


def add_build_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_arguments(
        parser,
        "Build MonBench Query-Ad Relevance questions from query-ad pairs with human labels: N models vote relevant / "
        "irrelevant on every pair; each query's question takes the human-relevant ad most models called irrelevant and "
        "the three human-irrelevant ads most models called relevant. Re-run the same command to resume; change the "
        "selection options afterwards without any model call.",
        out="the build folder: logs/, work/ and the questions in data/monbench.jsonl",
        source=(
            "--pairs",
            "query-ad pairs: id, query, ad, human_label, optional location, market, category (default: the bundled synthetic pairs)",
        ),
        model_help="Inspect model for every voter not bound by a role (e.g. openai/gpt-4o, ecom/baseline)",
        roles_help="a voter: voter_1 .. voter_N (repeat; unbound voters are --model)",
    )
    parser.add_argument("--voters", type=positive_int, default=None, help="panel size N (default 4, as the paper)")
    parser.add_argument("--temperature", type=temperature, default=0.0, help="the voters' temperature (default 0)")
    parser.add_argument(
        "--max-tokens",
        type=positive_int,
        default=None,
        help="output limit of every vote (default 4096; raise it for reasoning models)",
    )
    parser.add_argument(
        "--min-positive-votes",
        type=non_negative_int,
        default=0,
        help="'irrelevant' votes the correct ad needs (default 0: the paper prioritises, it does not filter)",
    )
    parser.add_argument(
        "--min-negative-votes",
        type=non_negative_int,
        default=0,
        help="'relevant' votes each wrong ad needs (default 0)",
    )
    parser.add_argument(
        "--split", default="test", choices=("test", "validation", "fewshot"), help="the questions' split (default test)"
    )
    parser.add_argument("--order-seed", type=int, default=0, help="seed of the options' order (default 0)")
    add_run_arguments(parser)


def run_build(args: argparse.Namespace) -> int:
    from ecom_tasks.monbench.construction.pipeline import BuildOptions, build

    build(BuildOptions.from_args(args, min_positive=args.min_positive_votes, min_negative=args.min_negative_votes))
    return 0
