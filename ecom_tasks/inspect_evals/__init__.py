"""Inspect task definitions, one module per benchmark (thin: records -> Samples; solvers and scorers come from the core).
The entry point ``ecom_tasks/_registry.py`` imports every task; why this package exports none of them:
docs/inspect-evals-lint.md (IEFS003)."""
