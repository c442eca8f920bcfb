"""The LLM judge and its validation: scoring, calibration, labels, pairwise."""
