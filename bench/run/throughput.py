"""Harness throughput, overhead and memory: `tracegrade run` against a mock model.

    python bench/run/throughput.py [--sizes 200,1000,10000] [--latencies 0,200] [--concurrency 32] [--agent one-call]

For each latency it starts ``bench/run/mock_openai.py`` on loopback; for each size
it writes N synthetic cases and runs ``tracegrade run`` on them in a fresh
process (so each peak RSS is that run's own): the deterministic checks and one
judge call per case, agent and judge both on the mock. Per run it reports the
wall time of the run command, the requests the mock received, the ideal time
(requests x latency / concurrency), wall / ideal, the harness's cost in ms per
case (wall, meaningful at 0 ms latency, and CPU, meaningful at any latency and
on a busy machine) and the peak RSS of the run's process.

``--in-process`` replaces the mock server and the HTTP client with the same
answers given in-process (after the same latency): the difference between the
two modes is the cost of the OpenAI client, the rest is the harness's own.

Flags it does not know go to ``tracegrade run``: ``--checks-only``, or
``--executor ray`` (the in-process answers then come from each Ray worker's
own agent; the CPU column counts the driver only, and "child CPU" is
``RUSAGE_CHILDREN``: the processes the driver waited for, a lower bound).

``--agent one-call`` replaces ShopNest with the peer harnesses' benchmark
agent: one model call per case, its text the answer (2 requests a case with
the judge, so N = 1,000 at 200 ms and concurrency 32 is 12.5 s ideal).

By default the agent is ShopNest's own agent loop, tools, order book and prompt
(`ShopNestAgent`) on the mock model, with one change: retrieval uses a keyword
embedder instead of MiniLM, because MiniLM costs ~3 ms of CPU per question and
~700 MB of RAM, which would measure torch rather than the harness.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Sequence

import numpy as np

from tracegrade.case.schema import GoldenCase
from tracegrade.core.trace import Reply

BENCH = Path(__file__).resolve().parent
KEYWORDS = ("refund", "return", "ship", "warranty")

# (question, expected tool, expected argument, expected source); {n} varies the text.
TEMPLATES: tuple[tuple[str, str | None, str | None, str | None], ...] = (
    ("Where is my order ORD-101? (ticket {n})", "getOrderStatus", "ORD-101", None),
    ("When will ORD-104 be delivered? (ticket {n})", "getDeliveryDate", "ORD-104", None),
    ("How is the refund for ORD-106 going? (ticket {n})", "getRefundStatus", "ORD-106", None),
    ("Can I still return ORD-102? (ticket {n})", "getOrderStatus", "ORD-102", "return-policy.md"),
    ("How long does shipping take? (ticket {n})", None, None, "shipping-policy.md"),
)


def synthetic_cases(n: int) -> list[GoldenCase]:
    cases = []
    for i in range(n):
        question, tool, argument, source = TEMPLATES[i % len(TEMPLATES)]
        cases.append(GoldenCase(
            id=f"synthetic-{i:05d}", question=question.format(n=i), golden_answer="See the tool result.",
            expected_tool=tool, expected_tool_argument=argument, expected_source=source,
            answer_must_include=("found",) if tool else (), max_steps=3,
        ))
    return cases


def write_dataset(cases: Sequence[GoldenCase], path: Path) -> Path:
    path.write_text(json.dumps([c.model_dump(mode="json", by_alias=True, exclude_defaults=True) for c in cases]))
    return path


def keyword_embedder(texts: Sequence[str]) -> np.ndarray:
    """Counts of four policy keywords, L2-normalised; a policy file counts only its title."""
    rows = np.zeros((len(texts), len(KEYWORDS)), dtype=np.float32)
    for row, text in enumerate(texts):
        words = (text.split("\n", 1)[0] if text.startswith("# ") else text).lower()
        rows[row] = [words.count(k) for k in KEYWORDS]
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


REQUESTS = {"requests": 0}


class InstantModel:
    """The mock's answers in-process, with no socket and no HTTP client: what is
    left is the harness's own cost. ``latency_s`` sleeps like the mock's timer."""

    def __init__(self, model_id: str, latency_s: float = 0.0) -> None:
        self.model_id = model_id
        self.latency_s = latency_s

    async def complete(self, messages, options=None):
        from mock_openai import decide, scores
        from tracegrade.models import ChatResponse, ModelToolCall

        REQUESTS["requests"] += 1
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if options is None or not options.tools:
            schema = options.json_schema if options is not None else None
            body = {"response_format": {"json_schema": {"schema": schema or {}}}}
            return ChatResponse(text=scores(body), input_tokens=300, output_tokens=20, model=self.model_id)
        question = next(m.content for m in reversed(messages) if m.role == "user")
        text, tool, order_id = decide(question, messages[-1].content if messages[-1].role == "tool" else None)
        calls = (ModelToolCall(tool, {"orderId": order_id}, "call_1"),) if tool else ()
        return ChatResponse(text=text, tool_calls=calls, input_tokens=300, output_tokens=20, model=self.model_id)


def instant_models(spec: str, role: str = "agent") -> InstantModel:
    """Stands in for ``load_model`` inside the measured process when --in-process is given."""
    return InstantModel(f"instant-{role}", float(os.environ.get("BENCH_LATENCY_MS", "0")) / 1000)


_AGENT = None


async def shopnest_on_mock(case: GoldenCase) -> Reply:
    """The target: ShopNest's agent on the model TRACEGRADE_AGENT_MODEL names (the mock)."""
    global _AGENT
    if _AGENT is None:
        from shopnest.agent import ShopNestAgent
        from shopnest.knowledge import KnowledgeBase, load_policies
        from tracegrade.models import load_model, model_spec

        # WHY read here: a Ray worker builds its own agent and has no patched load_model.
        load = instant_models if os.environ.get("BENCH_IN_PROCESS") else load_model
        _AGENT = ShopNestAgent(load(model_spec("agent"), role="agent"),
                               KnowledgeBase(load_policies(), keyword_embedder))
    return await _AGENT.chat(case.question, case.customer_id or "C-100")


