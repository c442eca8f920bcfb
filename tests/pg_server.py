"""A throwaway Postgres server for tests: initdb into a temp dir, pg_ctl on a
free port, removed afterwards. Postgres refuses to run as root, so as root the
server runs as the ``postgres`` system user (Debian's package creates it).

The tests that use it are skipped only when a server truly cannot start, and
the reason says why (``pytest -rs`` prints it).
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
from typing import Iterator


class Unavailable(Exception):
    """Why no server could be started here."""


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


@contextlib.contextmanager
def throwaway_postgres() -> Iterator[str]:
    """Yields a ``postgresql://`` URL to a fresh, empty server; stops and removes it after."""
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    root = Path(tempfile.mkdtemp(prefix="tracegrade-pg-"))
    data, port = root / "data", _free_port()
    _, user = _as_server_user([])
    if user:
        shutil.chown(root, user)
    try:
        _run(_as_server_user([initdb, "-D", str(data), "-U", "tracegrade", "--auth=trust", "-E", "UTF8",
                              "--no-sync"])[0], "initdb")
        options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
        _run(_as_server_user([pg_ctl, "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "-t", "30",
                              "start"])[0], "pg_ctl start")
        try:
            yield f"postgresql://tracegrade@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run(_as_server_user([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"])[0],
                           capture_output=True, timeout=60)
    finally:
        shutil.rmtree(root, ignore_errors=True)
