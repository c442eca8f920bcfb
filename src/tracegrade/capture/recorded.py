"""Traces recorded elsewhere, read back and matched to a dataset's cases.

Two kinds of file, told apart line by line (or as one JSON document):

- tracegrade's own JSONL of Replies: one Reply wire object per line, with a
  ``caseId`` (and optionally ``question``) beside its fields, or
  ``{"caseId": ..., "reply": {...}}``;
- OTLP JSON exports (``{"resourceSpans": [...]}``, one per line as a
  collector's file exporter writes them, or one document): spans in the GenAI
  or OpenInference conventions, one Reply per trace (``tracegrade.core.from_otel``).

A trace names its case by id (``caseId``, or the span attribute
``tracegrade.case_id``), else by its question, which must equal the case's
question exactly (surrounding whitespace aside).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from tracegrade.core.errors import DatasetError
from tracegrade.core.from_otel import Span, otel_traces, spans_of_otlp_json
from tracegrade.core.trace import Reply
from tracegrade.eval.dataset import GoldenCase

MAX_FILE_BYTES = 512 * 1024 * 1024


@dataclass(frozen=True)
class Recorded:
    """One recorded trace and where it came from (file:line, or file and trace id)."""

    where: str
    case_id: str | None
    question: str
    reply: Reply


@dataclass
class Matched:
    replies: dict[str, Reply] = field(default_factory=dict)
    unmatched: list[str] = field(default_factory=list)  # traces that name no case of the dataset
    duplicates: list[str] = field(default_factory=list)  # a second trace for a case already matched


def load_recorded(paths: Iterable[Path]) -> list[Recorded]:
    """Every trace in ``paths``; DatasetError naming the file and line of anything unreadable."""
    found: list[Recorded] = []
    for path in paths:
        found += _read(Path(path))
    return found


def _read(path: Path) -> list[Recorded]:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise DatasetError(f"{path}: larger than {MAX_FILE_BYTES // 2**20} MB; split it")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise DatasetError(f"{path}: not UTF-8 text") from None
    documents = _documents(path, text)
    spans: list[Span] = []
    replies: list[Recorded] = []
    for where, document in documents:
        if isinstance(document, dict) and "resourceSpans" in document:
            spans += spans_of_otlp_json(document)
        else:
            replies.append(_reply_record(where, document))
    return replies + [Recorded(f"{path} trace {t.trace_id}", t.case_id, t.question, _valid(f"{path} trace {t.trace_id}", t.wire))
                      for t in otel_traces(spans)]


def _documents(path: Path, text: str) -> list[tuple[str, Any]]:
    """(where, JSON value) per line when the first line is a JSON value of its own
    (JSON lines), else the whole file as one document (a list: one per item).
    WHY the first line decides: a large JSONL file is parsed once, not first
    as a whole document that fails."""
    lines = text.splitlines()
    first = next((line for line in lines if line.strip()), "")
    if _is_json(first) and first.strip() != text.strip():
        return [_line(path, number, line) for number, line in enumerate(lines, 1) if line.strip()]
    try:
        whole = json.loads(text)
    except ValueError as exc:
        raise DatasetError(f"{path}: neither JSON lines nor one JSON document: {exc}") from None
    if isinstance(whole, list):
        return [(f"{path} item {i + 1}", item) for i, item in enumerate(whole)]
    return [(str(path), whole)]


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _line(path: Path, number: int, line: str) -> tuple[str, Any]:
    try:
        return f"{path}:{number}", json.loads(line)
    except ValueError as exc:
        raise DatasetError(f"{path}:{number}: not JSON: {exc}") from None


def _reply_record(where: str, document: Any) -> Recorded:
    if not isinstance(document, dict):
        raise DatasetError(f"{where}: expected a JSON object (a Reply with its caseId, or an OTLP export)")
    data = dict(document)
    case_id, question = data.pop("caseId", None), data.pop("question", None)
    if "reply" in data:
        data = data["reply"]
    if not isinstance(data, dict):
        raise DatasetError(f"{where}: 'reply' must be a JSON object")
    reply = _valid(where, data)
    return Recorded(where, None if case_id is None else str(case_id), str(question or ""), reply)


def _valid(where: str, wire: dict[str, Any]) -> Reply:
    try:
        return Reply.from_wire(wire)
    except ValueError as exc:
        first = str(exc).splitlines()
        raise DatasetError(f"{where}: not a Reply: {' '.join(first[1:3]) if len(first) > 2 else exc}") from None


def match(cases: Sequence[GoldenCase], recorded: Sequence[Recorded]) -> Matched:
    """Each trace given to the case it names; what names no case, or a case twice, is listed."""
    by_id = {c.id: c for c in cases}
    by_question: dict[str, str] = {}
    for case in cases:
        by_question.setdefault(case.question.strip(), case.id)
    matched = Matched()
    for trace in recorded:
        case_id = trace.case_id if trace.case_id in by_id else by_question.get(trace.question.strip())
        if case_id is None:
            named = f"case id {trace.case_id!r}" if trace.case_id else f"question {trace.question[:80]!r}"
            matched.unmatched.append(f"{trace.where}: {named} is not in the dataset")
        elif case_id in matched.replies:
            matched.duplicates.append(f"{trace.where}: a second trace for case {case_id} (the first is graded)")
        else:
            matched.replies[case_id] = trace.reply
    return matched


def replay_target(replies: dict[str, Reply]) -> Any:
    """A target that answers each case with its recorded Reply."""

    async def recorded(case: GoldenCase) -> Reply:
        return replies[case.id]

    return recorded
