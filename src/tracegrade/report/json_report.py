"""The JSON results file: the manifest, every case with its reply and trace,
and the run's component metrics under ``metrics`` when given (readers that
only know ``manifest`` and ``results`` keep working)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from tracegrade.results import Run


def write(run: Run, path: Path, metrics: Mapping[str, Any] | None = None) -> Path:
    """The same bytes as ``json.dumps(data, indent=2)``, written one case at a time.

    WHY streamed: the whole run as one dict and one string was the peak of a
    10,000-case run's memory (about 220 MB on top of the run itself)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    with partial.open("w", encoding="utf-8") as out:
        out.write('{\n  "manifest": ' + _nested(run.manifest.to_json(), 1) + ',\n  "results": ')
        if not run.results:
            out.write("[]")
        for index, result in enumerate(run.results):
            out.write(("[" if index == 0 else ",") + "\n    " + _nested(result.to_json(), 2))
        if run.results:
            out.write("\n  ]")
        if metrics is not None:
            out.write(',\n  "metrics": ' + _nested(dict(metrics), 1))
        out.write("\n}\n")
    partial.replace(path)  # a reader never sees half a file
    return path


def _nested(value: Any, depth: int) -> str:
    """``json.dumps(value, indent=2)`` as it reads ``depth`` levels deep; a raw
    newline only ever separates lines (inside strings JSON escapes it)."""
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + "  " * depth)


def read(path: Path) -> Run:
    return Run.from_json(json.loads(Path(path).read_text(encoding="utf-8")))
