"""How long `tracegrade view` takes to serve the pages of a large run.

    python bench/serve/view_pages.py [--cases 10000] [--repeat 5]

Records one checks-only run of ``--cases`` cases into a fresh SQLite store
the way a user would (``tracegrade run`` with bench/run/large_run.py's cases and
``traced_target``: its reply plus four steps, ~2 KB of context, and a wrong
argument in every seventh case), starts ``tracegrade view`` on it in its own process, and times each
page from the request to the last byte of the answer over a real socket
(``http.client``): the landing page, the run's first page (first: the case
index is built; then: from the cache), a far page, a filter, a case page.
Prints one JSON line per page: the first time and the median of ``--repeat``
more. Note the machine's load (``uptime``) with the numbers.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

BENCH = Path(__file__).resolve().parent
RUN = BENCH.parent / "run"  # large_run.py: the cases and their target
sys.path.insert(0, str(RUN))

from large_run import trivial_target, write_cases  # noqa: E402

CONTEXT = "SOURCE: return-policy.md\n" + "Products can be returned within 30 days of delivery. " * 40  # ~2 KB


def traced_target(case):
    """large_run's reply with a trace a page has to lay out: four steps, ~2 KB of
    context, and the wrong order id in every seventh case (a failed check to filter on)."""
    from tracegrade.core.trace import Step, Usage

    reply = trivial_target(case)
    if int(case.id.rsplit("-", 1)[1]) % 7 == 0:
        call = reply.tool_calls[0].model_copy(update={"arguments": {"orderId": "ORD-999"}, "argument": "ORD-999"})
        reply = reply.model_copy(update={"tool_calls": (call,)})
    steps = (Step(kind="retrieval", name="policies", duration_ms=14),
             Step(kind="model", name="round 1", start_ms=14, duration_ms=900, input_tokens=700, output_tokens=20),
             Step(kind="tool", name=case.expected_tool, start_ms=914, duration_ms=35),
             Step(kind="model", name="round 2", start_ms=949, duration_ms=650, input_tokens=760, output_tokens=40))
    return reply.model_copy(update={"steps": steps, "context": CONTEXT, "retrieved_sources": ("return-policy.md",),
                                    "usage": Usage(input_tokens=1460, output_tokens=60)})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(port: int, path: str, timeout: float = 120) -> tuple[float, int, int]:
    """Seconds to the last byte, the status and the body's size, on a fresh connection."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    start = time.perf_counter()
    connection.request("GET", path, headers={"Host": "localhost"})
    response = connection.getresponse()
    body = response.read()
    seconds = time.perf_counter() - start
    connection.close()
    return seconds, response.status, len(body)


def record_run(folder: Path, cases: int) -> tuple[str, str]:
    data = folder / "cases.jsonl"
    write_cases(data, cases)
    db = f"sqlite:///{folder / 'runs.db'}"
    done = subprocess.run([sys.executable, "-m", "tracegrade.cli", "run", str(data), "--target",
                           "view_pages:traced_target", "--checks-only", "--quiet", "--db", db, "--out", str(folder / "out")],
                          cwd=folder, env=child_env(), capture_output=True, timeout=1800)
    if done.returncode not in (0, 1):  # 1: some case failed, as every seventh does here
        raise SystemExit(f"tracegrade run failed: {done.stderr[-2000:]}")
    from tracegrade.store.runstore import open_store

    with open_store(db) as store:
        return db, store.runs(limit=1)[0].run_id


def child_env() -> dict[str, str]:
    """This process's import path (absolute: the children run in another folder) plus bench/serve/ and bench/run/."""
    paths = [str(BENCH), str(RUN), *(str(Path(p).resolve()) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def wait_up(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"tracegrade view exited: {process.stderr.read() if process.stderr else ''}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("tracegrade view did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--compare", action="store_true",
                        help="record a second run and time the page comparing the two (repeats: 1)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        db, run_id = record_run(folder, args.cases)
        print(json.dumps({"recorded": args.cases, "seconds": round(time.perf_counter() - started, 1)}), flush=True)
        baseline = record_run(folder, args.cases)[1] if args.compare else None
        port = free_port()
        view = subprocess.Popen([sys.executable, "-m", "tracegrade.cli", "view", "--db", db, "--port", str(port)],
                                cwd=folder, env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            wait_up(port, view)
            run = f"/runs/{quote(run_id, safe='')}"
            pages = [("landing", "/"), ("run, first page", run), ("run, page 100", run + "?page=100"),
                     ("run, failed only", run + "?status=failed"),
                     ("run, by check code", run + "?code=wrong_argument"),
                     ("case", f"{run}/cases/case-005000")]
            if baseline:  # recorded after: the newest run, compared with the first as candidate
                pages.append(("compare", f"/compare?baseline={quote(baseline)}&candidate={quote(run_id)}"))
            for name, path in pages:
                first, status, size = fetch(port, path)
                again = [fetch(port, path)[0] for _ in range(1 if name == "compare" else args.repeat)]
                print(json.dumps({"page": name, "path": path.replace(run_id, "RUN").replace(baseline or run_id, "RUN2"), "status": status, "bytes": size,
                                  "first_s": round(first, 3), "median_s": round(statistics.median(again), 3)}),
                      flush=True)
        finally:
            view.terminate()
            view.wait(timeout=30)


if __name__ == "__main__":
    main()
