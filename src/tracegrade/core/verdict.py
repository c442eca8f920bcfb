"""The pass rule: every check passes AND every gating judge metric reaches its threshold.

    >>> from tracegrade.core.results import CheckResult, MetricScore, Scores
    >>> scores = Scores((MetricScore("relevance", 1.0, 0.5, "probability"),
    ...                  MetricScore("correctness", 0.2, 0.5, "probability")))
    >>> case_status((CheckResult("source", True),), scores)
    'fail'

Each metric carries its own threshold and rule (from the rubric), so the rule
needs no list of metric names. A gating metric the judge could not score
follows its ``if_not_scored`` rule: ``skip`` (the default) means the case does
not pass *on that metric's strength*: it neither passes nor fails on it, and
the reports list it as not scored; ``fail`` fails the case; ``unscored`` makes
the case unscored. A judge that scored nothing makes the case unscored.
"""

from __future__ import annotations

from typing import Sequence

from tracegrade.core.results import CaseStatus, CheckResult, JudgeOutcome, MetricScore, Scores, Unscored

Status = CaseStatus  # the name the pass rule has always used


def case_status(checks: Sequence[CheckResult], outcome: JudgeOutcome | None, pass_score: float | None = None) -> Status:
    """``outcome`` None means the judge was skipped on purpose (checks-only run).
    ``pass_score`` replaces the threshold of every 1..5 scale metric (``--pass-score``)."""
    if not all(check.passed for check in checks):
        return "fail"
    if isinstance(outcome, Unscored):
        return "unscored"  # never a pass: no evidence the answer is any good
    if not isinstance(outcome, Scores):
        return "pass"
    if not any(m.scored for m in outcome.metrics):
        return "unscored"
    gating = [m for m in outcome.metrics if m.gates]
    if failing_metrics(gating, pass_score) or any(m.if_not_scored == "fail" for m in gating if not m.scored):
        return "fail"
    if any(m.if_not_scored == "unscored" for m in gating if not m.scored):
        return "unscored"
    return "pass"


def threshold(metric: MetricScore, pass_score: float | None = None) -> float:
    """The metric's pass threshold, or ``pass_score`` for a 1..5 scale metric when given."""
    return pass_score if pass_score is not None and (metric.low, metric.high) == (1, 5) else metric.threshold


def failing_metrics(metrics: Sequence[MetricScore], pass_score: float | None = None) -> list[MetricScore]:
    """The gating metrics scored below their threshold."""
    return [m for m in metrics if m.gates and m.value is not None and m.value < threshold(m, pass_score)]
