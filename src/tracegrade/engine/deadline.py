"""Case deadlines on one timer: ``asyncio.timeout``'s meaning at a fraction of its cost.

    >>> import asyncio
    >>> async def main():
    ...     try:
    ...         with deadline(0.01):
    ...             await asyncio.sleep(1)
    ...     except TimeoutError:
    ...         return "timed out"
    >>> asyncio.run(main())
    'timed out'

A scope whose time runs out cancels its task; the cancellation that comes out of the
scope is raised as ``TimeoutError``, and one that came from elsewhere (a budget stop,
the run's end) goes on as it is, exactly as with ``asyncio.timeout``.

WHY: ``asyncio.timeout`` puts a timer on the loop's heap for every case and takes it
off again, and its scope is entered and left through two coroutines: about a twentieth
of a fast case's CPU. The cases of a run share one timeout, so their deadlines come in
the order they start: one queue in that order and one timer, at the earliest deadline
of the queue, serve them all.
"""

from __future__ import annotations

import asyncio
import bisect
import collections
import weakref
from types import TracebackType

_ENTERED, _EXPIRING, _EXITED = range(3)


class _Scope:
    __slots__ = ("when", "task", "cancelling", "state")

    def __init__(self, when: float, task: asyncio.Task[object], cancelling: int) -> None:
        self.when, self.task, self.cancelling, self.state = when, task, cancelling, _ENTERED


class _Deadlines:
    """The scopes of one loop, in deadline order, and the timer at the earliest."""

    def __init__(self) -> None:
        self._scopes: collections.deque[_Scope] = collections.deque()
        self._open = 0  # scopes entered and not yet left
        self._timer: asyncio.TimerHandle | None = None

    def enter(self, loop: asyncio.AbstractEventLoop, delay: float) -> _Scope:
        task = asyncio.current_task(loop)
        if task is None:
            raise RuntimeError("deadline() is used inside a task")
        scope = _Scope(loop.time() + delay, task, task.cancelling())
        scopes = self._scopes
        if scopes and scope.when < scopes[-1].when:  # a shorter timeout than those before it: rare
            scopes.insert(bisect.bisect_right(scopes, scope.when, key=_when), scope)
        else:
            scopes.append(scope)
        self._open += 1
        if self._timer is None or scope.when < self._timer.when():
            self._arm(loop, scope.when)
        return scope

    def leave(self, scope: _Scope) -> bool:
        """Whether the scope's time ran out (its task was cancelled for it)."""
        expired = scope.state == _EXPIRING
        scope.state = _EXITED
        self._open -= 1
        self._drop_left()
        return expired

    def _drop_left(self) -> None:
        """Forget scopes already left: those in front, and all of them once they are most
        of the queue (a long case in front keeps the rest), so the queue stays as long as
        the scopes open."""
        scopes = self._scopes
        while scopes and scopes[0].state == _EXITED:
            scopes.popleft()
        if len(scopes) > 2 * self._open + 64:
            self._scopes = collections.deque(s for s in scopes if s.state != _EXITED)

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = loop.call_at(when, self._expire, loop, when)

    def _expire(self, loop: asyncio.AbstractEventLoop, until: float) -> None:
        # WHY ``until``, not the loop's time: the loop runs a timer up to its clock's
        # resolution early, and a deadline it was armed for is reached
        self._timer = None
        scopes = self._scopes
        while scopes and scopes[0].when <= until:
            scope = scopes.popleft()
            if scope.state == _ENTERED:
                scope.state = _EXPIRING
                scope.task.cancel()
        self._drop_left()
        if self._scopes:
            self._arm(loop, self._scopes[0].when)


def _when(scope: _Scope) -> float:
    return scope.when


# The last loop's deadlines, both held weakly. WHY weakly: the deadlines are kept alive by
# what needs them (their armed timer, on the loop's heap; their open scopes), and a finished
# loop is kept by nothing here. WHY one loop's: a run has one; another loop (another thread's)
# gets deadlines of its own, which work as well, shared or not.
_last: tuple[weakref.ref[asyncio.AbstractEventLoop], weakref.ref[_Deadlines]] | None = None


def _deadlines_of(loop: asyncio.AbstractEventLoop) -> _Deadlines:
    global _last
    if _last is not None and _last[0]() is loop and (deadlines := _last[1]()) is not None:
        return deadlines
    deadlines = _Deadlines()
    _last = (weakref.ref(loop), weakref.ref(deadlines))
    return deadlines


class deadline:  # noqa: N801 - used as ``with deadline(s):``, like ``asyncio.timeout``
    """A scope that cancels its task ``delay_s`` seconds after it is entered, and raises
    ``TimeoutError`` for it when left; entered and left without awaiting."""

    __slots__ = ("_delay", "_deadlines", "_scope")

    def __init__(self, delay_s: float) -> None:
        self._delay = delay_s

    def __enter__(self) -> deadline:
        loop = asyncio.get_running_loop()
        self._deadlines = deadlines = _deadlines_of(loop)
        self._scope = deadlines.enter(loop, self._delay)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        scope = self._scope
        if self._deadlines.leave(scope) and scope.task.uncancel() <= scope.cancelling \
                and kind is asyncio.CancelledError:
            raise TimeoutError from error
