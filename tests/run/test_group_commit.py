"""Group commit: the cases that finish while a commit runs share the next transaction,
and a case is reported finished only once it is committed, so kill -9 loses none."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from runs_support import result
from support import wait_for_run
from tracegrade.core.errors import StoreError
from tracegrade.core.results import Manifest
from tracegrade.core.trace import Reply
from tracegrade.case.schema import GoldenCase
from tracegrade.store.run_ids import now_iso
from tracegrade.run.recording import WRITER_ENV_VAR, record_run
from tracegrade.run.runner import RunSettings
from tracegrade.store.runstore import StoredForm, open_store


def manifest(cases: int) -> Manifest:
    return Manifest("r1", "cases.json", "v1", cases, "t", "agent-m", None, None, started_at=now_iso())


def test_a_group_is_stored_whole_or_not_at_all(tmp_path):
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        store.start_run(manifest(3))
        store.save_cases("r1", [(result("c", "pass"), 2)])
        with pytest.raises(StoreError, match="'c'.*already stored"):
            store.save_cases("r1", [(result("a"), 0), (result("b"), 1), (result("c", "fail"), 2)])
        assert store.done_keys("r1") == {("c", 0)}  # a and b went with the failed transaction
        store.save_cases("r1", [(result("a"), 0), (result("c", "pass"), 2)])  # c again, unchanged: accepted
        assert store.done_keys("r1") == {("a", 0), ("c", 0)}


# A bound on waiting for an event, so that broken code fails a test instead of hanging
# it; never reached when the code is right, whatever the machine's load.
BOUND_S = 120


def test_cases_finishing_together_share_a_transaction_and_are_reported_only_once_stored(tmp_path):
    cases = [GoldenCase(id=f"g{i:03d}", question=f"q {i}?") for i in range(60)]
    groups: list[int] = []
    reported_unstored: list[str] = []
    every_case_asked = threading.Event()
    asked: list[str] = []

    async def target(case: GoldenCase) -> Reply:
        asked.append(case.id)
        if len(asked) == len(cases):
            every_case_asked.set()
        return Reply(answer="ok")

    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        save_cases = store.save_cases

        def slow_save(run_id, finished):
            # A slow disk: the first commit lasts until every case has been asked,
            # so the cases finish while it runs (an event, not a sleep: see BOUND_S).
            groups.append(len(finished))
            if len(groups) == 1:
                every_case_asked.wait(BOUND_S)
            save_cases(run_id, finished)

        store.save_cases = slow_save

        def on_result(done) -> None:
            if (done.case_id, done.repeat) not in store.done_keys("r1"):
                reported_unstored.append(done.case_id)

        evaluation = asyncio.run(record_run(cases, target, None, RunSettings(checks_only=True, concurrency=8),
                                             store, manifest(len(cases)), on_result=on_result))
        stored = sorted(r.case_id for r in store.load_run("r1").results)
    assert evaluation.run.status == "finished"
    assert stored == [c.id for c in cases]  # each once
    assert sum(groups) == len(cases)
    assert len(groups) < len(cases) / 2 and max(groups) > 1, groups  # grouped, not one transaction per case
    assert reported_unstored == []


def _slow_first_commit(store, finished_before: list[int], calls: list[str], until: threading.Event):
    """The store's first commit lasts until ``until`` is set; how many cases had been
    asked when it ended."""
    save_cases = store.save_cases

    def slow(run_id, finished):
        if not finished_before:
            until.wait(BOUND_S)
            finished_before.append(len(calls))
        save_cases(run_id, finished)

    store.save_cases = slow


@pytest.mark.parametrize("backlog", [1024, 5])
def test_workers_go_on_while_a_commit_runs_until_the_backlog_is_full(tmp_path, monkeypatch, backlog):
    """A slow fsync no longer holds every worker: the cases go on finishing
    (and wait for their commit only past the backlog), and are reported once stored."""
    from tracegrade.run.recording import GroupCommit

    monkeypatch.setattr(GroupCommit, "BACKLOG", backlog)
    cases = [GoldenCase(id=f"w{i:03d}", question=f"q {i}?") for i in range(80)]
    calls: list[str] = []
    finished_before: list[int] = []
    reported: list[str] = []
    # The first commit ends once nothing more can happen while it runs: every case
    # asked, or both workers waiting in save (past the backlog).
    settled = threading.Event()
    waiting_in_save = 0
    save = GroupCommit.save

    async def counted_save(self, result, position) -> None:
        nonlocal waiting_in_save
        waiting_in_save += 1
        if waiting_in_save == 2:  # WHY safe: save does not yield before it waits for its commit
            settled.set()
        await save(self, result, position)
        waiting_in_save -= 1

    monkeypatch.setattr(GroupCommit, "save", counted_save)

    async def target(case: GoldenCase) -> Reply:
        calls.append(case.id)
        if len(calls) == len(cases):
            settled.set()
        return Reply(answer="ok")

    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        _slow_first_commit(store, finished_before, calls, settled)
        recorded = asyncio.run(record_run(cases, target, None, RunSettings(checks_only=True, concurrency=2),
                                          store, manifest(len(cases)), on_result=lambda r: reported.append(r.case_id)))
        assert len(store.done_keys("r1")) == len(cases)
    assert recorded.run.status == "finished" and sorted(reported) == [c.id for c in cases]
    if backlog == 5:
        assert finished_before[0] == backlog + 2  # the backlog (the case in the commit among them), two workers
    else:
        assert finished_before[0] == len(cases)  # nobody waited for the slow commit


class _HeldWriter:
    """A store writer whose answers come only when the test lets each group's through."""

    def __init__(self) -> None:
        self.sent: list[list[str]] = []
        self.answered = 0
        self._released = asyncio.Semaphore(0)

    def send(self, finished) -> None:
        self.sent.append([result.case_id for result, _ in finished])

    async def committed(self) -> list[StoredForm]:
        await self._released.acquire()
        group = self.sent[self.answered]
        self.answered += 1
        return [StoredForm("k", "", True) for _ in group]

    def release(self) -> None:
        self._released.release()


