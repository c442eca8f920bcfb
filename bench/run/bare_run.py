"""The peer setup's agent alone, no harness: each question of a cases file asked with
``plain_agent.answer``, ``--concurrency`` at a time, the answers thrown away.

    python bench/run/bare_run.py CASES.json [--concurrency 32]

The floor under any harness that runs this agent in one process: its imports (the
openai SDK), its CPU per call and the model's latency. ``peer_limit.py --bare`` times it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

import plain_agent


async def ask_all(questions: list[str], concurrency: int) -> None:
    waiting = iter(questions)

    async def worker() -> None:
        for question in waiting:  # shared: each question goes to one worker
            await plain_agent.answer(question)

    await asyncio.gather(*(worker() for _ in range(concurrency)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", type=Path)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    questions = [case["question"] for case in json.loads(args.cases.read_text())]
    asyncio.run(ask_all(questions, args.concurrency))
    return 0


if __name__ == "__main__":
    sys.exit(main())
