"""The JSON results file: the manifest, every case with its reply and trace,
and the run's component metrics under ``metrics`` when given (readers that
only know ``manifest`` and ``results`` keep working)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence, TextIO

from tracegrade.core import jsontext
from tracegrade.core.results import CaseResult, Manifest, Run
from tracegrade.outputs import streamed
from tracegrade.stats.tally import RunTally
from tracegrade.store.compact import CompactResults


def write(run: Run, path: Path, metrics: Mapping[str, Any] | None = None) -> Path:
    """The manifest and metrics indented, then one case per line, written a case at a time."""
    writer = Writer(run.manifest)
    feed(writer, run.results)
    return streamed.write_file(writer, streamed.Ending(run.manifest, RunTally(), metrics), path)


class Writer:
    """``results.json`` fed one case at a time (``add``), written whole by ``finish``:
    the final manifest, the cases, then the metrics.

    WHY streamed: the whole run as one dict and one string was the peak of a
    10,000-case run's memory (about 220 MB on top of the run itself); and a
    writer fed by its caller lets one read of each stored result feed every
    output file and every number (``run.evaluate``).
    WHY a case per line: ``indent`` sends json to its pure-Python encoder, which
    cost about 1 ms per case; a line per case is the C encoder's, and still
    one JSON document (and easy to grep and diff)."""

    def __init__(self, manifest: Manifest) -> None:
        self._rows = streamed.Rows()

    def add(self, result: CaseResult) -> None:
        self.add_stored(jsontext.dump(result.to_json()))

    def add_stored(self, text: str) -> None:
        """A case as the run store holds it: its JSON text (one line)."""
        self._rows.write(("," if self._rows.count else "") + "\n    " + text)

    def finish(self, ending: streamed.Ending, out: TextIO) -> None:
        out.write('{\n  "manifest": ' + _indented(ending.manifest.to_json()) + ',\n  "results": [')
        count = self._rows.count
        self._rows.copy_to(out)
        out.write("\n  ]" if count else "]")
        if ending.metrics is not None:
            out.write(',\n  "metrics": ' + _indented(dict(ending.metrics)))
        out.write("\n}\n")


def feed(writer: Writer, results: Sequence[CaseResult]) -> None:
    """Every case of ``results`` into ``writer``, in order: as stored, when ``results``
    came from the run store (WHY: encoding each decoded case again was a sixth of
    the end of a large run), else encoded."""
    if isinstance(results, CompactResults):
        for text in results.texts():
            writer.add_stored(text.decode())
    else:
        for result in results:
            writer.add(result)


def _indented(value: Any) -> str:
    """``json.dumps(value, indent=2)`` one level deep; a raw newline only ever
    separates lines (inside strings JSON escapes it)."""
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")


def read(path: Path) -> Run:
    return Run.read(path)
