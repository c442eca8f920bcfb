"""The model asked only where it decides: a weighted metric's value from its cheap parts when they settle it.

    >>> spec = {"bias": -4.0, "model": 2.0, "code": 1.0, "overlap": 4.0}
    >>> rule = {"model": 0.3, "low": 0.2, "high": 0.8}
    >>> round(decided(spec, rule, {"code": 1.0, "overlap": 1.0}), 2)  # every word in the evidence
    0.83
    >>> decided(spec, rule, {"code": 1.0, "overlap": 0.6}) is None  # open: the model is asked
    True

A metric whose parts are combined by fitted weights (``judge.combine``:
faithfulness's P(yes), code grounding's share of claims found, word overlap)
has two parts that cost nothing and one that costs a model call. With P(yes)
set to ``model`` (the P(yes) a labelled answer typically gets, good and bad
weighed alike), the cheap parts give a value; when it is under ``low`` or at
``high`` or above, the answer is settled by them, and that value is its value:
the model is not asked. Between the two, the model is asked and the value is
the weights' value of all three parts.

WHY a band fitted on labels rather than "whatever the model says": with the
weights the model can move the value a long way, so an exact rule (the verdict
the same at P(yes) 0 and 1) leaves nearly every answer open; but where every
content word of a reply is in the evidence, or almost none is, the model's
answer rarely changes the value's rank among other answers. ``fit`` picks the
narrowest band whose values keep every labelled domain's AUC within ``tolerance``
of asking the model always (bench/judge/judge_cascade.py measures it).
``TRACEGRADE_JUDGE_CASCADE=off`` asks the model on every answer
(``enabled``); a rubric without ``cascade`` does too.
"""

from __future__ import annotations

import os
from typing import Mapping, Sequence

import numpy as np

from tracegrade.judge.agreement import auc
from tracegrade.judge.combine import combined

MODEL = "model"
OFF = ("0", "off", "false", "no")
Parts = Mapping[str, float]
Domain = Sequence[tuple[Parts, bool]]  # every answer's parts (with the model's) and whether it is good


def enabled() -> bool:
    """False when ``TRACEGRADE_JUDGE_CASCADE`` turns the cascade off (0, off, false, no)."""
    return os.environ.get("TRACEGRADE_JUDGE_CASCADE", "on").strip().lower() not in OFF


def without_model(weights: Mapping[str, float], rule: Mapping[str, float], cheap: Parts) -> float:
    """The weights' value of the cheap parts with P(yes) at the rule's typical ``model``."""
    return combined(weights, {**cheap, MODEL: rule[MODEL]})


def decided(weights: Mapping[str, float], rule: Mapping[str, float], cheap: Parts) -> float | None:
    """The value without the model when the cheap parts settle it (outside low..high), else None."""
    value = without_model(weights, rule, cheap)
    return value if value < rule["low"] or value >= rule["high"] else None


def value(weights: Mapping[str, float], rule: Mapping[str, float] | None, parts: Parts) -> float:
    """What a run gives an answer whose parts (the model's too) are all known."""
    settled = decided(weights, rule, parts) if rule else None
    return combined(weights, parts) if settled is None else settled


def typical_model(domains: Sequence[Domain]) -> float:
    """P(yes) with good and bad answers weighed alike, each domain alike."""
    means = [np.mean([p[MODEL] for p, g in rows if g == side]) for rows in domains for side in (True, False)
             if any(g == side for _, g in rows)]
    return float(np.mean(means))


def fit(domains: Sequence[Domain], weights: Mapping[str, float], tolerance: float = 0.005,
        threshold: float = 0.5, steps: int = 41) -> dict[str, float]:
    """The band (low, high) around the pass ``threshold`` that asks the model least often, averaged
    over ``domains``, among those that keep each domain's AUC within ``tolerance`` of asking always;
    with ``model``. WHY around the threshold: outside it the verdict is the cheap parts' (a pass at
    ``high`` or above, a fail under ``low``); the model is asked where the verdict is open."""
    rule = {MODEL: round(typical_model(domains), 3), "low": 0.0, "high": 1.0}
    cheap = [np.array([without_model(weights, rule, p) for p, _ in rows]) for rows in domains]
    full = [np.array([combined(weights, p) for p, _ in rows]) for rows in domains]
    goods = [np.array([g for _, g in rows]) for rows in domains]
    floor = [auc(list(f[g]), list(f[~g])) - tolerance for f, g in zip(full, goods)]
    every = np.concatenate(cheap)
    cuts = sorted({float(c) for c in np.quantile(every, np.linspace(0, 1, steps))} | {0.0, threshold, 1.0})
    best: tuple[float, float, float] = (1.0, 0.0, 1.0)
    for low in (c for c in cuts if c <= threshold):
        for high in (c for c in cuts if c >= threshold):
            asked = [(c >= low) & (c < high) for c in cheap]
            share = float(np.mean([a.mean() for a in asked]))
            if share >= best[0]:
                continue
            values = [np.where(a, f, c) for a, f, c in zip(asked, full, cheap)]
            if all(auc(list(v[g]), list(v[~g])) >= floor_ for v, g, floor_ in zip(values, goods, floor)):
                best = (share, low, high)
    return {**rule, "low": round(best[1], 4), "high": round(best[2], 4)}


def asked_share(weights: Mapping[str, float], rule: Mapping[str, float], rows: Domain) -> float:
    """The share of ``rows`` whose value needs the model."""
    return float(np.mean([decided(weights, rule, p) is None for p, _ in rows])) if rows else float("nan")
