"""The files of a run: ``results.json``, ``junit.xml`` and ``summary.md`` under ``folder/RUN_ID``,
each fed every result of the run's one read, then written whole or not at all.

    >>> # writers = output_writers(manifest); feed writers.per_result() each result;
    >>> # finish_outputs(writers, run, summary, metrics, folder)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Sequence

from tracegrade.case.schema import GoldenCase
from tracegrade.core.results import Manifest, Run
from tracegrade.outputs import json_report
from tracegrade.outputs.streamed import CaseWriter

if TYPE_CHECKING:
    from tracegrade.metrics import RunMetrics
    from tracegrade.stats.tally import RunTally

OUTPUT_FILES = ("results.json", "junit.xml", "summary.md")


def write_outputs(run: Run, folder: Path, cases: Sequence[GoldenCase] = ()) -> list[Path]:
    """``results.json``, ``junit.xml`` and ``summary.md`` of ``run`` under ``folder/RUN_ID``,
    from one read of its results (which also gives the metrics in ``results.json``)."""
    from tracegrade.metrics import run_metrics
    from tracegrade.stats.tally import RunTally

    writers, summary = output_writers(run.manifest), RunTally()
    metrics = run_metrics(run.results, cases, readers=(summary, *writers.per_result()))
    return list(finish_outputs(writers, run, summary, metrics, Path(folder)))


class OutputWriters(NamedTuple):
    """The writers of a run's files, in OUTPUT_FILES order."""

    results: json_report.Writer  # fed by finish_outputs, from the stored rows
    junit: CaseWriter
    summary: CaseWriter

    def per_result(self) -> tuple[CaseWriter, ...]:
        """The writers to feed every result of the run's one read."""
        return self.junit, self.summary


def output_writers(manifest: Manifest) -> OutputWriters:
    from tracegrade.outputs import junit, markdown  # WHY here: a run's first case does not wait for them

    return OutputWriters(json_report.Writer(manifest), junit.Writer(manifest), markdown.Writer(manifest))


def finish_outputs(writers: OutputWriters, run: Run, summary: RunTally, metrics: RunMetrics,
                   folder: Path) -> tuple[Path, ...]:
    """The files of ``writers`` under ``folder/RUN_ID``, each whole or not at all: results.json
    with the cases of ``run`` as stored, the others as fed."""
    from tracegrade.outputs.streamed import Ending, write_file

    json_report.feed(writers.results, run.results)
    ending = Ending(run.manifest, summary, metrics.to_json())
    base = folder / run.manifest.run_id
    return tuple(write_file(writer, ending, base / name) for writer, name in zip(writers, OUTPUT_FILES))
