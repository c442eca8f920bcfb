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
from tracegrade.core.from_messages import nested_deeper
from tracegrade.core.from_otel import ORPHAN_SAID, OtelTrace, otel_traces
from tracegrade.core.redact import redact, redact_secrets
from tracegrade.core.spans import MAX_SPANS, Span, SpanFormatError, spans_of_otlp_json
from tracegrade.core.trace import Reply
from tracegrade.eval.conversation import WHOLE_CONVERSATIONS
from tracegrade.eval.dataset import GoldenCase

MAX_FILE_BYTES = 512 * 1024 * 1024
_OTHER_SIGNALS = {"resourceLogs", "resourceMetrics", "resourceProfiles"}
MAX_REPLY_DEPTH = 200  # of a Reply line's JSON: deeper is refused (storing and redacting it would recurse)


@dataclass(frozen=True)
class Recorded:
    """One recorded trace and where it came from (file:line, or file and trace id);
    ``orphan`` says why it is no case's own trace (spans without their root), else ""."""

    where: str
    case_id: str | None
    question: str
    reply: Reply
    orphan: str = ""


@dataclass
class Matched:
    replies: dict[str, Reply] = field(default_factory=dict)
    unmatched: list[str] = field(default_factory=list)  # traces that name no case of the dataset
    duplicates: list[str] = field(default_factory=list)  # a second trace for a case already matched
    orphaned: int = 0  # traces among those that are orphaned (their fix is said once)


def load_recorded(paths: Iterable[Path]) -> list[Recorded]:
    """Every trace in ``paths``; DatasetError naming the file, line and field of anything unreadable."""
    found: list[Recorded] = []
    for path in paths:
        found += _read(Path(path))
    return found


def _read(path: Path) -> list[Recorded]:
    spans: list[Span] = []
    replies: list[Recorded] = []
    try:
        for where, document in _documents(path, _text(path)):
            if isinstance(document, dict) and "resourceSpans" in document:
                # WHY the limit is what is left: the span cap holds per file, not per line
                spans += spans_of_otlp_json(document, limit=MAX_SPANS - len(spans), origin=where)
            elif isinstance(document, dict) and _OTHER_SIGNALS & document.keys():
                continue  # a collector's file exporter may write logs and metrics beside spans: no calls there
            else:
                replies.append(_reply_record(where, document))
        traces = otel_traces(spans)
    except SpanFormatError as exc:
        # WHY secrets only over the message: it holds the file's path, whose digits are not a phone
        raise DatasetError(redact_secrets(exc.described(_shown))) from None
    return replies + [_trace_record(f"{path} trace {redact(t.trace_id[:40])}", t) for t in traces]


def _trace_record(where: str, trace: OtelTrace) -> Recorded:
    """One trace as a Recorded. WHY the trace id is redacted in ``where``: it is the file's text, printed."""
    return Recorded(where, trace.case_id, trace.question, _valid(where, trace.wire), trace.orphan)


def _shown(value: Any) -> str:
    """A value as an error may quote it: redacted, then cut to 60 characters."""
    text = f"a {type(value).__name__}" if isinstance(value, (dict, list)) else repr(value)[:200]
    cleaned = redact(text)
    return cleaned[:60] + ("..." if len(cleaned) > 60 else "")


def _text(path: Path) -> str:
    """The file's text. WHY a bounded read, not its size: /dev/zero, a FIFO or a pipe
    has no size to ask, and would be read into memory without end."""
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise DatasetError(f"{path}: larger than {MAX_FILE_BYTES:,} bytes; split it")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def _documents(path: Path, text: str) -> list[tuple[str, Any]]:
    """(where, JSON value) per line when the first line is a JSON value of its own
    (JSON lines), else the whole file as one document (a list: one per item).
    WHY the first line decides: a large JSONL file is parsed once, not first
    as a whole document that fails."""
    lines = text.splitlines()
    first = next((line for line in lines if line.strip()), "")
    if _is_json(first) and first.strip() != text.strip():
        return [_line(path, number, line) for number, line in enumerate(lines, 1) if line.strip()]
    whole = _parsed(text, str(path))
    if isinstance(whole, list):
        return [(f"{path} item {i + 1}", item) for i, item in enumerate(whole)]
    return [(str(path), whole)]


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    except RecursionError:
        return True  # JSON, too deep: the line's own parse says so
    return True


def _line(path: Path, number: int, line: str) -> tuple[str, Any]:
    return f"{path}:{number}", _parsed(line, f"{path}:{number}")


def _parsed(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise DatasetError(f"{where}: JSON nested too deep to read") from None
    except ValueError as exc:
        said = "not JSON" if ":" in where else "neither JSON lines nor one JSON document"
        raise DatasetError(f"{where}: {said}: {exc}") from None


def _reply_record(where: str, document: Any) -> Recorded:
    if not isinstance(document, dict):
        raise DatasetError(f"{where}: expected a JSON object (a Reply with its caseId, or an OTLP export)")
    if nested_deeper(document, MAX_REPLY_DEPTH):
        raise DatasetError(f"{where}: nested deeper than {MAX_REPLY_DEPTH} levels; not a Reply")
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
        said = " ".join(first[1:3]) if len(first) > 2 else str(exc)
        raise DatasetError(f"{where}: not a Reply: {redact(said[:500])}") from None  # WHY: it quotes the value


def match(cases: Sequence[GoldenCase], recorded: Sequence[Recorded]) -> Matched:
    """Each trace given to the case it names; what names no case, or a case twice, is listed.
    WHY rooted traces first: a case's own trace is graded before an orphaned piece of it
    that happens to hold the same question."""
    by_id = {c.id: c for c in cases}
    by_question: dict[str, str] = {}
    for case in cases:
        by_question.setdefault(case.question.strip(), case.id)
    matched = Matched()
    for trace in sorted(recorded, key=lambda t: bool(t.orphan)):
        case_id = trace.case_id if trace.case_id in by_id else by_question.get(trace.question.strip())
        if case_id is not None and case_id not in matched.replies:
            matched.replies[case_id] = trace.reply
            continue
        if case_id is None:
            matched.unmatched.append(f"{trace.where}: {_not_in_dataset(trace)}")
        else:
            also = f"; {ORPHAN_SAID}" if trace.orphan else ""
            matched.duplicates.append(f"{trace.where}: a second trace for case {case_id} (the first is graded){also}")
        matched.orphaned += bool(trace.orphan)
    return matched


def _not_in_dataset(trace: Recorded) -> str:
    """Why a trace matched no case. WHY redacted: a question can hold a key or an e-mail."""
    if trace.orphan:
        return ORPHAN_SAID
    named = f"case id {trace.case_id[:80]!r}" if trace.case_id else f"question {trace.question[:80]!r}"
    return redact(f"{named} is not in the dataset")


def replay_target(replies: dict[str, Reply]) -> Any:
    """A target that answers each case with its recorded Reply."""

    async def recorded(case: GoldenCase) -> Reply:
        return replies[case.id]

    # WHY: a recorded Reply is the whole conversation (follow-ups, a simulated user's turns);
    # playing it again message by message would ask it once per turn (eval/conversation.py)
    setattr(recorded, WHOLE_CONVERSATIONS, True)
    return recorded
