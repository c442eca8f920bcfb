"""Sync work on reused daemon threads: a pool as large as the work in flight, a hung
call never holding the rest, each job in its own context."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from tracegrade.engine import workers
from tracegrade.engine.workers import in_daemon_thread

case_name: contextvars.ContextVar[str] = contextvars.ContextVar("case_name", default="")


@pytest.fixture(autouse=True)
def own_pool(monkeypatch):
    """A pool of this test's own: idle threads other tests left would take jobs too."""
    monkeypatch.setattr(workers, "_pool", workers._Pool())


def whoami() -> tuple[str, int]:
    return case_name.get(), threading.get_ident()


def test_sequential_jobs_reuse_one_thread_and_carry_each_callers_context():
    async def main():
        seen = []
        for name in ("a", "b", "c", "d"):
            case_name.set(name)
            seen.append(await in_daemon_thread(whoami))
        return seen

    seen = asyncio.run(main())
    assert [name for name, _ in seen] == ["a", "b", "c", "d"]
    assert len({ident for _, ident in seen}) == 1  # a thread per job would give 4


def test_a_hung_job_does_not_hold_the_next_ones():
    release = threading.Event()

    async def main():
        hung = in_daemon_thread(release.wait, 30)
        done = [await asyncio.wait_for(in_daemon_thread(whoami), 5) for _ in range(3)]
        assert not hung.done()
        release.set()
        await asyncio.wait_for(hung, 5)
        return done

    try:
        done = asyncio.run(main())
    finally:
        release.set()
    assert len(done) == 3


def test_concurrent_jobs_run_at_once_on_as_many_threads():
    barrier = threading.Barrier(4, timeout=10)

    async def main():
        return await asyncio.gather(*(in_daemon_thread(lambda: (barrier.wait(), threading.get_ident())[1])
                                      for _ in range(4)))

    assert len(set(asyncio.run(main()))) == 4  # all four waited on the barrier together


def test_an_exception_reaches_the_caller_and_the_thread_lives_on():
    async def main():
        try:
            await in_daemon_thread(int, "not a number")
        except ValueError as exc:
            first = str(exc)
        return first, await in_daemon_thread(whoami)

    first, (_, ident) = asyncio.run(main())
    assert "invalid literal" in first and ident != threading.get_ident()


def test_outcomes_that_arrive_while_the_loop_is_busy_wake_it_once():
    """A wake-up of the loop per finished job was a sync agent's main cost: those that
    finish while the loop is busy are all handed over in one."""
    async def main():
        loop = asyncio.get_running_loop()
        wake_ups = []
        wake = loop.call_soon_threadsafe
        loop.call_soon_threadsafe = lambda *args: (wake_ups.append(args), wake(*args))[1]
        futures = [in_daemon_thread(pow, n, 2) for n in range(8)]
        inbox = workers._inbox(loop)
        for _ in range(5000):  # the loop stays busy (blocked here) until every job has handed over
            if len(inbox._outcomes) == 8:
                break
            threading.Event().wait(0.001)
        return await asyncio.gather(*futures), len(wake_ups)

    squares, wake_ups = asyncio.run(main())
    assert squares == [n * n for n in range(8)]
    assert wake_ups == 1


def test_a_finished_loop_is_not_kept_alive_by_its_inbox():
    import gc
    import weakref

    async def main():
        assert await in_daemon_thread(pow, 3, 2) == 9
        return weakref.ref(asyncio.get_running_loop())

    loop = asyncio.run(main())
    # WHY a wait: the worker thread lets go of its last call once it is idle again, which a loaded
    # machine may delay past asyncio.run's return; a loop kept alive for good still fails after 5 s
    import time

    deadline = time.monotonic() + 5
    while gc.collect() >= 0 and loop() is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert loop() is None


def test_a_call_that_raises_stop_iteration_fails_alone_and_the_others_are_handed_over():
    def stops():
        raise StopIteration("done early")

    async def main():
        futures = [in_daemon_thread(stops), *(in_daemon_thread(pow, n, 2) for n in range(4))]
        return await asyncio.wait_for(asyncio.gather(*futures, return_exceptions=True), 10)  # not a hang

    stopped, *squares = asyncio.run(main())
    assert isinstance(stopped, RuntimeError) and "StopIteration" in str(stopped)
    assert squares == [0, 1, 4, 9]
