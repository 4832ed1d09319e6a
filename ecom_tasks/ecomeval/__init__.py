"""EcomEval (Shopee; Xie et al., 2025): 6 categories, 37 tasks, 7 languages, graded by an LLM judge on a 0-3 rubric.

Files as in every benchmark (docs/development.md), plus ``tasks`` (the 37 tasks), ``judging`` (one grader or
a panel grading a response), ``judge_run`` (``ecom-tasks judge``) and ``calibration`` (difficulty labels).
See README.md.
"""
