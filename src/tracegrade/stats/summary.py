"""Aggregates over a run's results: pure functions over a list.

    >>> from tracegrade.core.results import CaseResult
    >>> pass_rate([CaseResult("a", "pass"), CaseResult("b", "fail")])
    0.5
"""

from __future__ import annotations

import math

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
    """Nearest-rank percentile (q in 0..100): the smallest value with at least q%
    of the values at or below it, numpy's ``method="inverted_cdf"``. The one
    definition every report, the dashboard and the gates use; 0.0 for no values.

        >>> percentile([1, 2, 3, 4, 5, 6], 50), percentile(range(1, 21), 95)
        (3, 19)
    """
    if not values:
        return 0.0
    ordered = sorted(values)
    # WHY ceil and a tolerance, not round(): round() is half-to-even, which put p50
    # of six values on the 4th; 1e-9 keeps 0.95 * 20 = 19.000000000000004 at 19.
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered) - 1e-9)))
    return ordered[rank - 1]
