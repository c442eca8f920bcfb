"""Sync work of a case (a sync agent, a case's checks) on reused daemon threads.

    >>> import asyncio
    >>> async def main():
    ...     return await in_daemon_thread(sum, [1, 2])
    >>> asyncio.run(main())
    3

WHY daemon threads, not ``asyncio.to_thread``: the loop's executor is joined
when the run ends, so one sync agent hung past its case timeout would hold the
whole run (and the process) until it returned; a daemon thread is left behind
instead. WHY reused: a thread started per case cost a large run of sync cases
a fifth of its time in thread starts. A thread that is busy (or hung) is simply
not idle: the next job starts a new thread, so a hung agent never holds a run,
and the pool is as large as the run's concurrency at most, plus its hung calls.
Idle threads leave after a while, so a finished run leaves none behind.

WHY outcomes handed back through an inbox per loop: a wake-up of the loop
(``call_soon_threadsafe``: a write to its self-pipe, then a read and a pass of
its selector) for every finished job was a sync target's main cost over an
async one's; a busy loop now takes every outcome that arrived in one wake-up.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import queue
import threading
import weakref
from typing import Any, Callable

IDLE_S = 10.0  # a thread with nothing to do for this long ends


# A job runs its work and returns what hands its outcome over (called once the thread is idle again).
Job = Callable[[], Callable[[], None]]


class _Pool:
    """Daemon threads taking jobs from one queue; a new one only when none is idle."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._idle = 0  # threads waiting for a job that no job has claimed yet
        self._lock = threading.Lock()

    def submit(self, job: Job) -> None:
        with self._lock:
            claimed = self._idle > 0
            if claimed:
                self._idle -= 1
        self._jobs.put(job)
        if not claimed:
            threading.Thread(target=self._work, name="tracegrade-worker", daemon=True).start()

    def _work(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=IDLE_S)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # nobody claimed a waiting thread: this one may go
                        self._idle -= 1
                        return
                continue  # every waiting thread was claimed: a job is on its way
            hand_over = job()
            # WHY idle before the result is handed over: the caller's next job, submitted as soon
            # as it has this result, must find this thread free, not start another one
            with self._lock:
                self._idle += 1
            hand_over()
            del job, hand_over  # WHY: an idle thread holding its last call held that call's loop too


_pool = _Pool()


class _Inbox:
    """Outcomes handed back to one loop from other threads: one wake-up of the loop for
    all those that arrive before it runs them. WHY the loop held weakly: a finished loop
    is kept alive by nothing here."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = weakref.ref(loop)
        self._outcomes: collections.deque[Callable[[], None]] = collections.deque()
        self._lock = threading.Lock()
        self._woken = False  # a wake-up is on its way: the outcomes put meanwhile go with it

    def put(self, outcome: Callable[[], None]) -> None:
        with self._lock:
            self._outcomes.append(outcome)
            if self._woken:
                return
            self._woken = True
        loop = self._loop()
        try:
            if loop is not None:
                loop.call_soon_threadsafe(self._run)
        except RuntimeError:  # the run ended (its loop closed) while this agent hung: nobody waits
            pass

    def _run(self) -> None:
        with self._lock:
            outcomes, self._outcomes, self._woken = self._outcomes, collections.deque(), False
        for outcome in outcomes:
            try:
                outcome()
            except Exception as exc:  # WHY: one outcome that cannot be set must not lose those after it
                loop = self._loop()
                if loop is not None:
                    loop.call_exception_handler({"message": "a worker thread's outcome could not be handed over",
                                                 "exception": exc})


# The last loop's inbox. WHY no more: a run has one loop; another loop (another thread's) gets
# an inbox of its own, which works as well, and one it used before stays alive while its calls are.
_last_inbox: tuple[weakref.ref[asyncio.AbstractEventLoop], _Inbox] | None = None


def _inbox(loop: asyncio.AbstractEventLoop) -> _Inbox:
    global _last_inbox
    if _last_inbox is None or _last_inbox[0]() is not loop:
        _last_inbox = (weakref.ref(loop), _Inbox(loop))
    return _last_inbox[1]


class _Call:
    """One call of ``in_daemon_thread``: run on a worker thread, settled on the loop.

    WHY an object, not closures: three closures and four partials a call were most of what
    a sync agent's hop to its thread and back cost over an async agent's call."""

    __slots__ = ("_function", "_args", "_context", "_future", "_inbox", "_value", "_failed")

    def __init__(self, function: Callable[..., Any], args: tuple[Any, ...], future: asyncio.Future[Any],
                 inbox: _Inbox) -> None:
        self._function, self._args, self._future, self._inbox = function, args, future, inbox
        self._context = contextvars.copy_context()
        self._failed = False

    def run(self) -> Callable[[], None]:
        """On the worker thread: the call, then what hands its outcome over (a Job)."""
        try:
            self._value = self._context.run(self._function, *self._args)
        except StopIteration as exc:  # WHY: a future refuses it (it would end the coroutine awaiting)
            self._value, self._failed = RuntimeError(f"StopIteration raised: {exc!r}"), True
        except BaseException as exc:  # handed to the case, which turns it into data
            self._value, self._failed = exc, True
        return self._hand_over

    def _hand_over(self) -> None:
        self._inbox.put(self._settle)

    def _settle(self) -> None:
        future = self._future
        if future.done():  # cancelled by the case timeout: nobody waits any more
            return
        if self._failed:
            future.set_exception(self._value)
        else:
            future.set_result(self._value)


def in_daemon_thread(function: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
    """``function(*args)`` on a daemon thread, carrying this context (the case's Recorder, its
    span), as a future of this loop (an agent's call, or a case's checks in ``engine.offload``)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    _pool.submit(_Call(function, args, future, _inbox(loop)).run)
    return future
