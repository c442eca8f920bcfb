"""The run store against damage, races, restarts and hostile names (issue 15.8-15.11, 17.7)."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import os
import sqlite3
import threading

import pytest

from pg_server import Unavailable, cannot_start, import_psycopg, postgres_server
from runs_support import GOLDEN_PATH, result
from tracegrade.cli import main
from tracegrade.core.errors import StoreError
from tracegrade.core.results import Manifest
from tracegrade.core.trace import Reply, ToolCall
from tracegrade.case.dataset import load_dataset
from tracegrade.store.run_ids import now_iso
from tracegrade.run.recording import record_run
from tracegrade.run.runner import RunSettings
from tracegrade.store.backends import RunLocked, hide_password, to_pyformat
from tracegrade.store.runstore import open_store, stored_text, with_stored_form

_databases = itertools.count()


@pytest.fixture(scope="module")
def pg():
    import_psycopg()
    try:
        with postgres_server() as server:
            yield server
    except Unavailable as exc:
        cannot_start(f"Postgres cannot start here: {exc}")


def new_database(server) -> str:
    import psycopg

    name = f"hard_{next(_databases)}"
    with psycopg.connect(server.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return server.url.rsplit("/", 1)[0] + "/" + name


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.db'}"
    return new_database(request.getfixturevalue("pg"))


def manifest(run_id: str = "r1") -> Manifest:
    return Manifest(run_id, "golden.json", "v1", 3, "t", "agent-m", "judge-m", "rubric", started_at=now_iso())


# --- 15.8: a damaged store is refused, never written into --------------------------------


def store_with_runs(path, runs: int = 30, cases: int = 40) -> None:
    with open_store(f"sqlite:///{path}") as store:
        for r in range(runs):
            store.start_run(manifest(f"run-{r:03d}"))
            for c in range(cases):
                store.save_case(f"run-{r:03d}", result(f"case-{c}", reply=Reply(answer="x" * 400)), c)


def test_garbage_in_the_middle_of_the_store_is_refused_with_a_recovery_hint(tmp_path, capsys):
    path = tmp_path / "runs.db"
    store_with_runs(path)
    size = path.stat().st_size
    with open(path, "r+b") as f:  # the attack: 8 KB of garbage in the middle
        f.seek(size // 2)
        f.write(os.urandom(8192))
    with pytest.raises(StoreError) as refused:
        open_store(f"sqlite:///{path}")
    message = str(refused.value)
    assert "is damaged (integrity check:" in message and "will not read or write it" in message
    assert f"sqlite3 {path} '.recover'" in message
    # The commands say so too: history does not list old runs, run writes nothing, report is not "no run".
    assert main(["history", "--db", f"sqlite:///{path}"]) == 2
    assert "is damaged" in capsys.readouterr().err
    assert main(["report", "run-001", "--db", f"sqlite:///{path}", "--runs-dir", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert "is damaged" in err and "no run" not in err
    before = path.read_bytes()
    assert main(["run", str(GOLDEN_PATH), "--target", "runs_support:good_target", "--checks-only", "--quiet",
                 "--db", f"sqlite:///{path}", "--out", str(tmp_path / "out")]) == 2
    assert path.read_bytes() == before


def test_a_zero_byte_store_is_refused_not_replaced(tmp_path):
    path = tmp_path / "runs.db"
    path.write_bytes(b"")
    with pytest.raises(StoreError, match="is empty \\(0 bytes\\): not a run store"):
        open_store(f"sqlite:///{path}")
    assert path.stat().st_size == 0


def test_a_new_store_never_appears_empty(tmp_path):
    """Stores created by many threads at once: none sees another's half-made (0-byte) file."""
    path, errors = tmp_path / "new.db", []

    def create() -> None:
        try:
            open_store(f"sqlite:///{path}").close()
        except StoreError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=create) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and path.stat().st_size > 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".new.db")) == []


# --- 15.9: one process per run ------------------------------------------------------------


def test_a_second_process_on_the_same_run_is_refused_at_once(store_url):
    with open_store(store_url) as first, open_store(store_url) as second:
        first.start_run(manifest())
        with first.run_lock("r1"):
            with first.run_lock("r1"):  # re-entrant within one store
                pass
            with pytest.raises(RunLocked, match="run r1 is being run by another process right now"):
                second.claim_run("r1")
            second.claim_run("r2")  # another run is free
        second.claim_run("r1")  # released
        with pytest.raises(RunLocked):
            first.claim_run("r1")


def test_a_lock_dies_with_its_store(store_url):
    first = open_store(store_url)
    first.claim_run("r1")
    first.close()  # as the kernel or the server does when the process dies
    with open_store(store_url) as second:
        second.claim_run("r1")


