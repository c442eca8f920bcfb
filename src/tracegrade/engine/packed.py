"""Many small byte strings held compressed, a batch at a time.

    >>> packed = Packed([b"first", b"second", b"third"], batch=2)
    >>> len(packed), packed[1], packed[-1], list(packed)
    (3, b'second', b'third', [b'first', b'second', b'third'])

WHY batches: a run holds every case and every result as a few hundred bytes
of JSON or pickle. Compressed one by one, each paid zlib's set-up (40-80 us
to compress, 8 us to expand on this machine: more than the work done with
it) and kept little (the keys repeat from item to item, not inside one).
Compressed 64 at a time, the set-up is shared and the repeats compress.
Reads are in order almost always, so the batch last expanded is kept.

WHY a temporary file past ``SPILL_BYTES`` of batches: compressed, a large run's
dataset and its results read back were still tens of bytes a case, held to the end
of the run, so its memory grew with its size. On disk a batch costs one read of a
few KB per 64 items read in order (from the page cache, as a rule), and memory
holds 8 bytes a batch, whatever the size.
"""

from __future__ import annotations

import os
import tempfile
import threading
import zlib
from array import array
from typing import IO, Any, Iterable, Iterator

BATCH = 64
SPILL_BYTES = 1 << 20


class Packed:
    """An immutable sequence of byte strings, stored as zlib-compressed batches, in memory
    up to ``SPILL_BYTES`` of them and in a temporary file past it."""

    __slots__ = ("_batch", "_count", "_starts", "_memory", "_file", "_last")

    def __init__(self, items: Iterable[bytes], batch: int = BATCH) -> None:
        self._batch = batch
        self._count = 0
        self._starts: array[int] = array("q", [0])  # where each batch starts, then where the last one ends
        self._memory = bytearray()  # the batches, until they pass SPILL_BYTES
        self._file: _Spill | None = None  # the batches, after
        pending: list[bytes] = []
        for item in items:
            pending.append(item)
            if len(pending) == batch:
                self._add(pending)
                pending = []
        if pending:
            self._add(pending)
        if self._file is not None:
            self._file.written()
        self._last: tuple[int, array[int], bytes] = (-1, array("I"), b"")

    def _add(self, items: list[bytes]) -> None:
        ends: array[int] = array("I")  # where each item ends, after the ends themselves
        end = 0
        for item in items:
            end += len(item)
            ends.append(end)
        compressed = zlib.compress(ends.tobytes() + b"".join(items), 1)
        self._count += len(items)
        self._starts.append(self._starts[-1] + len(compressed))
        if self._file is not None:
            self._file.write(compressed)
            return
        self._memory += compressed
        if len(self._memory) > SPILL_BYTES:
            self._file = _Spill()
            self._file.write(self._memory)
            self._memory = bytearray()

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int) -> bytes:
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("Packed index out of range")
        number, position = divmod(index, self._batch)
        _, ends, data = self._expanded(number)
        return _item(data, ends, position)

    def __iter__(self) -> Iterator[bytes]:
        for number in range(len(self._starts) - 1):
            _, ends, data = self._expanded(number)
            for position in range(len(ends)):
                yield _item(data, ends, position)

    def __reduce__(self) -> tuple[Any, ...]:
        return Packed, (list(self), self._batch)  # WHY the items: a temporary file does not travel

    @property
    def compressed_bytes(self) -> int:
        """What the batches take, in memory or on disk."""
        return self._starts[-1]

    def _expanded(self, number: int) -> tuple[int, array[int], bytes]:
        last = self._last  # one read of the attribute: another thread may replace it
        if last[0] != number:
            whole = zlib.decompress(self._compressed(number))
            count = min(self._batch, self._count - number * self._batch)
            ends: array[int] = array("I")
            ends.frombytes(whole[:count * ends.itemsize])
            last = (number, ends, whole[count * ends.itemsize:])
            self._last = last
        return last

    def _compressed(self, number: int) -> bytes:
        start, end = self._starts[number], self._starts[number + 1]
        if self._file is None:
            return bytes(self._memory[start:end])
        return self._file.read(start, end - start)

    def same_as(self, other: Packed) -> bool:
        """Holds the very same items in the very same batches (a cheap equality)."""
        return (self._batch == other._batch and self._starts == other._starts
                and all(self._compressed(n) == other._compressed(n) for n in range(len(self._starts) - 1)))


class _Spill:
    """An unnamed temporary file, written once, then read from any thread."""

    def __init__(self) -> None:
        self._file: IO[bytes] = tempfile.TemporaryFile(prefix="tracegrade-packed-")
        self._lock = threading.Lock()  # WHY: only where there is no pread, a seek and a read must go together

    def write(self, data: bytes | bytearray) -> None:
        self._file.write(data)

    def written(self) -> None:
        self._file.flush()

    def read(self, start: int, size: int) -> bytes:
        if hasattr(os, "pread"):
            return os.pread(self._file.fileno(), size, start)
        with self._lock:
            self._file.seek(start)
            return self._file.read(size)


def _item(data: bytes, ends: array[int], position: int) -> bytes:
    return data[ends[position - 1] if position else 0:ends[position]]
