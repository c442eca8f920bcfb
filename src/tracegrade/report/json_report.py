"""The JSON results file: the manifest, every case with its reply and trace,
and the run's component metrics under ``metrics`` when given (readers that
only know ``manifest`` and ``results`` keep working)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from tracegrade.core.results import Run


def write(run: Run, path: Path, metrics: Mapping[str, Any] | None = None) -> Path:
    """The manifest and metrics indented, then one case per line, written a case at a time.

    WHY streamed: the whole run as one dict and one string was the peak of a
    10,000-case run's memory (about 220 MB on top of the run itself).
    WHY a case per line: ``indent`` sends json to its pure-Python encoder, which
    cost about 1 ms per case; a line per case is the C encoder's, and still
    one JSON document (and easy to grep and diff)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    with partial.open("w", encoding="utf-8") as out:
        out.write('{\n  "manifest": ' + _indented(run.manifest.to_json()) + ',\n  "results": [')
        for index, result in enumerate(run.results):
            out.write(("" if index == 0 else ",") + "\n    " + json.dumps(result.to_json(), ensure_ascii=False))
        out.write("\n  ]" if run.results else "]")
        if metrics is not None:
            out.write(',\n  "metrics": ' + _indented(dict(metrics)))
        out.write("\n}\n")
    partial.replace(path)  # a reader never sees half a file
    return path


def _indented(value: Any) -> str:
    """``json.dumps(value, indent=2)`` one level deep; a raw newline only ever
    separates lines (inside strings JSON escapes it)."""
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")


def read(path: Path) -> Run:
    return Run.read(path)
