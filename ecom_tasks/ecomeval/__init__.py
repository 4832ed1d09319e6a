"""EcomEval (Shopee; Xie et al., 2025): 6 categories, 37 tasks, 7 languages, graded by an LLM judge on a 0-3 rubric.

Files: ``schema`` (record, judge gold cases, validation, loading), ``prompts``
(the question as it is; the grader template), ``protocol`` (filters, records ->
items), ``parsing`` (strict grade parsing, exact answers), ``metrics`` (the
``Outcome`` record, the metric maths, judge agreement), ``scoring``
(``grader_prompt``, ``score_exact``), ``calibration`` (difficulty labels across models),
``baseline`` (the offline answerer and baseline judge), ``variants`` (named
settings shared by the Inspect and lm-eval adapters), ``paper_tables`` (the
paper's tables in the report, beside ``reference_results.csv``). See README.md.
"""
