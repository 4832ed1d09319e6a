"""MonBench: monetization decisions as 4-option multiple choice (see README.md).

Files: ``schema`` (record, validation, loading), ``prompts`` (text),
``protocol`` (orderings x formats -> items), ``parsing`` (``parse_reply``),
``metrics`` (the metric maths), ``scoring`` (``score_reply``, ``summarize``),
``baseline`` (the offline responder), ``variants`` (named settings shared by
the Inspect and lm-eval adapters).
"""
