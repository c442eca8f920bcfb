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
"""

from __future__ import annotations

import zlib
from array import array
from typing import Iterable, Iterator

BATCH = 64


class Packed:
    """An immutable sequence of byte strings, stored as zlib-compressed batches."""

    __slots__ = ("_batches", "_ends", "_batch", "_count", "_last")

    def __init__(self, items: Iterable[bytes], batch: int = BATCH) -> None:
        self._batch = batch
        self._batches: list[bytes] = []
        self._ends: list[array[int]] = []  # per batch: where each item ends in the expanded batch
        self._count = 0
        pending: list[bytes] = []
        for item in items:
            pending.append(item)
            if len(pending) == batch:
                self._add(pending)
                pending = []
        if pending:
            self._add(pending)
        self._last: tuple[int, bytes] = (-1, b"")

    def _add(self, items: list[bytes]) -> None:
        ends: array[int] = array("I")
        end = 0
        for item in items:
            end += len(item)
            ends.append(end)
        self._batches.append(zlib.compress(b"".join(items), 1))
        self._ends.append(ends)
        self._count += len(items)

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int) -> bytes:
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("Packed index out of range")
        number, position = divmod(index, self._batch)
        return _item(self._expanded(number), self._ends[number], position)

    def __iter__(self) -> Iterator[bytes]:
        for number, ends in enumerate(self._ends):
            data = self._expanded(number)
            for position in range(len(ends)):
                yield _item(data, ends, position)

    def _expanded(self, number: int) -> bytes:
        last = self._last  # one read of the attribute: another thread may replace it
        if last[0] != number:
            last = (number, zlib.decompress(self._batches[number]))
            self._last = last
        return last[1]

    def same_as(self, other: Packed) -> bool:
        """Holds the very same items in the very same batches (a cheap equality)."""
        return self._batch == other._batch and self._batches == other._batches


def _item(data: bytes, ends: array[int], position: int) -> bytes:
    return data[ends[position - 1] if position else 0:ends[position]]
