"""The peer setup against its physical limit: `tracegrade run` as a user runs it, process start to exit.

    python bench/run/peer_limit.py [--cases 1000] [--latency-ms 200] [--concurrency 32] [--judge] [--repeat 3]
    python bench/run/peer_limit.py --serve DIR [--port 8765] [--latency-ms 200]

N cases, an agent of the plain kind a user writes (``plain_agent.py``: the openai
SDK, one chat call, the answer returned) on ``mock_openai.py`` answering in
``--latency-ms``, ``--concurrency`` cases at once. The limit is what the model's
latency alone allows: N x calls a case x latency / concurrency (one call a case:
1,000 x 0.2 / 32 = 6.25 s; with ``--judge``, one judge call a case on the same
mock, ``--judge-model openai:mock-judge``: 12.5 s).

Each run is a fresh ``tracegrade`` process (the console script beside this
interpreter; ``PYTHONPATH`` picks the code measured) with its own run store and
output folder. Per run it reports the wall time from just before the process
starts to its exit, over the limit, and its parts on one clock (the mock notes
the first and last request it received):

- ``to_first_request``: process start to the first model call (interpreter,
  imports, the dataset, the store, the run's set-up);
- ``requests``: first to last request received; the limit's share of it is
  (waves - 1) x latency, so what is above that is how the cases were fed;
- ``after_last``: the last request's latency, then the store, the files, the
  report and the interpreter's exit.

``--parts`` runs the same command through a wrapper that also notes, in the
process, when the imports of the CLI were done, the dataset loaded, the run's
cases ended (``record_run``), the files written and ``main`` returned.

``--bare`` runs the agent alone on the same cases (``bare_run.py``: no harness, an
asyncio worker per slot, its answers thrown away): the floor any harness in one
process stands on, as the agent's own start-up and CPU per call set it.

``--serve DIR`` writes the cases into DIR and serves the mock on ``--port``
until interrupted, and prints the command to time from outside (any tool that
times a whole process).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

BENCH = Path(__file__).resolve().parent


def write_cases(n: int, path: Path) -> Path:
    """N questions, each with a fact the answer must contain (the question's own ticket number)."""
    cases = [{"id": f"peer-{i:05d}", "question": f"What is the status of ticket {i}?",
              "answerMustInclude": [str(i)]} for i in range(n)]
    path.write_text(json.dumps(cases))
    return path


def command(cases: Path, scratch: Path, concurrency: int, judge: bool, bare: bool = False) -> list[str]:
    """``tracegrade run`` as a user types it: the console script beside this interpreter
    (``bare``: the agent alone, ``bare_run.py``)."""
    if bare:
        return [sys.executable, str(BENCH / "bare_run.py"), str(cases), "--concurrency", str(concurrency)]
    script = Path(sys.executable).with_name("tracegrade")
    head = [str(script)] if script.exists() else [sys.executable, "-m", "tracegrade.cli"]
    return [*head, "run", str(cases), "--target", "plain_agent:answer", "--concurrency", str(concurrency),
            "--quiet", "--db", f"sqlite:///{scratch / 'runs.db'}", "--out", str(scratch / "out"),
            *(["--judge-model", "openai:mock-judge"] if judge else ["--checks-only"])]


def environment(base_url: str) -> dict[str, str]:
    path = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH", ""), str(BENCH)]))
    return {**os.environ, "PYTHONPATH": path, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "not-needed",
            "TRACEGRADE_JUDGE_BASE_URL": base_url}


def run_once(argv: list[str], latency_ms: float, parts: bool) -> dict[str, Any]:
    """One run on a mock of its own (WHY: its first and last request are this run's)."""
    notes = Path(tempfile.mkstemp(prefix="peer-parts-")[1])
    if parts:
        argv = [sys.executable, str(Path(__file__).resolve()), "--child", str(notes),
                json.dumps(argv[argv.index("run"):])]
    from throughput import MockServer  # WHY here: --child must import nothing the run does not

    with MockServer(latency_ms) as mock:
        started = time.time()
        done = subprocess.run(argv, env=environment(mock.base_url), capture_output=True, text=True)
        ended = time.time()
        stats = mock.stats()
    if done.returncode not in (0, 1):
        raise RuntimeError(f"run failed ({done.returncode}): {done.stderr[-2000:]}")
    row = {"wall_s": ended - started, "exit": done.returncode, "requests_made": stats["requests"],
           "by_kind": {k: stats[k] for k in ("chat", "judge", "agent", "other") if stats.get(k)},
           "to_first_request_s": stats["first"] - started, "request_span_s": stats["last"] - stats["first"],
           "after_last_s": ended - stats["last"]}
    if parts and notes.stat().st_size:
        row["inside"] = {name: round(at - started, 3) for name, at in json.loads(notes.read_text()).items()}
    notes.unlink()
    return row


def child(notes: str, argv: list[str]) -> int:
    """The run command with the moments of its parts noted (``--parts``)."""
    marks: dict[str, float] = {}
    from tracegrade import cli
    import tracegrade.case.dataset
    import tracegrade.run.evaluate as evaluate

    marks["cli_imported"] = time.time()
    for module, name, label in ((tracegrade.case.dataset, "load_dataset", "dataset_loaded"),
                                (evaluate, "named_target", "target_loaded"),
                                (evaluate, "record_run", "cases_ended"), (evaluate, "finish_outputs", "files_written")):
        setattr(module, name, _noting(getattr(module, name), marks, label))
    code = cli.main(argv)
    marks["main_returned"] = time.time()
    Path(notes).write_text(json.dumps(marks))
    # WHY: main(argv) returns; the program (main() without argv) then ends as the code measured ends it
    end = getattr(cli, "end_process", None)
    if end is not None:
        end(code)
    return code


def _noting(function: Any, marks: dict[str, float], label: str) -> Any:
    import inspect

    if inspect.iscoroutinefunction(function):
        async def noted_async(*args: Any, **kwargs: Any) -> Any:
            marks.setdefault(label.replace("ended", "began"), time.time())
            try:
                return await function(*args, **kwargs)
            finally:
                marks[label] = time.time()
        return noted_async

    def noted(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        finally:
            marks[label] = time.time()
    return noted


def measure(args: argparse.Namespace) -> list[dict[str, Any]]:
    calls = 2 if args.judge else 1
    limit = args.cases * calls * args.latency_ms / 1000 / args.concurrency
    rows = []
    with tempfile.TemporaryDirectory(prefix="tracegrade-peer-") as folder:
        cases = write_cases(args.cases, Path(folder) / "cases.json")
        print(f"load {os.getloadavg()[0]:.2f}  limit {limit:.2f} s", file=sys.stderr)
        for _ in range(args.repeat):
            scratch = Path(tempfile.mkdtemp(dir=folder))
            argv = command(cases, scratch, args.concurrency, args.judge, args.bare)
            row = run_once(argv, args.latency_ms, args.parts and not args.bare)
            shutil.rmtree(scratch)
            row = {"load": round(os.getloadavg()[0], 2), **{k: round(v, 3) if isinstance(v, float) else v
                                                           for k, v in row.items()},
                   "limit_s": round(limit, 3), "ratio": round(row["wall_s"] / limit, 3)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    walls = [r["wall_s"] for r in rows]
    print(f"median wall {statistics.median(walls):.3f} s = {statistics.median(walls) / limit:.3f} x the limit "
          f"({limit:.2f} s); load {os.getloadavg()[0]:.2f}", file=sys.stderr)
    return rows


def serve(args: argparse.Namespace) -> int:
    folder = Path(args.serve)
    folder.mkdir(parents=True, exist_ok=True)
    cases = write_cases(args.cases, folder / "cases.json")
    process = subprocess.Popen([sys.executable, str(BENCH / "mock_openai.py"), "--latency-ms", str(args.latency_ms),
                                "--port", str(args.port)])
    base_url = f"http://127.0.0.1:{args.port}/v1"
    env = environment(base_url)
    shown = " ".join(f"{k}={env[k]}" for k in ("PYTHONPATH", "OPENAI_BASE_URL", "OPENAI_API_KEY",
                                               "TRACEGRADE_JUDGE_BASE_URL"))
    for bare in (False, True):
        argv = command(cases, folder / "scratch", args.concurrency, args.judge, bare)
        print(f"{shown} {' '.join(argv)}", flush=True)
    try:
        return process.wait()
    except KeyboardInterrupt:
        process.terminate()
        return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--judge", action="store_true", help="one judge call a case too (openai:mock-judge)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--parts", action="store_true", help="also note the parts inside the process")
    parser.add_argument("--bare", action="store_true", help="the agent alone, no harness (bare_run.py)")
    parser.add_argument("--serve", metavar="DIR", help="write the cases and serve the mock; print the command")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child[0], json.loads(args.child[1]))
    if args.serve:
        return serve(args)
    measure(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
