"""A report written a case at a time, its head last: how ``results.json``, the
JUnit XML and the Markdown summary are produced.

A report's ``Writer(manifest)`` takes each case with ``add`` (its row is kept
aside in a temporary file) and writes the whole report with
``finish(ending, out)``: the head, which counts the cases (the run's RunTally
and final manifest, in ``Ending``), then the rows, then the tail.

WHY the head last: the counts are known only once every result was read, and
a stored result costs a decode on every read; so the rows of every report,
the run's totals and its metrics all come from one read of each result.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol, TextIO

from tracegrade.core.results import CaseResult, Manifest, Run
from tracegrade.stats.tally import RunTally


@dataclass(frozen=True)
class Ending:
    """What a report's head and tail say, known once every result was read."""

    manifest: Manifest  # the final one: its totals and end time
    summary: RunTally
    metrics: Mapping[str, Any] | None = None  # the run's component metrics as JSON, when the report carries them


class CaseWriter(Protocol):
    """A report being written: a case at a time, then the whole of it."""

    def add(self, result: CaseResult) -> None: ...
    def finish(self, ending: Ending, out: TextIO) -> None: ...


Writer = Callable[[Manifest], CaseWriter]  # a report's Writer class


class Rows:
    """A report's rows, kept in a temporary file (in memory while small) until its head is written."""

    # WHY 1 MiB: three reports' rows held to it in memory were the last thing a large run's peak
    # grew with (at 4 MiB: 107 MB at 10,000 checks-only cases, 101 MB at 1 MiB; `git show 1b5ab6e:bench/README.md`)
    SPILL_BYTES = 1024 * 1024

    # Rows passed to the file at once. WHY: the spooled file asks its text stream for its position
    # after every write (to know when to spill), most of what a row cost a run of fast cases.
    BATCH = 64

    def __init__(self) -> None:
        self._file = tempfile.SpooledTemporaryFile(max_size=self.SPILL_BYTES, mode="w+", encoding="utf-8")
        self._pending: list[str] = []
        self.count = 0

    def write(self, row: str) -> None:
        self._pending.append(row)
        self.count += 1
        if len(self._pending) >= self.BATCH:
            self._file.write("".join(self._pending))
            self._pending.clear()

    def copy_to(self, out: TextIO) -> None:
        """The rows into ``out``, once: the temporary file is gone after."""
        self._file.write("".join(self._pending))
        self._pending.clear()
        with self._file as rows:
            rows.seek(0)
            shutil.copyfileobj(rows, out)


def to_text(writer: Writer, run: Run, summary: RunTally | None = None) -> str:
    out = io.StringIO()
    feed(writer, run, out, summary)
    return out.getvalue()


def to_file(writer: Writer, run: Run, path: Path, summary: RunTally | None = None) -> Path:
    report = writer(run.manifest)
    summary = _read(run.results, [report], summary)
    return write_file(report, Ending(run.manifest, summary), path)


def feed(writer: Writer, run: Run, out: TextIO, summary: RunTally | None = None) -> None:
    """Every result of ``run`` through one ``writer`` into ``out``, in one read."""
    report = writer(run.manifest)
    report.finish(Ending(run.manifest, _read(run.results, [report], summary)), out)


def write_file(report: CaseWriter, ending: Ending, path: Path) -> Path:
    """The finished report at ``path``, whole or not at all: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    try:
        with partial.open("w", encoding="utf-8") as out:
            report.finish(ending, out)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path


def _read(results: Iterable[CaseResult], reports: list[CaseWriter], summary: RunTally | None) -> RunTally:
    """Each result into every report, tallied on the way unless ``summary`` is given."""
    tallying = summary is None
    tally = RunTally() if summary is None else summary
    for result in results:
        if tallying:
            tally.add(result)
        for report in reports:
            report.add(result)
    return tally
