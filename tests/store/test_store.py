"""The run store on SQLite and on a real Postgres server: same schema, same results; and the
calibration records it keeps, the latest per judge model and rubric."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3

import pytest

from pg_server import Unavailable, cannot_start, import_psycopg, throwaway_postgres
from runs_support import GOLDEN_PATH, result, scores, slow_target
from tracegrade.case.dataset import load_dataset
from tracegrade.core.errors import StoreError
from tracegrade.store.run_ids import now_iso
from tracegrade.run.recording import record_run
from tracegrade.core.results import Manifest
from tracegrade.run.runner import RunSettings
from tracegrade.store.runstore import MIGRATIONS, open_store, CalibrationRecord


# --- runs on SQLite and Postgres --------------------------------------------------------------------
# The run store on SQLite and on a real Postgres server: same schema, same results.


_databases = itertools.count()


@pytest.fixture(scope="module")
def postgres_server():
    psycopg = import_psycopg()
    try:
        with throwaway_postgres() as url:
            yield url, psycopg
    except Unavailable as exc:
        cannot_start(f"Postgres cannot start here: {exc}")


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.db'}"
    url, psycopg = request.getfixturevalue("postgres_server")
    name = f"runs_{next(_databases)}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return url.rsplit("/", 1)[0] + "/" + name


def manifest(run_id: str = "r1", dataset: str = "golden.json", cases: int = 3) -> Manifest:
    return Manifest(run_id, dataset, "v1", cases, "t", "agent-m", "judge-m", "rubric", started_at=now_iso(),
                    settings={"repeat": 1})


def test_migrations_apply_once_and_survive_reopening(store_url):
    with open_store(store_url) as store:
        assert store.applied_migrations() == [m.version for m in MIGRATIONS]
    with open_store(store_url) as store:  # a second open must not re-run (CREATE TABLE would fail)
        assert store.applied_migrations() == [m.version for m in MIGRATIONS]


def test_a_run_round_trips_with_its_cases_in_dataset_order(store_url):
    first = result("b-case", score=scores(4), seconds=1.5, cost=0.25)
    second = result("a-case", "fail", score=scores(2))
    started = manifest()
    ended = Manifest(**{**started.to_json(), "ended_at": now_iso(), "totals": {"passed": 1}})
    with open_store(store_url) as store:
        store.start_run(started)
        store.save_case("r1", second, position=1)
        store.save_case("r1", first, position=0)
        assert store.info("r1").status == "running" and store.done_keys("r1") == {("b-case", 0), ("a-case", 0)}
        store.finish_run(ended, "finished")
        loaded, info = store.load_run("r1"), store.info("r1")
    assert loaded.results == (first, second)
    assert loaded.manifest == ended and (info.status, info.cases_done) == ("finished", 2)


def test_saving_a_case_twice_is_refused_and_leaves_the_first(store_url):
    with open_store(store_url) as store:
        store.start_run(manifest())
        store.save_case("r1", result("c", "pass"), 0)
        with pytest.raises(StoreError):
            store.save_case("r1", result("c", "fail"), 0)
        assert [r.status for r in store.load_run("r1").results] == ["pass"]


def test_a_failed_transaction_writes_nothing(store_url):
    with open_store(store_url) as store:
        store.start_run(manifest())
        def half(run):
            run("INSERT INTO case_results (run_id, case_id, repetition, position, status, recorded_at, result) "
                "VALUES ('r1', 'half', 0, 0, 'pass', 'now', '{}')", ())
            raise RuntimeError("killed halfway")

        with pytest.raises(RuntimeError):
            store._do(half)
        assert store.done_keys("r1") == set()


def test_runs_list_newest_first_and_by_dataset(store_url):
    with open_store(store_url) as store:
        for run_id, dataset in [("a", "one.json"), ("b", "two.json"), ("c", "one.json")]:
            store.start_run(manifest(run_id, dataset))
        assert [i.run_id for i in store.runs()] == ["c", "b", "a"]
        assert [i.run_id for i in store.runs(dataset="one.json")] == ["c", "a"]
        assert [i.run_id for i in store.runs(limit=1)] == ["c"]
        assert store.run_ids("b") == ["b"]
        with pytest.raises(StoreError, match="no run"):
            store.info("zzz")


def test_recorded_runs_are_identical_on_sqlite_and_postgres(tmp_path, postgres_server, monkeypatch):
    monkeypatch.setenv("TG_SLOW_S", "0")
    url, psycopg = postgres_server
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE identical")
    dataset = load_dataset(GOLDEN_PATH)
    stored = []
    for store_url in (f"sqlite:///{tmp_path / 'runs.db'}", url.rsplit("/", 1)[0] + "/identical"):
        with open_store(store_url) as store:
            evaluation = asyncio.run(record_run(dataset.cases, slow_target, None, RunSettings(checks_only=True, repeat=2),
                                                 store, manifest("same", cases=len(dataset.cases))))
            assert evaluation.run.status == "finished"
            stored.append(store.load_run("same"))
    sqlite_run, postgres_run = stored
    # Timings differ between the two runs; everything else must be equal.
    strip = lambda r: [{**c.to_json(), "seconds": 0} for c in r.results]
    assert strip(sqlite_run) == strip(postgres_run)
    assert len(sqlite_run.results) == 2 * len(dataset.cases)
    assert {k: v for k, v in sqlite_run.manifest.totals.items() if k != "latencyS"} == \
        {k: v for k, v in postgres_run.manifest.totals.items() if k != "latencyS"}


def test_sqlite_store_is_in_wal_mode_with_full_sync(tmp_path):
    path = tmp_path / "runs.db"
    open_store(f"sqlite:///{path}").close()
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_store_urls(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TRACEGRADE_DB")
    with open_store() as store:
        assert store.url == "sqlite:///.tracegrade/runs.db"
    assert (tmp_path / ".tracegrade" / "runs.db").is_file()
    monkeypatch.setenv("TRACEGRADE_DB", f"sqlite:///{tmp_path / 'env.db'}")
    open_store().close()
    assert (tmp_path / "env.db").is_file()
    with pytest.raises(StoreError, match="unknown store URL"):
        open_store("mysql://u:secret@h/db")
    with pytest.raises(StoreError) as refused:
        open_store("postgresql://user:secret@127.0.0.1:1/nowhere")
    assert "secret" not in str(refused.value)


@pytest.mark.parametrize("page", [1, 2, 5, 1000])
def test_load_run_reads_in_pages_and_keeps_dataset_order(store_url, page):
    cases = [result(f"case-{n}", "pass" if n % 2 else "fail", score=scores(3 + n % 3)) for n in range(5)]
    with open_store(store_url) as store:
        store.start_run(manifest(cases=5))
        for position in (3, 0, 4, 1, 2):
            store.save_case("r1", cases[position], position)
        assert store.load_run("r1", page=page).results == tuple(cases)


def test_a_loaded_run_holds_its_results_compressed_and_reads_them_back_whole(store_url):
    from tracegrade.store.compact import CompactResults

    cases = [result(f"case-{n}", "pass" if n % 2 else "fail", score=scores(3 + n % 3)) for n in range(30)]
    with open_store(store_url) as store:
        store.start_run(manifest(cases=30))
        for position, case in enumerate(cases):
            store.save_case("r1", case, position)
        loaded = store.load_run("r1", page=7).results
    assert isinstance(loaded, CompactResults) and len(loaded) == 30
    assert loaded == tuple(cases) and list(loaded) == cases and tuple(cases) == tuple(loaded)
    assert loaded[3] == cases[3] and loaded[-1] == cases[-1] and loaded[2:5] == tuple(cases[2:5])
    assert loaded != tuple(cases[:-1]) and loaded != "not results"


def test_a_service_that_cannot_start_fails_in_ci_and_is_skipped_elsewhere(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI is set"):
        cannot_start("Postgres cannot start here: initdb not found")
    for value in ("", "false", "0"):
        monkeypatch.setenv("CI", value)
        with pytest.raises(pytest.skip.Exception):
            cannot_start("Postgres cannot start here: initdb not found")


# --- calibration records
# Calibration records in the run store: the latest per judge model and rubric wins.


def _record(cid: str, passed: bool, model: str = "judge-m", rubric: str = "r1") -> CalibrationRecord:
    return CalibrationRecord(cid, model, rubric, "labels-v", passed, "2026-11-30T10:00:00+00:00", {"id": cid})


def test_latest_calibration_is_per_model_and_rubric_and_survives_reopening(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with open_store(url) as store:
        store.save_calibration(_record("c1", True))
        store.save_calibration(_record("c2", True, rubric="r2"))
        store.save_calibration(_record("c3", False))
    with open_store(url) as store:
        latest = store.latest_calibration("judge-m", "r1")
        assert (latest.calibration_id, latest.passed, latest.result) == ("c3", False, {"id": "c3"})
        assert store.latest_calibration("judge-m", "r2").passed is True
        assert store.latest_calibration("other-model", "r1") is None
