"""The JSON results file: the manifest, every case with its reply and trace,
and the run's component metrics under ``metrics`` when given (readers that
only know ``manifest`` and ``results`` keep working)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from tracegrade.results import Run


def write(run: Run, path: Path, metrics: Mapping[str, Any] | None = None) -> Path:
    data = run.to_json() if metrics is None else {**run.to_json(), "metrics": dict(metrics)}
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    partial.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    partial.replace(path)  # a reader never sees half a file
    return path


def read(path: Path) -> Run:
    return Run.from_json(json.loads(Path(path).read_text(encoding="utf-8")))
