"""Spans an agent emits in-process (GenAI or OpenInference conventions),
gathered per case.

Each case runs inside a span of its own, ``tracegrade.case`` (attribute
``tracegrade.case_id``): the agent's spans, started in that context, join its
trace, and a span processor hands every finished span of a registered trace to
that case's Recorder. Spans of other traces are left alone, except that a model
or tool span rooting a trace of its own while cases run is counted: it was most
likely made in a thread without the case's context (an orphan), and the cases
running then say that calls may be missing. A case past MAX_CASE_SPANS says its
trace was cut. Both reach the Reply through a marker span (``from_otel``).

Log events that name a span of a running case (OpenTelemetry GenAI's event form:
``gen_ai.client.inference.operation.details``, per-message events, the message content
an instrumentation writes only as events) are that span's events: a log record
processor on the global logger provider hands them over, and the span is read with them.

WHY the global tracer provider: instrumentors (OpenInference's for the OpenAI
Agents SDK and LangChain, OpenTelemetry's own) use it unless told otherwise.
If none is set, an SDK provider is set; if the application set one, the
processor is added to it. Either way it is added once per process; the same for
the logger provider.
"""

from __future__ import annotations

import contextlib
import json
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Mapping

from opentelemetry.sdk.trace import SpanProcessor

from tracegrade.agent.capture.recorder import Recorder
from tracegrade.core.from_otel import CASE_ID_ATTRIBUTE, CUT_ATTRIBUTE, ORPHANS_ATTRIBUTE, Span, kind_of
from tracegrade.core.spans import sdk_span

MAX_CASE_SPANS = 100_000  # of one case: past it the case's trace says it was cut

_lock = threading.Lock()
_processor: Any = None


@contextlib.contextmanager
def case_span(case_id: str, recorder: Recorder) -> Iterator[None]:
    """The agent's spans inside the block go to ``recorder``. WHY ``forget`` in a
    finally, after the case span ended: the recorder is released however the case
    ends (an answer, an exception, a timeout's cancellation), and the case span
    itself is handed over before it is."""
    processor = _the_processor()
    from opentelemetry import trace
    from opentelemetry.context import Context

    tracer = trace.get_tracer("tracegrade.capture")
    trace_id = None
    try:
        # WHY a new root (an empty parent context): inside an eval run's own span every
        # case would share its trace id, and the agents' spans could not be told apart.
        with tracer.start_as_current_span("tracegrade.case", context=Context(),
                                          attributes={CASE_ID_ATTRIBUTE: case_id}) as span:
            trace_id = span.get_span_context().trace_id
            processor.watch(trace_id, recorder, getattr(span, "start_time", 0) or 0)
            yield
    finally:
        if trace_id is not None:
            processor.forget(trace_id)


def _the_processor() -> Any:
    global _processor
    with _lock:
        if _processor is None:
            _processor = _install()
        return _processor


def _install() -> Any:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider

    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    processor = _ByTrace()
    provider.add_span_processor(processor)
    _install_log_events(processor)
    return processor


def _install_log_events(processor: _ByTrace) -> None:
    """A log record processor on the global logger provider (an SDK one set if none is) that
    hands the watched traces' log events to ``processor``."""
    try:
        from opentelemetry import _logs
        from opentelemetry.sdk._logs import LoggerProvider, LogRecordProcessor
    except ImportError:  # an SDK without logs: the event form is not read live
        return

    class _LogEvents(LogRecordProcessor):
        def on_emit(self, log: Any) -> None:
            processor.log_event(getattr(log, "log_record", log))

        emit = on_emit  # WHY both: the SDK renamed on_emit to emit and back across releases

        def shutdown(self) -> None:
            pass

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return True

    provider = _logs.get_logger_provider()
    if not isinstance(provider, LoggerProvider):
        provider = LoggerProvider()
        _logs.set_logger_provider(provider)
    provider.add_log_record_processor(_LogEvents())


