"""The JSON results file: the manifest and every case with its reply and trace."""

from __future__ import annotations

import json
from pathlib import Path

from tracegrade.results import Run


def write(run: Run, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    partial.write_text(json.dumps(run.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    partial.replace(path)  # a reader never sees half a file
    return path


def read(path: Path) -> Run:
    return Run.from_json(json.loads(Path(path).read_text(encoding="utf-8")))
