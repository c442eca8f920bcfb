"""Scores from the first output token's probabilities.

    >>> import math
    >>> round(p_yes((("Yes", math.log(0.6)), ("No", math.log(0.3)), ("The", math.log(0.1)))), 3)
    0.667
    >>> expected_digit((("5", math.log(0.5)), ("4", math.log(0.5))))
    4.5
    >>> p_yes((("Sure", 0.0),)) is None
    True

WHY probabilities and not the sampled token: a small judge's top token is
nearly always "Yes" or "5"; how much weight it puts on "No" or "3" still
ranks right answers above wrong ones (on the shipped human labels the top
token of a 1-5 scale was 5 for every answer).
"""

from __future__ import annotations

import math
from typing import Sequence

from tracegrade.models.base import TokenAlternatives

# Below this share of probability on the expected tokens the model did not
# answer the question asked; the metric is then not scored rather than guessed.
MIN_MASS = 0.5
DIGITS = ("1", "2", "3", "4", "5")


def _normal(token: str) -> str:
    return token.strip().strip(".,:;!\"'").lower()


def _mass(alternatives: TokenAlternatives, wanted: str) -> float:
    return sum(math.exp(logprob) for token, logprob in alternatives if _normal(token) == wanted)


def p_yes(alternatives: TokenAlternatives) -> float | None:
    """P(yes) / (P(yes) + P(no)), or None when yes and no hold less than MIN_MASS."""
    yes, no = _mass(alternatives, "yes"), _mass(alternatives, "no")
    return yes / (yes + no) if yes + no >= MIN_MASS else None


def expected_digit(alternatives: TokenAlternatives, digits: Sequence[str] = DIGITS) -> float | None:
    """The expected value over the digit tokens, or None when they hold less than MIN_MASS."""
    masses = [_mass(alternatives, d) for d in digits]
    total = sum(masses)
    return sum(int(d) * m for d, m in zip(digits, masses)) / total if total >= MIN_MASS else None


def combine(values: Sequence[float], rule: str) -> float:
    """A checklist's items combined: ``mean``, ``all`` (the lowest) or ``any`` (the highest)."""
    if rule == "all":
        return min(values)
    if rule == "any":
        return max(values)
    return sum(values) / len(values)
