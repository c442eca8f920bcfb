"""What ``--executor ray`` costs before the first case and after the last one, on one machine.

    python bench/run/ray_startup.py [--repeat 3] [--workers N]

In a fresh process each time, as ``tracegrade run --executor ray`` does it: the
import of ray, ``init_ray`` (a local Ray instance), the actors built from the
recipe the CLI ships for ``bench/run/throughput.py``'s target (checks only) until
each answers, and the exit (actors killed, Ray shut down). Prints each part's
median in seconds and the machine's load (``os.getloadavg``) before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent


def child(workers: int | None) -> dict[str, float]:
    import functools

    marks = [time.perf_counter()]
    import ray  # noqa: F401

    from tracegrade.run.executors import build_parts, init_ray, ray_executor

    marks.append(time.perf_counter())
    init_ray()
    marks.append(time.perf_counter())
    recipe = functools.partial(build_parts, "throughput:shopnest_on_mock", "openai:mock-agent", None, None, None)
    executor = ray_executor(recipe, workers=workers)
    executor.__enter__()
    marks.append(time.perf_counter())
    executor.__exit__(None, None, None)  # kills the actors and shuts Ray down (it started here: init_ray above
    ray.shutdown()                       # is this process's own, so shut it down too)
    marks.append(time.perf_counter())
    names = ("import_s", "init_s", "actors_ready_s", "exit_s")
    return {name: marks[i + 1] - marks[i] for i, name in enumerate(names)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, default=None, help="actors (default: one per CPU)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.workers)))
        return 0
    env = {**os.environ, "BENCH_IN_PROCESS": "1",
           "PYTHONPATH": os.pathsep.join([str(BENCH), os.environ.get("PYTHONPATH", "")])}
    load_before = os.getloadavg()
    rows = []
    for _ in range(args.repeat):
        command = [sys.executable, str(Path(__file__).resolve()), "--child"]
        if args.workers:
            command += ["--workers", str(args.workers)]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), file=sys.stderr)
    medians = {key: round(statistics.median(r[key] for r in rows), 3) for key in rows[0]}
    print(json.dumps({"repeat": args.repeat, **medians, "total_s": round(sum(medians.values()), 3),
                      "load_before": load_before, "load_after": os.getloadavg()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
