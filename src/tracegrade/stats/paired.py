"""Paired statistics on per-case pairs: pure functions, no numpy or scipy.

    >>> round(paired_t_test([3, 4, 5, 4], [4, 5, 5, 5]).p_value, 4)
    0.0577
    >>> mcnemar_exact(baseline_only=0, candidate_only=6).p_value
    0.03125

WHY hand-written: the harness's core stays light (scipy is a test dependency),
and every function here is tested against scipy on fixed data, ties and zero
differences included. The Wilcoxon test follows ``scipy.stats.wilcoxon``'s
defaults (zeros dropped, average ranks for ties; exact distribution without
ties or zeros up to 50 pairs, exact sign-flip enumeration with ties or zeros up
to 13 pairs, else the normal approximation with the tie correction, no
continuity correction), so its p-values match scipy's.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from statistics import fmean, stdev
from typing import Literal, Sequence

Alternative = Literal["two-sided", "greater", "less"]


@dataclass(frozen=True)
class TestResult:
    statistic: float
    p_value: float
    method: str


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    level: float = 0.95

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


def differences(baseline: Sequence[float], candidate: Sequence[float]) -> list[float]:
    """candidate - baseline for each pair; the two lists are aligned by case."""
    if len(baseline) != len(candidate):
        raise ValueError(f"paired samples differ in length: {len(baseline)} vs {len(candidate)}")
    return [c - b for b, c in zip(baseline, candidate)]


def paired_t_test(baseline: Sequence[float], candidate: Sequence[float]) -> TestResult:
    """Two-sided paired t-test (``scipy.stats.ttest_rel``)."""
    d = differences(baseline, candidate)
    if len(d) < 2:
        return TestResult(math.nan, 1.0, "too few pairs")
    spread = stdev(d)
    if spread == 0:
        # Every pair moved by the same amount: no noise to test against.
        return TestResult(0.0 if fmean(d) == 0 else math.copysign(math.inf, fmean(d)),
                          1.0 if fmean(d) == 0 else 0.0, "constant difference")
    t = fmean(d) / (spread / math.sqrt(len(d)))
    df = len(d) - 1
    return TestResult(t, _clip(_regularized_beta(df / (df + t * t), df / 2, 0.5)), "paired t")


def wilcoxon_signed_rank(
    baseline: Sequence[float], candidate: Sequence[float], alternative: Alternative = "two-sided"
) -> TestResult:
    """Wilcoxon signed-rank test on candidate - baseline (``scipy.stats.wilcoxon(candidate,
    baseline, alternative=...)``). ``greater``: the candidate's values tend to be larger.
    The statistic is min(W+, W-) two-sided and W+ one-sided, as scipy reports it."""
    d = differences(baseline, candidate)
    nonzero = [x for x in d if x != 0]
    if not nonzero:
        return TestResult(0.0, 1.0, "no differences")
    ranks, tie_sizes = average_ranks([abs(x) for x in nonzero])
    w_plus = sum(r for r, x in zip(ranks, nonzero) if x > 0)
    w_minus = sum(r for r, x in zip(ranks, nonzero) if x < 0)
    has_ties = any(size > 1 for size in tie_sizes)
    has_zeros = len(nonzero) < len(d)
    if len(d) <= 50 and not (has_ties or has_zeros):
        (at_most, at_least), method = _wilcoxon_exact(len(nonzero), w_plus), "exact"
    elif len(d) <= 13:
        (at_most, at_least), method = _wilcoxon_sign_flips(ranks, w_plus), "exact sign flips"
    else:
        (at_most, at_least), method = _wilcoxon_normal(len(nonzero), w_plus, tie_sizes), "normal approximation"
    p = {"two-sided": 2 * min(at_most, at_least), "greater": at_least, "less": at_most}[alternative]
    return TestResult(min(w_plus, w_minus) if alternative == "two-sided" else w_plus, _clip(p), method)


def mcnemar_exact(baseline_only: int, candidate_only: int) -> TestResult:
    """Exact McNemar on discordant pairs: cases that passed only in the baseline
    and only in the candidate (a two-sided binomial test at 1/2)."""
    n = baseline_only + candidate_only
    if n == 0:
        return TestResult(0.0, 1.0, "no discordant pairs")
    k = min(baseline_only, candidate_only)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return TestResult(float(k), _clip(2 * tail), "exact binomial")


def bootstrap_mean_ci(
    values: Sequence[float], level: float = 0.95, resamples: int = 10_000, seed: int = 0
) -> Interval:
    """Percentile bootstrap interval of the mean; the same seed gives the same interval."""
    if not values:
        return Interval(math.nan, math.nan, level)
    rng = random.Random(seed)
    data, n = list(values), len(values)
    means = sorted(math.fsum(rng.choices(data, k=n)) / n for _ in range(resamples))
    tail = (1 - level) / 2
    return Interval(_quantile(means, tail), _quantile(means, 1 - tail), level)


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def average_ranks(values: Sequence[float]) -> tuple[list[float], list[int]]:
    """Ranks from 1, tied values sharing the mean of the ranks they cover, and the
    size of each group of ties (the one rank function of the package).

        >>> average_ranks([10, 20, 20, 5])
        ([2.0, 3.5, 3.5, 1.0], [1, 1, 2])
    """
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    sizes = []
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 + 1
        sizes.append(end - start + 1)
        start = end + 1
    return ranks, sizes


# Each null distribution below gives P(W+ <= observed) and P(W+ >= observed).


def _wilcoxon_exact(n: int, w_plus: float) -> tuple[float, float]:
    # counts[s] = number of sign assignments of ranks 1..n whose positive ranks sum to s
    counts = [1] + [0] * (n * (n + 1) // 2)
    for rank in range(1, n + 1):
        for total in range(len(counts) - 1, rank - 1, -1):
            counts[total] += counts[total - rank]
    everything = 2**n
    return sum(counts[: math.ceil(w_plus) + 1]) / everything, sum(counts[math.floor(w_plus):]) / everything


def _wilcoxon_sign_flips(ranks: Sequence[float], w_plus: float) -> tuple[float, float]:
    sums = [sum(r for r, positive in zip(ranks, signs) if positive)
            for signs in itertools.product((False, True), repeat=len(ranks))]
    tolerance = abs(w_plus) * 1e-9
    return (sum(s <= w_plus + tolerance for s in sums) / len(sums),
            sum(s >= w_plus - tolerance for s in sums) / len(sums))


def _wilcoxon_normal(n: int, w_plus: float, tie_sizes: Sequence[int]) -> tuple[float, float]:
    mean = n * (n + 1) / 4
    variance = (n * (n + 1) * (2 * n + 1) - sum(t**3 - t for t in tie_sizes) / 2) / 24
    z = (w_plus - mean) / math.sqrt(variance)
    return math.erfc(-z / math.sqrt(2)) / 2, math.erfc(z / math.sqrt(2)) / 2


def _clip(p: float) -> float:
    return min(1.0, max(0.0, p))


def _regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b) by Lentz's continued fraction (Numerical Recipes 6.4)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(log_front) * _beta_fraction(x, a, b) / a
    return 1 - math.exp(log_front) * _beta_fraction(1 - x, b, a) / b


def _beta_fraction(x: float, a: float, b: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 500):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return result
