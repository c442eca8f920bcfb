"""Progress of long work: a case-by-case log for runs, a bar for calibration."""

from __future__ import annotations

import contextlib
import io  # noqa: F401  (the doctest's output)
import sys
import time
from typing import Any, Callable, Iterator, TextIO


@contextlib.contextmanager
def progress_bar(total: int, label: str) -> Iterator[Callable[[], None]]:
    """A bar with ETA on stderr, silent when stderr is not a terminal."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
    from rich.console import Console

    console = Console(file=sys.stderr)
    columns = [TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn()]
    with Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as progress:
        task = progress.add_task(label, total=total)
        yield lambda: progress.advance(task)


class CaseProgress:
    """Prints each case's block the moment it finishes, with a running count and
    an ETA, as plain lines flushed at once: the same in a terminal, a CI log or
    ``| tee``.

        >>> clock = iter([0.0, 0.0, 10.0, 20.0]).__next__
        >>> progress = CaseProgress(4, render=lambda r: f"case {r}", out=io.StringIO(), clock=clock)
        >>> progress.tally()
        '[0/4] 0s elapsed, ETA --'
        >>> progress("a"); progress.tally()
        '[1/4] 20s elapsed, ETA 1m00s'

    The ETA is the time per finished case so far times the cases left: with
    cases in flight at once, it is a throughput, not one case's latency.
    """

    def __init__(self, total: int, render: Callable[[Any], str], out: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.done = total, 0
        self._render, self._out, self._clock = render, out or sys.stdout, clock
        self._started = clock()

    def __call__(self, result: Any) -> None:
        self.done += 1
        print(self._render(result), file=self._out)
        print(f"  progress   {self.tally()}", file=self._out, flush=True)

    def tally(self) -> str:
        elapsed = self._clock() - self._started
        left = self.total - self.done
        eta = _duration(elapsed / self.done * left) if self.done else "--"
        return f"[{self.done}/{self.total}] {_duration(elapsed)} elapsed, ETA {eta}"


def _duration(seconds: float) -> str:
    """``59s``, ``1m05s``, ``1h02m``: durations to the second, never ``0.1999999``."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
