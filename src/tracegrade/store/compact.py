"""Case results held compressed: a 100,000-case run in tens of MB, not GB.

    >>> from tracegrade.core.results import CaseResult
    >>> results = CompactResults.from_json_texts(['{"case_id": "a", "status": "pass"}'])
    >>> len(results), results[0].case_id, results == (CaseResult("a", "pass"),)
    (1, 'a', True)

WHY: a run's results are read after the run (totals, console, metrics, JSON,
JUnit, Markdown), but never all at once; each CaseResult object with its Reply
costs about 3.4 KB, its stored JSON about 1 KB, and compressed with its
neighbours (``engine.packed``) far less. Each read decodes one at a time, so the
readers share one read (``run.recording``).
"""

from __future__ import annotations

from typing import Iterable, Iterator, Sequence, overload

from tracegrade.core import jsontext
from tracegrade.engine.packed import Packed
from tracegrade.core.results import CaseResult


class CompactResults(Sequence[CaseResult]):
    """An immutable sequence of CaseResults stored as their compressed JSON (UTF-8)."""

    __slots__ = ("_texts",)

    def __init__(self, texts: Iterable[bytes] = ()) -> None:
        self._texts = Packed(texts)

    @classmethod
    def from_json_texts(cls, texts: Iterable[str]) -> CompactResults:
        return cls(text.encode() for text in texts)

    def __len__(self) -> int:
        return len(self._texts)

    @overload
    def __getitem__(self, index: int) -> CaseResult: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[CaseResult, ...]: ...

    def __getitem__(self, index: int | slice) -> CaseResult | tuple[CaseResult, ...]:
        if isinstance(index, slice):
            return tuple(_decode(self._texts[i]) for i in range(*index.indices(len(self))))
        return _decode(self._texts[index])

    def __iter__(self) -> Iterator[CaseResult]:
        return (_decode(text) for text in self._texts)

    def texts(self) -> Iterator[bytes]:
        """Each result's JSON as stored (UTF-8), in order, without decoding it."""
        return iter(self._texts)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CompactResults) and self._texts.same_as(other._texts):
            return True
        return isinstance(other, Sequence) and not isinstance(other, str) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"CompactResults({len(self)} results)"


def _decode(text: bytes) -> CaseResult:
    return CaseResult.from_json(jsontext.load(text))
