"""Agreement statistics for judge calibration: pure functions over two lists.

    >>> spearman([1, 2, 3, 4], [1, 3, 2, 4])
    0.8
    >>> mae([5, 4, 3], [5, 5, 1])
    1.0
    >>> round(sign_test_p(8, 1), 4)
    0.0391
    >>> auc(good=[0.9, 0.8, 0.4], bad=[0.3, 0.5])
    0.8333333333333334

Written by hand (numpy only) so the harness needs no scipy or scikit-learn at
run time; tests hold each function to scipy / scikit-learn on data with ties.
A statistic that is undefined on its input (a constant list, no items) is
``nan``, never a made-up 0 or 1: a threshold compared with nan fails.
"""

from __future__ import annotations

import math
from typing import Literal, Sequence, Sized

import numpy as np

from tracegrade.stats.paired import average_ranks

Weights = Literal["quadratic"] | None


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(a) != len(b):
        raise ValueError(f"lists differ in length: {len(a)} and {len(b)}")
    if len(a) < 2:
        return math.nan
    da, db = a - a.mean(), b - b.mean()
    denominator = math.sqrt(float(da @ da) * float(db @ db))
    return float(da @ db) / denominator if denominator else math.nan


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho: Pearson on average ranks (nan when either side is constant)."""
    return pearson(average_ranks(x)[0], average_ranks(y)[0])


def mae(x: Sequence[float], y: Sequence[float]) -> float:
    _same_length(x, y)
    return float(np.mean(np.abs(np.asarray(x, float) - np.asarray(y, float)))) if len(x) else math.nan


def exact_agreement(x: Sequence[int], y: Sequence[int]) -> float:
    _same_length(x, y)
    return sum(a == b for a, b in zip(x, y)) / len(x) if len(x) else math.nan


def confusion_matrix(x: Sequence[int], y: Sequence[int], labels: Sequence[int]) -> list[list[int]]:
    """Rows are ``x`` (e.g. the human), columns ``y`` (the judge), both in ``labels`` order."""
    _same_length(x, y)
    index = {label: i for i, label in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for a, b in zip(x, y):
        matrix[index[a]][index[b]] += 1
    return matrix


def cohen_kappa(x: Sequence[int], y: Sequence[int], labels: Sequence[int], weights: Weights = None) -> float:
    """Cohen's kappa; ``weights="quadratic"`` penalises a disagreement by its squared distance."""
    observed = np.asarray(confusion_matrix(x, y, labels), dtype=float)
    if not observed.sum():
        return math.nan
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    k = len(labels)
    if weights is None:
        penalty = 1.0 - np.eye(k)
    elif weights == "quadratic":
        steps = np.arange(k)
        penalty = (steps[:, None] - steps[None, :]) ** 2 / max(1, (k - 1) ** 2)
    else:
        raise ValueError(f"unknown weights {weights!r}: use None or 'quadratic'")
    chance = float((penalty * expected).sum())
    return 1.0 - float((penalty * observed).sum()) / chance if chance else math.nan


def sign_test_p(wins: int, losses: int) -> float:
    """Two-sided exact sign test (binomial, p = 0.5) of wins against losses; ties are left out."""
    n = wins + losses
    if n == 0:
        return 1.0
    # WHY the annotation: int ** int is typed Any (a negative power is a float); n >= 0 here.
    tail: float = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


def sample_variance(values: Sequence[float]) -> float:
    """Unbiased (n - 1) variance; 0.0 for a single value, which cannot vary."""
    return float(np.var(np.asarray(values, dtype=float), ddof=1)) if len(values) > 1 else 0.0


def _same_length(x: Sized, y: Sized) -> None:
    if len(x) != len(y):
        raise ValueError(f"lists differ in length: {len(x)} and {len(y)}")


def auc(good: Sequence[float], bad: Sequence[float]) -> float:
    """Area under the ROC curve: the chance a random good item scores above a
    random bad one, ties counting half (Mann-Whitney U / (n_good * n_bad))."""
    if not good or not bad:
        return math.nan
    ranks, _ = average_ranks([*good, *bad])
    u = sum(ranks[: len(good)]) - len(good) * (len(good) + 1) / 2
    return u / (len(good) * len(bad))


def balanced_accuracy(good: Sequence[float], bad: Sequence[float], threshold: float) -> float:
    """Mean of the share of good items at or above ``threshold`` and the share of bad ones below it."""
    if not good or not bad:
        return math.nan
    return (sum(v >= threshold for v in good) / len(good) + sum(v < threshold for v in bad) / len(bad)) / 2


def best_threshold(good: Sequence[float], bad: Sequence[float], max_false_fail: float = 1.0) -> float:
    """The threshold with the highest balanced accuracy among those that fail at most
    ``max_false_fail`` of the good items: a midpoint between two observed values (ties
    broken towards the middle of the best run). With no such midpoint, the lowest one."""
    values = sorted(set([*good, *bad]))
    cuts = [(a + b) / 2 for a, b in zip(values, values[1:])] or values
    allowed = [c for c in cuts if sum(v < c for v in good) <= max_false_fail * len(good)] or cuts[:1]
    accuracy = [balanced_accuracy(good, bad, cut) for cut in allowed]
    best = max(accuracy)
    winners = [cut for cut, acc in zip(allowed, accuracy) if acc == best]
    return winners[len(winners) // 2]
