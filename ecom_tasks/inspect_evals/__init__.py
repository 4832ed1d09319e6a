"""Inspect task definitions (thin: records -> Samples; solvers and scorers come from the core)."""