def test_two_resumes_of_one_run_pay_for_each_case_once(tmp_path, monkeypatch):
    """Two record_run calls on the same run at once: the second ends at once with
    RunLocked, before any case; the first runs every case."""
    dataset = load_dataset(GOLDEN_PATH)
    calls: list[str] = []

    async def both():
        # WHY events, not sleeps: the first run is surely running a case (so holds
        # its lock) when the second asks, and finishes only after the second was refused.
        running, refused = asyncio.Event(), asyncio.Event()

        async def target(case):
            calls.append(case.id)
            running.set()
            await asyncio.wait_for(refused.wait(), 120)  # a bound: a broken lock fails instead of hanging
            return Reply(answer="ok")

        with open_store(url) as a, open_store(url) as b:
            first = asyncio.create_task(record_run(dataset.cases, target, None, RunSettings(checks_only=True), a,
                                                   manifest(), resume=True))
            await running.wait()
            try:
                with pytest.raises(RunLocked):
                    await record_run(dataset.cases, target, None, RunSettings(checks_only=True), b, manifest(),
                                     resume=True)
            finally:
                refused.set()
            return await first

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with open_store(url) as setup:
        setup.start_run(manifest())

    evaluation = asyncio.run(both())
    assert evaluation.run.status == "finished" and sorted(calls) == sorted(c.id for c in dataset.cases)


def test_saving_a_case_twice_says_so_plainly(store_url):
    with open_store(store_url) as store:
        store.start_run(manifest())
        store.save_case("r1", result("c"), 0)
        store.save_case("r1", result("c"), 0)  # the very same row again: a retried commit, accepted
        with pytest.raises(StoreError, match="case 'c' \\(repetition 0\\) is already stored in run r1") as caught:
            store.save_case("r1", result("c", "fail"), 0)
    assert "UNIQUE" not in str(caught.value) and "duplicate key" not in str(caught.value)


# --- 15.10: Postgres: the password, a restart mid-run -----------------------------------


@pytest.mark.parametrize("url, shown", [
    ("postgresql://app:s3cret-pw@db:5432/runs", "postgresql://app:***@db:5432/runs"),
    ("postgresql://app:p@ss:w0rd@db/runs", "postgresql://app:***@db/runs"),
    ("postgresql://db/runs?user=app&password=s3cret-pw&sslmode=require",
     "postgresql://db/runs?user=app&password=***&sslmode=require"),
    ("postgres://app@db/runs", "postgres://app@db/runs"),
    # Issue 23: the key's passphrase was printed.
    ("postgresql://app@db/runs?sslmode=verify-full&sslpassword=k3y-pass-phrase",
     "postgresql://app@db/runs?sslmode=verify-full&sslpassword=***"),
])
def test_the_password_never_shows(url, shown):
    assert hide_password(url) == shown


