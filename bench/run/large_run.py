"""A large checks-only run: does memory stay flat and speed constant with the number of cases?

    python bench/run/large_run.py [--sizes 1000,10000,100000] [--concurrency 32] [--target sync|async]

For each size it writes N cases to a JSONL file (five question templates, each
case with an expected tool and argument, so every check runs) and runs
``tracegrade run CASES --target large_run:trivial_target --checks-only --quiet``
in a fresh process with its own SQLite run store and output folder, as a user
would. The target answers at once, in-process, with the reply the case
expects: what is measured is tracegrade alone (dataset load, the runner, the
checks, the redaction and durable write of every case to the store, the
reports and the results JSON, JUnit and Markdown files).

Per size it prints the wall time of the run command, cases per second, the
CPU time per case (user + system: the figure a busy machine does not inflate) of the
run's process with its store writer, and of each alone (``run_cpu_ms_per_case``, what
bounds a run on two cores, and ``writer_cpu_ms_per_case``), and the peak RSS
(``ru_maxrss``), as one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tracegrade.core.trace import Reply, ToolCall

BENCH = Path(__file__).resolve().parent
TEMPLATES = (
    ("Where is my order ORD-{o}? (ticket {n})", "getOrderStatus"),
    ("When will ORD-{o} be delivered? (ticket {n})", "getDeliveryDate"),
    ("How is the refund for ORD-{o} going? (ticket {n})", "getRefundStatus"),
    ("Can I still return ORD-{o}? (ticket {n})", "getOrderStatus"),
    ("Please refund ORD-{o}, it broke. (ticket {n})", "createRefundDraft"),
)


def write_cases(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            question, tool = TEMPLATES[i % len(TEMPLATES)]
            order = f"ORD-{101 + i % 17}"
            case = {"id": f"case-{i:06d}", "question": question.format(o=101 + i % 17, n=i),
                    "expectedTool": tool, "expectedToolArgument": order,
                    "answerMustInclude": [order], "category": tool, "tags": ["large"]}
            f.write(json.dumps(case) + "\n")


def trivial_target(case) -> Reply:
    """The reply the case expects, at once: the target costs nothing."""
    call = ToolCall(name=case.expected_tool, arguments={"orderId": case.expected_tool_argument},
                    argument=case.expected_tool_argument, result=f"Order {case.expected_tool_argument} is SHIPPED.",
                    status="needs_approval" if case.expected_tool == "createRefundDraft" else "ok")
    return Reply(answer=f"Your order {case.expected_tool_argument} is on its way.", tool_calls=(call,),
                 model="trivial")


async def async_trivial_target(case) -> Reply:
    """The same reply from an ``async def`` target: no worker thread per case."""
    return trivial_target(case)


def run_one(n: int, concurrency: int, folder: Path, kind: str = "sync") -> dict:
    cases = folder / f"cases-{n}.jsonl"
    write_cases(cases, n)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(BENCH), os.environ.get("PYTHONPATH", "")]),
           "TRACEGRADE_DB": f"sqlite:///{folder / f'runs-{n}.db'}"}
    command = [sys.executable, "-m", "tracegrade.cli", "run", str(cases), "--target", f"large_run:{TARGETS[kind]}",
               "--checks-only", "--quiet", "--concurrency", str(concurrency), "--out", str(folder / f"out-{n}")]
    log = folder / f"stderr-{n}.txt"
    started = time.perf_counter()
    with log.open("w") as err:
        child = subprocess.Popen(command, env=env, cwd=folder, stdout=subprocess.DEVNULL, stderr=err)
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # ended, not yet reaped: its /proc entry stays
        own, writer = _cpu_split(child.pid)
        _, status, usage = os.wait4(child.pid, 0)  # peak RSS: this child's (or its writer's, if higher)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"run of {n} cases failed ({code}): {log.read_text()[-2000:]}")
    results = next((folder / f"out-{n}").glob("*/results.json"))  # written, and counted in the store
    with sqlite3.connect(folder / f"runs-{n}.db") as db:
        # WHY not results.json read back here: this process's peak RSS would be the next run's
        # (a child started by vfork and exec inherits its parent's high-water mark in ru_maxrss)
        stored = db.execute("SELECT COUNT(*) FROM case_results").fetchone()[0]
    cpu = usage.ru_utime + usage.ru_stime
    return {"cases": n, "target": kind, "stored": stored, "results_json_mb": round(results.stat().st_size / 2**20, 1), "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "cases_per_s": round(n / wall, 1), "cpu_ms_per_case": round(1000 * cpu / n, 3),
            "run_cpu_ms_per_case": round(1000 * own / n, 3), "writer_cpu_ms_per_case": round(1000 * writer / n, 3),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "exit": code}


def _cpu_split(pid: int) -> tuple[float, float]:
    """CPU seconds (user + system) of the ended process ``pid`` itself, and of the children it
    waited for (the store's writer process): ``cpu_ms_per_case`` is both, and the run process's
    own is what bounds a run on two cores."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    utime, stime, cutime, cstime = (int(v) / tick for v in fields[11:15])
    return utime + stime, cutime + cstime


TARGETS = {"sync": "trivial_target", "async": "async_trivial_target"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--target", choices=sorted(TARGETS), default="sync",
                        help="a plain def target (run on worker threads) or an async def one")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tracegrade-large-") as tmp:
        for n in sorted(int(s) for s in args.sizes.split(",")):
            print(json.dumps(run_one(n, args.concurrency, Path(tmp), args.target)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
