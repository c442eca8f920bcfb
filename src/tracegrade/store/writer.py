"""The run store's case writes in a process of their own, so that a large run uses a second core.

    >>> # writer = await StoreWriter.start("runs.db", False, run_id, lock_fd)
    >>> # writer.send(finished); forms = await writer.committed(); await writer.close()

WHY: a checks-only run is Python under one GIL, and a third of its time was the stored form
(redaction, JSON) and the SQLite insert of each case, in a thread that took turns with the
cases. Here the run hands each group of finished cases over as ``CaseResult.to_json`` pickled
(a C pickle of plain values: a sixth of the stored form's cost), and this process redacts,
encodes and commits them in one transaction, exactly as ``RunStore.save_cases`` would, then
answers with each case's stored form. A case is reported (progress, reports) only once that
answer says its transaction committed.

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

The process, its pipes and its deadline are the engine's ``ChildProcess``; this module says what
the run hands over and how the writer stores it.
"""

from __future__ import annotations

import itertools
import os
import sys
from typing import IO, Any, Sequence

from tracegrade.core.errors import StoreError
from tracegrade.core.results import CaseResult
from tracegrade.core.redact import configured_secrets, register_secret
from tracegrade.engine.child_process import ChildFailed, ChildProcess, Frames, child_setup
from tracegrade.engine.child_process import frame as _frame
from tracegrade.store.runstore import RunStore, StoredForm, open_store, reads_back_alike, redaction_key

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

    def __init__(self, child: ChildProcess, raw: bool, deadline_s: float = DEFAULT_DEADLINE_S) -> None:
        self._child, self._raw, self._deadline_s = child, raw, deadline_s
        self._sent_secrets: tuple[str, ...] | None = None

    @classmethod
    async def start(cls, path: str, raw: bool, run_id: str, lock_fd: int | None) -> StoreWriter:
        """A writer of the run's cases to the store at ``path``; ``lock_fd``: the run's lock, held by the writer too."""
        child = await ChildProcess.start("tracegrade.store.writer", [path, "1" if raw else "0", run_id],
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
        try:
            self._child.send(message)
        except ChildFailed as exc:
            raise _failed(self._child, exc) from None

    async def committed(self) -> list[StoredForm]:
        """The stored forms of the oldest group sent and not yet answered, once it is committed. A
        form that reads back as its result (``same``) comes without its text (""): the run reads
        the result itself."""
        try:
            kind, key, value = await self._child.answer(self._deadline_s)
        except ChildFailed as exc:
            raise _failed(self._child, exc) from None
        if kind == "error":
            raise StoreError(value)
        return [StoredForm(key, text, same) for text, same in value]

    async def close(self) -> None:
        """Ends the writer once it has committed what it was given; kills it when it gave no answer in
        time, or takes longer than its deadline to end (WHY: it holds the run's lock). Killed,
        SQLite rolls its transaction back."""
        await self._child.close(self._deadline_s)


def _failed(child: ChildProcess, exc: ChildFailed) -> StoreError:
    if exc.silent:
        return StoreError(f"the store's writer process (pid {child.pid}) {exc}: the run stops with the cases "
                          f"it committed (resume it to run the rest)")
    return StoreError(f"the store's writer process {exc}")


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


def serve(path: str, raw: bool, run_id: str, source: int, sink: IO[bytes]) -> None:
    """The writer's side: the groups read from the descriptor ``source`` stored, those already
    waiting together in one transaction, each one's forms (or the store's error) written to
    ``sink`` in order, until ``source`` ends."""
    frames = Frames(source)
    with open_store(f"sqlite:///{path}", raw=raw) as store:
        while (first := frames.next()) is not None:
            answers = _stored(store, run_id, _waiting_with(first, frames))
            try:
                sink.write(b"".join(_frame(answer) for answer in answers))
                sink.flush()
            except BrokenPipeError:  # the run is gone (killed): what was committed stays
                return


def _waiting_with(first: Any, frames: Frames) -> list[Any]:
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


def main(argv: Sequence[str]) -> int:
    (path, raw, run_id), sink = child_setup(argv)
    with sink:
        serve(path, raw == "1", run_id, sys.stdin.fileno(), sink)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
