"""A report written a case at a time, as text or into a file: how the JUnit XML and
the Markdown summary are both produced.

A report's ``Writer(manifest, summary, out)`` takes each case with ``add`` and
ends with ``finish``; ``summary`` (the run's RunTally) gives it every count up
front, so the run's results are read once, in order.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Callable, Protocol, TextIO

from tracegrade.core.results import CaseResult, Manifest, Run
from tracegrade.stats.tally import RunTally, tally


class CaseWriter(Protocol):
    """A report being written: a case at a time, then the end."""

    def add(self, result: CaseResult) -> None: ...
    def finish(self) -> object: ...  # what it returns (a path, say) is its own business


Writer = Callable[[Manifest, RunTally, TextIO], CaseWriter]  # a report's Writer class


def to_text(writer: Writer, run: Run, summary: RunTally | None = None) -> str:
    out = io.StringIO()
    feed(writer, run, out, summary)
    return out.getvalue()


def to_file(writer: Writer, run: Run, path: Path, summary: RunTally | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        feed(writer, run, out, summary)
    return path


def feed(writer: Writer, run: Run, out: TextIO, summary: RunTally | None = None) -> None:
    """Every result of ``run`` through one ``writer`` into ``out``."""
    written = writer(run.manifest, summary or tally(run.results), out)
    for result in run.results:
        written.add(result)
    written.finish()
