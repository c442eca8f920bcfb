"""A target that stops (SIGSTOP) or kills the run's store writer process when it answers its STOP_AT-th case,
once ``committed()`` says the writer has stored some cases, for tests/store/test_store_writer.py
(importable by the CLI as ``stop_writer_agent:answer``)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Callable

from tracegrade import GoldenCase, Reply

STOP_AT = 0  # 0: never; the test sets it
SIGNAL = signal.SIGSTOP  # or SIGKILL: the writer dies
committed: Callable[[], bool] = lambda: True  # noqa: E731 - the test gives its own
answered = 0
stopped: list[int] = []


def writer_children(pid: int) -> list[int]:
    """The store writer processes ``pid`` started, from any of its threads (Linux /proc)."""
    children = [c for task in Path(f"/proc/{pid}/task").iterdir() for c in (task / "children").read_text().split()]
    return [int(c) for c in children if b"tracegrade.store.writer" in Path(f"/proc/{c}/cmdline").read_bytes()]


async def answer(case: GoldenCase) -> Reply:
    global answered
    answered += 1
    if answered == STOP_AT:
        deadline = time.monotonic() + 60
        while not committed() and time.monotonic() < deadline:  # WHY: the writer takes a while to start
            await asyncio.sleep(0.01)
        for pid in writer_children(os.getpid()):
            os.kill(pid, SIGNAL)
            stopped.append(pid)
    return Reply(answer=f"{case.id} done")
