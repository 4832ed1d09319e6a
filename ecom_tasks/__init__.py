"""ecom-tasks: e-commerce LLM benchmarks as lm-evaluation-harness and Inspect tasks."""

__version__ = "0.1.0"
