"""A case's deadline: asyncio.timeout's meaning on one shared timer (engine/deadline.py)."""

from __future__ import annotations

import asyncio

import pytest

from tracegrade.engine import deadline as deadline_module
from tracegrade.engine.deadline import deadline


async def _sleeps(delay_s: float, limit_s: float) -> str:
    try:
        with deadline(limit_s):
            await asyncio.sleep(delay_s)
    except TimeoutError:
        return "timed out"
    return "done"


def test_a_scope_that_ends_in_time_is_left_alone_and_a_later_one_still_times_out():
    async def main():
        first = await _sleeps(0, 0.05)
        # the timer was armed for the first scope's deadline, which is gone by now
        second = await _sleeps(5, 0.1)
        return first, second

    assert asyncio.run(main()) == ("done", "timed out")


def test_scopes_time_out_by_their_own_deadline_whatever_the_order_they_started_in():
    async def main():
        long = asyncio.create_task(_sleeps(0.3, 5))
        await asyncio.sleep(0)
        short = asyncio.create_task(_sleeps(5, 0.05))
        finished_first = next(iter((await asyncio.wait({long, short}, return_when=asyncio.FIRST_COMPLETED))[0]))
        return finished_first is short, short.result(), await long

    assert asyncio.run(main()) == (True, "timed out", "done")


def test_a_cancellation_from_elsewhere_goes_on_as_a_cancellation():
    async def main():
        task = asyncio.create_task(_sleeps(5, 10))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


def test_an_inner_scope_times_out_inside_an_outer_one_that_goes_on():
    async def main():
        with deadline(5):
            inner = await _sleeps(5, 0.02)
            await asyncio.sleep(0.01)  # the task is not left cancelled
            return inner

    assert asyncio.run(main()) == "timed out"


def test_the_scopes_kept_stay_as_many_as_are_open_behind_a_long_one():
    async def main():
        long = asyncio.create_task(_sleeps(0.2, 5))
        await asyncio.sleep(0)
        for _ in range(2000):
            await _sleeps(0, 5)
        deadlines = deadline_module._last[1]()
        kept = len(deadlines._scopes)
        await long
        return kept

    assert asyncio.run(main()) <= 2 + 64


def test_outside_a_task_it_says_so():
    async def main():
        loop = asyncio.get_running_loop()
        outside = asyncio.Future()
        loop.call_soon(lambda: outside.set_result(_enter_outside_a_task()))
        return await outside

    assert "inside a task" in asyncio.run(main())


def _enter_outside_a_task() -> str:
    try:
        with deadline(1):
            return "entered"
    except RuntimeError as exc:
        return str(exc)


def test_a_finished_loop_is_not_kept_alive_by_its_deadlines():
    import gc
    import weakref

    async def main():
        await _sleeps(0, 5)
        return weakref.ref(asyncio.get_running_loop())

    loop = asyncio.run(main())
    gc.collect()
    assert loop() is None


def test_one_timer_serves_scopes_that_start_and_end_one_after_another():
    """A case that answers at once enters and leaves its scope before the next one starts:
    a timer put on the loop's heap for each was what asyncio.timeout cost."""
    async def main():
        loop = asyncio.get_running_loop()
        timers = []
        call_at = loop.call_at
        loop.call_at = lambda *args, **named: (timers.append(args), call_at(*args, **named))[1]
        for _ in range(100):
            with deadline(600):
                pass
        return len(timers), await _sleeps(5, 0.02)

    assert asyncio.run(main()) == (1, "timed out")  # one timer for the hundred; a shorter scope still ends
