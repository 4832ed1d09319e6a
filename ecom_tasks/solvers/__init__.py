"""Inspect solvers shared by the benchmarks.

MonBench needs none: each (ordering, format) run is its own Sample with its
system prompt already built, so plain ``generate()`` suffices and every run
is visible, retryable and re-scorable on its own in the log.
"""
