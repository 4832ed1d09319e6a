"""How long every reply reader takes on degenerate replies: runs of blanks, punctuation and markdown around answer
tokens, the padding small models and looping generations produce. A reader that backtracks on such a run stalls a
whole evaluation on one reply, so each call gets an alarm; the script prints every input over the budget and exits 1
when there is one (a timing, kept out of the test suite: the suite's hostile rows check the readings themselves).

    .venv/bin/python benchmarks/reader_speed.py                       # every reader, 4,000-character inputs
    .venv/bin/python benchmarks/reader_speed.py --size 20000 --budget 1 rair mb_label
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Callable, Iterator

from ecom_tasks.ecomeval import parsing as ecomeval
from ecom_tasks.monbench import parsing as monbench
from ecom_tasks.monbench.construction import parsing as monbench_votes
from ecom_tasks.rair import parsing as rair
from ecom_tasks.rair.construction import parsing as rair_votes
from ecom_tasks.rair.prompts import build_system_prompt
from ecom_tasks.rmir import parsing as rmir
from ecom_tasks.rmir.construction import parsing as rmir_build

INTENT = ("Substitute", "Complement", "Narrowing", "Irrelevant")
QUESTION = "Which brand?\nA. Nike\nB. Adidas\nC. Puma\nD. Reebok"
READERS: dict[str, Callable[[str], object]] = {
    "rair": rair.parse_reply,
    "rair_strict": rair.parse_strict,
    "mb_label": lambda r: monbench.parse_reply(r, "label", INTENT),
    "mb_content": lambda r: monbench.parse_reply(r, "content", INTENT),
    "mb_label_content": lambda r: monbench.parse_reply(r, "label_content", INTENT),
    "ee_grade": ecomeval.parse_grade,
    "ee_exact_letter": lambda r: ecomeval.exact_match("B", r, prompt=QUESTION),
    "ee_exact_text": lambda r: ecomeval.exact_match("Nike", r, prompt=QUESTION),
    "rmir_reason": rmir.parse_reply,
    "vote_relevance": monbench_votes.parse_relevance,
    "vote_intent": rair_votes.parse_intent,
    "vote_visual": rair_votes.parse_visual,
    "vote_rules": lambda r: rair_votes.parse_rule_ids(r, ["R1", "R2"]),
    "build_generation": rmir_build.parse_generation,
    "build_filter": rmir_build.parse_filter,
    "build_judgement": rmir_build.parse_judgement,
}
# What the readers look for: answer words, tags, levels, letters, grades, cues, brackets and marks.
TOKENS = [
    "Final answer:",
    "Answer:",
    "Option",
    "Relevance:",
    "Final Score:",
    "L3",
    "B",
    "3",
    "答案",
    "<Label>",
    "<Answer>",
] + ["</Label>", "Complement", "Nike", "relevant", "actually", "not", "or", "I think", "\\boxed{", "rate it a", "/4"]
RUNS = [" ", "\t", "\n", " \n", "        ", " *", "\n*", "\n-", "wait*_"] + list(",/|;.-:*_([)]{}'\"`#~!?、，。：；“")


def inputs(size: int) -> Iterator[tuple[str, str]]:
    """(name, text) of each degenerate reply: a token then a run, a run then a token, a run between two tokens,
    and a token repeated with each run after it; and instructions copied over and over, in capitals (the echo rule's
    search for copies must stay linear)."""
    copied = build_system_prompt("en").upper() + "\n"
    yield "RAIR's instructions in capitals, repeated", copied * max(1, size // len(copied)) + "L3"
    for token in TOKENS:
        for run in RUNS:
            times = max(1, size // len(run))
            yield f"{token!r} + {run!r}*n", token + run * times + "x"
            yield f"{run!r}*n + {token!r}", run * times + token
            yield f"{token!r} + {run!r}*n + {token!r}", token + run * times + "x " + token
            yield f"({token!r} + {run!r})*n", (token + run) * max(1, size // (len(token) + len(run)))


def _alarm(*_: object) -> None:
    raise TimeoutError


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("readers", nargs="*", help=f"default: every reader ({', '.join(READERS)})")
    parser.add_argument("--size", type=int, default=4000, help="characters of each run (default 4000)")
    parser.add_argument("--budget", type=float, default=0.5, help="seconds one reading may take (default 0.5)")
    parser.add_argument("--timeout", type=int, default=10, help="seconds before a reading is abandoned (default 10)")
    args = parser.parse_args()
    if unknown := set(args.readers) - set(READERS):
        parser.error(f"no reader {', '.join(sorted(unknown))}")
    signal.signal(signal.SIGALRM, _alarm)
    slow, calls, started = [], 0, time.perf_counter()
    for name in args.readers or READERS:
        read = READERS[name]
        for _, text in inputs(40):  # lazy loads (stemmers, automata) on first use are no part of a reading's cost
            read(text)
        for family, text in inputs(args.size):
            calls += 1
            start = time.perf_counter()
            signal.alarm(args.timeout)
            try:
                read(text)
                seconds = time.perf_counter() - start
            except TimeoutError:
                seconds = float("inf")
            except Exception as error:  # a reader must classify any text, never raise
                print(f"{name:18} {family}: raised {type(error).__name__}: {str(error)[:80]}", flush=True)
                slow.append(name)
                continue
            finally:
                signal.alarm(0)
            if seconds > args.budget:
                shown = f">{args.timeout} s" if seconds == float("inf") else f"{seconds:.2f} s"
                print(f"{name:18} {family}: {shown}", flush=True)
                slow.append(name)
    print(
        f"{calls} readings of {args.size:,}-character runs in {time.perf_counter() - started:.0f} s; "
        f"{len(slow)} over {args.budget} s or raising"
    )
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