@dataclass
class _Watched:
    """A running case: its Recorder, and what its trace lost (spans past the cap, root
    spans of other traces that began while it ran)."""

    recorder: Recorder
    start_ns: int
    dropped: int = 0
    orphans: int = 0
    events: dict[int, list[tuple[str, Mapping[str, Any]]]] = field(default_factory=dict)  # span id: its log events
    kept_events: int = 0


class _ByTrace(SpanProcessor):
    """A span processor that gives each watched trace's finished spans to its Recorder."""

    def __init__(self) -> None:
        self._watched: dict[int, _Watched] = {}
        self._lock = threading.Lock()

    def watch(self, trace_id: int, recorder: Recorder, start_ns: int = 0) -> None:
        with self._lock:
            self._watched[trace_id] = _Watched(recorder, start_ns)

    def forget(self, trace_id: int) -> None:
        """Stop recording the trace; a marker span says what it lost, for the Reply to say."""
        with self._lock:
            watched = self._watched.pop(trace_id, None)
        if watched is None:
            return
        if watched.events:
            spans = watched.recorder.spans
            spans[:] = [_with_events(span, watched.events) for span in spans]
        if watched.dropped or watched.orphans:
            watched.recorder.spans.append(_marker(trace_id, watched))

    def log_event(self, record: Any) -> None:
        """A log record of a watched trace's span, kept as that span's event (capped like its spans)."""
        trace_id, span_id = getattr(record, "trace_id", None), getattr(record, "span_id", None)
        if not trace_id or not span_id:
            return
        attributes = dict(getattr(record, "attributes", None) or {})
        body = getattr(record, "body", None)
        name = getattr(record, "event_name", None) or attributes.get("event.name") or ""
        with self._lock:
            watched = self._watched.get(trace_id)
            if watched is None or watched.kept_events >= MAX_CASE_SPANS:
                return
            watched.kept_events += 1
        found = {**(dict(body) if isinstance(body, Mapping) else {}), **attributes}
        # WHY through JSON: the SDK keeps a sequence as a tuple, and messages are read as parsed JSON
        event = (str(name), {k: _plain(v) for k, v in found.items()})
        with self._lock:
            watched.events.setdefault(span_id, []).append(event)

    def on_end(self, span: Any) -> None:
        with self._lock:
            watched = self._watched.get(span.context.trace_id)
            if watched is None:
                self._seen_elsewhere(span)
            elif len(watched.recorder.spans) < MAX_CASE_SPANS or span.parent is None:  # WHY: the case span, kept
                watched.recorder.spans.append(span)
            else:
                watched.dropped += 1

    def _seen_elsewhere(self, span: Any) -> None:
        """A model or tool span that roots a trace of its own while cases run was most likely
        made in a thread without the case's context (an orphan): every case running since
        before it began may be missing it. WHY only counted: which case made it cannot be told."""
        if not self._watched or span.parent is not None or kind_of(span.attributes or {}) not in ("model", "tool"):
            return
        for watched in self._watched.values():
            if watched.start_ns <= (span.start_time or 0):
                watched.orphans += 1


def _plain(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    try:
        return json.loads(json.dumps(value, default=str))
    except (TypeError, ValueError, RecursionError):
        return str(value)[:10_000]


def _with_events(span: Any, events: Mapping[int, list[tuple[str, Mapping[str, Any]]]]) -> Any:
    """A recorded SDK span, read with the log events that named it (left as it is when none did)."""
    context = getattr(span, "context", None)
    found = events.get(context.span_id) if context is not None else None
    if not found:
        return span
    read = sdk_span(span)
    return replace(read, events=read.events + tuple(found))


def _marker(trace_id: int, watched: _Watched) -> Span:
    attributes = {CUT_ATTRIBUTE: watched.dropped} if watched.dropped else {ORPHANS_ATTRIBUTE: watched.orphans}
    return Span(name="tracegrade.capture", trace_id=format(trace_id, "032x"), span_id="tracegrade.capture",
                parent_id="", start_ns=watched.start_ns, end_ns=watched.start_ns, attributes=attributes)