def test_a_worker_past_the_backlog_goes_on_once_room_is_made_not_when_its_own_case_commits(monkeypatch):
    """Past the backlog a worker waits for the backlog to fall, not for its own case: that case
    is in the newest group, handed over only once every group before it is answered, so waiting
    for it stopped the run until the writer's whole pipeline was empty."""
    from tracegrade.run.recording import PipedCommit

    monkeypatch.setattr(PipedCommit, "GROUP", 2)
    monkeypatch.setattr(PipedCommit, "BACKLOG", 4)
    writer = _HeldWriter()
    reported: list[str] = []

    async def scenario() -> None:
        commits = PipedCommit(None, "r1", writer, on_stored=lambda r: reported.append(r.case_id))
        saved = 0

        async def produce() -> None:
            nonlocal saved
            for i in range(8):
                await commits.save(result(f"c{i}"), i)
                saved += 1

        producer = asyncio.create_task(produce())
        for _ in range(5):
            await asyncio.sleep(0)
        # c0..c3 handed over in two groups, c4 past the backlog: its worker waits, c4 not handed over
        assert writer.sent == [["c0", "c1"], ["c2", "c3"]] and saved == 4
        writer.release()  # the first group commits: room again, while c4 is not even handed over
        for _ in range(5):
            await asyncio.sleep(0)
        assert saved > 5 and reported == ["c0", "c1"]
        for _ in range(8):
            writer.release()
        await producer
        await commits.drain()
        assert reported == [f"c{i}" for i in range(8)]  # each reported once committed, in order

    asyncio.run(asyncio.wait_for(scenario(), 30))


