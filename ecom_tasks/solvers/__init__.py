"""Inspect solvers any task reuses (``fan_out``: many model calls from one Sample)."""
