"""Deterministic checks alone: case-checks per second on one core.

    python bench/checks/checks_speed.py [--dataset evals/benchmark.json] [--results results.json] [--cases 100000]
    python bench/checks/checks_speed.py --dataset evals/travel/dataset.json --target examples.travel.agent:scripted

The cases are the benchmark dataset (``evals/benchmark.json``, else the golden
dataset), replicated to ``--cases``. Each case's trace is taken from a results
file of a real run when ``--results`` is given, from a ``module:function``
target when ``--target`` is given (played as a run plays it, follow-ups
included), otherwise made by ShopNest's agent loop on the mock's in-process
answers (``throughput.InstantModel``).
The process is pinned to one CPU; the timed loop is ``run_checks(case, reply)``
exactly as the runner calls it (choosing the checks, then running each).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Sequence

from tracegrade.checks.builtin import run_checks
from tracegrade.case.schema import GoldenCase
from tracegrade.case.dataset import load_dataset
from tracegrade.core.trace import Reply

ROOT = Path(__file__).resolve().parents[2]


def default_dataset() -> Path:
    benchmark = ROOT / "evals" / "benchmark.json"
    return benchmark if benchmark.is_file() else ROOT / "evals" / "golden-dataset.json"


def traces_from_results(cases: Sequence[GoldenCase], path: Path) -> list[tuple[GoldenCase, Reply]]:
    replies = {r["case_id"]: r["reply"] for r in json.loads(path.read_text())["results"] if r.get("reply")}
    return [(c, Reply.from_wire(replies[c.id])) for c in cases if c.id in replies]


def traces_from_mock(cases: Sequence[GoldenCase]) -> list[tuple[GoldenCase, Reply]]:
    from shopnest.agent import ShopNestAgent, Turn
    from shopnest.knowledge import KnowledgeBase, load_policies

    sys.path.insert(0, str(ROOT / "bench" / "run"))  # throughput.py: the mock's in-process answers
    from throughput import InstantModel, keyword_embedder

    agent = ShopNestAgent(InstantModel("instant-agent"), KnowledgeBase(load_policies(), keyword_embedder))

    async def reply(case: GoldenCase) -> Reply:
        history = [Turn(t.role, t.content) for t in case.history]
        return await agent.chat(case.question, case.customer_id or "C-100", history, case.faults)

    async def all_replies() -> list[Reply]:
        # Together: a case that injects a hanging tool waits for the tool timeout.
        return list(await asyncio.gather(*(reply(c) for c in cases)))

    return list(zip(cases, asyncio.run(all_replies())))


def traces_from_target(cases: Sequence[GoldenCase], spec: str) -> list[tuple[GoldenCase, Reply]]:
    from tracegrade.agent.conversation import play
    from tracegrade.agent.targets import callable_target

    sys.path.insert(0, str(ROOT))  # examples/ lives beside src/
    target = callable_target(spec)

    async def all_replies() -> list[Reply]:
        return [await play(target, c) for c in cases]

    return list(zip(cases, asyncio.run(all_replies())))


def measure(pairs: Sequence[tuple[GoldenCase, Reply]], total: int) -> dict:
    work = [pairs[i % len(pairs)] for i in range(total)]
    run_checks(*work[0])  # warm caches
    started = time.process_time()
    evaluated = 0
    for case, reply in work:
        evaluated += len(run_checks(case, reply))
    seconds = time.process_time() - started
    return {"distinct_traces": len(pairs), "cases": total, "check_evaluations": evaluated,
            "cpu_s": round(seconds, 3), "cases_per_s": round(total / seconds),
            "checks_per_s": round(evaluated / seconds), "checks_per_case": round(evaluated / total, 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=default_dataset())
    parser.add_argument("--results", type=Path, help="take the traces from this results.json of a real run")
    parser.add_argument("--target", help="take the traces from this module:function target")
    parser.add_argument("--cases", type=int, default=100_000, help="cases checked in the timed loop")
    args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core, as the target says
    cases = load_dataset(args.dataset).cases
    if args.results:
        pairs, source = traces_from_results(cases, args.results), "results"
    elif args.target:
        pairs, source = traces_from_target(cases, args.target), args.target
    else:
        pairs, source = traces_from_mock(cases), "mock agent"
    row = {"dataset": args.dataset.name, "traces": source, **measure(pairs, args.cases)}
    print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
