"""The Ray executor gives the local executor's results, stored in the same store.

One local Ray instance with 2 CPUs for the module (its start-up is most of the
time here). The scripted targets, judge and recipes are in tests/ray_parts.py,
a light module, so that Ray workers import them by name without this one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os

import pytest

from ray_parts import (SECRET, broken_parts, costly_target, dying_target, pid_parts, pid_target, scripted_parts,
                       secret_target)
from tracegrade import cli
from tracegrade.case.schema import GoldenCase
from tracegrade.run.executors import local_executor, ray_executor
from tracegrade.core.redact import register_secret
from tracegrade.core.results import Manifest
from tracegrade.stats.pricing import PriceTable
from tracegrade.run.runner import Budget, RunSettings, run_cases
from tracegrade.store.runstore import open_store, redaction_key, stored_text

pytestmark = pytest.mark.slow  # a Ray instance and its worker processes

CASES = tuple(
    GoldenCase(id=f"case-{n:02d}", question=f"Where is my order ORD-1{n:02d}?", golden_answer="It shipped.",
               expected_tool="getOrderStatus", expected_tool_argument=f"ORD-1{n:02d}", category=f"cat-{n % 3}")
    for n in range(12)
)


def comparable(results) -> list[dict]:
    """Results without their wall-clock seconds, the one field that differs by design."""
    return [{**r.to_json(), "seconds": None} for r in sorted(results, key=lambda r: (r.case_id, r.repeat))]


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'tracegrade[ray]')")
    from tracegrade.run.executors import init_ray

    init_ray(num_cpus=2)
    yield ray
    ray.shutdown()


def run_with(executor, settings: RunSettings) -> list:
    target, judge = scripted_parts()
    with executor as evaluate:
        return asyncio.run(run_cases(CASES, target, judge, settings, evaluate=evaluate))


@pytest.mark.parametrize("batch", [1, 3])
def test_ray_results_equal_local_results(ray_cluster, batch):
    settings = RunSettings(concurrency=8, repeat=2)
    local = run_with(local_executor(), settings)
    remote = run_with(ray_executor(scripted_parts, concurrency=8, batch=batch), settings)
    assert len(remote) == len(CASES) * 2
    # Each job gets its own result, and the runner's order survives the batches.
    assert [(r.case_id, r.repeat) for r in remote] == [(r.case_id, r.repeat) for r in local]
    assert comparable(remote) == comparable(local)
    statuses = {r.case_id: r.status for r in remote}
    # The contained failures travel back from the workers as data.
    assert statuses["case-03"] == "fail" and statuses["case-05"] == "error" and statuses["case-09"] == "unscored"
    assert statuses["case-07"] == "fail" and statuses["case-00"] == "pass"
    assert "the agent crashed" in next(r.error for r in remote if r.case_id == "case-05")


def test_jobs_run_in_ray_workers_not_in_the_driver(ray_cluster, tmp_path):
    cases = tuple(c.model_copy(update={"golden_answer": str(tmp_path)}) for c in CASES)
    with ray_executor(pid_parts, concurrency=8) as evaluate:
        results = asyncio.run(run_cases(cases, pid_target, None, RunSettings(concurrency=8), evaluate=evaluate))
    pids = {r.reply.answer for r in results}
    assert len(pids) == 2 and str(os.getpid()) not in pids  # one actor per CPU, both used
    assert {p.name for p in tmp_path.iterdir()} == pids


def write_cases(folder) -> object:
    dataset = folder / "cases.json"
    dataset.write_text(json.dumps([c.model_dump(mode="json", by_alias=True) for c in CASES]))
    return dataset


def stored_json(db: str) -> list[list[dict]]:
    """Each run's stored results as the store wrote them, without the seconds."""
    with open_store(db) as store:
        runs = [info.run_id for info in store.runs()]
        texts = [store._query("SELECT result FROM case_results WHERE run_id = ? ORDER BY position", (run,))
                 for run in runs]
    return [[{**json.loads(text), "seconds": None} for (text,) in rows] for rows in texts]


def test_a_ray_run_captures_the_agents_sdk_calls_in_the_workers(ray_cluster, tmp_path):
    pytest.importorskip("openai")
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    common = ["run", str(write_cases(tmp_path)), "--target", "ray_parts:sdk_agent", "--capture", "openai",
              "--checks-only", "--quiet", "--db", db, "--out", str(tmp_path / "out"), "--concurrency", "4"]
    assert cli.main([*common, "--executor", "ray"]) == 0  # each case's call was recorded in its worker
    assert cli.main([*common, "--executor", "local"]) == 0
    with open_store(db) as store:
        runs = [store.load_run(info.run_id) for info in store.runs()]
    calls = [[(c.name, c.arguments) for r in run.results for c in r.reply.tool_calls] for run in runs]
    assert calls[0] == calls[1] == [("getOrderStatus", {"orderId": c.expected_tool_argument}) for c in CASES]


