"""A target for the progress test: the second case waits until the test has read
the first case's block from the pipe (it creates MARKER), so the block must have
been printed and flushed while the run was still going."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from tracegrade.core.trace import Reply


async def answer(case) -> Reply:
    if case.id == "second":
        marker = Path(os.environ["PROGRESS_MARKER"])
        for _ in range(200):  # up to 20 s
            if marker.exists():
                return Reply(answer="second answer")
            await asyncio.sleep(0.1)
        return Reply(answer="TIMED OUT: the first block never reached the reader")
    return Reply(answer=f"{case.id} answer")
