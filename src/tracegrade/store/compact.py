"""Case results held compressed: a 100,000-case run in tens of MB, not GB.

    >>> from tracegrade.core.results import CaseResult
    >>> results = CompactResults.from_json_texts(['{"case_id": "a", "status": "pass"}'])
    >>> len(results), results[0].case_id, results == (CaseResult("a", "pass"),)
    (1, 'a', True)

WHY: a run's results are read after the run (totals, console, metrics, JSON,
JUnit, Markdown), but never all at once; each CaseResult object with its Reply
costs about 3.4 KB, its JSON compressed about 0.4 KB. Each read decodes one at
a time, so readers share reads: ``stats.tally.RunTally`` and ``run_metrics``
take every number from one, the three output files are written from one more.
"""

from __future__ import annotations

import zlib
from typing import Iterable, Iterator, Sequence, overload

from tracegrade.core import jsontext
from tracegrade.core.results import CaseResult


class CompactResults(Sequence[CaseResult]):
    """An immutable sequence of CaseResults stored as compressed JSON."""

    __slots__ = ("_blobs",)

    def __init__(self, blobs: Iterable[bytes] = ()) -> None:
        self._blobs = tuple(blobs)

    @classmethod
    def from_json_texts(cls, texts: Iterable[str]) -> CompactResults:
        return cls(compress(text) for text in texts)

    def __len__(self) -> int:
        return len(self._blobs)

    @overload
    def __getitem__(self, index: int) -> CaseResult: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[CaseResult, ...]: ...

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(_decode(blob) for blob in self._blobs[index])
        return _decode(self._blobs[index])

    def __iter__(self) -> Iterator[CaseResult]:
        return (_decode(blob) for blob in self._blobs)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CompactResults):
            return self._blobs == other._blobs or tuple(self) == tuple(other)
        return isinstance(other, Sequence) and not isinstance(other, str) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"CompactResults({len(self)} results)"


def compress(json_text: str) -> bytes:
    """One case result's JSON text, compressed the way CompactResults holds it."""
    return zlib.compress(json_text.encode(), 1)


def _decode(blob: bytes) -> CaseResult:
    return CaseResult.from_json(jsontext.load(zlib.decompress(blob)))
