"""Golden datasets: a file loaded, versioned by content hash, filtered.

    >>> from tracegrade.case.schema import GoldenCase
    >>> case = GoldenCase(id="tool-status-01", question="Where is ORD-101?",
    ...                   expected_tool="getOrderStatus", expected_tool_argument="ORD-101")
    >>> Dataset("demo", (case,)).version == Dataset("demo", (case,)).version
    True

A loaded file's cases are held compact (``case.held``); a large JSONL file's second part
is read by another process (``engine.split_load``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from tracegrade.case import files
from tracegrade.case.canonical import canonical_text, content_digest
from tracegrade.case.held import CompactCases, held_form, validated_canonical
from tracegrade.case.schema import GoldenCase
from tracegrade.core.errors import DatasetError
from tracegrade.engine import split_load
from tracegrade.engine.items import item_key, pack_item
from tracegrade.engine.packed import Packed

# The module that reads a large file's second part in another process.
PART_READER = "tracegrade.case.part_reader"


@dataclass(frozen=True)
class Dataset:
    name: str
    cases: Sequence[GoldenCase]  # a tuple, or a loaded file's CompactCases
    # WHY kept on a selection: a run of some cases measured the whole file's version.
    file_version: str = field(default="", compare=False)

    @property
    def version(self) -> str:
        """A hash of every case's content: any edit gives a new version."""
        return self.file_version or content_digest([c.canonical() for c in self.cases])[:12]

    def select(
        self, only: Iterable[str] = (), split: str | None = None,
        category: str | None = None, tag: str | None = None,
    ) -> "Dataset":
        """The cases matching every filter given; DatasetError for an unknown id or an empty result."""
        wanted = set(only)
        if not (wanted or split or category or tag) and self.cases:
            return Dataset(self.name, self.cases, self.version)  # WHY not a loop: each case would validate again
        unknown = wanted - set(case_ids(self.cases))
        if unknown:
            raise DatasetError(f"{self.name}: no case with id {', '.join(sorted(unknown))}")
        keep = [i for i, c in enumerate(self.cases)
                if (not wanted or c.id in wanted)
                and (split is None or c.split == split)
                and (category is None or c.category == category)
                and (tag is None or tag in c.tags)]
        cases = self.cases.take(keep) if isinstance(self.cases, CompactCases) else tuple(self.cases[i] for i in keep)
        if not cases:
            # WHY an error: a misspelt --split would otherwise run nothing and exit 0.
            asked = {"split": split, "category": category, "tag": tag}
            named = ", ".join(f"{k} {v!r}" for k, v in asked.items() if v is not None)
            raise DatasetError(f"{self.name}: no case matches {named or 'the filters'}")
        return Dataset(self.name, cases, self.version)


def load_dataset(path: str | Path) -> Dataset:
    """Read and validate a dataset file, or DatasetError naming file, case and field.

    WHY one case at a time, from its record to its packed bytes: a JSONL file's records are
    parsed as they are read, so no more than one is held as Python objects. Read into a list
    first, 60,000 records held 55 MB at once, and the process kept most of it after they
    were freed (the allocator's arenas, pinned by the cases kept between them).
    WHY a large JSONL file's second part in a process of its own: see ``engine.split_load``."""
    path = Path(path)
    second = split_load.second_part(path, PART_READER)
    try:
        return _load(path, second)
    except split_load.PartFailed:  # read again by this process alone, which names the first error
        return _load(path, None)
    finally:
        if second is not None:
            second.close()


def _load(path: Path, second: split_load.SecondPart | None) -> Dataset:
    """The dataset in ``path``: every case read here, or up to ``second``'s offset here and
    the rest as ``second`` read it (PartFailed when it could not)."""
    raw_cases, context = files.read_records(path, end=second.offset if second is not None else None)
    seen: dict[str, int] = {}
    version = hashlib.sha256()

    def packed() -> Iterator[bytes]:
        for index, raw in enumerate(raw_cases):
            canonical, item = _packed_case(path, index, raw, context, seen)
            version.update((", " if index else "[").encode() + canonical)
            yield item
        for canonical, item in second.cases() if second is not None else ():
            case_id = item_key(item)
            if case_id in seen:  # an id of the first part: read again here, to name both places
                raise split_load.PartFailed(f"case {case_id!r} twice")
            seen[case_id] = len(seen)
            version.update((", " if len(seen) > 1 else "[").encode() + canonical)
            yield item

    records = Packed(packed())
    if not seen:
        raise DatasetError(f"{path}: no cases")
    version.update(b"]")  # the same bytes as content_digest of the list of every case's canonical form
    return Dataset(path.name, CompactCases(records, context), version.hexdigest()[:12])


def _packed_case(path: Path, index: int, raw: Any, context: dict[str, Any], seen: dict[str, int]) -> tuple[bytes, bytes]:
    """The record at ``index`` validated, its id not in ``seen`` (then added to it), as its
    canonical text and its item in CompactCases (``engine.items``)."""
    case = files.validate(path, index, raw, context)
    if case.id in seen:
        first = files.validate(path, seen[case.id], files.record_at(path, seen[case.id]), context)
        raise DatasetError(f"{path}: {files.duplicate(first, case)} (entry #{index + 1}); ids must be unique")
    seen[case.id] = index
    held, as_fields = held_form(case, raw)
    canonical = canonical_text(validated_canonical(case, held) if as_fields else case.canonical())
    # the case's content_hash(), from the same bytes
    return canonical, pack_item(case.id, hashlib.sha256(canonical).digest(), held, as_fields)


def part_cases(path: Path, offset: int) -> Iterator[tuple[bytes, bytes]]:
    """The canonical text and the compact item of every case of a JSONL file from the
    line that starts at byte ``offset`` on (``engine.split_load``'s other process); an error is
    raised as it is met, its line and entry numbers counted from ``offset``."""
    seen: dict[str, int] = {}
    lines = path.open("rb")
    lines.seek(offset)
    for index, raw in enumerate(files.json_lines(path, lines, start=offset)):
        yield _packed_case(path, index, raw, {}, seen)




def case_ids(cases: Sequence[GoldenCase]) -> Sequence[str]:
    """Every case's id, without validating a CompactCases' cases again."""
    return cases.ids() if isinstance(cases, CompactCases) else [c.id for c in cases]


def case_finder(cases: Sequence[GoldenCase]) -> Callable[[str], GoldenCase | None]:
    """A lookup by id that holds no more cases than ``cases`` already does."""
    return cases.find if isinstance(cases, CompactCases) else {c.id: c for c in cases}.get
