"""ShopNest's server under load: many concurrent /chat, then a flood of idle connections.

    python bench/serve/server_load.py [--concurrent 500] [--idle 20000]

The server is ``tests/load_app.py`` (the real ShopNest app and agent loop, in
test mode, on a scripted model that does two tool lookups with 0-20 ms
delays) run in a process of its own exactly as ``shopnest serve`` runs it:
``tracegrade.serve.hardening.serve`` with the default limits.

1. **Concurrent chats**: ``--concurrent`` POST /chat at once, each on its own
   connection; every reply is checked to hold exactly its own order's tool
   calls. Reports p50 / p99 latency and the errors.
2. **Idle connections**: ``--idle`` sockets opened as fast as four helper
   processes can (the open-file limit is per process) and left silent, while
   this process sends GET /health every 0.5 s on a fresh connection (the
   flood); then 20 more probes while the client holds every socket it opened
   (held). Reports the slowest and median probe and the failures of both, and
   how many idle sockets were still open 12 s later (past the header timeout).

The open-file limit is raised for the bench and the server (``ulimit -n``
is per process, and its hard limit can only be raised as root).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
FILES = 65536


def raise_open_files(wanted: int = FILES) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    for limits in ((wanted, max(hard, wanted)), (min(wanted, hard), hard)):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, limits)
            break
        except (ValueError, OSError):
            continue
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, plain: bool = False) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])}
    code = ("from tracegrade.serve.hardening import Limits, serve; import load_app; "
            f"serve(load_app.app, '127.0.0.1', {port}, Limits())")
    if plain:  # what both servers ran before the limits: uvicorn's defaults
        code = f"import uvicorn, load_app; uvicorn.run(load_app.app, host='127.0.0.1', port={port}, log_level='warning')"
    server = subprocess.Popen([sys.executable, "-c", code], env=env, cwd=ROOT / "tests")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("the server did not start")


async def concurrent_chats(url: str, n: int) -> dict:
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=0)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        async def one(i: int) -> tuple[float, str | None]:
            order = f"ORD-{101 + i % 17}"
            started = time.perf_counter()
            try:
                response = await client.post("/chat", json={"question": f"What about {order}? ({i})"})
                calls = [(c["name"], c["argument"]) for c in response.json()["toolCalls"]]
                ok = response.status_code == 200 and calls == [("getOrderStatus", order), ("getRefundStatus", order)]
                return time.perf_counter() - started, None if ok else f"HTTP {response.status_code} {calls}"
            except (httpx.HTTPError, ValueError, KeyError) as exc:
                return time.perf_counter() - started, f"{type(exc).__name__}: {exc}"

        started = time.perf_counter()
        outcomes = await asyncio.gather(*(one(i) for i in range(n)))
        wall = time.perf_counter() - started
    seconds = sorted(s for s, _ in outcomes)
    errors = [e for _, e in outcomes if e]
    return {"requests": n, "errors": len(errors), "first_errors": errors[:3], "wall_s": round(wall, 2),
            "p50_ms": round(1000 * seconds[len(seconds) // 2]), "p99_ms": round(1000 * seconds[int(0.99 * (n - 1))]),
            "mean_ms": round(1000 * statistics.fmean(seconds))}


_HOLDER = """
import resource, socket, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[3]) + 100, max(int(sys.argv[3]) + 100, resource.getrlimit(resource.RLIMIT_NOFILE)[1])))
port, count = int(sys.argv[1]), int(sys.argv[2])
held, failed = [], 0
for _ in range(count):
    try:
        held.append(socket.create_connection(("127.0.0.1", port), timeout=5))
    except OSError:
        failed += 1
print(len(held), failed, flush=True)
sys.stdin.readline()  # hold every socket until told
open_now = 0
for s in held:
    s.setblocking(False)
    try:
        open_now += s.recv(1) != b""
    except BlockingIOError:
        open_now += 1
    except OSError:
        pass
print(open_now, flush=True)
"""


def idle_flood(port: int, n: int, holders: int = 4) -> dict:
    per = n // holders
    procs = [subprocess.Popen([sys.executable, "-c", _HOLDER, str(port), str(per), str(per)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for _ in range(holders)]
    probes: list[float] = []
    failures: list[str] = []
    opened = [None] * holders
    started = time.monotonic()
    while any(o is None for o in opened) or time.monotonic() - started < 15:
        t = time.perf_counter()
        try:
            status = httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code
            failure = None if status == 200 else f"HTTP {status}"
        except httpx.HTTPError as exc:
            failure = f"{type(exc).__name__}: {exc}"
        probes.append(time.perf_counter() - t)
        if failure:
            failures.append(failure)
        for i, proc in enumerate(procs):
            if opened[i] is None and _ready(proc):
                opened[i] = tuple(int(x) for x in proc.stdout.readline().split())
        time.sleep(0.5)
    held = []  # every socket now open on the client side: the server answers beside them
    for _ in range(20):
        t = time.perf_counter()
        try:
            ok = httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200
        except httpx.HTTPError:
            ok = False
        held.append((time.perf_counter() - t, ok))
        time.sleep(0.25)
    time.sleep(12)  # past the header timeout (10 s) of the last socket opened
    still_open = 0
    for proc in procs:
        proc.stdin.write("\n")
        proc.stdin.flush()
        still_open += int(proc.stdout.readline())
        proc.wait()
    return {"idle_connections": n, "connected": sum(o[0] for o in opened), "refused": sum(o[1] for o in opened),
            "during_flood": {"probes": len(probes), "failures": len(failures), "first_failures": failures[:3],
                             "slowest_ms": round(1000 * max(probes)), "median_ms": round(1000 * statistics.median(probes))},
            "flood_held": {"probes": len(held), "failures": sum(not ok for _, ok in held),
                           "slowest_ms": round(1000 * max(s for s, _ in held)),
                           "median_ms": round(1000 * statistics.median(s for s, _ in held))},
            "still_open_after_header_timeout": still_open}


def _ready(proc: subprocess.Popen) -> bool:
    import select

    return bool(select.select([proc.stdout], [], [], 0)[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrent", type=int, default=500)
    parser.add_argument("--idle", type=int, default=20000)
    parser.add_argument("--plain", action="store_true", help="serve with uvicorn's defaults, as before the limits")
    args = parser.parse_args(argv)
    print(json.dumps({"open_file_limit": raise_open_files(), "plain": args.plain}), flush=True)
    port = free_port()
    server = start_server(port, args.plain)
    try:
        if args.concurrent:
            print(json.dumps(asyncio.run(concurrent_chats(f"http://127.0.0.1:{port}", args.concurrent))), flush=True)
        if args.idle:
            print(json.dumps(idle_flood(port, args.idle)), flush=True)
    finally:
        server.terminate()
        server.wait(30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
