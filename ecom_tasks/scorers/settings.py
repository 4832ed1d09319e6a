"""The settings a user gives a task (Inspect ``-T name=value``, lm-eval ``--metadata``) checked for their kind
before a benchmark reads them: every value is the user's, so a list, a number, NaN or a 5,000-character text
where a yes/no, a count or a name belongs is one ConfigurationError naming the setting, not a raw TypeError
deep in the benchmark (or a run that took it as "true")."""

from __future__ import annotations

import math
from typing import Any

from ecom_tasks import files
from ecom_tasks.data import parse_flag, read_whole_number
from ecom_tasks.errors import ConfigurationError
from ecom_tasks.plugins import parse_metric_names, select_metrics

#: Yes/no settings (``parse_flag`` words, a bool, 0/1 or unset).
FLAGS = frozenset(
    ("image", "strict", "exact", "multimodal", "pool_captions", "captions", "allow_outside_images", "allow_url_images")
)
#: Settings that name one thing: a path or dataset id, a design, a split, a backend...
NAMES = frozenset(("data", "design", "split", "panel", "search", "retriever", "mode"))
#: RMIR's build stages: the seed table, the stage's input file, their sha256s and the caption index's embedder.
NAMES |= frozenset(("seeds", "input", "seeds_sha256", "input_sha256", "text_retriever"))
#: Settings that take a name or several (``-T category=a,b`` arrives as a list from Inspect's YAML reading).
NAME_LISTS = frozenset(("task", "language", "category", "difficulty", "formats", "metrics", "graders"))
#: Settings that name a file or folder, with what each must be.
PATHS = {
    "data": "must be a file, a folder or a dataset id",
    "rules": "must be a rules file",
    "seeds": "must be a seed table or its folder",
    "input": "must be the file the previous build stage wrote",
}
#: No model writes more than this in one reply: a larger max_tokens (1e30) is a typo the server would refuse late.
MAX_TOKENS_LIMIT = 10_000_000


def shown(value: Any) -> str:
    """``value`` for a message: its repr, cut short (a -T value may be 5,000 characters)."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:60]}... ({len(text)} characters)"


def _number(value: Any) -> float | None:
    """``value`` as a finite number when it is one (an int, a float or their text; not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str) or len(str(value)) > 40:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def whole_number(name: str, value: Any, low: int, high: int) -> int:
    """``value`` (``read_whole_number``) from ``low`` to ``high``; else one ConfigurationError naming the
    setting (a count of 'abc', NaN, -5 or 5,000 digits raised a raw error, or ran)."""
    if (number := read_whole_number(value, low, high)) is None:
        raise ConfigurationError(f"{name} must be a whole number from {low:,} to {high:,}, got {shown(value)}")
    return number


def _problem(name: str, value: Any) -> str | None:
    """What is wrong with the kind of ``value`` for the setting ``name`` (None: nothing checked here)."""
    if value is None:
        return None
    if name in FLAGS:
        try:  # parse_flag is the one reading of a yes/no value (a bool, 0/1, a yes/no word)
            parse_flag(value, name)
        except ConfigurationError:
            return "must be true or false"
        return None
    if name == "max_tokens":  # not as a float: stages record and send it as given (2.0 tokens)
        in_range = not isinstance(value, float) and read_whole_number(value, 1, MAX_TOKENS_LIMIT) is not None
        return None if in_range else f"must be a whole number of tokens from 1 to {MAX_TOKENS_LIMIT:,}"
    if name == "temperature":  # a number (or its text, which Inspect's GenerateConfig reads) from 0 to 2
        number = _number(value)
        return None if number is not None and 0 <= number <= 2 else "must be a number from 0 to 2"
    if name == "seed":  # int(seed) + i is each seat's seed: text int() cannot read ('1e3') failed at the call
        return None if read_whole_number(value, 1 - 2**63, 2**63 - 1) is not None else "must be a whole number"
    if name == "shots":  # parse_shots names the counts; a float such as inf must not reach its int()
        return "must be 0, 1 or 5" if isinstance(value, float) and not value.is_integer() else None
    if name in PATHS and isinstance(value, str):
        # A path the system refuses (files.is_too_long) fails wherever it is first looked at; an empty data
        # would read the current folder.
        return PATHS[name] if files.is_too_long(value) or (name == "data" and not value) else None
    if name == "rules" and not isinstance(value, str):  # -T rules=true arrives as a bool: the builtin rules
        return None if isinstance(value, bool) else "must be none, builtin or a rules file"
    if name == "retriever_args":
        return None if isinstance(value, str | dict) else "must be a JSON object"
    if name not in NAMES | NAME_LISTS:
        return None
    items = value if name in NAME_LISTS and isinstance(value, list | tuple) else [value]
    if all(isinstance(item, str) for item in items):
        return None
    return "must be a name or a comma list of names" if name in NAME_LISTS else "must be a name (text)"


def check_settings(settings: dict[str, Any]) -> None:
    """Refuse a ``-T`` value of the wrong kind with one ConfigurationError naming the setting, before the
    benchmark reads it (where a list, a number or NaN failed as a raw TypeError, or ran as "true")."""
    for name, value in settings.items():
        if (problem := _problem(name, value)) is not None:
            raise ConfigurationError(f"{name} {problem}, got {shown(value)}")


def metric_names(kind: str, metrics: str | list[str] | None) -> list[str] | None:
    """``parse_metric_names(metrics)``, each name checked now against the registered metrics of ``kind``."""
    select_metrics(kind, metrics)
    return parse_metric_names(metrics)
