"""Prints `--only ID` flags for a stratified sample of evals/benchmark.json.

    tracegrade run evals/benchmark.json $(python bench/run/sample_cases.py)

Per split: the smoke cases, then evenly spaced cases (every k-th by id) until the
split has its quota. Deterministic, so the sample is the same on every machine.
WHY a sample: the judged run with the local models takes about a minute a case
on a loaded 2-core machine; the quotas keep every split represented.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tracegrade.case.dataset import load_dataset

QUOTA = {"nominal": 10, "edge": 6, "unanswerable": 5, "tool-outage": 5, "permission": 4, "prompt-injection": 6}


def sample(path: Path, quota: dict[str, int] = QUOTA) -> list[str]:
    chosen: list[str] = []
    for split, wanted in quota.items():
        cases = sorted((c for c in load_dataset(path).cases if c.split == split), key=lambda c: c.id)
        picked = [c.id for c in cases if "smoke" in c.tags]
        rest = [c.id for c in cases if c.id not in picked]
        need = max(0, wanted - len(picked))
        step = len(rest) / need if need else 0
        picked += [rest[int(i * step)] for i in range(need)]
        chosen += picked
    return chosen


if __name__ == "__main__":
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "evals" / "benchmark.json"
    print(" ".join(f"--only {case_id}" for case_id in sample(path)))
