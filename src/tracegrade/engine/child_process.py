"""A child process that is sent messages and answers each, in order, tied to its parent's life.

    >>> # child = await ChildProcess.start("mypkg.worker", ["arg"])   # runs ``python -m mypkg.worker arg``
    >>> # child.send(message); answer = await child.answer(deadline_s=120); await child.close(120)

The contract: messages and answers are pickles, each framed by its length (``frame``); the child
reads them with ``Frames`` from its stdin and writes its answers to ``answer_sink()``; it calls
``die_with(parent)`` first. The parent's side never waits past a deadline: a child that gives no
answer in time (stopped, stuck on a disk) or ends is a ``ChildFailed`` saying why, and ``close``
kills it rather than wait for ever. The store's writer process (``store.writer``) is one.

The pipes carry length-prefixed pickles between the parent and the child it started: no other
process can write to them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import select
import signal
import struct
import sys
from pathlib import Path
from typing import IO, Any, Sequence

_LENGTH = struct.Struct("<Q")


class ChildFailed(Exception):
    """The child gave no answer in time (``silent``), or ended; the message says which."""

    def __init__(self, message: str, silent: bool = False) -> None:
        super().__init__(message)
        self.silent = silent


class ChildProcess:
    """The parent's side: ``send`` does not wait (the pipe's transport buffers what the child has not
    read yet); ``answer`` waits for the next answer, in the order sent."""

    def __init__(self, child: asyncio.subprocess.Process) -> None:
        self._child = child
        self._given_up = False  # it gave no answer in time: close() kills it instead of waiting

    @classmethod
    async def start(cls, module: str, args: Sequence[str], pass_fds: Sequence[int] = ()) -> ChildProcess:
        """``python -m module *args``, with ``pass_fds`` inherited; OSError when no interpreter can start."""
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", module, *args, str(os.getpid()),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, pass_fds=tuple(pass_fds))
        return cls(child)

    @property
    def pid(self) -> int:
        return self._child.pid

    def send(self, message: Any) -> None:
        assert self._child.stdin is not None  # piped in start
        if self._child.stdin.is_closing():
            raise self._ended("its input is closed")
        self._child.stdin.write(frame(message))

    async def answer(self, deadline_s: float) -> Any:
        """The next answer; ChildFailed when none comes within ``deadline_s`` or the child ended."""
        assert self._child.stdout is not None  # piped in start
        try:
            async with asyncio.timeout(deadline_s):
                size = _LENGTH.unpack(await self._child.stdout.readexactly(_LENGTH.size))[0]
                return pickle.loads(await self._child.stdout.readexactly(size))
        except TimeoutError:
            self._given_up = True
            raise ChildFailed(f"gave no answer in {deadline_s:g} s{process_state(self._child.pid)}", silent=True) from None
        except (OSError, asyncio.IncompleteReadError, pickle.UnpicklingError) as exc:
            self._given_up = True
            with contextlib.suppress(TimeoutError):  # WHY: its pipe may close before it is reaped; say how it ended
                await asyncio.wait_for(self._child.wait(), 1.0)
            raise self._ended(str(exc)) from exc

    async def close(self, deadline_s: float) -> None:
        """Ends the child once it has answered what it was sent; kills it when it gave no answer in
        time, or takes longer than ``deadline_s`` to end (WHY: a stopped child would keep its
        parent waiting for ever)."""
        assert self._child.stdin is not None  # piped in start
        self._child.stdin.close()
        if not self._given_up:
            try:
                async with asyncio.timeout(deadline_s):
                    await self._child.wait()
                return
            except TimeoutError:
                pass
        if self._child.returncode is None:
            self._child.kill()  # SIGKILL ends a stopped process too
        await self._child.wait()

    def _ended(self, why: str) -> ChildFailed:
        return ChildFailed(f"ended (exit {self._child.returncode}): {why}")


def process_state(pid: int) -> str:
    """Why a process may be silent, where the system says (Linux: stopped, waiting on a disk)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    state = stat[stat.rfind(")") + 2:][:1]  # WHY after the last ")": the command name may hold spaces
    return {"T": " (it is stopped)", "t": " (it is stopped by a debugger)",
            "D": " (it is waiting on a disk)"}.get(state, "")


def frame(value: Any) -> bytes:
    """``value`` pickled, after its length."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(data)) + data


class Frames:
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


def child_setup(argv: Sequence[str]) -> tuple[list[str], IO[bytes]]:
    """The child's first step: its own arguments (without the parent's pid that ``start`` added),
    and where its answers go. It is killed with its parent, and ignores Ctrl-C (WHY: Ctrl-C
    reaches the whole process group; the parent then sends what finished and ends the child by
    closing its input).

    WHY the answers on a copy of stdout, and stdout itself sent to stderr: a library that prints
    while the child works (a warning, a plugin's debug line) would otherwise write into the
    answers' frames, and the parent would stop on a pickle it cannot read."""
    *args, parent = argv
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with(int(parent))
    answers = os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return args, os.fdopen(answers, "wb", buffering=1 << 16)


def _die_with(parent: int) -> None:
    """Be killed the moment the process ``parent`` dies (Linux; elsewhere its closed pipe ends us).

    WHY: a child may hold what its parent holds (the store writer holds the run's lock); ending
    only once it noticed its pipe close left the run locked for some milliseconds after a kill -9."""
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
