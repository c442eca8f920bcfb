"""Synchronous work of a case (its checks) off the event loop, under the case's deadline.

    >>> import asyncio
    >>> asyncio.run(in_thread(sum, [1, 2], timeout_s=5))
    3

WHY not ``asyncio.to_thread``: a check that never returns (a plugin's endless
loop) would hold a thread of the loop's default executor, and ``asyncio.run``
joins that executor before it returns: the run would finish its cases and then
hang. The threads here are daemons; a call past its deadline raises
``TimeoutError`` to the case, and its thread is left to finish (or to die
with the process) while a fresh one takes the next call.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from typing import Any, Callable, TypeVar

T = TypeVar("T")

_jobs: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...], asyncio.AbstractEventLoop, asyncio.Future[Any]]]
_jobs = queue.SimpleQueue()
_idle = 0  # threads waiting for a job; a call starts a new thread when none is
_guard = threading.Lock()


async def in_thread(function: Callable[..., T], *args: Any, timeout_s: float) -> T:
    """``function(*args)`` on a worker thread; ``TimeoutError`` after ``timeout_s`` seconds."""
    global _idle
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()
    with _guard:
        start = _idle == 0
        _idle -= 0 if start else 1
    if start:
        threading.Thread(target=_serve, name="tracegrade-checks", daemon=True).start()
    _jobs.put((function, args, loop, done))
    async with asyncio.timeout(timeout_s):
        return await done


def _serve() -> None:
    global _idle
    while True:
        function, args, loop, done = _jobs.get()
        try:
            outcome, failed = function(*args), False
        except BaseException as exc:  # handed to the awaiting case, which turns it into data
            outcome, failed = exc, True
        with _guard:
            _idle += 1
        try:
            loop.call_soon_threadsafe(_settle, done, outcome, failed)
        except RuntimeError:  # the loop closed while this ran (a run ended past this call's deadline)
            pass


def _settle(done: asyncio.Future[Any], outcome: Any, failed: bool) -> None:
    if done.done():  # its case gave up waiting (timeout, cancelled run)
        return
    if failed:
        done.set_exception(outcome)
    else:
        done.set_result(outcome)
