"""A run's cases as small rows, for the run page's filters and pages.

    >>> index = build_index(['{"case_id": "a", "status": "fail", "split": "nominal", '
    ...                      '"checks": [{"name": "toolArgument", "passed": false, "code": "wrong_argument"}]}'])
    >>> index.page(Filters(code="wrong_argument"), 1, 50).rows[0].case_id
    'a'

WHY rows and not results: a page of a 10,000-case run shows 50 cases, but its
filters and counts need every case's status, split and failed check codes. One
pass over the stored JSON texts (``RunStore.case_texts``) keeps those few fields
and drops the trace, so a filter or the next page reads memory, not the store.
A finished run never changes, so its index is built once (the view keeps the last few).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence, TypeVar

from tracegrade.core import jsontext
from tracegrade.core.redact import redact

QUESTION_CHARS = 160  # what a row shows of a question: the page shows a glimpse, the case page the rest
# WHY a row keeps more than it shows: the glimpse is redacted before it is cut (``preview``),
# and an e-mail or key cut in two is no longer one the patterns know.
KEPT_CHARS = QUESTION_CHARS + 100
FAILED = "failed"  # the status filter for "anything but pass"
STATUSES = ("pass", "fail", "error", "unscored")
T = TypeVar("T")


@dataclass(frozen=True)
class CaseRow:
    """One stored case (one repetition) as the run page lists it."""

    case_id: str
    repeat: int
    status: str
    split: str
    category: str
    risk: str
    failed: tuple[tuple[str, str], ...]  # (check name, code) of every failed check
    low: tuple[str, ...]  # gating metrics scored below their threshold
    scores: Mapping[str, float]
    seconds: float
    question: str

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(code for _, code in self.failed)


@dataclass(frozen=True)
class Filters:
    """What the run page's form asks for; empty fields keep every case."""

    status: str = ""  # a status, FAILED (not passed), or ""
    split: str = ""
    code: str = ""  # a failed check's code (or its name)
    text: str = ""  # in the case id or the question

    def keep(self, row: CaseRow) -> bool:
        if self.status == FAILED and row.status == "pass":
            return False
        if self.status not in ("", FAILED) and row.status != self.status:
            return False
        if self.split and row.split != self.split:
            return False
        if self.code and not any(self.code in (name, code) for name, code in row.failed):
            return False
        needle = self.text.lower()
        return not needle or needle in row.case_id.lower() or needle in row.question.lower()

    @property
    def active(self) -> bool:
        return bool(self.status or self.split or self.code or self.text)


@dataclass(frozen=True)
class Page:
    rows: tuple[CaseRow, ...]
    number: int  # 1-based
    size: int
    matching: int  # cases the filters keep, over every page

    @property
    def pages(self) -> int:
        return max(1, -(-self.matching // self.size))


@dataclass(frozen=True)
class CaseIndex:
    rows: tuple[CaseRow, ...]
    statuses: Mapping[str, int] = field(default_factory=dict)
    splits: tuple[str, ...] = ()
    codes: Mapping[str, int] = field(default_factory=dict)  # failed check code -> cases
    groups: tuple[tuple[str, str, int, int], ...] = ()  # (dimension, group, cases, passed)

    def page(self, filters: Filters, number: int, size: int) -> Page:
        """Page ``number`` (clamped to the pages there are) of the rows ``filters`` keep."""
        kept = [r for r in self.rows if filters.keep(r)] if filters.active else self.rows
        rows, number, _ = paged(kept, number, size)
        return Page(tuple(rows), number, size, len(kept))


def paged(items: Sequence[T], number: int, size: int) -> tuple[Sequence[T], int, int]:
    """Page ``number`` (clamped to the pages there are) of ``items``, its number, and how many pages there are."""
    pages = max(1, -(-len(items) // size))
    number = min(max(1, number), pages)
    return items[(number - 1) * size:number * size], number, pages


def row_of(data: Mapping[str, Any]) -> CaseRow:
    """The row of one stored case (its JSON form)."""
    failed = tuple((str(c.get("name", "")), str(c.get("code", ""))) for c in data.get("checks") or ()
                   if not c.get("passed", True))
    low = tuple(str(m.get("name", "")) for m in data.get("metrics") or () if m.get("gates", True) and _below(m))
    return CaseRow(str(data.get("case_id", "")), int(data.get("repeat", 0) or 0), str(data.get("status", "")),
                   str(data.get("split", "")), str(data.get("category", "")), str(data.get("risk", "")), failed, low,
                   dict(data.get("scores") or {}), float(data.get("seconds", 0.0) or 0.0),
                   str(data.get("question", ""))[:KEPT_CHARS])


def _below(metric: Mapping[str, Any]) -> bool:
    """Whether a stored metric scored below its threshold; False when either is not a number
    (a non-finite threshold is stored as null: JSON has no NaN)."""
    value, threshold = metric.get("value"), metric.get("threshold", 0)
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (value, threshold))
    return numbers and bool(value < threshold)


def preview(question: str) -> str:
    """What a page shows of a row's question: redacted, then cut to QUESTION_CHARS (a run
    recorded raw holds the text as it came). WHY redacted here and not when the row is
    built: only the rows of the page shown pay for it, not every case of a large run."""
    return redact(question)[:QUESTION_CHARS]


def build_index(texts: Iterable[str]) -> CaseIndex:
    rows = tuple(row_of(jsontext.load(text)) for text in texts)
    codes = Counter(code for r in rows for code in dict.fromkeys(r.codes))
    return CaseIndex(rows, dict(Counter(r.status for r in rows)), tuple(sorted({r.split for r in rows if r.split})),
                     dict(codes.most_common()), _groups(rows))


GROUPED_BY = ("split", "category", "risk")


def _groups(rows: tuple[CaseRow, ...]) -> tuple[tuple[str, str, int, int], ...]:
    """Cases and passes per split, category and risk ("-": none given)."""
    out = []
    for dimension in GROUPED_BY:
        cases: Counter[str] = Counter(getattr(r, dimension) or "-" for r in rows)
        passed: Counter[str] = Counter(getattr(r, dimension) or "-" for r in rows if r.status == "pass")
        out += [(dimension, name, n, passed[name]) for name, n in sorted(cases.items())]
    return tuple(out)
