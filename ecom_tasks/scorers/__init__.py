"""What any task reuses, ours or a third party's: metric functions (``core``), metric kinds and the
built-in metric specs (``kinds``), labelled-classification outcomes (``labels``), Inspect scorers,
metrics and the reducer (``inspect_scorers``), and the lm-eval task class (``lm_eval``)."""
