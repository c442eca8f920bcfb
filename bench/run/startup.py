"""How fast tracegrade starts: the CLI's help, and process start to the first call of the agent.

    python bench/run/startup.py [--repeat 10]

For each command it runs a fresh process ``--repeat`` times and reports the
median and the fastest wall time; then it runs ``tracegrade run`` on a
one-case dataset whose target writes ``time.time()`` on its first call, and
reports the median of (first call - process start); and the same with the
agent behind HTTP (``--target http://...``: a loopback server here notes the
arrival of its first request), which adds the HTTP client's import and
connection. Checks only: no model. The machine's load is printed beside the
numbers (``os.getloadavg``).
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TARGET = '''
import os, time
from tracegrade import Reply

async def answer(case):
    with open(os.environ["FIRST_CALL_FILE"], "a") as f:
        f.write(f"{time.time()}\\n")
    return Reply(answer="ok")
'''


def timed(command: list[str], repeat: int, env: dict[str, str], cwd: str) -> list[float]:
    walls = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(command, env=env, cwd=cwd, check=True, capture_output=True)
        walls.append(time.perf_counter() - started)
    return walls


def first_call(repeat: int, env: dict[str, str], work: Path) -> list[float]:
    (work / "target_mod.py").write_text(TARGET)
    (work / "one.json").write_text(json.dumps([{"id": "a", "question": "hi?"}]))
    delays = []
    for index in range(repeat):
        marker = work / f"first-{index}.txt"
        run_env = {**env, "FIRST_CALL_FILE": str(marker), "PYTHONPATH": str(work)}
        started = time.time()
        subprocess.run([sys.executable, "-m", "tracegrade.cli", "run", "one.json", "--target", "target_mod:answer",
                        "--checks-only", "--quiet", "--db", f"sqlite:///{work / 'runs.db'}", "--out", str(work / "out")],
                       env=run_env, cwd=work, capture_output=True)
        delays.append(float(marker.read_text().split()[0]) - started)
    return delays


class FirstRequest(http.server.BaseHTTPRequestHandler):
    """Answers every POST with a minimal trace; notes when the first one arrived."""

    arrived: list[float] = []

    def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
        FirstRequest.arrived.append(time.time())
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps({"answer": "ok"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def first_http_request(repeat: int, env: dict[str, str], work: Path) -> list[float]:
    (work / "one.json").write_text(json.dumps([{"id": "a", "question": "hi?"}]))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FirstRequest)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/chat"
    delays = []
    try:
        for _ in range(repeat):
            FirstRequest.arrived.clear()
            started = time.time()
            subprocess.run([sys.executable, "-m", "tracegrade.cli", "run", "one.json", "--target", url,
                            "--checks-only", "--quiet", "--db", f"sqlite:///{work / 'runs.db'}",
                            "--out", str(work / "out")], env=env, cwd=work, capture_output=True)
            delays.append(FirstRequest.arrived[0] - started)
    finally:
        server.shutdown()
    return delays


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        print(f"load average before: {os.getloadavg()[0]:.2f}  python {sys.version.split()[0]}  cpus {os.cpu_count()}  "
              f"bytecode cache written: {not sys.flags.dont_write_bytecode}")
        for label, command in [("tracegrade --help", ["--help"]), ("tracegrade run --help", ["run", "--help"])]:
            walls = timed([sys.executable, "-m", "tracegrade.cli", *command], args.repeat, env, folder)
            print(f"{label:<24} median {statistics.median(walls):.3f} s  fastest {min(walls):.3f} s  (n={args.repeat})")
        delays = first_call(args.repeat, env, work)
        print(f"{'start -> first target call':<24} median {statistics.median(delays):.3f} s  fastest {min(delays):.3f} s  "
              f"(n={args.repeat}, `tracegrade run --checks-only`)")
        delays = first_http_request(args.repeat, env, work)
        print(f"{'start -> first HTTP request':<24} median {statistics.median(delays):.3f} s  fastest {min(delays):.3f} s  "
              f"(n={args.repeat}, `tracegrade run --target http://... --checks-only`)")
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
