"""The run store's two backends: a DB-API connection, its transactions, and a lock per run.

SQL is written once with ``?`` placeholders; the Postgres backend translates
them outside string literals. A unit of work is a function of ``run(sql,
params) -> rows`` executed in one transaction, so a backend can run it again:
Postgres does when the server restarted under it (bounded retries), SQLite
never needs to.

The lock per run: two processes resuming the same run at once would both pay
the models for the same cases. SQLite holds an ``flock`` on a file beside the
store (released by the kernel when the process dies, so ``kill -9`` leaves no
stale lock); Postgres a session advisory lock (released when the connection
ends). Both are taken without waiting: the second process is told at once.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence, TypeVar

from tracegrade.core.errors import StoreError
from tracegrade.core.redact import register_secret

if TYPE_CHECKING:
    import psycopg

T = TypeVar("T")
Row = tuple[Any, ...]
Run = Callable[[str, Sequence[Any]], list[Row]]
Work = Callable[[Run], T]

# Postgres: how hard to try when the server goes away mid-run (a restart takes seconds).
RECONNECT_ATTEMPTS = 8
RECONNECT_FIRST_WAIT_S = 0.25
RECONNECT_MAX_WAIT_S = 5.0


class RunLocked(StoreError):
    """Another process is running (or resuming) this run right now."""

    def __init__(self, run_id: str, where: str) -> None:
        super().__init__(f"run {run_id} is being run by another process right now ({where}); "
                         f"wait for it to end (or stop it), then resume")


class Backend:
    """What the store needs of a database."""

    display_url: str

    def execute(self, work: Work[T], migration: bool = False) -> T:
        raise NotImplementedError

    def lock_run(self, run_id: str) -> None: ...

    def unlock_run(self, run_id: str) -> None: ...

    def close(self) -> None: ...


# --- SQLite -------------------------------------------------------------------------------


def recovery_hint(path: str) -> str:
    return (f"Recover what it holds with: sqlite3 {path} '.recover' | sqlite3 {path}.recovered, "
            f"then move {path} away and {path}.recovered in its place (or point --db / TRACEGRADE_DB at a new store)")


class SqliteBackend(Backend):
    def __init__(self, path: str) -> None:
        self.path = path
        self.display_url = f"sqlite:///{path}"
        self._locks: dict[str, tuple[int, int]] = {}  # run id -> (fd, holders)
        if path != ":memory:":
            self._create_atomically(Path(path))
        try:
            self._conn = _connect(path)
        except sqlite3.Error as exc:
            raise self._error(exc) from exc
        if path != ":memory:":
            self._check_integrity()

    def _create_atomically(self, path: Path) -> None:
        """A new store appears whole (header written) or not at all.

        WHY: SQLite treats a 0-byte file as an empty database and would quietly
        build a new store in place of a truncated one; so a 0-byte store is
        refused, and that refusal must never meet a store being created."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            if path.stat().st_size == 0:
                raise StoreError(f"{self.display_url} is empty (0 bytes): not a run store, perhaps a truncated one. "
                                 f"tracegrade will not replace it: restore it from a backup, or move it away "
                                 f"to start a new store")
            return
        scratch = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.new")
        try:
            _connect(str(scratch)).close()  # WAL mode and the header, on disk
            try:
                os.link(scratch, path)  # never replaces: a store another process just made wins
            except FileExistsError:
                pass
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"{self.display_url}: cannot create the store: {exc}") from exc
        finally:
            for leftover in (scratch, Path(f"{scratch}-wal"), Path(f"{scratch}-shm")):
                leftover.unlink(missing_ok=True)

    def _check_integrity(self) -> None:
        """``PRAGMA quick_check``: every page and b-tree, about 1 GB/s; 0.2 s for 100,000 cases."""
        try:
            problems = [row[0] for row in self._conn.execute("PRAGMA quick_check(5)").fetchall()]
        except sqlite3.DatabaseError as exc:
            problems = [str(exc)]
        if problems != ["ok"]:
            self._conn.close()
            detail = "; ".join(" ".join(p.split()) for p in problems)[:300]
            raise StoreError(f"{self.display_url} is damaged (integrity check: {detail}). "
                             f"tracegrade will not read or write it. {recovery_hint(self.path)}")

    def _error(self, exc: sqlite3.Error) -> StoreError:
        message = f"{self.display_url}: {exc}"
        if isinstance(exc, sqlite3.DatabaseError) and ("malformed" in str(exc) or "not a database" in str(exc)):
            message += f". {recovery_hint(self.path)}"
        return StoreError(message)

    def execute(self, work: Work[T], migration: bool = False) -> T:
        with self.transaction() as run:
            return work(run)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Run]:
        try:
            self._conn.execute("BEGIN IMMEDIATE")  # take the write lock now, not halfway through
            try:
                yield lambda sql, params: self._conn.execute(sql, params).fetchall()
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def lock_run(self, run_id: str) -> None:
        if run_id in self._locks:  # re-entrant within one store
            fd, holders = self._locks[run_id]
            self._locks[run_id] = (fd, holders + 1)
            return
        self._locks[run_id] = (self._flock(run_id), 1)

    def lock_fd(self, run_id: str) -> int | None:
        """The open file holding the run's lock (a writer process holds it too), or None."""
        fd = self._locks.get(run_id, (-1, 0))[0]
        return fd if fd >= 0 else None

    def unlock_run(self, run_id: str) -> None:
        fd, holders = self._locks.pop(run_id, (-1, 0))
        if holders > 1:
            self._locks[run_id] = (fd, holders - 1)
        elif fd >= 0:
            os.close(fd)  # releases the flock; the file stays (deleting it races with a waiter)

    def _flock(self, run_id: str) -> int:
        if self.path == ":memory:":
            return -1  # an in-memory store lives in one connection: no other process sees the run
        import fcntl  # POSIX only: a store on Windows gets no run lock

        folder = Path(f"{self.path}.locks")
        folder.mkdir(exist_ok=True)
        lock_path = folder / (hashlib.sha256(run_id.encode()).hexdigest()[:32] + ".lock")
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunLocked(run_id, f"lock {lock_path}") from None
        return fd

    def close(self) -> None:
        for run_id in list(self._locks):
            self._locks[run_id] = (self._locks[run_id][0], 1)
            self.unlock_run(run_id)
        self._conn.close()


