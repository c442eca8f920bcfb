"""How long `tracegrade view` takes to serve the metrics page of a large run,
once, again, and to four requests at once.

    python bench/serve/view_metrics.py [--cases 100000] [--keep DIR] [--only one|four]

Records a checks-only run of ``--cases`` cases into a SQLite store in a
temporary folder (bench/serve/view_pages.py's ``record_run``: ``tracegrade run``
with traced replies, the dataset file beside it, so the page computes every
component metric), or reuses the one recorded in ``--keep DIR``. Then, each
time in a fresh ``tracegrade view`` process over a real socket:

- ``one``: GET /runs/RUN/metrics, then the same again;
- ``four``: four GETs of it sent at once, each on its own connection;
- ``parts`` (in this process, no server): the page's parts one by one, the
  dataset file read, the stored run read, the metrics scored.

Prints one JSON line per request (seconds to the last byte, status) and the
view process's peak RSS (VmHWM). To time whole invocations, record once with
``--keep`` and run the rest under farm-bench; for the code before a change,
put its ``src`` first on PYTHONPATH. Note ``uptime`` with the figures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from view_pages import child_env, fetch, free_port, record_run, wait_up  # noqa: E402


def recorded(folder: Path, cases: int) -> tuple[str, str]:
    """The store and run id in ``folder``, recorded there first when it holds none."""
    marker = folder / "recorded.json"
    if not marker.exists():
        started = time.perf_counter()
        db, run_id = record_run(folder, cases)
        marker.write_text(json.dumps({"db": db, "run": run_id, "cases": cases}))
        print(json.dumps({"recorded": cases, "seconds": round(time.perf_counter() - started, 1)}), flush=True)
    kept = json.loads(marker.read_text())
    return kept["db"], kept["run"]


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def parts(folder: Path, db: str, run_id: str) -> None:
    """Seconds of each part of the page's computation, as the view does them."""
    import os

    from tracegrade.metrics import run_metrics
    from tracegrade.store.runstore import open_store
    from tracegrade.view import metrics_page

    def timed(name: str, part):
        started = time.perf_counter()
        value = part()
        print(json.dumps({"part": name, "seconds": round(time.perf_counter() - started, 1)}), flush=True)
        return value

    os.chdir(folder)  # WHY: the view reads datasets under the folder it serves from
    with open_store(db) as store:
        info = store.info(run_id)
        cases, _ = timed("dataset", lambda: metrics_page.dataset_cases(info))
        run = timed("load_run", lambda: store.load_run(run_id))
        timed("run_metrics", lambda: run_metrics(run.results, cases))


def measure(folder: Path, db: str, run_id: str, mode: str) -> None:
    port = free_port()
    view = subprocess.Popen([sys.executable, "-m", "tracegrade.cli", "view", "--db", db, "--port", str(port)],
                            cwd=folder, env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    path = f"/runs/{quote(run_id, safe='')}/metrics"
    try:
        wait_up(port, view)
        if mode == "one":
            timed = [("first", fetch(port, path, 900)), ("again", fetch(port, path, 900))]
        else:
            with ThreadPoolExecutor(4) as pool:
                timed = [(f"at once #{i + 1}", r) for i, r in enumerate(pool.map(lambda _: fetch(port, path, 900), range(4)))]
        for name, (seconds, status, size) in timed:
            print(json.dumps({"request": name, "status": status, "bytes": size, "seconds": round(seconds, 3)}),
                  flush=True)
        print(json.dumps({"mode": mode, "view_peak_rss_mb": peak_rss_mb(view.pid)}), flush=True)
    finally:
        view.terminate()
        view.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, help="folder to record into once and reuse (default: a temporary one)")
    parser.add_argument("--only", choices=("one", "four", "parts"), help="one measurement (default: one, then four)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = (args.keep or Path(tmp)).resolve()
        folder.mkdir(parents=True, exist_ok=True)
        db, run_id = recorded(folder, args.cases)
        if args.only == "parts":
            parts(folder, db, run_id)
            return
        for mode in [args.only] if args.only else ["one", "four"]:
            measure(folder, db, run_id, mode)


if __name__ == "__main__":
    main()
