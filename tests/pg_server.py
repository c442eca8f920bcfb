"""A throwaway Postgres server for tests: initdb into a temp dir, pg_ctl on a
free port, removed afterwards. Postgres refuses to run as root, so as root the
server runs as the ``postgres`` system user (Debian's package creates it).

The tests that use it are skipped only when a server truly cannot start, and
the reason says why (``pytest -rs`` prints it). In CI (``CI`` set, as .ci/run
does) they fail instead: a broken Postgres must not silently halve the store tests.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Iterator, NoReturn


class Unavailable(Exception):
    """Why no server could be started here."""


def in_ci() -> bool:
    """Whether the tests run in CI, where every service a test needs must start."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def cannot_start(reason: str) -> NoReturn:
    """Skip the test here; fail it in CI."""
    import pytest

    if in_ci():
        pytest.fail(f"{reason} (CI is set: a service the tests need must start)", pytrace=False)
    pytest.skip(reason)


def import_psycopg() -> Any:
    """psycopg, or a skip (a failure in CI) naming the install step."""
    try:
        import psycopg
    except ImportError:
        cannot_start("psycopg not installed (pip install -e '.[test]')")
    return psycopg


def _binary(name: str) -> str:
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None)
    if not found:
        raise Unavailable(f"{name} not found (install Debian's postgresql: scripts/test-deps.sh)")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_server_user(command: list[str]) -> tuple[list[str], str | None]:
    if os.geteuid() != 0:
        return command, None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise Unavailable("running as root and there is no 'postgres' user to run the server as") from None
    return ["runuser", "-u", "postgres", "--", *command], "postgres"


def _run(command: list[str], what: str) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"{what} could not run: {exc}") from None
    if done.returncode != 0:
        raise Unavailable(f"{what} failed ({done.returncode}): {(done.stderr or done.stdout).strip()[-400:]}")


class Server:
    """A running throwaway server: its URL, and ``stop``/``start`` to restart it in place."""

    def __init__(self, root: Path, port: int) -> None:
        self.root, self.data, self.port = root, root / "data", port
        self.url = f"postgresql://tracegrade@127.0.0.1:{port}/postgres"

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        _run(_as_server_user([_binary("pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.root / "log"),
                              "-w", "-t", "30", "start"])[0], "pg_ctl start")

    def stop(self) -> None:
        subprocess.run(_as_server_user([_binary("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"])[0],
                       capture_output=True, timeout=60)


@contextlib.contextmanager
def postgres_server() -> Iterator[Server]:
    """A fresh, empty server; stopped and removed after."""
    initdb = _binary("initdb")
    root = Path(tempfile.mkdtemp(prefix="tracegrade-pg-"))
    server = Server(root, _free_port())
    _, user = _as_server_user([])
    if user:
        shutil.chown(root, user)
    try:
        _run(_as_server_user([initdb, "-D", str(server.data), "-U", "tracegrade", "--auth=trust", "-E", "UTF8",
                              "--no-sync"])[0], "initdb")
        server.start()
        try:
            yield server
        finally:
            server.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def throwaway_postgres() -> Iterator[str]:
    """Yields a ``postgresql://`` URL to a fresh, empty server; stops and removes it after."""
    with postgres_server() as server:
        yield server.url