def _connect(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


# --- Postgres -----------------------------------------------------------------------------


class PostgresBackend(Backend):
    """One connection, reopened with bounded, growing waits when the server goes away."""

    def __init__(self, url: str, attempts: int = RECONNECT_ATTEMPTS, first_wait_s: float = RECONNECT_FIRST_WAIT_S,
                 say: Callable[[str], None] | None = None) -> None:
        try:
            import psycopg  # optional: only a Postgres store needs it
        except ImportError:
            raise StoreError(f"{hide_password(url)}: a Postgres store needs psycopg: "
                             "pip install 'tracegrade[postgres]'") from None

        self._psycopg, self._url = psycopg, url
        self.display_url = hide_password(url)
        for secret in _url_passwords(url):
            register_secret(secret)  # a driver error that quotes the URL must not print it
        self._attempts, self._first_wait_s = attempts, first_wait_s
        self._say = say or (lambda message: None)
        self._locks: dict[str, int] = {}  # run id -> holders
        try:
            self._conn = self._connect()
        except psycopg.Error as exc:
            raise StoreError(f"{self.display_url}: {exc}") from exc

    def _connect(self) -> psycopg.Connection[Row]:
        return self._psycopg.connect(self._url, autocommit=True, connect_timeout=10)

    def execute(self, work: Work[T], migration: bool = False) -> T:
        for attempt in range(self._attempts + 1):
            try:
                return self._once(work, migration)
            except self._psycopg.Error as exc:
                if not self._connection_lost() or attempt == self._attempts:
                    raise self._store_error(exc, lost=self._connection_lost()) from exc
                self._reconnect(attempt, exc)
        raise AssertionError("unreachable")

    def _once(self, work: Work[T], migration: bool) -> T:
        with self._conn.transaction(), self._conn.cursor() as cursor:
            if migration:
                # WHY a lock: two runs starting at once on a new database would both migrate.
                cursor.execute("SELECT pg_advisory_xact_lock(7472616365)")
            return work(lambda sql, params: _fetch(cursor, to_pyformat(sql), params))

    def _connection_lost(self) -> bool:
        return self._conn.closed or self._conn.broken

    def _reconnect(self, attempt: int, exc: Exception) -> None:
        wait = min(RECONNECT_MAX_WAIT_S, self._first_wait_s * 2 ** attempt)
        self._say(f"lost the connection to {self.display_url} ({type(exc).__name__}); "
                  f"reconnecting in {wait:g} s (attempt {attempt + 1} of {self._attempts})")
        time.sleep(wait)
        with contextlib.suppress(Exception):
            self._conn.close()
        try:
            self._conn = self._connect()
        except self._psycopg.Error:
            return  # still down: the next attempt finds the connection lost and waits longer
        for run_id in self._locks:  # a session lock died with the old session
            if not _try_lock(lambda sql, params: self._conn.execute(to_pyformat(sql), params).fetchall(), run_id):
                raise RunLocked(run_id, f"it took the lock while {self.display_url} was unreachable")

    def _store_error(self, exc: Exception, lost: bool) -> StoreError:
        message = f"{self.display_url}: {exc}".strip()
        if lost:
            message += f" (connection lost; gave up after {self._attempts} reconnect attempts)"
        return StoreError(message)

    def lock_run(self, run_id: str) -> None:
        if run_id not in self._locks and not self.execute(lambda run: _try_lock(run, run_id)):
            raise RunLocked(run_id, f"advisory lock in {self.display_url}")
        self._locks[run_id] = self._locks.get(run_id, 0) + 1

    def unlock_run(self, run_id: str) -> None:
        holders = self._locks.pop(run_id, 0)
        if holders > 1:
            self._locks[run_id] = holders - 1
        elif holders == 1 and not self._connection_lost():
            with contextlib.suppress(self._psycopg.Error):
                self._conn.execute("SELECT pg_advisory_unlock(%s)", (_lock_key(run_id),))

    def close(self) -> None:
        self._locks.clear()
        self._conn.close()  # ends the session, and with it every advisory lock


def _try_lock(run: Run, run_id: str) -> bool:
    return bool(run("SELECT pg_try_advisory_lock(?)", (_lock_key(run_id),))[0][0])


def _lock_key(run_id: str) -> int:
    """A signed 64-bit key for ``run_id`` (Postgres advisory locks take a bigint)."""
    return int.from_bytes(hashlib.sha256(b"tracegrade-run:" + run_id.encode()).digest()[:8], "big", signed=True)


def _fetch(cursor: psycopg.Cursor[Row], sql: str, params: Sequence[Any]) -> list[Row]:
    cursor.execute(sql, params)
    return cursor.fetchall() if cursor.description is not None else []


_LITERAL = re.compile(r"('(?:[^']|'')*')")


@functools.lru_cache(maxsize=256)
def to_pyformat(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s``; a ``?`` inside a string literal stays
    a question mark, and a literal ``%`` is doubled (psycopg reads ``%`` everywhere)."""
    parts = _LITERAL.split(sql)
    return "".join(part.replace("%", "%%") if index % 2 else part.replace("%", "%%").replace("?", "%s")
                   for index, part in enumerate(parts))


# --- URLs ---------------------------------------------------------------------------------

# libpq takes a password in the query too, and the key's passphrase as sslpassword.
_QUERY_PASSWORD = re.compile(r"([?&](?:ssl)?password=)([^&#]*)", re.IGNORECASE)


def _parts(url: str) -> tuple[str, str, str, str]:
    """scheme://, user info, host, and the rest (path, query); a password may itself hold ``@``."""
    scheme, sep, rest = url.partition("://")
    authority, slash, tail = rest.partition("/")
    credentials, at, host = authority.rpartition("@")
    return scheme + sep, credentials if at else "", host, slash + tail


def _url_passwords(url: str) -> list[str]:
    _, credentials, _, tail = _parts(url)
    found = [credentials.split(":", 1)[1]] if ":" in credentials else []
    return found + [m.group(2) for m in _QUERY_PASSWORD.finditer(tail)]


def hide_password(url: str) -> str:
    """``url`` with the password (in the user info, a ``password=`` or ``sslpassword=`` parameter) shown as ``***``."""
    scheme, credentials, host, tail = _parts(url)
    if ":" in credentials:
        credentials = credentials.split(":", 1)[0] + ":***"
    tail = _QUERY_PASSWORD.sub(r"\1***", tail)
    return f"{scheme}{credentials}{'@' if credentials else ''}{host}{tail}"
