"""Inspect's ``ecomeval_exact`` scorer passes the reply's stop reason to the exact reading: a reply that is
the chosen option's line cut off by the token limit may be a copy of the question as much as a choice, so it
earns nothing; the same text ended by the model itself picks that option (lm-eval, which passes no stop
reason, reads it as not known to be cut off)."""

from __future__ import annotations

import asyncio
import re

import pytest
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import Target
from inspect_ai.solver import TaskState

from ecom_tasks.inspect_evals.ecomeval import ecomeval_dataset, ecomeval_exact_scorer


def _option_sample():
    """A bundled exact item whose reference letter leads an option line of three words or more."""
    for sample in ecomeval_dataset(exact=True):
        fields = sample.metadata or {}
        line = re.search(rf"^{re.escape(fields['reference'])}\. \S+ \S+ \S+.*$", fields["question"], re.MULTILINE)
        if line:
            return sample, line.group(0)
    raise AssertionError("the bundled fixtures hold no exact item with a long option line")


@pytest.mark.parametrize(("stop_reason", "explanation"), [("max_tokens", "no exact match"), ("stop", "exact match")])
def test_a_cut_off_option_line_counts_only_when_the_model_ended_it(stop_reason, explanation):
    sample, line = _option_sample()
    reply = line[: len(line) - 3]  # the option's line, its last characters missing
    state = TaskState(
        model="mockllm/model",
        sample_id=sample.id,
        epoch=1,
        input=sample.input,
        messages=list(sample.input),
        output=ModelOutput.from_content("mockllm/model", reply, stop_reason=stop_reason),
        metadata=sample.metadata,
    )
    score = asyncio.run(ecomeval_exact_scorer()(state, Target(sample.target)))
    assert score.explanation == explanation