_ONE_CALL = None


async def one_call_on_mock(case: GoldenCase) -> Reply:
    """The peer harnesses' benchmark agent: one model call per case, its text the answer."""
    global _ONE_CALL
    if _ONE_CALL is None:
        from tracegrade.models import load_model, model_spec

        load = instant_models if os.environ.get("BENCH_IN_PROCESS") else load_model
        _ONE_CALL = load(model_spec("agent"), role="agent")
    from tracegrade.models import Message

    response = await _ONE_CALL.complete([Message("user", case.question)])
    return Reply(answer=response.text, model=_ONE_CALL.model_id)


AGENTS = {"shopnest": "throughput:shopnest_on_mock", "one-call": "throughput:one_call_on_mock"}


class MockServer:
    """bench/run/mock_openai.py in its own process (so it has its own core and GIL)."""

    def __init__(self, latency_ms: float) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(BENCH / "mock_openai.py"), "--latency-ms", str(latency_ms)],
            stdout=subprocess.PIPE, text=True,
        )
        line = self.process.stdout.readline() if self.process.stdout else ""
        found = re.search(r"(http://\S+)", line)
        if found is None:
            self.close()
            raise RuntimeError(f"mock server did not start: {line!r}")
        self.base_url = found.group(1)

    def stats(self) -> dict[str, int]:
        with urllib.request.urlopen(self.base_url.removesuffix("/v1") + "/stats", timeout=10) as response:
            return json.load(response)

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)

    def __enter__(self) -> "MockServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_child(dataset: Path, scratch: Path, concurrency: int, env: dict[str, str], extra: Sequence[str]) -> dict:
    """One `tracegrade run` in a fresh process; its wall time and peak RSS."""
    env = {**os.environ, **env, "PYTHONPATH": os.pathsep.join([str(BENCH), os.environ.get("PYTHONPATH", "")])}
    # Its own run store and output folder: a benchmark never writes into the work tree. An eval
    # run builds no spans by default; TRACEGRADE_SPANS_DB=PATH in the caller's environment
    # measures one that stores them there.
    argv = ["run", str(dataset), "--target", AGENTS[env.get("BENCH_AGENT", "shopnest")], "--judge-model", "openai:mock-judge",
            "--concurrency", str(concurrency), "--quiet", "--out", str(scratch / "runs"),
            "--db", f"sqlite:///{scratch / 'runs.db'}", *extra]
    process = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(argv)],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"run failed ({process.returncode}): {stderr[-2000:]}")
    return json.loads(stdout.strip().splitlines()[-1])


def run_on_mock(dataset: Path, scratch: Path, latency_ms: float, concurrency: int, extra: Sequence[str],
                agent: str) -> dict:
    with MockServer(latency_ms) as mock:
        env = {"BENCH_AGENT": agent, "TRACEGRADE_AGENT_MODEL": "openai:mock-agent", "TRACEGRADE_AGENT_BASE_URL": mock.base_url,
               "TRACEGRADE_JUDGE_BASE_URL": mock.base_url, "OPENAI_API_KEY": "not-needed"}
        measured = run_child(dataset, scratch, concurrency, env, extra)
        stats = mock.stats()
        # WHY the span: wall minus it is what the run spends before its first and after its last request.
        return {**measured, "requests": stats["requests"], "request_span_s": stats["last"] - stats["first"]}


def run_in_process(dataset: Path, scratch: Path, latency_ms: float, concurrency: int, extra: Sequence[str],
                   agent: str) -> dict:
    env = {"BENCH_AGENT": agent, "BENCH_IN_PROCESS": "1", "BENCH_LATENCY_MS": str(latency_ms)}
    return run_child(dataset, scratch, concurrency, env, extra)


