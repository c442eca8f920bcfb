"""Synchronous work of a case (its checks) off the event loop, under the case's deadline.

    >>> import asyncio
    >>> asyncio.run(in_thread(sum, [1, 2], timeout_s=5))
    3

WHY not ``asyncio.to_thread``: a check that never returns (a plugin's endless
loop) would hold a thread of the loop's default executor, and ``asyncio.run``
joins that executor before it returns: the run would finish its cases and then
hang. The call runs on a daemon thread (``engine.workers.in_daemon_thread``,
the pool a sync agent runs on); past its deadline it raises ``TimeoutError`` to
the case, and its thread is left to finish (or to die with the process).
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, TypeVar

from tracegrade.engine.workers import in_daemon_thread

T = TypeVar("T")


async def in_thread(function: Callable[..., T], *args: Any, timeout_s: float) -> T:
    """``function(*args)`` on a daemon thread; ``TimeoutError`` after ``timeout_s`` seconds."""
    async with asyncio.timeout(timeout_s):
        result: T = await in_daemon_thread(function, *args)
        return result
