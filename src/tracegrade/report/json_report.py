"""The JSON results file: the manifest, every case with its reply and trace,
and the run's component metrics under ``metrics`` when given (readers that
only know ``manifest`` and ``results`` keep working)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from tracegrade.core.results import CaseResult, Manifest, Run


def write(run: Run, path: Path, metrics: Mapping[str, Any] | None = None) -> Path:
    """The manifest and metrics indented, then one case per line, written a case at a time."""
    writer = Writer(run.manifest, path, metrics)
    for result in run.results:
        writer.add(result)
    return writer.finish()


class Writer:
    """``results.json`` fed one case at a time (``add``), complete at ``finish``.

    WHY streamed: the whole run as one dict and one string was the peak of a
    10,000-case run's memory (about 220 MB on top of the run itself); and a
    writer fed by its caller lets one read of each stored result feed every
    output file (``run.evaluate.write_outputs``).
    WHY a case per line: ``indent`` sends json to its pure-Python encoder, which
    cost about 1 ms per case; a line per case is the C encoder's, and still
    one JSON document (and easy to grep and diff)."""

    def __init__(self, manifest: Manifest, path: Path, metrics: Mapping[str, Any] | None = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._path, self._partial = path, path.with_suffix(path.suffix + ".partial")
        self._metrics, self._count = metrics, 0
        self._out = self._partial.open("w", encoding="utf-8")
        self._out.write('{\n  "manifest": ' + _indented(manifest.to_json()) + ',\n  "results": [')

    def add(self, result: CaseResult) -> None:
        self._out.write(("," if self._count else "") + "\n    " + json.dumps(result.to_json(), ensure_ascii=False))
        self._count += 1

    def finish(self) -> Path:
        with self._out as out:
            out.write("\n  ]" if self._count else "]")
            if self._metrics is not None:
                out.write(',\n  "metrics": ' + _indented(dict(self._metrics)))
            out.write("\n}\n")
        self._partial.replace(self._path)  # a reader never sees half a file
        return self._path


def _indented(value: Any) -> str:
    """``json.dumps(value, indent=2)`` one level deep; a raw newline only ever
    separates lines (inside strings JSON escapes it)."""
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")


def read(path: Path) -> Run:
    return Run.read(path)
