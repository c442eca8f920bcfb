"""A `tracegrade run` killed with SIGKILL mid-run keeps every finished case, and
`--resume` runs only the rest."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from places import TESTS
from runs_support import GOLDEN_PATH
from tracegrade.cli import main
from tracegrade.store.runstore import open_store

CASES = 12


def _stored(db: Path) -> int:
    try:
        # mode=ro: a plain connect would create an empty file, which the store then refuses.
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return conn.execute("SELECT COUNT(*) FROM case_results").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def _start_run(tmp_path: Path, log: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
           "TG_SLOW_S": "0.4", "TG_CALL_LOG": str(log), "TRACEGRADE_DB": f"sqlite:///{tmp_path / 'runs.db'}"}
    command = [sys.executable, "-m", "tracegrade.cli", "run", str(GOLDEN_PATH), "--target", "runs_support:slow_target",
               "--checks-only", "--concurrency", "2", "--quiet", "--out", str(tmp_path / "out")]
    return subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _kill_after(process: subprocess.Popen, db: Path, cases: int, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while _stored(db) < cases:
        if process.poll() is not None:
            pytest.fail(f"the run ended before it could be killed: {process.stderr.read().decode()[-500:]}")
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"fewer than {cases} cases stored after {timeout_s} s")
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(10)


def test_a_run_killed_mid_way_keeps_its_cases_and_resume_runs_only_the_rest(tmp_path, monkeypatch):
    db, log = tmp_path / "runs.db", tmp_path / "calls.log"
    process = _start_run(tmp_path, log)
    _kill_after(process, db, cases=3)
    assert process.returncode == -signal.SIGKILL

    with open_store(f"sqlite:///{db}") as store:
        [info] = store.runs()
        before = store.load_run(info.run_id)
    assert info.status == "running" and 3 <= len(before.results) < CASES
    assert all(r.status == "pass" and r.reply is not None for r in before.results)  # whole cases only

    log.write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TG_SLOW_S", "0")
    monkeypatch.setenv("TG_CALL_LOG", str(log))
    monkeypatch.setenv("TRACEGRADE_DB", f"sqlite:///{db}")
    # The resumed run takes its target, filters and settings from the stored manifest.
    assert main(["run", str(GOLDEN_PATH), "--resume", info.run_id[:15], "--quiet", "--out", str(tmp_path / "out")]) == 0

    resumed_calls = log.read_text().split()
    done_before = {r.case_id for r in before.results}
    assert len(resumed_calls) == len(set(resumed_calls)) == CASES - len(done_before)
    assert not set(resumed_calls) & done_before
    with open_store(f"sqlite:///{db}") as store:
        after = store.load_run(info.run_id)
        assert store.info(info.run_id).status == "finished"
    assert len(after.results) == CASES and after.manifest.ended_at and after.manifest.totals["passed"] == CASES
    kept = {r.case_id: r for r in after.results}
    assert all(kept[r.case_id] == r for r in before.results)  # untouched, not redone
    assert (tmp_path / "out" / info.run_id / "results.json").is_file()


def test_resume_refuses_a_finished_run_and_a_changed_dataset(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TG_SLOW_S", "0")
    monkeypatch.setenv("TRACEGRADE_DB", f"sqlite:///{tmp_path / 'runs.db'}")
    common = ["--target", "runs_support:slow_target", "--checks-only", "--quiet", "--out", str(tmp_path / "out")]
    assert main(["run", str(GOLDEN_PATH), *common]) == 0
    with open_store() as store:
        run_id = store.runs()[0].run_id
    assert main(["run", str(GOLDEN_PATH), "--resume", run_id]) == 2
    assert "already finished" in capsys.readouterr().err

    with open_store() as store:  # pretend it was interrupted, then edit the dataset
        store.reopen_run(run_id)
    edited = tmp_path / "edited.json"
    edited.write_text(GOLDEN_PATH.read_text().replace("How many days", "How many weeks"))
    assert main(["run", str(edited), "--resume", run_id]) == 2
    assert "resume refuses" in capsys.readouterr().err
