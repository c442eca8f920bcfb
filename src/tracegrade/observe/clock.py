"""The clocks of a case's spans, apart from the telemetry that builds them.

WHY a module of its own: every case reads these clocks, but only a run with a
span exporter or store needs OpenTelemetry; the runner imports this, and the
telemetry module only when a case has finished.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SpanClock:
    """One wall-clock reading and the monotonic clock beside it.

    WHY: a span tree's times must come from one clock. The wall clock can be
    stepped or slewed while a request runs, and the steps inside are timed with
    the monotonic clock; so a tree is anchored once to the wall clock and every
    later time is that anchor plus monotonic time elapsed.
    """

    started_ns: int = field(default_factory=time.time_ns)
    _monotonic_ns: int = field(default_factory=time.perf_counter_ns, repr=False)

    def now_ns(self) -> int:
        return self.started_ns + time.perf_counter_ns() - self._monotonic_ns


class CaseTimes:
    """When each phase of one case ended: a clock read per phase and nothing else,
    so a run without telemetry pays nothing for spans. WHY its clock's two readings kept
    here and the SpanClock made only when asked: a frozen dataclass made for every case
    was a sizeable part of what a fast agent's case costs."""

    __slots__ = ("_started_ns", "_monotonic_ns", "ends")

    def __init__(self) -> None:
        self._started_ns, self._monotonic_ns = time.time_ns(), time.perf_counter_ns()
        self.ends: dict[str, int] = {}

    @property
    def clock(self) -> SpanClock:
        """The case's clock, anchored where it started."""
        return SpanClock(self._started_ns, self._monotonic_ns)

    def mark(self, phase: str) -> None:
        """``phase`` ("agent", "checks", "judge") ended now."""
        self.ends[phase] = self._started_ns + time.perf_counter_ns() - self._monotonic_ns
