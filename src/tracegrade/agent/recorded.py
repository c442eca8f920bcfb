"""Traces recorded elsewhere, read back for ``tracegrade grade`` (matched to cases in
``agent/joined.py``).

Two kinds of file, told apart line by line (JSON Lines: split at "\n" only), or as one
JSON document:

- tracegrade's own JSONL of Replies: one Reply wire object per line, with a
  ``caseId`` (and optionally ``question``) beside its fields, or
  ``{"caseId": ..., "reply": {...}}``;
- OTLP JSON exports (``{"resourceSpans": [...]}``, one per line as a
  collector's file exporter writes them, or one document): spans in the GenAI
  or OpenInference conventions, one Reply per trace (``tracegrade.core.from_otel``),
  the spans of all files joined by trace id; OTLP logs (``resourceLogs``) that name a
  span are read as its events (an instrumentation's event form of the messages).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

from tracegrade.core.errors import DatasetError
from tracegrade.core.from_messages import nested_deeper
from tracegrade.core.from_otel import OtelTrace, otel_traces
from tracegrade.core.redact import redact, redact_secrets
from tracegrade.core.spans import MAX_SPANS, Span, SpanFormatError, log_events_of_otlp_json, spans_of_otlp_json
from tracegrade.core.trace import Reply

MAX_FILE_BYTES = 512 * 1024 * 1024
_OTHER_SIGNALS = {"resourceMetrics", "resourceProfiles"}
MAX_REPLY_DEPTH = 200  # of a Reply line's JSON: deeper is refused (storing and redacting it would recurse)


@dataclass(frozen=True)
class Recorded:
    """One recorded trace and where it came from (file:line, or files and trace id);
    ``orphan`` says why it is no case's own trace (spans without their root), else "";
    ``conversation`` the session or conversation id its spans carry, ``start_ns`` when it began."""

    where: str
    case_id: str | None
    question: str
    reply: Reply
    orphan: str = ""
    conversation: str = ""
    start_ns: int = 0


def load_recorded(paths: Iterable[Path]) -> list[Recorded]:
    """Every trace in ``paths``; DatasetError naming the file, line and field of anything unreadable.
    WHY the spans of every file read before any trace is built: a collector rotates its file
    mid-trace, and a trace's parts in two files are one trace (joined by trace id)."""
    spans: list[Span] = []
    replies: list[Recorded] = []
    events: dict[tuple[str, str], list[tuple[str, dict[str, Any]]]] = {}
    files: dict[str, list[str]] = {}  # trace id: the files that hold its spans
    try:
        for path in map(Path, paths):
            count = len(spans)
            for where, document in _documents(path, _text(path)):
                if isinstance(document, dict) and "resourceSpans" in document:
                    # WHY the limit is what is left: the span cap holds per file, not per line
                    spans += spans_of_otlp_json(document, limit=MAX_SPANS - (len(spans) - count), origin=where)
                elif isinstance(document, dict) and "resourceLogs" in document:
                    for trace_id, span_id, name, attributes in log_events_of_otlp_json(document, where):
                        events.setdefault((trace_id, span_id), []).append((name, attributes))
                elif isinstance(document, dict) and _OTHER_SIGNALS & document.keys():
                    continue  # a collector's file exporter may write metrics beside spans: no calls there
                else:
                    replies.append(_reply_record(where, document))
            for span in spans[count:]:
                named = files.setdefault(span.trace_id, [])
                if not named or named[-1] != str(path):
                    named.append(str(path))
        traces = otel_traces([_with_events(s, events) for s in spans] if events else spans)
    except SpanFormatError as exc:
        # WHY secrets only over the message: it holds the file's path, whose digits are not a phone
        raise DatasetError(redact_secrets(exc.described(_shown))) from None
    return replies + [_trace_record(_where(t, files), t) for t in traces]


def _with_events(span: Span, events: Mapping[tuple[str, str], list[tuple[str, dict[str, Any]]]]) -> Span:
    found = events.get((span.trace_id, span.span_id))
    return replace(span, events=span.events + tuple(found)) if found else span


def _where(trace: OtelTrace, files: Mapping[str, list[str]]) -> str:
    """Where a trace was read: its file(s) and trace id. WHY the trace id is redacted: it is the file's text, printed."""
    paths = list(dict.fromkeys(p for t in trace.trace_ids for p in files.get(t, ())))
    shown = " + ".join(paths[:3]) + (f" + {len(paths) - 3} more" if len(paths) > 3 else "")
    ids = trace.trace_ids or (trace.trace_id,)
    named = redact(ids[0][:40]) + (f" (and {len(ids) - 1} more fragment trace(s))" if len(ids) > 1 else "")
    return f"{shown} trace {named}"


def _trace_record(where: str, trace: OtelTrace) -> Recorded:
    return Recorded(where, trace.case_id, trace.question, _valid(where, trace.wire), trace.orphan,
                    trace.conversation, trace.start_ns)


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
    # WHY "\n" only, not splitlines(): JSON strings may hold U+2028, U+0085 or a form feed, which
    # splitlines() also breaks at, cutting a line in two; JSON Lines ends a line at "\n" alone
    lines = text.split("\n")
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
