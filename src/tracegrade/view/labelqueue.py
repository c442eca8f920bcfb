"""The order a run's answers are put before a person to label: each metric's threshold region first.

    >>> rows = candidates(['{"case_id": "a", "metrics": [{"name": "m", "value": 0.9, "threshold": 0.5}]}',
    ...                    '{"case_id": "b", "metrics": [{"name": "m", "value": 0.45, "threshold": 0.5}]}'])
    >>> [c.case_id for c in ordered(rows, done=set())]
    ['b', 'a']

An item is one answer on one metric the judge scored. Within a metric, the
answers whose score is nearest the metric's pass threshold come first (in units
of the metric's range): there a label tells most about whether the threshold
sits right, and there the judge is least sure. The metrics take turns (counting
the labels each already has), so the first labels cover every metric's threshold
region before any metric's far ends.
An item the person labelled (or skipped) leaves their queue.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from tracegrade.core import jsontext

Key = tuple[str, int, str]  # (case id, repetition, metric)


@dataclass(frozen=True)
class Candidate:
    """One scored metric of one stored answer."""

    case_id: str
    repeat: int
    metric: str
    value: float
    threshold: float
    low: float = 0.0
    high: float = 1.0
    position: int = 0  # the answer's place in the run

    @property
    def key(self) -> Key:
        return self.case_id, self.repeat, self.metric

    @property
    def distance(self) -> float:
        """How far the score is from the threshold, as a share of the metric's range."""
        return abs(self.value - self.threshold) / ((self.high - self.low) or 1.0)


def candidates(texts: Iterable[str]) -> tuple[Candidate, ...]:
    """Every scored metric of every answer in a run's stored cases (their JSON texts, in order)."""
    found: list[Candidate] = []
    for position, text in enumerate(texts):
        data = jsontext.load(text)
        if not data.get("reply", True):
            continue  # no answer: nothing to label
        found += [c for m in data.get("metrics") or () if (c := _candidate(data, m, position)) is not None]
    return tuple(found)


def _candidate(data: Mapping[str, Any], metric: Mapping[str, Any], position: int) -> Candidate | None:
    value = metric.get("value")
    if not isinstance(value, (int, float)) or not metric.get("name"):
        return None  # not scored: the judge said nothing to check against
    return Candidate(str(data.get("case_id", "")), int(data.get("repeat", 0) or 0), str(metric["name"]),
                     float(value), float(metric.get("threshold", 0.0)), float(metric.get("low", 0.0)),
                     float(metric.get("high", 1.0)), position)


def ordered(items: Sequence[Candidate], done: set[Key], metric: str = "") -> list[Candidate]:
    """The items not ``done``, nearest their threshold first, the metrics in turn (only ``metric`` when given).

    WHY the turn counts the labels already given: the queue is worked out again after each
    label, and a turn that started afresh would put the same metric first every time."""
    by_metric: dict[str, list[Candidate]] = {}
    for item in items:
        if item.key not in done and (not metric or item.metric == metric):
            by_metric.setdefault(item.metric, []).append(item)
    given = Counter(key[2] for key in done)
    turns = [(rank + given[name], name, item) for name, found in by_metric.items()
             for rank, item in enumerate(sorted(found, key=lambda c: (c.distance, c.position, c.repeat)))]
    return [item for _, _, item in sorted(turns, key=lambda turn: turn[:2])]


def metrics_of(items: Iterable[Candidate]) -> list[str]:
    return sorted({item.metric for item in items})
