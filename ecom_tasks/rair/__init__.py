"""RAIR: rule-aware four-level query-item relevance (General, Hard, Visually Salient; see README.md)."""
