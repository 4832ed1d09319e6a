"""The one place ecom-tasks reaches into lm-eval's private modules (``lm_eval._...``).

Each symbol here has no public equivalent in lm-eval 0.4.12 to 0.4.13; when lm-eval offers one, use it
and delete the symbol. ``tests/test_lm_eval_task_checks.py`` checks that no other module imports a
private lm-eval module, and that the public entry point still takes the steps split here.
"""

from __future__ import annotations

import argparse
from typing import Any


def parsed_command_line() -> tuple[Any, argparse.Namespace]:
    """lm-eval's command line for ``sys.argv``, parsed but not yet run: ``(cli, args)``; ``cli.execute(args)`` runs it.

    The steps of lm-eval's public ``cli_evaluate()``, taken one by one so that ``ecom-lm-eval`` can hand
    lm-eval a list of ``--include_path`` folders between parsing and running.
    """
    from lm_eval._cli import HarnessCLI
    from lm_eval.utils import setup_logging

    setup_logging()
    cli = HarnessCLI()
    return cli, cli.parse_args()
