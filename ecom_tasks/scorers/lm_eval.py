"""lm-eval pieces any task reuses: a task class whose metrics are the registered metric specs. They depend on
what plugins register and what ``--metadata`` selects, so :class:`OutcomeTask` (lm-eval's ``class: !function``
task key) builds the ``metric_list`` when the task is created instead of the YAML naming it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

import datasets
from lm_eval.api.task import ConfigurableTask
from lm_eval.api.utils import maybe_delimit

from ecom_tasks.errors import ConfigurationError
from ecom_tasks.hookspecs import MetricSpec
from ecom_tasks.plugins import select_metrics
from ecom_tasks.scorers.memo import last_call_memo
from ecom_tasks.scorers.settings import check_settings
from ecom_tasks.user_errors import install_excepthook

# Every lm-eval task of ours imports this module (plain `lm_eval --include_path ...` too): an uncaught
# EcomTasksError (bad data, a missing setting) then prints as one message instead of a traceback.
install_excepthook()


def summary_aggregations(
    keys: Sequence[str], summarize: Callable[[list[Any]], Mapping[str, float]]
) -> dict[str, Callable[[list[Any]], float]]:
    """One aggregation per key over the same per-document outcomes, sharing one ``summarize`` call.

    ``process_results`` hands the same outcome object to every metric of a
    document, so lm-eval calls each aggregation with lists of the same objects.
    A key the summary lacks (a group absent from the data) aggregates to ``nan``.
    """
    summary_of = last_call_memo(summarize)

    def aggregation(key: str) -> Callable[[list[Any]], float]:
        def aggregate(items: list[Any]) -> float:
            return float(summary_of(items).get(key, float("nan")))

        aggregate.__name__ = f"aggregate_{key}"
        return aggregate

    return {key: aggregation(key) for key in keys}


def documents(items: Iterable[Any], target: Callable[[Any], str]) -> datasets.DatasetDict:
    """A ``custom_dataset``'s ``test`` split: one document per item (id, both prompts, target, its fields)."""
    docs = [
        {"id": item.id, "system_prompt": item.system_prompt, "user_prompt": item.user_prompt, "target": target(item)}
        | item.fields
        for item in items
    ]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(docs)})


class OutcomeTask(ConfigurableTask):
    """A ``generate_until`` task scored into outcome dicts, with metrics built from metric specs.

    A benchmark subclasses it with its ``metric_kind`` and three methods:
    ``metric_keys``, ``summarize`` and ``score``. The run's selection is ``--metadata
    '{"metrics": "acc2,macro_f1"}'`` (default: every registered metric of the kind).
    """

    metric_kind: ClassVar[str]
    #: Keys whose smaller values are better (everything else: larger is better).
    lower_is_better: ClassVar[frozenset[str]] = frozenset()
    #: Put between the system prompt and the question when no chat template is applied (lm-eval then
    #: joins them with nothing between). With a chat template each message is sent exactly as Inspect
    #: sends it, so the separator is never part of the system message.
    plain_separator: ClassVar[str] = ""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        config = dict(config or {})
        config.pop("class", None)  # lm-eval's marker for this route, not a TaskConfig field
        metadata = config.get("metadata") or {}
        check_settings(metadata)  # --metadata is the user's: a wrong kind is refused before any work
        self.metric_specs = select_metrics(self.metric_kind, metadata.get("metrics"))
        keys = self.metric_keys(config, self.metric_specs)
        aggregations = summary_aggregations(keys, lambda items: self.summarize(items, self.metric_specs))
        worse_up = self.lower_is_better | {spec.name for spec in self.metric_specs if not spec.higher_is_better}
        config["metric_list"] = [
            {"metric": key, "aggregation": aggregations[key], "higher_is_better": key.split("/")[0] not in worse_up}
            for key in keys
        ]
        # Any callable: it makes lm-eval leave per-document scoring to process_results.
        config["process_results"] = self.process_results
        super().__init__(config=config)

    def download(self, dataset_kwargs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """The documents from the YAML's ``custom_dataset`` loader, called as lm-eval calls it (``metadata``
        and ``dataset_kwargs`` as keywords). lm-eval's own ``download`` also logs, for every task with such a
        loader, that ``--metadata`` reaches it (four lines for one MonBench design); each benchmark's README
        lists the ``--metadata`` keys it takes, so ours loads without that notice."""
        load = self.config.custom_dataset
        if not callable(load):
            super().download(dataset_kwargs, **kwargs)
            return
        metadata = self.config.metadata or {}
        # A blank in the task's YAML (ecomeval's category: '') leaves the setting to --metadata.
        fixed = {k: v for k, v in (self.config.dataset_kwargs or {}).items() if not (k in metadata and v == "")}
        if clash := sorted(set(metadata) & set(fixed)):  # else load_docs() raises "got multiple values for"
            name = clash[0]
            raise ConfigurationError(
                f"--metadata {name}: the task {self.config.task} sets {name} itself ({fixed[name]!r}); "
                f"run the task of the {name} you want instead"
            )
        self.dataset = load(**metadata, **fixed)

    def fewshot_context(self, doc: dict, num_fewshot: int, **options: Any) -> Any:
        """lm-eval's context (``options``: the keywords lm-eval passes); as plain text (no chat template),
        ``plain_separator`` after the system prompt."""
        context = super().fewshot_context(doc, num_fewshot, **options)
        templated = options.get("apply_chat_template") and options.get("chat_template")
        if templated or not self.plain_separator or not isinstance(context, str):
            return context
        description = self.resolve_field(doc, self.config.description) or ""
        system = maybe_delimit(options.get("system_instruction"), description, self.config.fewshot_delimiter)
        if system and context.startswith(system):
            return system + self.plain_separator + context[len(system) :]
        return context

    def process_results(self, doc: dict, results: list[str]) -> dict[str, Any]:
        """Every metric receives the whole outcome; the aggregations pick what they need."""
        outcome = self.score(doc, results[0])
        return {key: outcome for key in self.aggregation()}

    # The benchmark's part.
    def metric_keys(self, config: Mapping[str, Any], specs: Sequence[MetricSpec]) -> list[str]:
        raise NotImplementedError

    def summarize(self, outcomes: list[Any], specs: Sequence[MetricSpec]) -> Mapping[str, float]:
        raise NotImplementedError

    def score(self, doc: dict, reply: str) -> Any:
        raise NotImplementedError
