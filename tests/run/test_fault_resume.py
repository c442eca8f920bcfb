"""A checks-and-judge run on the fault server killed with SIGKILL mid-run, then
resumed: no finished case is lost, redone or asked of the server again.

Its own file (not beside the fault run in test_fault_run.py) so the suite's
workers can run the two subprocess runs at the same time. Neither loads torch
(tests/fault_target.py): the first run here still lasts long enough to be
killed mid-way, its answers each delayed by the server (latency_s).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from places import TESTS
from support import wait_for_run
from test_fault_run import ATTEMPTS, PLANTED, RATES, fault_cases
from tracegrade.testing.fault_server import FaultServer

pytestmark = pytest.mark.slow
pytest.importorskip("openai")


def test_kill_9_mid_run_then_resume_loses_and_redoes_no_finished_case(tmp_path):
    from tracegrade.store.runstore import open_store

    (tmp_path / "cases.json").write_text(json.dumps(fault_cases()[:40]))
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    command = [sys.executable, "-m", "tracegrade.cli", "run", "cases.json", "--target", "fault_target:ask",
               "--judge-model", "openai:fault-judge", "--concurrency", "8", "--db", url, "--out", "runs", "--quiet"]
    with FaultServer(RATES, seed=3, retry_after="0", latency_s=0.02) as server:
        env = {
            **os.environ, "OPENAI_API_KEY": PLANTED, "TRACEGRADE_AGENT_MODEL": "openai:fault-agent",
            "TRACEGRADE_AGENT_BASE_URL": server.base_url, "TRACEGRADE_JUDGE_BASE_URL": server.base_url,
            "TRACEGRADE_MODEL_TIMEOUT_S": "1", "TRACEGRADE_MODEL_RETRIES": str(ATTEMPTS - 1),
            "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
        }
        log = tmp_path / "first.log"
        with log.open("w") as stderr:
            first = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
            run_id = wait_for_run(lambda: re.search(r"\brun (\d{8}-\d{6}-\w+)", log.read_text()), first).group(1)
            with open_store(url) as store:
                wait_for_run(lambda: len(store.done_keys(run_id)) >= 10, first)
                first.kill()  # SIGKILL: no handler, no cleanup
                first.wait()
                before = {r.case_id: r.to_json() for r in store.load_run(run_id).results}
                served_before_kill = len(server.log)
        assert 10 <= len(before) < 40, len(before)
        second = subprocess.run([*command, "--resume", run_id], cwd=tmp_path, env=env,
                                capture_output=True, text=True, timeout=120)
    assert second.returncode in (0, 1), second.stderr[-2000:]
    with open_store(url) as store:
        after = store.load_run(run_id).results
        assert store.info(run_id).status == "finished"
    assert sorted(r.case_id for r in after) == [f"f{i:03d}" for i in range(40)]  # none lost, none twice
    assert {r.case_id: r.to_json() for r in after if r.case_id in before} == before  # finished cases kept as they were
    resumed = {served.case for served in server.log[served_before_kill:]}
    assert resumed and not resumed & set(before)  # and not one request was made for them again
