"""The store's writer process (store/writer.py): it stores each case as the store itself would,
redacts the secrets the run knows, holds the run's lock while it lives, and a run through it
stores and reports as a run through the thread does (its kill -9 and resume: test_group_commit.py,
with the writer in either place)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sqlite3
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from runs_support import result
from tracegrade.core.errors import StoreError
from tracegrade.core.redact import register_secret
from tracegrade.core.results import Manifest
from tracegrade.core.trace import Reply, ToolCall
from tracegrade.case.schema import GoldenCase
from tracegrade.store.run_ids import now_iso
from tracegrade.run.recording import WRITER_ENV_VAR, record_run
from tracegrade.run.runner import RunSettings
from tracegrade.store.backends import RunLocked
from tracegrade.store.runstore import StoredForm, open_store, stored_form
from tracegrade.store.writer import DEADLINE_ENV_VAR, start_writer


def manifest(cases: int) -> Manifest:
    return Manifest("r1", "cases.json", "v1", cases, "t", "agent-m", None, None, started_at=now_iso())


def answered(form: StoredForm) -> StoredForm:
    """``form`` as the writer answers it: without its text where it reads back as its result."""
    return replace(form, text="") if form.same else form


def test_the_writer_stores_each_case_as_the_store_would_and_answers_each_group_in_order(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    groups = [[result("a"), result("b", "fail")], [result("c", reply=Reply(answer="mail me at jane.doe@example.com"))]]

    async def write() -> list[list]:
        with open_store(url) as store:
            store.start_run(manifest(3))
            writer = await start_writer(store, "r1")
            assert writer is not None
            position = 0
            for group in groups:
                writer.send([(r, position + i) for i, r in enumerate(group)])
                position += len(group)
            answers = [await writer.committed() for _ in groups]
            await writer.close()
            return answers

    answers = asyncio.run(write())
    expected = [[stored_form(r) for r in group] for group in groups]
    assert answers == [[answered(form) for form in group] for group in expected]
    assert [form.same for group in answers for form in group] == [True, True, False]
    assert "jane.doe@example.com" not in answers[1][0].text and "[REDACTED" in answers[1][0].text
    with open_store(url) as store:
        stored = [store.case_text("r1", r.case_id) for group in groups for r in group]
    assert stored == [form.text for group in expected for form in group]


def test_a_secret_registered_in_the_run_after_the_writer_started_is_redacted_by_it(tmp_path):
    secret = "tg-writer-test-secret-5d2c9e71"

    async def write() -> str:
        with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
            store.start_run(manifest(1))
            writer = await start_writer(store, "r1")
            assert writer is not None
            register_secret(secret)  # known to this process only
            writer.send([(result("a", reply=Reply(answer=f"the key is {secret}")), 0)])
            form = (await writer.committed())[0]
            await writer.close()
            return form.text

    text = asyncio.run(write())
    assert secret not in text and "the key is" in text


def test_a_store_error_in_the_writer_fails_its_group_with_that_error(tmp_path):
    async def write() -> None:
        with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
            writer = await start_writer(store, "never-started")
            assert writer is not None
            writer.send([(result("a"), 0)])
            try:
                await writer.committed()
            finally:
                await writer.close()

    with pytest.raises(StoreError, match="FOREIGN KEY"):
        asyncio.run(write())


def test_the_writer_holds_the_runs_lock_until_it_ends(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"

    async def hold() -> None:
        with open_store(url) as store:
            with store.run_lock("r1"):
                writer = await start_writer(store, "r1")
                assert writer is not None
            with open_store(url) as other, pytest.raises(RunLocked):  # this process let go; the writer did not
                other.claim_run("r1")
            await writer.close()
            with open_store(url) as other:
                other.claim_run("r1")

    asyncio.run(hold())


def test_no_writer_process_where_no_interpreter_can_be_started(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python"))
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        assert asyncio.run(start_writer(store, "r1")) is None  # the run writes from its thread


def test_no_writer_process_for_a_store_in_memory():
    with open_store("sqlite:///:memory:") as store:
        assert asyncio.run(start_writer(store, "r1")) is None


def cases_and_target(count: int):
    cases = [GoldenCase(id=f"c{i:04d}", question=f"where is ORD-{i}?", expected_tool="getOrderStatus",
                        expected_tool_argument=f"ORD-{i}", answer_must_include=[f"ORD-{i}"]) for i in range(count)]

    async def target(case: GoldenCase) -> Reply:
        number = int(case.id[1:])
        if number % 7 == 3:
            raise RuntimeError("agent down")
        if number % 11 == 5:
            await asyncio.sleep(0.002)  # finishes after cases started later
        argument = case.expected_tool_argument if number % 5 else "ORD-0"
        answer = f"{argument} ships today" + (", write to bob@example.com" if number % 13 == 0 else "")
        return Reply(answer=answer, tool_calls=(ToolCall(name="getOrderStatus", arguments={"orderId": argument},
                                                         argument=argument, result="SHIPPED"),))

    return cases, target


@pytest.mark.parametrize("concurrency", [1, 16])
def test_a_run_through_the_writer_stores_and_reads_as_one_through_the_thread(tmp_path, monkeypatch, concurrency):
    cases, target = cases_and_target(300)  # past PipedCommit.GROUP: several groups, some handed over at once
    runs = {}
    for how in ("thread", "process"):
        monkeypatch.setenv(WRITER_ENV_VAR, how)
        with open_store(f"sqlite:///{tmp_path / f'{how}.db'}") as store:
            reported: list[str] = []
            evaluation = asyncio.run(record_run(cases, target, None, RunSettings(checks_only=True, concurrency=concurrency),
                                                store, manifest(len(cases)), on_result=lambda r: reported.append(r.case_id)))
            texts = [json.loads(store.case_text("r1", c.id) or "null") for c in cases]
        runs[how] = evaluation, texts, sorted(reported)
    (thread, thread_texts, thread_reported), (piped, piped_texts, piped_reported) = runs["thread"], runs["process"]
    for text in (*thread_texts, *piped_texts):
        text.pop("seconds")  # the one field that differs from run to run
    assert piped_texts == thread_texts and "bob@example.com" not in json.dumps(piped_texts)
    assert piped_reported == thread_reported == [c.id for c in cases]
    totals = [{k: v for k, v in e.summary.totals().items() if k != "latencyS"} for e in (thread, piped)]
    assert piped.run.status == "finished" and totals[1] == totals[0] and totals[0]["cases"] == len(cases)
    assert piped.metrics.overall == thread.metrics.overall


def test_a_library_printing_in_the_writer_does_not_break_its_answers(tmp_path, monkeypatch, capfd):
    # The writer started through a wrapper whose store prints on every save, as a chatty library would.
    wrapper = tmp_path / "noisy_writer.py"
    wrapper.write_text(
        "import runpy, sys\n"
        "from tracegrade.store import runstore\n"
        "save = runstore.RunStore.save_handed\n"
        "def noisy(self, *args):\n"
        "    print('a library says hello on stdout', flush=True)\n"
        "    return save(self, *args)\n"
        "runstore.RunStore.save_handed = noisy\n"
        "sys.argv = ['writer', *sys.argv[3:]]\n"  # past '-m tracegrade.store.writer'
        "runpy.run_module('tracegrade.store.writer', run_name='__main__', alter_sys=True)\n")
    launcher = tmp_path / "python"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{wrapper}" "$@"\n')
    launcher.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(launcher))
    url = f"sqlite:///{tmp_path / 'runs.db'}"

    async def write() -> list:
        with open_store(url) as store:
            store.start_run(manifest(2))
            writer = await start_writer(store, "r1")
            assert writer is not None
            writer.send([(result("a"), 0)])
            first = await writer.committed()
            writer.send([(result("b", "fail"), 1)])
            second = await writer.committed()
            await writer.close()
            return first + second

    # WHY a deadline: printed bytes read as a frame's length leave the run waiting for bytes never sent
    forms = asyncio.run(asyncio.wait_for(write(), 60))
    assert forms == [answered(stored_form(result("a"))), answered(stored_form(result("b", "fail")))]
    assert capfd.readouterr().err.count("a library says hello on stdout") == 2  # said, on stderr


def test_groups_waiting_together_share_a_transaction_until_it_holds_transaction_rows(tmp_path, monkeypatch):
    """What waits goes in one transaction (one fsync), but no group joins one that already holds
    TRANSACTION_ROWS cases: a group is answered only once its transaction commits."""
    import io
    import os
    import pickle

    from tracegrade.store import writer as writer_module
    from tracegrade.store.runstore import RunStore, redaction_key

    monkeypatch.setattr(writer_module, "TRANSACTION_ROWS", 5)
    transactions: list[int] = []
    save_handed = RunStore.save_handed

    def counted(self, run_id, rows):
        transactions.append(len(rows))
        return save_handed(self, run_id, rows)

    monkeypatch.setattr(RunStore, "save_handed", counted)
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with open_store(url) as store:
        store.start_run(manifest(12))
    key = redaction_key(False)
    groups = [[(f"c{i}", 0, i, "pass", result(f"c{i}").to_json(), True) for i in range(start, start + 3)]
              for start in range(0, 12, 3)]
    source, sink = os.pipe()
    os.write(sink, b"".join(writer_module._frame((key, None, rows)) for rows in groups))  # all waiting at once
    os.close(sink)
    answers = io.BytesIO()
    writer_module.serve(str(tmp_path / "runs.db"), False, "r1", source, answers)
    os.close(source)
    assert transactions == [6, 6]  # two groups of three at a time: the next would pass five
    data, replies = answers.getvalue(), []
    while data:
        size = int.from_bytes(data[:8], "little")
        replies.append(pickle.loads(data[8:8 + size]))
        data = data[8 + size:]
    assert [len(forms) for kind, _, forms in replies if kind == "ok"] == [3, 3, 3, 3]
    with open_store(url) as store:
        assert len(store.done_keys("r1")) == 12


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the writer's state in /proc")
def test_a_writer_that_stops_answering_fails_its_group_at_the_deadline_and_is_killed(tmp_path, monkeypatch):
    # found by issue 47: a writer stopped with SIGSTOP stalled the run with no message and no end
    monkeypatch.setenv(DEADLINE_ENV_VAR, "0.5")

    async def write() -> tuple[str, float, int]:
        with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
            store.start_run(manifest(1))
            writer = await start_writer(store, "r1")
            assert writer is not None
            pid = writer._child.pid
            os.kill(pid, signal.SIGSTOP)
            writer.send([(result("a"), 0)])
            started = time.monotonic()
            with pytest.raises(StoreError) as raised:
                await asyncio.wait_for(writer.committed(), 30)  # WHY a bound: on the main before, it never returned
            waited = time.monotonic() - started
            await asyncio.wait_for(writer.close(), 10)  # killed, not waited for
            return str(raised.value), waited, pid

    message, waited, pid = asyncio.run(write())
    assert f"the store's writer process (pid {pid}) gave no answer in 0.5 s (it is stopped)" in message
    assert 0.5 <= waited < 5 and not Path(f"/proc/{pid}").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the writer process in /proc")
@pytest.mark.parametrize(("sent", "reason"), [
    (signal.SIGSTOP, r"the store's writer process \(pid \d+\) gave no answer in 1 s \(it is stopped\)"),
    (signal.SIGKILL, r"the store's writer process ended \(exit -9\)"),
])
def test_a_run_whose_writer_stops_or_dies_ends_with_the_reason_exit_2_is_marked_failed_and_resume_finishes_it(
        tmp_path, monkeypatch, capsys, sent, reason):
    import stop_writer_agent as agent
    from tracegrade.cli import main

    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"id": f"c{i:03d}", "question": f"question {i}"} for i in range(300)]))
    monkeypatch.setenv(WRITER_ENV_VAR, "process")
    monkeypatch.setenv(DEADLINE_ENV_VAR, "1")
    monkeypatch.setattr(agent, "STOP_AT", 100)
    monkeypatch.setattr(agent, "stopped", [])
    monkeypatch.setattr(agent, "answered", 0)
    monkeypatch.setattr(agent, "SIGNAL", sent)
    db = f"sqlite:///{tmp_path / 'runs.db'}"

    def some_stored() -> bool:
        with sqlite3.connect(tmp_path / "runs.db") as connection:
            return connection.execute("SELECT count(*) FROM case_results").fetchone()[0] > 0

    monkeypatch.setattr(agent, "committed", some_stored)
    flags = ["--target", "stop_writer_agent:answer", "--checks-only", "--quiet", "--db", db,
             "--out", str(tmp_path / "out")]
    assert _ended_within(60, lambda: main(["run", str(cases), *flags]), agent.stopped) == 2
    err = capsys.readouterr().err
    assert re.search("error: " + reason, err), err
    assert agent.stopped and not any(Path(f"/proc/{pid}").exists() for pid in agent.stopped)  # killed, lock let go
    with open_store(db) as store:
        [info] = store.runs()
        assert info.status == "failed" and re.match(reason, info.manifest.totals["error"])
        stored = len(store.done_keys(info.run_id))
    assert 0 < stored < 300
    monkeypatch.setattr(agent, "STOP_AT", 0)
    assert main(["run", str(cases), "--resume", info.run_id, *flags]) == 0
    with open_store(db) as store:
        after = store.load_run(info.run_id)
        assert store.info(info.run_id).status == "finished"
    assert sorted(r.case_id for r in after.results) == [f"c{i:03d}" for i in range(300)]  # each once


def _ended_within(seconds: float, call, stopped: list[int]) -> object:
    """What ``call()`` returned; a failure if it had not returned after ``seconds`` (the run stalled,
    as it did on the main before: the writers it stopped are then killed, so the run can end)."""
    import threading

    returned: list[object] = []
    thread = threading.Thread(target=lambda: returned.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        for pid in stopped:
            os.kill(pid, signal.SIGKILL)
        thread.join(30)
        pytest.fail(f"the run had not ended {seconds:g} s after its writer stopped")
    return returned[0]
