"""CPU a result of the run's read as cases commit: the metrics and the tally, fed one result at a time.

    python bench/run/metrics_read.py [--results 20000] [--gc]

Builds N results of ``large_run.py``'s cases (each case decoded and its bench reply made
before the clock starts, with its checks, as a checks-only run hands them over) and times
``MetricsReader.add`` with a ``RunTally`` as its reader, then ``finish``: the process's CPU
time a result. The garbage collector is off unless ``--gc`` (the results are all held here,
which a run does not do, so its collections would be this script's, not the read's).
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from pathlib import Path

from large_run import trivial_target, write_cases
from tracegrade.core.results import CaseResult
from tracegrade.checks.builtin import run_checks
from tracegrade.case.dataset import load_dataset
from tracegrade.metrics import MetricsReader
from tracegrade.stats.tally import RunTally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=int, default=20000)
    parser.add_argument("--gc", action="store_true", help="leave the garbage collector on")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cases.jsonl"
        write_cases(path, args.results)
        cases = list(load_dataset(path).cases)
    results = []
    for case in cases:
        reply = trivial_target(case)
        results.append(CaseResult(case.id, "pass", question=case.question, reply=reply,
                                  checks=run_checks(case, reply), category=case.category))
    if not args.gc:
        gc.disable()
    started = time.process_time()
    read = MetricsReader(cases, readers=(RunTally(repeated=False),))
    for result, case in zip(results, cases):
        read.add(result, case)
    read.finish()
    spent = time.process_time() - started
    print(f"{args.results} results: {1e6 * spent / args.results:.1f} us a result")


if __name__ == "__main__":
    main()
