"""The run store's case writes in a process of their own, so that a large run uses a second core.

    >>> # writer = await StoreWriter.start("runs.db", False, run_id, lock_fd)
    >>> # writer.send(finished); forms = await writer.committed(); await writer.close()

WHY: a checks-only run is Python under one GIL, and a third of its time was the stored form
(redaction, JSON) and the SQLite insert of each case, in a thread that took turns with the
cases. Here the run hands each group of finished cases over as ``CaseResult.to_json`` pickled
(a C pickle of plain values: a sixth of the stored form's cost), and this process redacts,
encodes and commits them in one transaction, exactly as ``RunStore.save_cases`` would, then
answers with each case's stored form. A case is reported (progress, reports) only once that
answer says its transaction committed, as before.

Durable and whole as in the thread: one transaction per group, in SQLite's WAL with
``synchronous=FULL``. The writer holds the run's lock with the run (it inherits the lock's
open file), so no two processes ever write one run; if the run is killed (kill -9), the writer
is killed with it (Linux: ``PR_SET_PDEATHSIG``; elsewhere it ends once it sees its pipe close,
after the transaction it is in), a transaction it was in is rolled back, and the run is free
to resume. If the writer dies, or gives no answer within its deadline (``DEADLINE_ENV_VAR``,
default 120 s: stopped with SIGSTOP, stuck on a disk), the run's next commit fails with a
``StoreError`` naming why: the run stops with what was committed, as when a commit fails in the
thread, the writer is killed (its open transaction rolled back, the run's lock let go), and the
run is marked ``failed`` in the store for ``--resume`` to finish.

The pipes carry length-prefixed pickles between this process and the child it started: no other
process can write to them.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import pickle
import select
import signal
import struct
import sys
from pathlib import Path
from typing import IO, Any, Sequence

from tracegrade.core.errors import StoreError
from tracegrade.core.results import CaseResult
from tracegrade.core.redact import configured_secrets, register_secret
from tracegrade.store.runstore import RunStore, StoredForm, open_store, reads_back_alike, redaction_key

_LENGTH = struct.Struct("<Q")
# Seconds the run waits for the writer's answer to a group before it gives the writer up. WHY 120:
# a group is at most TRANSACTION_ROWS cases, committed in milliseconds; a store locked by another
# process waits up to its busy timeout (30 s, store/backends.py) first, and a loaded machine more.
DEADLINE_ENV_VAR = "TRACEGRADE_STORE_WRITER_DEADLINE"
DEFAULT_DEADLINE_S = 120.0
# No group joins a transaction that already holds this many cases. WHY a bound: a group is
# answered only once its transaction commits, and one transaction of every group waiting
# (1,000 cases and more once the run had got ahead) held the answers back 0.3 s at a time.
TRANSACTION_ROWS = 256

# One finished case as handed over: its key, its position, status, and either its to_json
# dict with whether its free-form values read back as they are, or a stored text made
# ahead (a Ray worker's, under this process's redaction key) with its ``same``.
Row = tuple[str, int, int, str, Any, bool]


async def start_writer(store: RunStore, run_id: str) -> StoreWriter | None:
    """A writer process for the run's cases, holding the run's lock with this process; None where
    no other process can share ``store`` (in memory, Postgres)."""
    shared = store.shared_file(run_id)
    if shared is None:
        return None
    path, lock_fd = shared
    try:
        return await StoreWriter.start(path, store.raw, run_id, lock_fd)
    except OSError:  # no interpreter to start (an embedded Python): the run writes from its thread
        return None


class StoreWriter:
    """The run's side: a writer process started on a SQLite store file. ``send`` hands it a
    group of finished cases without waiting; ``committed`` waits for the next group's answer
    (in the order sent): each case's stored form, once its transaction committed."""

    def __init__(self, child: asyncio.subprocess.Process, raw: bool, deadline_s: float = DEFAULT_DEADLINE_S) -> None:
        self._child, self._raw, self._deadline_s = child, raw, deadline_s
        self._sent_secrets: tuple[str, ...] | None = None
        self._given_up = False  # it gave no answer in time: close() kills it instead of waiting

    @classmethod
    async def start(cls, path: str, raw: bool, run_id: str, lock_fd: int | None) -> StoreWriter:
        """A writer of the run's cases to the store at ``path``; ``lock_fd``: the run's lock, held by the writer too."""
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tracegrade.store.writer", path, "1" if raw else "0", run_id, str(os.getpid()),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            pass_fds=() if lock_fd is None else (lock_fd,))
        return cls(child, raw, deadline())

    def send(self, finished: Sequence[tuple[CaseResult, int]]) -> None:
        """``finished`` (results with their positions) to be committed in one transaction; does not
        wait (the pipe's transport buffers what the writer has not read yet)."""
        key = redaction_key(self._raw)
        rows: list[Row] = []
        for result, position in finished:
            made = result.stored
            if made is not None and made.key == key:  # WHY trusted only under our key: see runstore._stored_text
                rows.append((result.case_id, result.repeat, position, result.status, made.text, made.same))
            else:
                rows.append((result.case_id, result.repeat, position, result.status, result.to_json(),
                             reads_back_alike(result)))
        secrets = configured_secrets()
        # WHY the secrets sent when they change: one registered at run time is this process's alone
        message = (key, secrets if secrets != self._sent_secrets else None, rows)
        self._sent_secrets = secrets
        assert self._child.stdin is not None  # piped in start
        if self._child.stdin.is_closing():
            raise self._ended("its input is closed")
        self._child.stdin.write(_frame(message))

    async def committed(self) -> list[StoredForm]:
        """The stored forms of the oldest group sent and not yet answered, once it is committed. A
        form that reads back as its result (``same``) comes without its text (""): the run reads
        the result itself."""
        assert self._child.stdout is not None  # piped in start
        try:
            async with asyncio.timeout(self._deadline_s):
                size = _LENGTH.unpack(await self._child.stdout.readexactly(_LENGTH.size))[0]
                kind, key, value = pickle.loads(await self._child.stdout.readexactly(size))
        except TimeoutError:
            self._given_up = True
            raise StoreError(f"the store's writer process (pid {self._child.pid}) gave no answer in "
                             f"{self._deadline_s:g} s{_state(self._child.pid)}: the run stops with the cases "
                             f"it committed (resume it to run the rest)") from None
        except (OSError, asyncio.IncompleteReadError, pickle.UnpicklingError) as exc:
            self._given_up = True
            with contextlib.suppress(TimeoutError):  # WHY: its pipe may close before it is reaped; say how it ended
                await asyncio.wait_for(self._child.wait(), 1.0)
            raise self._ended(str(exc)) from exc
        if kind == "error":
            raise StoreError(value)
        return [StoredForm(key, text, same) for text, same in value]

    async def close(self) -> None:
        """Ends the writer once it has committed what it was given; kills it when it gave no answer in
        time, or takes longer than its deadline to end (WHY: it holds the run's lock, and a stopped
        process would keep the run waiting for ever)."""
        assert self._child.stdin is not None  # piped in start
        self._child.stdin.close()
        if not self._given_up:
            try:
                async with asyncio.timeout(self._deadline_s):
                    await self._child.wait()
                return
            except TimeoutError:
                pass
        if self._child.returncode is None:
            self._child.kill()  # SIGKILL ends a stopped process too; SQLite rolls its transaction back
        await self._child.wait()

    def _ended(self, why: str) -> StoreError:
        return StoreError(f"the store's writer process ended (exit {self._child.returncode}): {why}")


