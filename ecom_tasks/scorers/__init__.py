"""Scoring: framework-neutral metric functions (``core``, ``multiple_choice``) and
thin wrappers for Inspect (``inspect_scorers``) and lm-eval (``lm_eval_aggregations``)."""
