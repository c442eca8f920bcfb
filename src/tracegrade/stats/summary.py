"""Aggregates over a run's results: pure functions over a list.

    >>> from tracegrade.core.results import CaseResult
    >>> pass_rate([CaseResult("a", "pass"), CaseResult("b", "fail")])
    0.5

Each is a view of one ``stats.tally.RunTally``; a caller that needs several
builds the tally once and reads them all from it.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from tracegrade.core.results import CaseResult
from tracegrade.stats.tally import percentile, tally

__all__ = ["metric_names", "not_scored_counts", "pass_rate", "percentile", "score_averages", "status_counts"]


def status_counts(results: Sequence[CaseResult]) -> Counter[str]:
    return Counter(r.status for r in results)


def pass_rate(results: Sequence[CaseResult]) -> float:
    return sum(r.passed for r in results) / len(results) if results else 0.0


def metric_names(results: Sequence[CaseResult]) -> list[str]:
    """The judge metrics of a run, read from its results: in the order the judge
    reported them, a metric no case could score included."""
    return tally(results).metric_names


def score_averages(results: Sequence[CaseResult]) -> dict[str, float]:
    """Mean of each metric over the cases that scored it: an unscored case would skew it."""
    return tally(results).score_averages()


def not_scored_counts(results: Sequence[CaseResult]) -> dict[str, int]:
    """How many judged cases could not score each metric (only metrics with any)."""
    return tally(results).not_scored
