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
An item the person labelled (or skipped) leaves their queue. A run's items are
ranked once (``rank``); each request walks the ranking to the item it shows.

Two modes over every metric (``MODES``): ``fill`` (the default) puts one metric
first until the person's labels on it can gate it (``GATE_LABELS`` good and as
many bad: what `calibrate` needs), then the next, so twenty labels can calibrate
a metric; ``turns`` lets the metrics take turns as above. Filling a metric whose
good labels are enough, its answers the judge failed come first (and the other
way round): there the missing labels are likeliest.
"""

from __future__ import annotations

import heapq
import math
import itertools
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Sequence

from tracegrade.core import jsontext

Key = tuple[str, int, str]  # (case id, repetition, metric)
FILL, TURNS = "fill", "turns"
MODES = (FILL, TURNS)
GATE_LABELS = 10  # good and bad labels (each) a metric needs to gate: calibrate's --min-labels default


@dataclass(frozen=True)
class Candidate:
    """One scored metric of one stored answer."""

    case_id: str
    repeat: int
    metric: str
    value: float
    threshold: float | None  # None: stored as null (it was not a finite number)
    low: float = 0.0
    high: float = 1.0
    position: int = 0  # the answer's place in the run
    gates: bool = True  # whether the metric decides a verdict (a metric with gate: false is filled last)

    @property
    def key(self) -> Key:
        return self.case_id, self.repeat, self.metric

    @property
    def distance(self) -> float:
        """How far the score is from the threshold, as a share of the metric's range (no threshold: last)."""
        if self.threshold is None:
            return math.inf
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
    value = _finite(metric.get("value"))
    if value is None or not metric.get("name"):
        return None  # not scored: the judge said nothing to check against
    # WHY each number checked: a non-finite threshold or bound is stored as null (JSON has no NaN).
    low, high = _finite(metric.get("low", 0.0)), _finite(metric.get("high", 1.0))
    return Candidate(str(data.get("case_id", "")), int(data.get("repeat", 0) or 0), str(metric["name"]), value,
                     _finite(metric.get("threshold", 0.0)), 0.0 if low is None else low, 1.0 if high is None else high,
                     position, metric.get("gates", True) is not False)


def _finite(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


@dataclass(frozen=True)
class Ranked:
    """A run's items ranked once, per metric nearest the threshold first; each request walks them.

        >>> ranked = rank([Candidate("a", 0, "m", 0.9, 0.5), Candidate("b", 0, "m", 0.45, 0.5)])
        >>> ranked.at(set(), "", 0).case_id, ranked.left({("b", 0, "m")}, "")
        ('b', 1)

    WHY ranked once, not sorted per request: every key press in the queue asks for the next
    item, and sorting a 10,000-answer run's 50,000 items each time took 0.6-1.4 s a press."""

    by_metric: Mapping[str, tuple[Candidate, ...]]
    by_key: Mapping[Key, Candidate]

    def walk(self, done: set[Key], metric: str = "") -> Iterator[Candidate]:
        """The items not ``done`` in queue order (``ordered``), made as they are asked for."""
        given = Counter(key[2] for key in done)
        turns = [_turns(name, found, done, given[name]) for name, found in sorted(self.by_metric.items())
                 if not metric or name == metric]
        return (item for _, _, item in heapq.merge(*turns, key=lambda turn: turn[:2]))

    def at(self, done: set[Key], metric: str, index: int) -> Candidate | None:
        """The item ``index`` places into the queue (the person passed over that many), or None."""
        return next(itertools.islice(self.walk(done, metric), index, None), None)

    def left(self, done: set[Key], metric: str) -> int:
        """How many items are not ``done`` (on ``metric``, or on every metric)."""
        total = sum(len(found) for name, found in self.by_metric.items() if not metric or name == metric)
        return total - sum(1 for key in done if key in self.by_key and (not metric or key[2] == metric))


    def filling(self, given: Mapping[Key, str]) -> Fill | None:
        """The metric the fill mode puts first, with this person's labels on it (``given``: item ->
        verdict): a gating metric before one that does not gate, then the one nearest to gating,
        then by name; None when every metric with items left can gate."""
        counts = Counter((key[2], verdict) for key, verdict in given.items())
        fills = [Fill(name, counts[(name, "good")], counts[(name, "bad")], found[0].gates)
                 for name, found in self.by_metric.items() if any(c.key not in given for c in found)]
        open_fills = [fill for fill in fills if not fill.can_gate]
        return min(open_fills, key=lambda f: (not f.gates, f.needed, f.metric)) if open_fills else None

    def walk_filling(self, done: set[Key], fill: Fill) -> Iterator[Candidate]:
        """The items not ``done``: ``fill``'s metric first (the side it lacks labels on first), then the
        other metrics in turn."""
        found = [c for c in self.by_metric[fill.metric] if c.key not in done]
        lacking = fill.lacking()
        first = sorted(found, key=lambda c: lacking is not None and _side(c) != lacking)  # stable: nearest first
        return itertools.chain(first, self.walk(done | {c.key for c in found}))


@dataclass(frozen=True)
class Fill:
    """The metric the fill mode labels, and this person's good and bad labels on it so far."""

    metric: str
    good: int
    bad: int
    gates: bool = True

    @property
    def can_gate(self) -> bool:
        return self.good >= GATE_LABELS and self.bad >= GATE_LABELS

    @property
    def needed(self) -> int:
        return max(0, GATE_LABELS - self.good) + max(0, GATE_LABELS - self.bad)

    def lacking(self) -> str | None:
        """"good" or "bad" when only that side still needs labels, else None."""
        if self.good >= GATE_LABELS and self.bad < GATE_LABELS:
            return "bad"
        return "good" if self.bad >= GATE_LABELS and self.good < GATE_LABELS else None


def _side(item: Candidate) -> str | None:
    """The side of its threshold the judge put the item on ("good": it passes); None without a threshold."""
    return None if item.threshold is None else "good" if item.value >= item.threshold else "bad"


def _turns(name: str, found: Sequence[Candidate], done: set[Key], given: int) -> Iterator[tuple[int, str, Candidate]]:
    """A metric's items not ``done``, each with the turn it comes up in: its rank plus the labels given."""
    for place, item in enumerate(c for c in found if c.key not in done):
        yield place + given, name, item


def rank(items: Iterable[Candidate]) -> Ranked:
    """``items`` ranked for the queue: per metric by distance to the threshold, then place in the run."""
    by_metric: dict[str, list[Candidate]] = {}
    for item in items:
        by_metric.setdefault(item.metric, []).append(item)
    return Ranked({name: tuple(sorted(found, key=lambda c: (c.distance, c.position, c.repeat)))
                   for name, found in by_metric.items()}, {i.key: i for found in by_metric.values() for i in found})


def ordered(items: Sequence[Candidate], done: set[Key], metric: str = "") -> list[Candidate]:
    """The items not ``done``, nearest their threshold first, the metrics in turn (only ``metric`` when given).

    WHY the turn counts the labels already given: the queue is worked out again after each
    label, and a turn that started afresh would put the same metric first every time."""
    return list(rank(items).walk(done, metric))