def test_cli_ray_run_is_stored_like_a_local_run_and_the_driver_does_not_encode_it(ray_cluster, tmp_path, monkeypatch):
    # WHY no registered secrets: one an earlier test registered in this process (a
    # Postgres URL's password) is a secret the workers do not know: the driver would
    # rightly encode again (the next test), and this one is about when it need not.
    from tracegrade.core import redact

    monkeypatch.setattr(redact, "_registered", set())
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    common = ["run", str(write_cases(tmp_path)), "--target", "ray_parts:scripted_target", "--checks-only",
              "--quiet", "--db", db, "--out", str(tmp_path / "out"), "--concurrency", "6"]
    assert cli.main([*common, "--executor", "local"]) == 1  # three cases fail their checks
    assert cli.main([*common, "--executor", "ray"]) == 1
    with open_store(db) as store:
        runs = [store.load_run(info.run_id) for info in store.runs()]
    assert len(runs) == 2 and all(len(run.results) == len(CASES) for run in runs)
    assert comparable(runs[0].results) == comparable(runs[1].results)
    local, remote = stored_json(db)
    assert len(local) == len(CASES) and remote == local
    # The worker made the stored form, under the redaction key this process stores with.
    # WHY one worker: each actor is a process of its own to start; one shows what a worker makes.
    results = run_with(ray_executor(scripted_parts, workers=1, concurrency=4), RunSettings(concurrency=4))
    assert all(r.stored is not None and r.stored.key == redaction_key(raw=False) for r in results)
    assert [r.stored.text for r in results] == [stored_text(r) for r in results]


def test_a_secret_the_workers_do_not_know_is_redacted_by_the_driver(ray_cluster, tmp_path):
    register_secret(SECRET)  # in the driver only, after the workers started
    with ray_executor(lambda: (secret_target, None), workers=1, concurrency=2) as evaluate:
        results = asyncio.run(run_cases(CASES[:2], secret_target, None, RunSettings(concurrency=2), evaluate=evaluate))
    assert all(SECRET in r.stored.text for r in results)  # what the workers made
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        store.start_run(Manifest("r", "d", "v", 2, "t", "a", None, None))
        store.save_cases("r", [(r, n) for n, r in enumerate(results)])
        rows = [text for (text,) in store._query("SELECT result FROM case_results", ())]
    assert len(rows) == 2 and not any(SECRET in row for row in rows)


def test_a_worker_killed_mid_batch_fails_only_its_cases(ray_cluster):
    # Batches of 2 over 2 workers: case-00 and case-01 go to the first worker together.
    with ray_executor(lambda: (dying_target, None), workers=2, concurrency=4, batch=2) as evaluate:
        results = asyncio.run(run_cases(CASES, dying_target, None, RunSettings(concurrency=4, checks_only=True),
                                        evaluate=evaluate))
    assert [r.case_id for r in results] == [c.id for c in CASES]
    errors = {r.case_id: r.error for r in results if r.status == "error"}
    assert "case-00" in errors and set(errors) <= {"case-00", "case-01"}
    assert "ray worker failed: " in errors["case-00"] and "Actor" in errors["case-00"]
    assert all(r.reply.answer == "ok" for r in results[2:])  # the other worker took every later job


def test_a_budget_stop_cancels_the_jobs_in_flight(ray_cluster):
    budget = Budget(1.0, say=lambda message: None)
    settings = RunSettings(concurrency=4, checks_only=True, prices=PriceTable({}))

    async def run(evaluate):
        # WHY wait_for: a stop that failed to cancel would wait for the sleeping jobs; fail instead
        return await asyncio.wait_for(run_cases(CASES, costly_target, None, settings, budget=budget,
                                                evaluate=evaluate), 60)

    with ray_executor(lambda: (costly_target, None), workers=2, concurrency=4, batch=2) as evaluate:
        results = asyncio.run(run(evaluate))
    assert [r.case_id for r in results] == ["case-00", "case-01"] and budget.exhausted


def test_unbuildable_recipe_is_a_config_error(ray_cluster):
    from tracegrade.core.errors import ConfigError

    with pytest.raises(ConfigError, match="could not build"):
        with ray_executor(broken_parts, workers=1):
            pass


def test_comparable_sees_a_difference():
    # The equality above must be able to fail: one changed status is a difference.
    target, judge = scripted_parts()
    results = asyncio.run(run_cases(CASES[:2], target, judge, RunSettings()))
    changed = [dataclasses.replace(results[0], status="fail"), results[1]]
    assert comparable(changed) != comparable(results)