def test_a_postgres_url_without_psycopg_names_the_extra_to_install(monkeypatch, capsys):
    # Issue 23: a raw ModuleNotFoundError (and a traceback) instead.
    import builtins

    real_import = builtins.__import__

    def without_psycopg(name, *args, **kwargs):
        if name == "psycopg":
            raise ModuleNotFoundError("No module named 'psycopg'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_psycopg)
    from tracegrade.cli import main

    code = main(["history", "--db", "postgresql://app:s3cret-pw@db/runs"])
    err = capsys.readouterr().err
    assert code == 2 and "tracegrade[postgres]" in err and "psycopg" in err
    assert "s3cret-pw" not in err and "Traceback" not in err


def test_the_store_line_of_a_run_masks_the_password(pg, tmp_path, capsys, monkeypatch):
    import psycopg

    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute("ALTER USER tracegrade PASSWORD 'pw-in-the-url-123'")
    url = pg.url.replace("tracegrade@", "tracegrade:pw-in-the-url-123@")
    code = main(["run", str(GOLDEN_PATH), "--target", "runs_support:good_target", "--checks-only", "--quiet",
                 "--db", url, "--out", str(tmp_path / "out")])
    out = capsys.readouterr()
    assert code == 0, out.err[-500:]
    assert "store postgresql://tracegrade:***@127.0.0.1" in out.err
    assert "pw-in-the-url-123" not in out.err + out.out
    assert not any("pw-in-the-url-123" in p.read_text() for p in (tmp_path / "out").rglob("*") if p.is_file())


def test_a_postgres_restart_mid_run_loses_nothing(pg, tmp_path):
    url = new_database(pg)
    with open_store(url) as store:
        store.start_run(manifest())
        store.claim_run("r1")
        store.save_case("r1", result("before"), 0)
        pg.stop()
        restarted = threading.Timer(1.0, pg.start)  # back after a second, as a restart is
        restarted.start()
        store.save_case("r1", result("after"), 1)  # waits, reconnects, retries
        restarted.join()
        assert [r.case_id for r in store.load_run("r1").results] == ["before", "after"]
        with open_store(url) as other:  # the run lock was taken again on the new session
            with pytest.raises(RunLocked):
                other.claim_run("r1")


def test_a_postgres_that_stays_down_is_a_clear_error_after_bounded_retries(pg):
    from tracegrade.store.backends import PostgresBackend
    from tracegrade.store.runstore import RunStore

    url = new_database(pg)
    said: list[str] = []
    store = RunStore(PostgresBackend(url, attempts=2, first_wait_s=0.05, say=said.append))
    store.start_run(manifest())
    pg.stop()
    try:
        with pytest.raises(StoreError, match="connection lost; gave up after 2 reconnect attempts"):
            store.save_case("r1", result("c"), 0)
    finally:
        pg.start()
    assert len(said) == 2 and all("reconnecting in" in s for s in said)


# --- 17.7: a run id prefix is literal; placeholders are translated outside literals -----


def test_a_prefix_with_like_wildcards_matches_only_itself(store_url):
    with open_store(store_url) as store:
        for run_id in ("2026_a", "2026xa", "50%off", "500ff", "back\\slash"):
            store.start_run(manifest(run_id))
        assert store.run_ids("2026_") == ["2026_a"]
        assert store.run_ids("50%") == ["50%off"]
        assert store.run_ids("%") == [] and store.run_ids("_") == []
        assert store.run_ids("back\\") == ["back\\slash"]


def test_placeholders_are_translated_outside_string_literals():
    assert to_pyformat("SELECT '?', ? WHERE a LIKE '50%' AND b = ?") == "SELECT '?', %s WHERE a LIKE '50%%' AND b = %s"
    assert to_pyformat("SELECT 'it''s ?', ?") == "SELECT 'it''s ?', %s"


def test_a_question_mark_in_a_literal_reaches_postgres_intact(pg):
    with open_store(new_database(pg)) as store:
        assert store._query("SELECT '?' || ?, '100%'", ("x",)) == [("?x", "100%")]


# --- 15.11: personal data stays out of the store and results.json -----------------------

PERSONAL = {"email": "ann.lee@example.com", "card": "4111 1111 1111 1111", "phone": "+49 30 1234 5678"}


def personal_result():
    call = ToolCall(name="lookupCustomer", arguments={"email": PERSONAL["email"]}, argument=PERSONAL["email"],
                    result=f"card {PERSONAL['card']}, phone {PERSONAL['phone']}", status="ok")
    reply = Reply(answer=f"We will call {PERSONAL['phone']} and mail {PERSONAL['email']}", tool_calls=(call,))
    base = result("pii-01", reply=reply)
    return type(base)(**{**base.__dict__, "question": f"I am {PERSONAL['email']}, card {PERSONAL['card']}",
                         "error": f"agent failed: {PERSONAL['email']}"})


def test_personal_data_is_redacted_in_the_store_by_default(store_url):
    with open_store(store_url) as store:
        store.start_run(manifest())
        store.save_case("r1", personal_result(), 0)
        raw_rows = store._query("SELECT result FROM case_results", ())
        loaded = store.load_run("r1").results[0]
    assert not any(value in raw_rows[0][0] for value in PERSONAL.values())
    assert "[REDACTED_EMAIL]" in loaded.question and "[REDACTED_CARD]" in loaded.question
    assert loaded.reply.answer == "We will call [REDACTED_PHONE] and mail [REDACTED_EMAIL]"
    assert loaded.reply.tool_calls[0].name == "lookupCustomer" and loaded.case_id == "pii-01"


def test_raw_data_is_kept_when_asked_but_secrets_never(store_url, monkeypatch):
    monkeypatch.setenv("TRACEGRADE_TARGET_TOKEN", "target-token-abcdef")
    monkeypatch.setenv("TRACEGRADE_RAW_DATA", "1")
    leaky = result("c", reply=Reply(answer=f"mail {PERSONAL['email']}, token target-token-abcdef"))
    with open_store(store_url) as store:
        store.start_run(manifest())
        store.save_case("r1", leaky, 0)
        answer = store.load_run("r1").results[0].reply.answer
    assert answer == f"mail {PERSONAL['email']}, token [REDACTED_KEY]"


def stored_rows(store) -> list[str]:
    return [row[0] for row in store._query("SELECT result FROM case_results ORDER BY position", ())]


def test_a_stored_form_made_ahead_is_stored_as_the_store_would_make_it(tmp_path, monkeypatch):
    """A Ray worker encodes a result; the store inserts that text, identical to its own."""
    monkeypatch.delenv("TRACEGRADE_RAW_DATA", raising=False)
    made_ahead = with_stored_form(personal_result(), raw=False)
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        store.start_run(manifest("ahead"))
        store.start_run(manifest("here"))
        store.save_case("ahead", made_ahead, 0)
        store.save_case("here", personal_result(), 0)
        ahead, here = (store._query("SELECT result FROM case_results WHERE run_id = ?", (run,))[0][0]
                       for run in ("ahead", "here"))
    assert made_ahead.stored.text == ahead == here == stored_text(personal_result())
    assert "[REDACTED_EMAIL]" in ahead and "stored" not in made_ahead.to_json()
    assert made_ahead == personal_result()  # the form is no part of the result


def test_a_stored_form_made_without_one_of_our_secrets_is_encoded_again(tmp_path, monkeypatch):
    """A worker that did not know a secret of the storing process (set after the worker
    started) made a text with it in clear: the store does not trust it."""
    leaky = result("c", reply=Reply(answer="token worker-did-not-know-1234"))
    made_ahead = with_stored_form(leaky, raw=False)
    assert "worker-did-not-know-1234" in made_ahead.stored.text
    monkeypatch.setenv("TRACEGRADE_TARGET_TOKEN", "worker-did-not-know-1234")
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        store.start_run(manifest())
        store.save_case("r1", made_ahead, 0)
        [row] = stored_rows(store)
    assert "worker-did-not-know-1234" not in row and "token [REDACTED_KEY]" in row


def test_a_stored_form_made_raw_is_not_used_by_a_store_that_redacts(tmp_path, monkeypatch):
    monkeypatch.delenv("TRACEGRADE_RAW_DATA", raising=False)
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        store.start_run(manifest())
        store.save_case("r1", with_stored_form(personal_result(), raw=True), 0)
        [row] = stored_rows(store)
    assert not any(value in row for value in PERSONAL.values())


def test_a_changed_copy_does_not_carry_the_stored_form_of_its_original(tmp_path):
    changed = dataclasses.replace(with_stored_form(result("c"), raw=False), status="fail")
    assert changed.stored is None
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        store.start_run(manifest())
        store.save_case("r1", changed, 0)
        assert json.loads(stored_rows(store)[0])["status"] == "fail"


def test_results_json_of_a_run_has_no_personal_data(tmp_path, monkeypatch):
    monkeypatch.delenv("TRACEGRADE_RAW_DATA", raising=False)
    out = tmp_path / "out"
    code = main(["run", str(GOLDEN_PATH), "--target", "runs_support:personal_target", "--checks-only", "--quiet",
                 "--db", f"sqlite:///{tmp_path / 'runs.db'}", "--out", str(out)])
    assert code in (0, 1)
    written = "".join(p.read_text() for p in out.rglob("*") if p.is_file())
    assert "results" in "".join(p.name for p in out.rglob("*"))
    assert not any(value in written for value in PERSONAL.values())
    assert "[REDACTED_EMAIL]" in written
    with sqlite3.connect(tmp_path / "runs.db") as conn:
        stored = " ".join(row[0] for row in conn.execute("SELECT result FROM case_results"))
    assert not any(value in stored for value in PERSONAL.values())


def test_a_second_resume_from_the_command_line_is_refused_before_anything_loads(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with open_store(url) as store:
        store.start_run(manifest())
        store.claim_run("r1")  # another process is resuming r1
        code = main(["run", str(tmp_path / "no-such-dataset.json"), "--resume", "r1", "--db", url, "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "run r1 is being run by another process right now" in err
    assert "no-such-dataset" not in err  # refused before the dataset was even read


def test_an_error_that_quotes_a_secret_is_printed_redacted(monkeypatch, capsys):
    """Whatever error text a command ends with (a driver may quote its URL) prints no secret."""
    import tracegrade.cli.history as history

    monkeypatch.setenv("TRACEGRADE_TARGET_TOKEN", "tok-quoted-by-a-driver-1")

    def fails(args):
        raise StoreError("connection to postgresql://app:tok-quoted-by-a-driver-1@db failed")

    monkeypatch.setattr(history, "handle", fails)
    assert main(["history"]) == 2
    err = capsys.readouterr().err
    assert "tok-quoted-by-a-driver-1" not in err and "tracegrade: error: connection to postgresql://app:" in err
