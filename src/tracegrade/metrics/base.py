"""What every component metric returns: a total over a stated denominator.

    >>> rate = Rate.of([1, 0, 1, 1])
    >>> rate.value, rate.n
    (0.75, 4)
    >>> Rate.of([]).value is None
    True

WHY a total and a denominator instead of a float: "0.5" over 2 cases and over
200 are different claims, and a metric with no qualifying case is undefined
(None), never a silent 0 or 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from tracegrade.case.schema import GoldenCase
from tracegrade.core.trace import Reply


@dataclass(frozen=True)
class Rate:
    total: float  # sum of per-item scores: a count when every score is 0 or 1
    n: int  # the denominator
    unit: str = "cases"  # what n counts: cases, calls, classes

    @property
    def value(self) -> float | None:
        return self.total / self.n if self.n else None

    @classmethod
    def of(cls, scores: Iterable[float], unit: str = "cases") -> Rate:
        values = list(map(float, scores))  # WHY map: ~2x the comprehension, on every score of a run
        return cls(sum(values), len(values), unit)

    def to_json(self) -> dict[str, Any]:
        value = self.value
        return {"value": round(value, 4) if value is not None else None, "n": self.n, "unit": self.unit}


# One case's result with the case it answers and the trace it produced.
Traced = tuple[GoldenCase, Reply]


def with_calls(items: Iterable[Traced]) -> list[Traced]:
    """The items whose tool calls may be read (``Reply.calls_unusable``).

    WHY: a trace with no recorded call (no ``--capture``) or with another case's calls
    says nothing of the calls the agent made; counted, it showed a run of six unscored
    cases as "0 of 6 cases with a violation" and "tools.selection 0.17", as if measured."""
    return [(case, reply) for case, reply in items if not reply.calls_unusable()]
