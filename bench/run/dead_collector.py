"""A golden run with the OTLP collector down, against the same run with telemetry off.

    python bench/run/dead_collector.py [--latency-ms 1000] [--reps 3] [--concurrency 4]

Runs `tracegrade run evals/golden-dataset.json` (ShopNest's agent on
``bench/run/mock_openai.py``, one judge call per case, the target of
``throughput.py``) in a fresh process per run, the modes interleaved:

- ``off``: ``TRACEGRADE_SPANS_DB=off`` and no collector: no span is built (an eval run's default);
- ``store``: spans into a local span store only (``TRACEGRADE_SPANS_DB`` names it);
- ``dead``: the store, and ``OTEL_EXPORTER_OTLP_ENDPOINT`` on a loopback port
  nothing listens on.

Per run: the wall time of the run command (after the imports), its CPU time,
and the lines it printed about span export (how often it said export is
failing, and the OpenTelemetry exporter's own "Transient error" retry lines).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from throughput import AGENTS, BENCH, MockServer

GOLDEN = BENCH.parents[1] / "evals" / "golden-dataset.json"
MODES = ("off", "store", "dead")


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_once(mode: str, mock: MockServer, scratch: Path, concurrency: int) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(BENCH), os.environ.get("PYTHONPATH", "")]),
           "TRACEGRADE_AGENT_MODEL": "openai:mock-agent", "TRACEGRADE_AGENT_BASE_URL": mock.base_url,
           "TRACEGRADE_JUDGE_BASE_URL": mock.base_url, "OPENAI_API_KEY": "not-needed",
           "TRACEGRADE_SPANS_DB": "off" if mode == "off" else str(scratch / "spans.db")}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    env.pop("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", None)
    if mode == "dead":
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{closed_port()}"
    argv = ["run", str(GOLDEN), "--target", AGENTS["shopnest"], "--judge-model", "openai:mock-judge", "--concurrency",
            str(concurrency), "--quiet", "--out", str(scratch / "runs"), "--db", f"sqlite:///{scratch / 'runs.db'}"]
    done = subprocess.run([sys.executable, str(BENCH / "throughput.py"), "--child", json.dumps(argv)],
                          env=env, capture_output=True, text=True, check=True)
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    return {"mode": mode, "wall_s": round(measured["wall_s"], 3), "cpu_s": round(measured["cpu_s"], 3),
            "said_failing": done.stderr.count("is failing"), "transient_lines": done.stderr.count("Transient error")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=1000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--modes", default=",".join(MODES), help="which of off,store,dead to run")
    args = parser.parse_args(argv)
    modes = args.modes.split(",")
    rows = []
    with MockServer(args.latency_ms) as mock:
        for _ in range(args.reps):
            for mode in modes:  # interleaved: a change in the machine's load hits every mode alike
                with tempfile.TemporaryDirectory(prefix="tracegrade-bench-") as scratch:
                    rows.append(run_once(mode, mock, Path(scratch), args.concurrency))
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print("| mode | runs | wall s (median) | wall s (each) | CPU s (median) | said 'failing' | 'Transient error' lines |")
    print("|---|---:|---:|---|---:|---:|---:|")
    for mode in modes:
        mine = [r for r in rows if r["mode"] == mode]
        walls = [r["wall_s"] for r in mine]
        print(f"| {mode} | {len(mine)} | {statistics.median(walls):.2f} | {', '.join(f'{w:.2f}' for w in walls)} | "
              f"{statistics.median(r['cpu_s'] for r in mine):.2f} | {max(r['said_failing'] for r in mine)} | "
              f"{max(r['transient_lines'] for r in mine)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
