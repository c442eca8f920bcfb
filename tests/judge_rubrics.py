"""Rubrics for tests, as data: the five seed metric names, and a rubric asking
them as 1..5 scales in one strict-JSON reply (what a scripted judge answers)."""

from __future__ import annotations

from tracegrade.judge.rubric import parse_rubric

SEED_METRICS = ("relevance", "correctness", "faithfulness", "helpfulness", "hallucinationFree")
# The shipped rubric's metrics: the seed five and completeness (coverage of the reference's facts, by code).
SHIPPED_METRICS = (*SEED_METRICS, "completeness")

SCALE_RUBRIC_TEXT = "---\nmetrics:\n" + "".join(
    f"  - name: {m}\n    measures: the {m} of the answer\n    scale: How good is the answer's {m}?\n"
    for m in SEED_METRICS
) + "---\nScore the answer.\n"
SCALE_RUBRIC = parse_rubric(SCALE_RUBRIC_TEXT, "tests/judge_rubrics.py")
