"""Routing: accuracy, per-class precision/recall/F1 and a confusion matrix.

    >>> report = routing_report([("refund", "refund"), ("refund", "policy"), ("policy", "policy")])
    >>> report.classes["refund"].recall, report.classes["policy"].precision
    (0.5, 0.5)

Labels are the union of expected and reported routes. A ratio with nothing to
divide by is 0 (scikit-learn's ``zero_division=0``): a class that was expected
but never reported has precision 0, one reported but never expected has
recall 0. Macro F1 averages every label in that union, so a route the agent
invents pulls it down. Cases without an expected route, or whose agent reports
none, are left out (their count is kept).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from tracegrade.metrics.base import Rate, Traced


@dataclass(frozen=True)
class ClassScores:
    precision: float
    recall: float
    f1: float
    support: int  # how often the class was expected
    predicted: int  # how often the agent reported it


@dataclass(frozen=True)
class RoutingReport:
    classes: Mapping[str, ClassScores] = field(default_factory=dict)
    confusion: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # expected -> reported -> count
    accuracy: Rate = Rate(0, 0)
    macro_f1: Rate = Rate(0, 0, "classes")
    unrouted: int = 0  # cases with an expected route whose reply reported none

    def to_json(self) -> dict[str, Any]:
        return {
            "accuracy": self.accuracy.to_json(),
            "macroF1": self.macro_f1.to_json(),
            "unrouted": self.unrouted,
            "classes": {name: vars(scores) for name, scores in self.classes.items()},
            "confusion": {e: dict(row) for e, row in self.confusion.items()},
        }


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def routing_report(pairs: Sequence[tuple[str, str]], unrouted: int = 0) -> RoutingReport:
    """From (expected, reported) pairs."""
    labels = sorted({label for pair in pairs for label in pair})
    hits = Counter(pairs)
    expected, reported = Counter(e for e, _ in pairs), Counter(r for _, r in pairs)
    classes = {}
    for label in labels:
        tp = hits[(label, label)]
        precision, recall = _ratio(tp, reported[label]), _ratio(tp, expected[label])
        f1 = _ratio(2 * precision * recall, precision + recall) if precision + recall else 0.0
        classes[label] = ClassScores(precision, recall, f1, expected[label], reported[label])
    confusion = {e: {r: hits[(e, r)] for r in labels} for e in labels}
    return RoutingReport(
        classes=classes,
        confusion=confusion,
        accuracy=Rate.of(e == r for e, r in pairs),
        macro_f1=Rate.of((c.f1 for c in classes.values()), unit="classes"),
        unrouted=unrouted,
    )


def routing_from(items: Sequence[Traced]) -> RoutingReport:
    return routing_report(*routing_pairs(items))


def routing_pairs(items: Sequence[Traced]) -> tuple[list[tuple[str, str]], int]:
    """The (expected, reported) pairs of the items that expect a route, and how many reported none."""
    wanted = [(case.expected_route, reply.route) for case, reply in items if case.expected_route]
    pairs = [(e, r) for e, r in wanted if r is not None]
    return pairs, len(wanted) - len(pairs)
