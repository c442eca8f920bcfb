"""A `tracegrade calibrate --json` result as the shipped calibration (src/tracegrade/defaults/calibration-local.json).

    python bench/judge/shipped_calibration.py RESULT.json "measured DATE (what changed)" bench/results/FILE.txt

Keeps every field a run reads (per metric: mayGate, whyNot, thresholds) and what the
docs quote, drops the per-item scores (``items``: the labelled answers' own values,
which the package does not need), and names where it was measured.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

SHIPPED = Path(__file__).resolve().parents[2] / "src" / "tracegrade" / "defaults" / "calibration-local.json"


def main(result_path: str, what: str, source: str) -> None:
    result = json.loads(Path(result_path).read_text(encoding="utf-8"))
    result.pop("items", None)
    created = datetime.fromtimestamp(Path(result_path).stat().st_mtime, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    shipped = {"calibrationId": f"shipped with tracegrade, {what}", "createdAt": created,
               "source": f"{source} (tracegrade calibrate on the shipped rubric and human labels)", **result}
    SHIPPED.write_text(json.dumps(shipped, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {SHIPPED}: rubric {result['rubricHash']}, labels {result['labelsVersion']}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
