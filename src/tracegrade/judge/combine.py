"""A metric's parts combined by fit: a monotone logistic model, fitted and cross-validated on labels.

    >>> rows = [({"model": m, "wrong": w}, m > 0.5) for m, w in [(0.9, 0.1), (0.8, 0.2), (0.2, 0.9), (0.1, 0.8)]]
    >>> weights = fit(rows, ["model", "wrong"])  # "wrong" points the wrong way: it may not lower the value
    >>> weights["model"] > 1.0, weights["wrong"]
    (True, 0.0)
    >>> round(combined({"bias": -2.0, "model": 4.0}, {"model": 0.5}), 2)
    0.5

A metric scored by the model and by code (faithfulness: the model's P(yes), the
share of specific claims code found in the evidence, the word overlap) has one
value per answer; how its parts make that value was chosen by hand. ``fit``
learns it from labelled answers instead:

    value = 1 / (1 + exp(-(bias + sum of weight x part)))

**Monotone by construction**: every weight is >= 0, so raising any part never
lowers the value (a higher P(yes), more claims found, more shared words never
make an answer look worse). The fit is exact: for a convex loss under ``w >= 0``
the optimum, restricted to the parts it keeps (weight > 0), is the unconstrained
optimum on those parts; so each subset of parts is fitted without constraint
(Newton's method) and the best fit whose weights are all >= 0 is the answer. A
part that adds nothing gets weight 0 (it falls out of the winning subset, or
sits at its bound). The classes are weighted equally (each side's rows count
half the loss), so a value of 0.5 is where a good and a bad answer are equally
likely whatever the labels' mix: the default pass threshold means something. A
small ridge (``RIDGE``) keeps the weights finite when a part separates the
labels perfectly (a veto that is never wrong on the labels).

``cross_validate`` measures any scorer the same way calibration measures a
threshold: folds of whole questions, the scorer learned on the other folds, its
pass threshold fitted there too (``best_threshold``), scored on the fold left
out, pooled. A part alone is a scorer that learns nothing; the combination is
learned per fold. So the figures side by side are all out of sample.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from tracegrade.judge.agreement import auc, best_threshold

BIAS = "bias"
RIDGE = 0.001  # on the weights, not the bias, against a mean (class-balanced) log loss
FOLDS = 5
NEWTON_STEPS = 50

Parts = Mapping[str, float]
Labelled = tuple[Parts, bool]  # an answer's parts, and whether it is good
Scorer = Callable[[Parts], float]


def combined(weights: Mapping[str, float], parts: Parts) -> float:
    """The combined value (0..1) of ``parts`` under ``weights`` (a part without a weight counts 0)."""
    z = weights.get(BIAS, 0.0) + sum(w * parts[name] for name, w in weights.items() if name != BIAS and w)
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


def fit(rows: Sequence[Labelled], names: Sequence[str], ridge: float = RIDGE,
        row_weights: Sequence[float] | None = None) -> dict[str, float]:
    """The bias and a weight >= 0 per part in ``names`` that fit ``rows`` best (module docstring).
    ``row_weights`` weigh the rows within their class (each class still half the loss): labels
    from several domains pooled, each domain weighed as its part of the fit says."""
    x = np.array([[parts[n] for n in names] for parts, _ in rows], dtype=float).reshape(len(rows), len(names))
    y = np.array([good for _, good in rows], dtype=float)
    w = np.ones(len(rows)) if row_weights is None else np.asarray(row_weights, dtype=float)
    share = np.where(y == 1, 0.5 * w / max(float(w[y == 1].sum()), 1e-12),
                     0.5 * w / max(float(w[y == 0].sum()), 1e-12))  # each class half the loss
    best: tuple[float, dict[str, float]] | None = None
    for size in range(len(names) + 1):
        for kept in itertools.combinations(range(len(names)), size):
            theta = _newton(x[:, list(kept)], y, share, ridge)
            if np.any(theta[1:] < 0):
                continue
            loss = _loss(theta, x[:, list(kept)], y, share, ridge)
            if best is None or loss < best[0]:
                best = (loss, {BIAS: float(theta[0]), **{n: 0.0 for n in names},
                               **{names[k]: float(w) for k, w in zip(kept, theta[1:])}})
    assert best is not None  # the empty subset (bias only) always has no negative weight
    return best[1]


def _design(x: np.ndarray) -> np.ndarray:
    return np.hstack([np.ones((len(x), 1)), x])


def _loss(theta: np.ndarray, x: np.ndarray, y: np.ndarray, share: np.ndarray, ridge: float) -> float:
    z = _design(x) @ theta
    # WHY logaddexp: log(1 + e^z) without overflow for a part weighted into the hundreds.
    return float(share @ (np.logaddexp(0.0, z) - y * z) + ridge / 2 * theta[1:] @ theta[1:])


def _newton(x: np.ndarray, y: np.ndarray, share: np.ndarray, ridge: float) -> np.ndarray:
    """The unconstrained minimiser of the ridge, class-balanced log loss, by damped Newton steps."""
    a = _design(x)
    penalty = np.diag([0.0] + [ridge] * x.shape[1])
    theta = np.zeros(a.shape[1])
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-np.clip(a @ theta, -500, 500)))
        gradient = a.T @ (share * (p - y)) + penalty @ theta
        hessian = a.T @ (a * (share * p * (1 - p))[:, None]) + penalty + 1e-12 * np.eye(a.shape[1])
        step = np.linalg.solve(hessian, gradient)
        before, scale = _loss(theta, x, y, share, ridge), 1.0
        while scale > 1e-6 and _loss(theta - scale * step, x, y, share, ridge) > before:
            scale /= 2  # WHY damped: a full step can overshoot where a part nearly separates the labels
        theta = theta - scale * step
        if float(np.abs(scale * step).max()) < 1e-9:
            break
    return theta


@dataclass(frozen=True)
class OutOfSample:
    """A scorer's cross-validated figures: AUC of the pooled held-out values, balanced accuracy
    and the share of good answers failed at thresholds fitted on the other folds (nan when a side is missing)."""

    auc: float
    balanced_accuracy: float
    false_fail: float


def cross_validate(rows: Sequence[tuple[str, Parts, bool]], learn: Callable[[Sequence[Labelled]], Scorer],
                   max_false_fail: float = 1.0, folds: int = FOLDS) -> OutOfSample:
    """``learn`` on all folds but one (of whole questions: rows are (question, parts, good)),
    scored on that one; the held-out values and verdicts pooled over the folds."""
    fold_of = question_folds([q for q, _, _ in rows], folds)
    held: dict[bool, list[float]] = {True: [], False: []}
    passed: dict[bool, list[bool]] = {True: [], False: []}
    for fold in range(folds):
        train = [(p, g) for q, p, g in rows if fold_of[q] != fold]
        if not any(g for _, g in train) or all(g for _, g in train):
            continue
        scorer = learn(train)
        cut = best_threshold([scorer(p) for p, g in train if g], [scorer(p) for p, g in train if not g],
                             max_false_fail)
        for q, p, g in rows:
            if fold_of[q] == fold:
                held[g].append(scorer(p))
                passed[g].append(held[g][-1] >= cut)
    if not passed[True] or not passed[False]:
        return OutOfSample(math.nan, math.nan, math.nan)
    false_fail = 1 - sum(passed[True]) / len(passed[True])
    return OutOfSample(auc(held[True], held[False]), (1 - false_fail + 1 - sum(passed[False]) / len(passed[False])) / 2,
                       false_fail)


def question_folds(questions: Sequence[str], folds: int = FOLDS) -> dict[str, int]:
    """Each question's fold: the sorted questions dealt out in turn (the same answers always
    land together, so a fit never sees another answer to a question it is scored on)."""
    return {q: index % folds for index, q in enumerate(sorted(set(questions)))}


def part_alone(name: str) -> Callable[[Sequence[Labelled]], Scorer]:
    """A scorer that learns nothing: the part's own value."""
    return lambda train: lambda parts: parts[name]


def logistic(names: Sequence[str]) -> Callable[[Sequence[Labelled]], Scorer]:
    """A scorer learned by ``fit`` over ``names``."""
    def learn(train: Sequence[Labelled]) -> Scorer:
        weights = fit(train, names)
        return lambda parts: combined(weights, parts)
    return learn
