"""MonBench: monetization decisions as 4-option multiple choice (see README.md)."""