def deadline() -> float:
    """The writer's answer deadline in seconds, from ``DEADLINE_ENV_VAR`` (a positive number)."""
    given = os.environ.get(DEADLINE_ENV_VAR, "").strip()
    if not given:
        return DEFAULT_DEADLINE_S
    try:
        seconds = float(given)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < float("inf"):
        raise StoreError(f"{DEADLINE_ENV_VAR}={given!r}: give the writer's answer deadline in seconds, more than 0")
    return seconds


def _state(pid: int) -> str:
    """Why a process may be silent, where the system says (Linux: stopped, waiting on a disk)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    state = stat[stat.rfind(")") + 2:][:1]  # WHY after the last ")": the command name may hold spaces
    return {"T": " (it is stopped)", "t": " (it is stopped by a debugger)",
            "D": " (it is waiting on a disk)"}.get(state, "")


def _frame(value: Any) -> bytes:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(data)) + data


def serve(path: str, raw: bool, run_id: str, source: int, sink: IO[bytes]) -> None:
    """The writer's side: the groups read from the descriptor ``source`` stored, those already
    waiting together in one transaction, each one's forms (or the store's error) written to
    ``sink`` in order, until ``source`` ends."""
    frames = _Frames(source)
    with open_store(f"sqlite:///{path}", raw=raw) as store:
        while (first := frames.next()) is not None:
            answers = _stored(store, run_id, _waiting_with(first, frames))
            try:
                sink.write(b"".join(_frame(answer) for answer in answers))
                sink.flush()
            except BrokenPipeError:  # the run is gone (killed): what was committed stays
                return


def _waiting_with(first: Any, frames: _Frames) -> list[Any]:
    """``first`` and the groups already waiting behind it, for one transaction (one fsync), until
    it holds TRANSACTION_ROWS cases."""
    groups, cases = [first], len(first[2])
    while cases < TRANSACTION_ROWS and (more := frames.next(wait=False)) is not None:
        groups.append(more)
        cases += len(more[2])
    return groups


def _stored(store: RunStore, run_id: str, groups: list[Any]) -> list[tuple[str, str, Any]]:
    """``groups`` committed in one transaction; an answer for each, in order (or the store's error)."""
    try:
        for _, secrets, _ in groups:
            for secret in secrets or ():
                register_secret(secret)
        forms = iter(store.save_handed(run_id, [row for _, _, rows in groups for row in rows]))
    except StoreError as exc:
        return [("error", "", str(exc))] * len(groups)  # the transaction held them all
    # WHY no text where it reads back as the result: it is what the run already holds, and ~1 KB
    # a case through the pipe held the writer up until the run read it
    return [("ok", key, [("" if same else text, same) for text, same in itertools.islice(forms, len(rows))])
            for key, _, rows in groups]


class _Frames:
    """Length-prefixed pickles read from a pipe's descriptor, waiting for one or not."""

    def __init__(self, fd: int) -> None:
        self._fd, self._buffer, self._ended = fd, bytearray(), False

    def next(self, wait: bool = True) -> Any:
        """The next message; None at the end of input, or (``wait=False``) when none is there yet."""
        while True:
            if len(self._buffer) >= _LENGTH.size:
                size = _LENGTH.unpack_from(self._buffer)[0]
                if len(self._buffer) >= _LENGTH.size + size:
                    data = bytes(self._buffer[_LENGTH.size:_LENGTH.size + size])
                    del self._buffer[:_LENGTH.size + size]
                    return pickle.loads(data)
            if self._ended or (not wait and not select.select([self._fd], [], [], 0)[0]):
                return None
            chunk = os.read(self._fd, 1 << 20)
            self._buffer += chunk
            self._ended = not chunk


def _die_with(parent: int) -> None:
    """Be killed the moment the run process ``parent`` dies (Linux; elsewhere its closed pipe ends us).

    WHY: we hold the run's lock with it; ending only once we noticed its pipe close left the run
    locked for some milliseconds after a kill -9, and a resume at once was told the run was
    still being run. Killed mid-transaction, SQLite rolls it back: none of its cases had been
    reported, and none is half-written."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it died before we asked
        os._exit(0)


_PR_SET_PDEATHSIG = 1


def main(argv: Sequence[str]) -> int:
    path, raw, run_id, parent = argv[0], argv[1] == "1", argv[2], int(argv[3])
    # WHY: Ctrl-C reaches the whole process group; the run then commits what finished, through us,
    # and ends us by closing our input
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with(parent)
    # WHY the answers on a copy of stdout, and stdout itself sent to stderr: a library that prints
    # while we store (a warning, a plugin's debug line) would otherwise write into the answers'
    # frames, and the run would stop on a pickle it cannot read
    answers = os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    with os.fdopen(answers, "wb", buffering=1 << 16) as sink:
        serve(path, raw, run_id, sys.stdin.fileno(), sink)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
