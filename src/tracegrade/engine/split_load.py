"""A large JSONL dataset's second part validated by a process of its own, while this one
validates the first.

WHY: a dataset is read, validated, written in its canonical form and hashed (its version)
before its run's first case starts, on one core: ~28 us a case, a ninth of a 100,000-case
checks-only run. A JSONL file splits at any line, so the other core takes the part after
``MAIN_SHARE`` of the file and hands back each case's canonical text and packed item (the
same bytes this process would make); this one hashes them in order after its own. WHY a
process, not a thread: validation holds the GIL. WHY through an unnamed temporary file, not a
pipe: a pipe holds 64 KB, so the other process stopped after ~130 cases until this one had
read its own part; held in memory, the frames would be most of the load's peak.

Nothing changes for a reader: the cases, their order, their hashes and the version are those
of a load in one process. An error in the second part, an id found in both parts or a process
that could not start or ended early: the file is read again in one process, which names the
first error exactly as a load in one process does.

The other process runs the reader module its caller names (``python -m READER PATH OFFSET``, frames on
stdout; the dataset's is ``case.part_reader``).
"""

from __future__ import annotations

import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Iterable, Iterator

# Files from this size on are split. WHY 8 MB (~35,000 cases): the other process first spends
# ~0.2 s importing the dataset's models; below this, this one would wait for it.
PARALLEL_BYTES = 8 << 20
# The part of the file this process reads. WHY more than half: the other one starts late (its imports).
MAIN_SHARE = 0.55

_HEAD = struct.Struct("<II")  # each frame: the canonical text's length, the item's length, then both
_END = (0, 0)  # every case was sent
_FAILED = (0xFFFFFFFF, 0)  # an error (or anything else) stopped the part: it is read again here


class PartFailed(Exception):
    """The second part could not be taken as the other process read it."""


class SecondPart:
    """The other process reading a file from ``offset`` on, into ``frames``."""

    def __init__(self, offset: int, child: subprocess.Popen[bytes], frames: IO[bytes]) -> None:
        self.offset = offset
        self._child = child
        self._frames = frames

    def cases(self) -> Iterator[tuple[bytes, bytes]]:
        """The canonical text and packed item of each case of the part, in file order, once
        the other process has ended; PartFailed when it did not read it all."""
        self._child.wait()
        out = self._frames
        out.seek(0)
        while True:
            head = out.read(_HEAD.size)
            if len(head) < _HEAD.size:
                raise PartFailed("the other process ended early")
            sizes = _HEAD.unpack(head)
            if sizes == _END:
                return
            if sizes == _FAILED:
                raise PartFailed("the other process met an error")
            body = out.read(sizes[0] + sizes[1])
            if len(body) < sizes[0] + sizes[1]:
                raise PartFailed("the other process ended early")
            yield body[:sizes[0]], body[sizes[0]:]

    def close(self) -> None:
        """The other process stopped (when it has not ended) and waited for."""
        if self._child.poll() is None:
            self._child.kill()
        self._child.wait()
        self._frames.close()


def second_part(path: Path, reader: str) -> SecondPart | None:
    """``python -m reader PATH OFFSET`` started on the last part of ``path``, when it is a JSONL file
    large enough to split and an interpreter can be started; else None (one process reads it all).
    ``reader`` writes its cases with ``send_frames``."""
    if path.suffix != ".jsonl":
        return None
    try:
        size = path.stat().st_size
        if size < PARALLEL_BYTES:
            return None
        offset = _next_line(path, int(size * MAIN_SHARE))
        if offset >= size:
            return None
        frames = tempfile.TemporaryFile(prefix="tracegrade-part-")
    except OSError:  # a file that cannot be read is named by the load
        return None
    try:
        child = subprocess.Popen(_command(reader, path, offset), stdin=subprocess.DEVNULL, stdout=frames,
                                 stderr=subprocess.DEVNULL)
    except OSError:  # no interpreter to start (an embedded Python): one process reads it all
        frames.close()
        return None
    return SecondPart(offset, child, frames)


def _command(reader: str, path: Path, offset: int) -> list[str]:
    return [sys.executable, "-m", reader, str(path), str(offset)]


def _next_line(path: Path, at: int) -> int:
    """Where the first line that starts at or after byte ``at`` starts."""
    with path.open("rb") as data:
        data.seek(max(0, at - 1))
        if at == 0 or data.read(1) == b"\n":
            return at
        return at + len(data.readline())


def send_frames(cases: Iterable[tuple[bytes, bytes]], out: IO[bytes]) -> int:
    """The other process's side: each (canonical text, packed item) of ``cases`` as a frame to
    ``out``, then the end frame (returns 0), or the failed frame at the first error (returns 1)."""
    try:
        for canonical, item in cases:
            out.write(_HEAD.pack(len(canonical), len(item)) + canonical + item)
    except Exception:  # noqa: BLE001 - whatever it is, the first process reads the file again and names it
        out.write(_HEAD.pack(*_FAILED))
        return 1
    out.write(_HEAD.pack(*_END))
    return 0
