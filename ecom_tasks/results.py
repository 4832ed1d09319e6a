"""One evaluation's results as the report and each benchmark's paper tables see them (``report.runs`` reads them):
a :class:`Run` is one task of one evaluation, metric names as the scorer wrote them (lm-eval's ``,<filter>`` dropped)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

BENCHMARKS = ("rair", "ecomeval", "rmir", "monbench")
INSPECT = "inspect"
LM_EVAL = "lm-eval"
SUCCESS = "success"
UNFINISHED = "unfinished"
UNREADABLE = "unreadable"
#: What a run on the bundled fixtures was run on (``Run.data``); ``?``: the log does not say.
FIXTURES = "bundled fixtures"
UNKNOWN_DATA = "?"
#: Providers (Inspect) / model types (lm-eval) that reach a server the user runs: the served id names the model.
_SERVED_INSPECT = frozenset({"openai-api", "vllm", "sglang", "hf", "ollama", "llama-cpp-python", "transformer_lens"})
_SERVED_LM_EVAL = frozenset(
    {
        "local-chat-completions",
        "ecom-chat-completions",
        "local-completions",
        "vllm",
        "vllm-vlm",
        "sglang",
        "hf",
        "huggingface",
        "hf-auto",
        "hf-multimodal",
    }
)
#: lm-eval hosted-API model types -> Inspect's provider prefix.
_HOSTED_LM_EVAL = {
    "openai-chat-completions": "openai",
    "openai-completions": "openai",
    "anthropic-chat-completions": "anthropic",
    "anthropic-chat": "anthropic",
    "anthropic-completions": "anthropic",
}
#: lm-eval's per-task samples file (``--log_samples``): ``samples_<task>_<stamp>.jsonl``; the stamp is its results file's.
SAMPLES_FILE = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d\d-\d\dT[\d.\-]+)\.jsonl$")
BASELINE = "ecom/baseline"
_BASELINE_NAMES = frozenset({"ecom/baseline", "ecom-baseline"})


def model_alias(framework: str, model: str) -> str:
    """The name a model has in the tables (docs/reports.md, "One model, one name")."""
    if model in _BASELINE_NAMES:
        return BASELINE
    if framework == LM_EVAL:
        kind, colon, served = model.partition(":")
        if colon and served:
            if kind in _SERVED_LM_EVAL:
                return served
            if kind in _HOSTED_LM_EVAL:
                return f"{_HOSTED_LM_EVAL[kind]}/{served}"
        return model
    provider, slash, rest = model.partition("/")
    if provider == "openai-api" and "/" in rest:
        return rest.split("/", 1)[1]  # openai-api/<service>/<model>
    if slash and rest and provider in _SERVED_INSPECT - {"openai-api"}:
        return rest
    return model


@dataclass(frozen=True)
class Run:
    benchmark: str
    task: str
    framework: str
    model: str
    settings: tuple[tuple[str, str], ...]
    metrics: Mapping[str, float]
    status: str
    source: str
    created: str = ""
    error: str = ""
    #: Facts about the task that are not settings (Inspect task metadata, lm-eval dataset kwargs).
    info: Mapping[str, Any] = field(default_factory=dict)
    #: Inspect model roles (e.g. ``grader``) -> model name.
    roles: Mapping[str, str] = field(default_factory=dict)
    #: What the run was run on (``report.runs.describe_data``): ``FIXTURES``, a dataset name with its hash, or ``?``.
    data: str = UNKNOWN_DATA
    #: The folder a folder walk found ``source`` in ("" when the user named the file): a later read of it (compare)
    #: stays inside, as the walk's rule does, so a link planted there since is refused.
    folder: str = ""

    @property
    def model_name(self) -> str:
        """The model as the tables name it (:func:`model_alias`)."""
        return model_alias(self.framework, self.model)

    @property
    def key(self) -> tuple[str, str, str, str, tuple[tuple[str, str], ...]]:
        return (self.benchmark, self.task, self.framework, self.model, self.settings)

    @property
    def settings_dict(self) -> dict[str, str]:
        return dict(self.settings)


@dataclass(frozen=True)
class MergedRun:
    """The rows of the report: one per run key, numbers from ``latest``."""

    latest: Run
    count: int
    sources: tuple[str, ...]
    disagree: tuple[str, ...] = ()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.latest, name)
