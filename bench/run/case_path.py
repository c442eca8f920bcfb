"""What one case costs the runner alone: the agent call, checks, deadline, capture scope, verdict.

    python bench/run/case_path.py [--cases 20000] [--target async|sync]
    python bench/run/case_path.py --instructions [--target async|sync]

Runs ``run_cases`` (32 workers, checks only, no store, no metrics) over ``large_run.py``'s
cases with its target that answers at once, twice in one process, and prints the CPU time a
case of the second run. The wall-clock timer cannot tell apart changes of a few microseconds
a case on a shared machine; ``--instructions`` can: it runs this script under valgrind's
callgrind at 500 and at 1,500 cases (``PYTHONHASHSEED=0``) and prints the difference in
instructions, divided by 1,000, for each run (a case is run twice: both runs count).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from large_run import write_cases
from tracegrade.case.dataset import load_dataset
from tracegrade.agent.targets import callable_target
from tracegrade.run.runner import RunSettings, run_cases

TARGETS = {"async": "large_run:async_trivial_target", "sync": "large_run:trivial_target"}


def cpu_a_case(n: int, kind: str) -> float:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cases.jsonl"
        write_cases(path, n)
        cases = load_dataset(path).cases
        target = callable_target(TARGETS[kind])
        settings = RunSettings(concurrency=32, checks_only=True)

        async def run() -> None:
            await run_cases(cases, target, None, settings, on_result=lambda result, position: None, keep=False)

        asyncio.run(run())  # the first run pays the imports and the first calls
        started = time.process_time()
        asyncio.run(run())
        return (time.process_time() - started) / n


def instructions(n: int, kind: str) -> int:
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__,
               "--cases", str(n), "--target", kind]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"},
                          check=True)
    return int(re.search(r"Collected : (\d+)", done.stderr).group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=20000)
    parser.add_argument("--target", choices=sorted(TARGETS), default="async")
    parser.add_argument("--instructions", action="store_true", help="instructions a case, under callgrind")
    args = parser.parse_args()
    if args.instructions:
        per_case = (instructions(1500, args.target) - instructions(500, args.target)) // 1000 // 2
        print(f"{args.target}: {per_case} instructions a case")
    else:
        print(f"{args.target}: {1e6 * cpu_a_case(args.cases, args.target):.1f} us of CPU a case")


if __name__ == "__main__":
    main()