def child(argv: list[str]) -> int:
    """Inside the measured process: import first, then time the run command alone."""
    import openai  # noqa: F401  (import cost is not the run's)

    from tracegrade import cli

    if os.environ.get("BENCH_IN_PROCESS"):
        import tracegrade.cli.run
        import tracegrade.models

        # WHY swap the loader, not the flags: the measured path stays exactly `tracegrade run`.
        tracegrade.cli.run.load_model = instant_models
        tracegrade.models.load_model = instant_models
    sys.stdout = open(os.devnull, "w")  # the report is not what is measured
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    code = _profiled(cli.main, argv) if os.environ.get("BENCH_PROFILE") else cli.main(argv)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    sys.stdout = sys.__stdout__
    # CPU seconds of every thread of this process: what the harness costs, even on a busy machine.
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "sys_cpu_s": after.ru_stime - before.ru_stime,
                      "child_cpu_s": children.ru_utime + children.ru_stime,
                      "peak_rss_mb": after.ru_maxrss / 1024, "exit": code, **REQUESTS}))
    return 0


def _profiled(main, argv: list[str]) -> int:
    """``BENCH_PROFILE=FILE``: the run command under cProfile, its stats written to FILE."""
    import cProfile

    profile = cProfile.Profile()
    code = profile.runcall(main, argv)
    profile.dump_stats(os.environ["BENCH_PROFILE"])
    return code


def measure(sizes: Sequence[int], latencies: Sequence[float], concurrency: int, in_process: bool,
            extra: Sequence[str], agent: str = "shopnest") -> list[dict]:
    run = run_in_process if in_process else run_on_mock
    rows = []
    for latency in latencies:
        for n in sizes:
            with tempfile.TemporaryDirectory(prefix="tracegrade-bench-") as scratch:
                dataset = write_dataset(synthetic_cases(n), Path(scratch) / f"synthetic-{n}.json")
                measured = run(dataset, Path(scratch), latency, concurrency, extra, agent)
            ideal = measured["requests"] * latency / 1000 / concurrency
            rows.append({
                "model": ("in-process" if in_process else "mock over HTTP") + f", {agent}",
                "executor": extra[extra.index("--executor") + 1] if "--executor" in extra else "local",
                "cases": n, "latency_ms": latency, "concurrency": concurrency, "requests": measured["requests"],
                "wall_s": round(measured["wall_s"], 3), "ideal_s": round(ideal, 3),
                "ratio": round(measured["wall_s"] / ideal, 3) if ideal else None,
                "ms_per_case": round(measured["wall_s"] * 1000 / n, 3),
                "cpu_ms_per_case": round(measured["cpu_s"] * 1000 / n, 3),
                # WHY the kernel's share apart: a request's loopback send and receive are system
                # time, out of reach of any change to the harness's Python.
                "sys_cpu_ms_per_case": round(measured["sys_cpu_s"] * 1000 / n, 3),
                "child_cpu_ms_per_case": round(measured["child_cpu_s"] * 1000 / n, 3),
                "peak_rss_mb": round(measured["peak_rss_mb"], 1), "exit": measured["exit"],
                "request_span_s": round(measured.get("request_span_s", 0.0), 3),
            })
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def table(rows: Sequence[dict]) -> str:
    lines = ["| model | executor | cases | latency ms | requests | wall s | ideal s | wall/ideal | wall ms/case | CPU ms/case "
             "| child CPU ms/case | peak RSS MB |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        ratio = f"{r['ratio']:.3f}" if r["ratio"] else "-"
        lines.append(f"| {r['model']} | {r['executor']} | {r['cases']:,} | {r['latency_ms']:g} | {r['requests']:,} | {r['wall_s']:.2f} | "
                     f"{r['ideal_s']:.2f} | {ratio} | {r['ms_per_case']:.2f} | {r['cpu_ms_per_case']:.2f} | "
                     f"{r['child_cpu_ms_per_case']:.2f} | {r['peak_rss_mb']:.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200,1000,10000", help="case counts, comma-separated")
    parser.add_argument("--latencies", default="0,200", help="mock latencies in ms, comma-separated")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--in-process", action="store_true",
                        help="answer in-process (no socket, no HTTP client): the harness's own cost")
    parser.add_argument("--agent", choices=sorted(AGENTS), default="shopnest",
                        help="shopnest: ShopNest's agent loop (~1.8 model calls a case); one-call: one model "
                        "call a case, its text the answer (the peer harnesses' benchmark)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON to this file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args, extra = parser.parse_known_args(argv)
    if args.child:
        return child(json.loads(args.child))
    rows = measure([int(s) for s in args.sizes.split(",")], [float(x) for x in args.latencies.split(",")],
                   args.concurrency, args.in_process, extra, args.agent)
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
