"""The run store: every run and every finished case, as it happens.

    >>> store = open_store("sqlite:///:memory:")
    >>> [m.version for m in MIGRATIONS] == store.applied_migrations()
    True

SQLite by default (``.tracegrade/runs.db`` under the current directory); any
store by URL (``TRACEGRADE_DB``): ``sqlite:///relative.db``,
``sqlite:////absolute.db``, ``postgresql://user@host:port/db``. Both backends
get the same tables from the same migrations, and store the same JSON text.

WHY a transaction per group of finished cases: a run killed at any moment
(Ctrl-C, kill -9, power loss) keeps every case it reported finished, and never
half of one; the cases that finished while the last commit ran share the next
one (``save_cases``), so a busy run pays one fsync per group, not per case. SQLite runs
in WAL mode with ``synchronous=FULL`` so a commit survives a power cut too.

What is stored is redacted first: secrets always, personal data (e-mail, card,
phone, IBAN, ...) unless ``TRACEGRADE_RAW_DATA=1`` asks for raw data. The
results JSON, JUnit and Markdown files are written from the stored run, so they
inherit it. Ids, statuses and names (``STRUCTURE_KEYS``) are kept as they are.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterator, Sequence, TypeVar

import orjson

from tracegrade.core import jsontext
from tracegrade.core.errors import StoreError
from tracegrade.core.redact import configured_secrets, redacted_json
from tracegrade.store.run_ids import now_iso
from tracegrade.core.results import CaseResult, Manifest, Run
from tracegrade.store import labelrows
from tracegrade.store.compact import CompactResults
from tracegrade.store.backends import Backend, PostgresBackend, Row, Run as RunSql, SqliteBackend, Work, hide_password

T = TypeVar("T")

DEFAULT_URL = "sqlite:///.tracegrade/runs.db"
ENV_VAR = "TRACEGRADE_DB"
RAW_ENV_VAR = "TRACEGRADE_RAW_DATA"
# The keys of a result or a manifest (the top level only) whose values are the
# harness's structure, not content: never redacted. WHY not "name", "model",
# "route" or "retrievedSources" of the reply: the agent writes them, and a
# secret placed there went into the store in clear.
STRUCTURE_KEYS = frozenset({
    # a case result
    "case_id", "status", "split", "category", "risk", "case_hash", "attempts",
    # a manifest
    "run_id", "dataset", "dataset_version", "started_at", "ended_at", "rubric_hash", "git_commit",
    "agent_model", "judge_model", "prompt_version",
})


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "runs and case results", (
        """CREATE TABLE runs (
             run_id TEXT PRIMARY KEY,
             dataset TEXT NOT NULL,
             dataset_version TEXT NOT NULL,
             status TEXT NOT NULL,
             created_ns BIGINT NOT NULL,
             started_at TEXT NOT NULL,
             ended_at TEXT NOT NULL DEFAULT '',
             manifest TEXT NOT NULL)""",
        "CREATE INDEX runs_by_dataset ON runs (dataset, created_ns)",
        """CREATE TABLE case_results (
             run_id TEXT NOT NULL REFERENCES runs (run_id),
             case_id TEXT NOT NULL,
             repetition INTEGER NOT NULL,
             position INTEGER NOT NULL,
             status TEXT NOT NULL,
             recorded_at TEXT NOT NULL,
             result TEXT NOT NULL,
             PRIMARY KEY (run_id, case_id, repetition))""",
    )),
    Migration(2, "judge calibrations", (
        """CREATE TABLE calibrations (
             calibration_id TEXT PRIMARY KEY,
             judge_model TEXT NOT NULL,
             rubric_hash TEXT NOT NULL,
             labels_version TEXT NOT NULL,
             passed INTEGER NOT NULL,
             created_ns BIGINT NOT NULL,
             created_at TEXT NOT NULL,
             result TEXT NOT NULL)""",
        "CREATE INDEX calibrations_by_judge ON calibrations (judge_model, rubric_hash, created_ns)",
    )),
    # WHY: load_run reads a run in dataset order a page at a time; without this
    # index every page sorted the whole run (48 s of a 100,000-case run's end).
    Migration(3, "case results in dataset order", (
        "CREATE INDEX case_results_in_order ON case_results (run_id, position, repetition, case_id)",
    )),
    Migration(4, labelrows.MIGRATION_NAME, labelrows.MIGRATION_STATEMENTS),  # labels given in `tracegrade view`
)

# running: cases may still arrive (or the process died: resume it);
# finished: every case ran; stopped: the budget ran out (resume to finish);
# failed: the run ended on a store error, its manifest's totals.error says which (resume to finish).
RUN_STATUSES = ("running", "finished", "stopped", "failed")


@dataclass(frozen=True)
class RunInfo:
    """One row of the run list: enough for history without loading every case."""

    run_id: str
    dataset: str
    dataset_version: str
    status: str
    started_at: str
    ended_at: str
    manifest: Manifest
    cases_done: int


@dataclass(frozen=True)
class CalibrationRecord:
    """One `tracegrade calibrate` outcome for a judge model and rubric; ``result`` is its JSON report."""

    calibration_id: str
    judge_model: str
    rubric_hash: str
    labels_version: str
    passed: bool
    created_at: str
    result: dict[str, Any]


class RunStore:
    """Reads and writes runs; safe to call from worker threads (one lock).

    ``raw=True`` keeps personal data in what is stored (secrets go regardless)."""

    def __init__(self, backend: Backend, raw: bool = False) -> None:
        self._backend = backend
        self._lock = threading.Lock()
        self.url = backend.display_url
        self.raw = raw
        self._migrate()

    def start_run(self, manifest: Manifest) -> None:
        stored = self._clean(manifest.to_json(), personal=False)

        def insert(run: RunSql) -> None:
            # WHY ON CONFLICT + compare: a Postgres commit cut by a restart is retried,
            # and must find its own row, not fail on it.
            if not run("INSERT INTO runs (run_id, dataset, dataset_version, status, created_ns, started_at, manifest) "
                       "VALUES (?, ?, ?, 'running', ?, ?, ?) ON CONFLICT (run_id) DO NOTHING RETURNING 1",
                       (manifest.run_id, manifest.dataset, manifest.dataset_version, time.time_ns(),
                        manifest.started_at, stored)):
                if run("SELECT manifest FROM runs WHERE run_id = ?", (manifest.run_id,))[0][0] != stored:
                    raise StoreError(f"run {manifest.run_id} already exists in {self.url}")

        self._do(insert)

    def save_case(self, run_id: str, result: CaseResult, position: int) -> None:
        """One case, atomically; saving the same (case, repetition) twice is an error."""
        self.save_cases(run_id, [(result, position)])

    def save_cases(self, run_id: str, finished: Sequence[tuple[CaseResult, int]]) -> None:
        """Cases with their dataset positions, in one transaction (one fsync): all
        of them or none. Saving a (case, repetition) again with other content is
        an error; the very same row again is a retried commit, accepted."""
        key = redaction_key(self.raw)  # once per group: it reads the environment
        self._insert(run_id, [(result.case_id, result.repeat, position, result.status,
                               _stored_text(result, self.raw, key)) for result, position in finished])

    def save_handed(self, run_id: str, rows: Sequence[tuple[str, int, int, str, Any, bool]]) -> list[tuple[str, bool]]:
        """``save_cases`` of cases handed over by another process (``store.writer``): each as
        (case id, repetition, position, status, its ``to_json`` or a stored text made ahead,
        whether its free-form values read back alike / the text's ``same``). Returns each
        one's stored text and whether it reads back as the result it was made of."""
        forms = [(made, same) if isinstance(made, str) else _stored_json(made, self.raw, same)
                 for _, _, _, _, made, same in rows]
        self._insert(run_id, [(case_id, repeat, position, status, text)
                              for (case_id, repeat, position, status, _, _), (text, _) in zip(rows, forms)])
        return forms

    def _insert(self, run_id: str, rows: Sequence[tuple[str, int, int, str, str]]) -> None:
        """Stored texts (case id, repetition, position, status, text) in one transaction."""
        recorded_at = now_iso()  # one transaction: the cases of a group are recorded together

        def insert(run: RunSql) -> None:
            for case_id, repeat, position, status, stored in rows:
                key = (run_id, case_id, repeat)
                if not run("INSERT INTO case_results (run_id, case_id, repetition, position, status, recorded_at, "
                           "result) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, case_id, repetition) "
                           "DO NOTHING RETURNING 1", (*key, position, status, recorded_at, stored)):
                    existing = run("SELECT result FROM case_results WHERE run_id = ? AND case_id = ? "
                                   "AND repetition = ?", key)
                    # WHY compared as values: a row stored by an older version may be spaced differently.
                    if jsontext.load(existing[0][0]) != jsontext.load(stored):
                        raise StoreError(f"case {case_id!r} (repetition {repeat}) is already stored "
                                         f"in run {run_id}: two processes ran it")

        if rows:
            self._do(insert)

    def finish_run(self, manifest: Manifest, status: str = "finished") -> None:
        if status not in RUN_STATUSES:
            raise StoreError(f"unknown run status {status!r}")
        stored = self._clean(manifest.to_json(), personal=False)
        self._do(lambda run: run("UPDATE runs SET status = ?, ended_at = ?, manifest = ? WHERE run_id = ?",
                                 (status, manifest.ended_at, stored, manifest.run_id)))

    def reopen_run(self, run_id: str) -> None:
        """Mark a run as running again (it is being resumed)."""
        self._do(lambda run: run("UPDATE runs SET status = 'running', ended_at = '' WHERE run_id = ?", (run_id,)))

    @contextlib.contextmanager
    def run_lock(self, run_id: str) -> Iterator[None]:
        """Hold the run against every other process (re-entrant within this store);
        ``RunLocked`` at once when another process holds it."""
        self.claim_run(run_id)
        try:
            yield
        finally:
            with self._lock:
                self._backend.unlock_run(run_id)

    def claim_run(self, run_id: str) -> None:
        """Take the run's lock until ``close`` (or the matching ``run_lock`` exit)."""
        with self._lock:
            self._backend.lock_run(run_id)

    def shared_file(self, run_id: str) -> tuple[str, int | None] | None:
        """The SQLite file through which another process can write this store (``store.writer``),
        with the open file that holds ``run_id``'s lock here (None: not locked); None where no
        other process can share the store (in memory, Postgres)."""
        backend = self._backend
        if not isinstance(backend, SqliteBackend) or backend.path == ":memory:":
            return None
        return backend.path, backend.lock_fd(run_id)

    def info(self, run_id: str) -> RunInfo:
        rows = self._query(_INFO_SQL + " WHERE r.run_id = ?", (run_id,))
        if not rows:
            raise StoreError(f"no run {run_id!r} in {self.url}")
        return _info(rows[0])

    def runs(self, limit: int = 20, dataset: str | None = None, offset: int = 0) -> list[RunInfo]:
        """The most recent runs first (after ``offset`` of them), optionally only those on one dataset."""
        where, params = (" WHERE r.dataset = ?", (dataset,)) if dataset else ("", ())
        rows = self._query(_INFO_SQL + where + " ORDER BY r.created_ns DESC LIMIT ? OFFSET ?", (*params, limit, offset))
        return [_info(row) for row in rows]

    def run_ids(self, prefix: str) -> list[str]:
        """The run ids starting with ``prefix`` (taken literally: ``%`` and ``_`` match only themselves)."""
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self._query("SELECT run_id FROM runs WHERE run_id LIKE ? ESCAPE '\\' ORDER BY run_id", (escaped + "%",))
        return [row[0] for row in rows]

    def load_run(self, run_id: str, page: int = 1000) -> Run:
        """The run with every stored case, in dataset order then repetition.

        WHY ``page`` rows at a time, kept compressed (``CompactResults``): every
        case at once, as objects, was the peak of a large run's memory. Each page
        starts after the last one's key, in the order of migration 3's index."""
        manifest = self.info(run_id).manifest
        return Run(manifest, CompactResults.from_json_texts(self._stored_texts(run_id, page)))  # type: ignore[arg-type]

    def _stored_texts(self, run_id: str, page: int) -> Iterator[str]:
        after: tuple[Any, ...] = (-1, -1, "")  # WHY the last row's key, not OFFSET: OFFSET walks every row before it
        while True:
            rows = self._query("SELECT result, position, repetition, case_id FROM case_results WHERE run_id = ? "
                               "AND (position, repetition, case_id) > (?, ?, ?) "
                               "ORDER BY position, repetition, case_id LIMIT ?", (run_id, *after, page))
            yield from (row[0] for row in rows)
            if len(rows) < page:
                return
            after = tuple(rows[-1][1:])

    def case_texts(self, run_id: str, page: int = 1000) -> Iterator[str]:
        """Every stored case of the run as its JSON text, in dataset order then
        repetition: for readers that need a few fields of every case (the view's
        case index) without building each result."""
        return self._stored_texts(run_id, page)

    def status_counts(self, run_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """Per run, how many stored cases have each status (one indexed GROUP BY)."""
        counts: dict[str, dict[str, int]] = {run_id: {} for run_id in run_ids}
        for start in range(0, len(run_ids), 500):  # WHY chunks: a bound on the parameters of one statement
            chunk = list(run_ids[start:start + 500])
            marks = ", ".join("?" * len(chunk))
            for run_id, status, n in self._query(f"SELECT run_id, status, COUNT(*) FROM case_results WHERE run_id "
                                                 f"IN ({marks}) GROUP BY run_id, status", chunk):
                counts[run_id][status] = int(n)
        return counts

    def case_text(self, run_id: str, case_id: str, repetition: int = 0) -> str | None:
        """One stored case's JSON text (a primary-key lookup), or None."""
        rows = self._query("SELECT result FROM case_results WHERE run_id = ? AND case_id = ? AND repetition = ?",
                           (run_id, case_id, repetition))
        return rows[0][0] if rows else None

    def done_keys(self, run_id: str) -> set[tuple[str, int]]:
        rows = self._query("SELECT case_id, repetition FROM case_results WHERE run_id = ?", (run_id,))
        return {(row[0], int(row[1])) for row in rows}

    def save_calibration(self, record: CalibrationRecord) -> None:
        self._do(lambda run: run(
            "INSERT INTO calibrations (calibration_id, judge_model, rubric_hash, labels_version, passed, "
            "created_ns, created_at, result) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (record.calibration_id, record.judge_model, record.rubric_hash, record.labels_version,
             int(record.passed), time.time_ns(), record.created_at, _dump(record.result))))

    def latest_calibration(self, judge_model: str, rubric_hash: str) -> CalibrationRecord | None:
        """The most recent calibration of this judge model with this rubric, passed or not."""
        rows = self._query(
            "SELECT calibration_id, judge_model, rubric_hash, labels_version, passed, created_at, result "
            "FROM calibrations WHERE judge_model = ? AND rubric_hash = ? ORDER BY created_ns DESC LIMIT 1",
            (judge_model, rubric_hash))
        if not rows:
            return None
        row = rows[0]
        return CalibrationRecord(row[0], row[1], row[2], row[3], bool(row[4]), row[5], json.loads(row[6]))

    def calibrations(self, limit: int = 50) -> list[CalibrationRecord]:
        """The latest calibration of each judge model and rubric, newest first."""
        rows = self._query(
            "SELECT calibration_id, judge_model, rubric_hash, labels_version, passed, created_at, result "
            "FROM calibrations c WHERE created_ns = (SELECT MAX(created_ns) FROM calibrations d "
            "WHERE d.judge_model = c.judge_model AND d.rubric_hash = c.rubric_hash) ORDER BY created_ns DESC LIMIT ?",
            (limit,))
        return [CalibrationRecord(r[0], r[1], r[2], r[3], bool(r[4]), r[5], json.loads(r[6])) for r in rows]

    def save_label(self, label: labelrows.AnswerLabel) -> None:
        """A person's label of an answer on a metric, replacing their earlier one (its texts redacted as a case's are)."""
        texts = {"note": label.note, "golden_answer": label.golden_answer,
                 "expected_behaviour": label.expected_behaviour}
        stored = dataclasses.replace(label, **json.loads(self._clean(texts)), labelled_at=label.labelled_at or now_iso())
        self._do(lambda run: labelrows.upsert(run, stored, time.time_ns()))

    def labels(self, run_ids: Sequence[str] | None = None) -> list[labelrows.AnswerLabel]:
        """The labels given on ``run_ids`` (None: on every run)."""
        return self._do(lambda run: labelrows.select(run, run_ids))

    def applied_migrations(self) -> list[int]:
        return [int(row[0]) for row in self._query("SELECT version FROM tracegrade_migrations ORDER BY version", ())]

    def close(self) -> None:
        with self._lock:
            self._backend.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _migrate(self) -> None:
        self._do(lambda run: run("CREATE TABLE IF NOT EXISTS tracegrade_migrations "
                                 "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)", ()),
                 migration=True)
        for migration in MIGRATIONS:
            self._do(functools.partial(_apply, migration=migration), migration=True)

    def _do(self, work: Work[T], migration: bool = False) -> T:
        """``work(run)`` in one transaction, under the store's thread lock."""
        with self._lock:
            return self._backend.execute(work, migration)

    def _query(self, sql: str, params: Sequence[Any]) -> list[Row]:
        return self._do(lambda run: run(sql, params))

    def _clean(self, data: dict[str, Any], personal: bool = True) -> str:
        return _redacted_text(data, personal=personal and not self.raw)


def _apply(run: RunSql, migration: Migration) -> None:
    if run("SELECT 1 FROM tracegrade_migrations WHERE version = ?", (migration.version,)):
        return  # another process got there first
    for statement in migration.statements:
        run(statement, ())
    run("INSERT INTO tracegrade_migrations (version, name, applied_at) VALUES (?, ?, ?)",
        (migration.version, migration.name, now_iso()))


# WHY a count per run and not a GROUP BY over a join: the join counted every stored
# case of every run before the LIMIT, so listing the last 20 runs read them all.
_INFO_SQL = ("SELECT r.run_id, r.dataset, r.dataset_version, r.status, r.started_at, r.ended_at, r.manifest, "
             "(SELECT COUNT(*) FROM case_results c WHERE c.run_id = r.run_id) FROM runs r")


def _info(row: Row) -> RunInfo:
    manifest = Manifest.from_json(json.loads(row[6]))
    return RunInfo(row[0], row[1], row[2], row[3], row[4], row[5], manifest, int(row[7]))


def _dump(data: Any) -> str:
    return jsontext.dump(data, sort_keys=True)


def stored_text(result: CaseResult, raw: bool = False) -> str:
    """The one definition of a case as stored: its JSON, redacted (personal data kept
    only when ``raw``), keys sorted."""
    return _redacted_text(result.to_json(), personal=not raw)


def stored_form(result: CaseResult, raw: bool = False, key: str | None = None) -> StoredForm:
    """``stored_text`` of ``result`` with its ``redaction_key`` (``key``, when the caller has it),
    and whether redaction left it as it was (``same``: what reads the text back gets ``result`` itself)."""
    key = redaction_key(raw) if key is None else key
    return StoredForm(key, *_stored_json(result.to_json(), raw, reads_back_alike(result)))


def _stored_json(data: dict[str, Any], raw: bool, alike: bool) -> tuple[str, bool]:
    """The stored text of a result's ``to_json`` ``data``, and whether it reads back as that
    result (``alike``: its free-form values do, ``reads_back_alike``)."""
    # WHY its tuples as lists (the same JSON): so that it can read back equal, redacted_json's quick way
    data = {name: list(value) if type(value) is tuple else value for name, value in data.items()}
    text, same = redacted_json(data, STRUCTURE_KEYS, personal=not raw)
    return text, same and alike


def reads_back_alike(result: CaseResult) -> bool:
    """Whether the values ``to_json`` hands on as they are read back as they were: the free-form
    ones (tool arguments, state, scores) hold no tuple, no NaN, and their keys in sorted order.

    WHY: the store writes keys sorted and arrays as lists, and a reader sees the difference
    (a tuple argument is compared as the text "[1, 2]" once read back, a dict by its order)."""
    values: list[Any] = [result.scores]
    if result.reply is not None:
        values += [call.arguments for call in result.reply.tool_calls]
        values.append(result.reply.state)
    try:
        for value in values:
            if value:
                encoded = orjson.dumps(value)
                if encoded != orjson.dumps(value, option=orjson.OPT_SORT_KEYS) or orjson.loads(encoded) != value:
                    return False
    except TypeError:  # not JSON as it is: what is stored is another value
        return False
    return True


def _redacted_text(data: Any, personal: bool) -> str:
    """What the store writes of ``data``: redacted (``personal``: personal data too), keys sorted."""
    return redacted_json(data, STRUCTURE_KEYS, personal=personal)[0]  # WHY not the walk: see redacted_json


@dataclass(frozen=True)
class StoredForm:
    """``stored_text`` made where the result was (a Ray worker), with the ``redaction_key``
    it was made under: the store uses ``text`` only if its own key is the same."""

    key: str
    text: str
    same: bool = False  # redaction changed nothing: the text reads back as the result it was made of


def with_stored_form(result: CaseResult, raw: bool) -> CaseResult:
    """``result`` carrying its stored form, so the process that stores it inserts bytes.

    WHY set on the frozen result: it is a cache of the result's own encoding, made
    before anyone else sees the result, and ``replace`` drops it (see CaseResult.stored)."""
    object.__setattr__(result, "stored", StoredForm(redaction_key(raw), stored_text(result, raw)))
    return result


def redaction_key(raw: bool) -> str:
    """What a stored text depends on besides the result: the secrets this process
    redacts by value (hashed: the key travels between processes) and the raw mode.
    Two processes with the same key store the same text for the same result."""
    return _key(configured_secrets(), raw)


@functools.lru_cache(maxsize=8)
def _key(secrets: tuple[str, ...], raw: bool) -> str:
    digest = hashlib.sha256("\0".join(sorted(secrets)).encode("utf-8", "surrogatepass")).hexdigest()
    return f"{'raw' if raw else 'redacted'}:{digest}"


def _stored_text(result: CaseResult, raw: bool, key: str) -> str:
    form: StoredForm | None = result.stored
    if form is not None and form.key == key:
        return form.text
    # WHY not trust another key: a worker that did not know one of this process's
    # secrets (one registered here at run time) may have stored it in clear.
    return stored_text(result, raw)


def raw_from_env() -> bool:
    """Whether ``TRACEGRADE_RAW_DATA=1`` asks to keep personal data in what is stored."""
    return os.environ.get(RAW_ENV_VAR, "") == "1"


def open_store(url: str | None = None, raw: bool | None = None) -> RunStore:
    """The store at ``url``, else ``$TRACEGRADE_DB``, else ``.tracegrade/runs.db``.

    ``raw`` (default: ``TRACEGRADE_RAW_DATA=1``) keeps personal data in what is stored."""
    url = url or os.environ.get(ENV_VAR) or DEFAULT_URL
    raw = raw_from_env() if raw is None else raw
    if url.startswith(("postgresql://", "postgres://")):
        return RunStore(PostgresBackend(url, say=_say), raw)
    if url.startswith("sqlite:///"):
        return RunStore(SqliteBackend(url[len("sqlite:///"):]), raw)
    if "://" in url:
        raise StoreError(f"unknown store URL {hide_password(url)!r}: use sqlite:///PATH or postgresql://...")
    return RunStore(SqliteBackend(url), raw)


def _say(message: str) -> None:
    print(f"tracegrade: {message}", file=sys.stderr)
