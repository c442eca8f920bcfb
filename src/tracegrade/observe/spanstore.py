"""The local span store: one SQLite file that the exporter writes and the monitor reads.

    >>> import tempfile, pathlib
    >>> store = SpanStore(pathlib.Path(tempfile.mkdtemp()) / "spans.db")
    >>> store.requests()
    []

WHY SQLite: one machine needs nothing else, the file survives restarts, and in
WAL mode ``shopnest serve`` can write while ``tracegrade monitor`` reads.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from tracegrade.core.names import CHAT, EXECUTE_TOOL, OPERATION, REQUEST_SPAN, RETRIEVAL, tool_call_id
from tracegrade.core.trace import Reply, Step, ToolCall, ToolStatus, Usage

_SCHEMA = """
CREATE TABLE IF NOT EXISTS spans (
  span_id TEXT PRIMARY KEY, trace_id TEXT NOT NULL, parent_id TEXT, name TEXT NOT NULL,
  service TEXT, start_ns INTEGER, end_ns INTEGER, status TEXT, attributes TEXT, events TEXT
);
CREATE INDEX IF NOT EXISTS spans_trace ON spans (trace_id);
CREATE INDEX IF NOT EXISTS spans_name_start ON spans (name, start_ns);
CREATE TABLE IF NOT EXISTS judgements (
  trace_id TEXT PRIMARY KEY, judged_ns INTEGER, judge_model TEXT, scores TEXT, reason TEXT, error TEXT
);
"""


@dataclass(frozen=True)
class StoredSpan:
    span_id: str
    trace_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    status: str = "UNSET"
    attributes: Mapping[str, Any] = field(default_factory=dict)
    service: str = ""

    @property
    def duration_ms(self) -> float:
        return (self.end_ns - self.start_ns) / 1e6

    @classmethod
    def from_readable(cls, span: ReadableSpan) -> StoredSpan:
        return cls(
            span_id=f"{span.context.span_id:016x}",
            trace_id=f"{span.context.trace_id:032x}",
            parent_id=f"{span.parent.span_id:016x}" if span.parent else None,
            name=span.name,
            start_ns=span.start_time or 0,
            end_ns=span.end_time or 0,
            status=span.status.status_code.name,
            attributes={k: list(v) if isinstance(v, tuple) else v for k, v in (span.attributes or {}).items()},
            service=str(span.resource.attributes.get("service.name", "")),
        )


def _connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, timeout=10)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.executescript(_SCHEMA)
    return connection


class SqliteSpanExporter(SpanExporter):
    """Writes finished spans into the store; safe to call from any thread."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        with self._lock, _connect(self.path):
            pass

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        rows = [_row(StoredSpan.from_readable(s), s) for s in spans]
        with self._lock:
            connection = _connect(self.path)
            try:
                with connection:
                    connection.executemany("INSERT OR REPLACE INTO spans VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
            finally:
                connection.close()
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def _row(stored: StoredSpan, span: ReadableSpan) -> tuple[Any, ...]:
    events = [{"name": e.name, "timeNs": e.timestamp, "attributes": dict(e.attributes or {})} for e in span.events]
    return (stored.span_id, stored.trace_id, stored.parent_id, stored.name, stored.service, stored.start_ns,
            stored.end_ns, stored.status, json.dumps(dict(stored.attributes), default=list), json.dumps(events, default=list))


@dataclass(frozen=True)
class Judgement:
    trace_id: str
    judged_ns: int
    judge_model: str
    scores: Mapping[str, float] | None
    reason: str = ""
    error: str = ""


class SpanStore:
    """Reads request traces and keeps the online judge's verdicts."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> Iterator[tuple[Any, ...]]:
        connection = _connect(self.path)
        try:
            yield from connection.execute(sql, params).fetchall()
        finally:
            connection.close()

    def requests(self, since_ns: int = 0) -> list[list[StoredSpan]]:
        """Every production request since ``since_ns``, oldest first, each as its spans (root first)."""
        rows = self._rows(
            "SELECT s.* FROM spans s JOIN spans r ON r.trace_id = s.trace_id "
            "WHERE r.name = ? AND r.parent_id IS NULL AND r.start_ns >= ? ORDER BY r.start_ns, s.start_ns",
            (REQUEST_SPAN, since_ns),
        )
        traces: dict[str, list[StoredSpan]] = {}
        for row in rows:
            span = _stored(row)
            traces.setdefault(span.trace_id, []).append(span)
        return [sorted(spans, key=lambda s: (s.parent_id is not None, s.start_ns)) for spans in traces.values()]

    def trace(self, trace_id: str) -> list[StoredSpan]:
        spans = [_stored(r) for r in self._rows("SELECT * FROM spans WHERE trace_id = ? ORDER BY start_ns", (trace_id,))]
        return sorted(spans, key=lambda s: (s.parent_id is not None, s.start_ns))

    def save_judgement(self, judgement: Judgement) -> None:
        connection = _connect(self.path)
        try:
            with connection:
                connection.execute(
                    "INSERT OR REPLACE INTO judgements VALUES (?,?,?,?,?,?)",
                    (judgement.trace_id, judgement.judged_ns, judgement.judge_model,
                     json.dumps(dict(judgement.scores)) if judgement.scores is not None else None,
                     judgement.reason, judgement.error),
                )
        finally:
            connection.close()

    def judgements(self) -> dict[str, Judgement]:
        return {
            row[0]: Judgement(row[0], row[1], row[2], json.loads(row[3]) if row[3] else None, row[4] or "", row[5] or "")
            for row in self._rows("SELECT * FROM judgements")
        }


def _stored(row: tuple[Any, ...]) -> StoredSpan:
    span_id, trace_id, parent_id, name, service, start_ns, end_ns, status, attributes, _events = row
    return StoredSpan(span_id, trace_id, parent_id, name, start_ns, end_ns, status, json.loads(attributes), service)


def _tool_call(at: Mapping[str, Any], status: ToolStatus, index: int) -> ToolCall:
    name, arguments = at["gen_ai.tool.name"], json.loads(at.get("gen_ai.tool.call.arguments", "{}"))
    call_id = at.get("gen_ai.tool.call.id")
    # A derived id was the span's, not the agent's: the rebuilt call has none, as the original.
    if call_id == tool_call_id(index):
        call_id = None
    return ToolCall(name=name, arguments=arguments, argument=at.get("tracegrade.tool.argument") or None,
                    result=at.get("gen_ai.tool.call.result", ""), status=status, id=call_id)


def reply_from_spans(spans: Sequence[StoredSpan]) -> Reply:
    """The (redacted) Reply an ``agent_request`` tree was built from: what the
    online judge scores and a golden case is drafted from."""
    root = next(s for s in spans if s.parent_id is None)
    a = root.attributes
    steps, calls, sources, scores, context = [], [], (), (), ""
    tool_index = 0
    for span in sorted((s for s in spans if s.parent_id == root.span_id), key=lambda s: s.start_ns):
        at, offset = span.attributes, (span.start_ns - root.start_ns) / 1e6
        error, operation = at.get("tracegrade.error"), at.get(OPERATION)
        if operation == RETRIEVAL:
            documents = json.loads(at.get("gen_ai.retrieval.documents", "[]"))
            sources, scores = tuple(d["id"] for d in documents), tuple(d["score"] for d in documents)
            context = at.get("tracegrade.retrieval.context", "")
            steps.append(Step(kind="retrieval", name=at.get("gen_ai.data_source.id", "retrieval"),
                              start_ms=offset, duration_ms=span.duration_ms))
        elif operation == CHAT:
            steps.append(Step(kind="model", name=at.get("tracegrade.round", span.name), start_ms=offset,
                              duration_ms=span.duration_ms, input_tokens=at.get("gen_ai.usage.input_tokens", 0),
                              output_tokens=at.get("gen_ai.usage.output_tokens", 0),
                              retries=at.get("tracegrade.retries", 0), error=error))
        elif operation == EXECUTE_TOOL:
            status = at.get("tracegrade.tool.status", "ok")
            steps.append(Step(kind="approval" if status == "needs_approval" else "tool", name=at["gen_ai.tool.name"],
                              start_ms=offset, duration_ms=span.duration_ms, error=error))
            calls.append(_tool_call(at, status, tool_index))
            tool_index += 1
    return Reply(
        answer=a.get("tracegrade.answer", ""), retrieved_sources=sources, retrieval_scores=scores,
        tool_calls=tuple(calls), context=context, steps=tuple(steps), model=a.get("gen_ai.response.model", ""),
        usage=Usage(input_tokens=a.get("gen_ai.usage.input_tokens", 0), output_tokens=a.get("gen_ai.usage.output_tokens", 0),
                    cost_usd=a.get("tracegrade.cost_usd", 0.0)),
        route=a.get("tracegrade.route") or None,
    )
