"""Aggregates over a run's results: pure functions over a list.

    >>> from tracegrade.core.results import CaseResult
    >>> pass_rate([CaseResult("a", "pass"), CaseResult("b", "fail")])
    0.5
"""

from __future__ import annotations

from collections import Counter
from statistics import mean
from typing import Sequence

from tracegrade.judge.scoring import METRICS
from tracegrade.core.results import CaseResult


def status_counts(results: Sequence[CaseResult]) -> Counter:
    return Counter(r.status for r in results)


def pass_rate(results: Sequence[CaseResult]) -> float:
    return sum(r.passed for r in results) / len(results) if results else 0.0


def score_averages(results: Sequence[CaseResult]) -> dict[str, float]:
    """Mean of each metric over the scored cases only: an unscored case would skew it."""
    scored = [r.scores for r in results if r.scores is not None]
    return {m: mean(s[m] for s in scored) for m in METRICS} if scored else {}


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]
