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

from tracegrade.core.results import CaseResult


def status_counts(results: Sequence[CaseResult]) -> Counter:
    return Counter(r.status for r in results)


def pass_rate(results: Sequence[CaseResult]) -> float:
    return sum(r.passed for r in results) / len(results) if results else 0.0


def metric_names(results: Sequence[CaseResult]) -> list[str]:
    """The judge metrics of a run, read from its results: in the order the judge
    reported them, a metric no case could score included."""
    names: dict[str, None] = {}
    for r in results:
        names.update(dict.fromkeys(m.name for m in r.metrics))
        names.update(dict.fromkeys(r.scores or ()))
    return list(names)


def score_averages(results: Sequence[CaseResult]) -> dict[str, float]:
    """Mean of each metric over the cases that scored it: an unscored case would skew it."""
    averages = {}
    for metric in metric_names(results):
        values = [r.scores[metric] for r in results if r.scores and metric in r.scores]
        if values:
            averages[metric] = mean(values)
    return averages


def not_scored_counts(results: Sequence[CaseResult]) -> dict[str, int]:
    """How many judged cases could not score each metric (only metrics with any)."""
    counts: dict[str, int] = {}
    for r in results:
        for m in r.metrics:
            if not m.scored:
                counts[m.name] = counts.get(m.name, 0) + 1
    return counts


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