def test_a_failed_commit_stops_the_run_with_the_stores_error_and_reports_nothing_unstored(tmp_path):
    cases = [GoldenCase(id=f"f{i:03d}", question=f"q {i}?") for i in range(40)]
    reported: list[str] = []

    async def target(case: GoldenCase) -> Reply:
        await asyncio.sleep(0.001)
        return Reply(answer="ok")

    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        save_cases = store.save_cases

        def failing(run_id, finished):
            if any(r.case_id == "f010" for r, _ in finished):
                raise StoreError("disk full")
            save_cases(run_id, finished)

        store.save_cases = failing
        with pytest.raises(StoreError, match="disk full"):
            asyncio.run(record_run(cases, target, None, RunSettings(checks_only=True, concurrency=4), store,
                                   manifest(len(cases)), on_result=lambda r: reported.append(r.case_id)))
        stored = {case_id for case_id, _ in store.done_keys("r1")}
    assert "f010" not in stored and set(reported) == stored


# WHY a gate, not a delay: the first run must still be going when it is killed. Cases
# from g0200 on wait until the run is resumed (RESUMED=1), so the kill always finds a
# run mid-way, however fast or slow the machine.
TARGET = """
import asyncio
import os
from tracegrade import Reply

async def ask(case):
    if int(case.id[1:]) >= 200 and not os.environ.get("RESUMED"):
        await asyncio.sleep(3600)
    return Reply(answer="ok")
"""


@pytest.mark.slow
@pytest.mark.parametrize("writer", ["thread", "process"])  # the store's writer in the run or its own process
def test_kill_9_loses_no_case_the_run_reported_finished_and_resume_completes_each_once(tmp_path, writer):
    count = 1500
    (tmp_path / "quick_target.py").write_text(TARGET)
    (tmp_path / "cases.json").write_text(json.dumps([{"id": f"g{i:04d}", "question": f"q {i}?"} for i in range(count)]))
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    command = [sys.executable, "-m", "tracegrade.cli", "run", "cases.json", "--target", "quick_target:ask",
               "--checks-only", "--concurrency", "32", "--db", url, "--out", "runs"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "TRACEGRADE_SPANS_DB": "off", WRITER_ENV_VAR: writer,
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    log = tmp_path / "first.log"
    with log.open("w") as output:
        first = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=output, stderr=subprocess.STDOUT)
        run_id = wait_for_run(lambda: re.search(r"\brun (\d{8}-\d{6}-\w+)", log.read_text()), first).group(1)
        with open_store(url) as store:
            # WHY the log too: killed between a commit and its first progress line, the run had reported nothing
            wait_for_run(lambda: len(store.done_keys(run_id)) >= 100
                         and re.search(r"^g\d{4}\s+PASS$", log.read_text(), re.MULTILINE), first)
            writers = _writer_children(first.pid)
            assert bool(writers) == (writer == "process"), writers
            first.kill()  # SIGKILL: no handler, no cleanup
            first.wait()
            _wait_gone(writers)  # killed with the run, and with it its hold on the run's lock
            before = {r.case_id: r.to_json() for r in store.load_run(run_id).results}
    reported = set(re.findall(r"^(g\d{4})\s+PASS$", log.read_text(), re.MULTILINE))
    assert reported and len(before) < count, (len(reported), len(before))
    assert reported <= set(before)  # every case the run said was finished is in the store
    second = subprocess.run([*command, "--quiet", "--resume", run_id], cwd=tmp_path, env={**env, "RESUMED": "1"},
                            capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr[-2000:]
    with open_store(url) as store:
        after = store.load_run(run_id).results
    assert sorted(r.case_id for r in after) == [f"g{i:04d}" for i in range(count)]  # none lost, none twice
    assert {r.case_id: r.to_json() for r in after if r.case_id in before} == before


def _writer_children(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(c) for c in children if b"tracegrade.store.writer" in Path(f"/proc/{c}/cmdline").read_bytes()]


def _wait_gone(pids: list[int], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while any(Path(f"/proc/{pid}").exists() for pid in pids):
        assert time.monotonic() < deadline, "the writer process outlived its run"
        time.sleep(0.02)
