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

WHY the global tracer provider: instrumentors (OpenInference's for the OpenAI
Agents SDK and LangChain, OpenTelemetry's own) use it unless told otherwise.
If none is set, an SDK provider is set; if the application set one, the
processor is added to it. Either way it is added once per process.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import Any, Iterator

from opentelemetry.sdk.trace import SpanProcessor

from tracegrade.capture.recorder import Recorder
from tracegrade.core.from_otel import CASE_ID_ATTRIBUTE, CUT_ATTRIBUTE, ORPHANS_ATTRIBUTE, Span, kind_of

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
    return processor


@dataclass
class _Watched:
    """A running case: its Recorder, and what its trace lost (spans past the cap, root
    spans of other traces that began while it ran)."""

    recorder: Recorder
    start_ns: int
    dropped: int = 0
    orphans: int = 0


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
        if watched is not None and (watched.dropped or watched.orphans):
            watched.recorder.spans.append(_marker(trace_id, watched))

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


def _marker(trace_id: int, watched: _Watched) -> Span:
    attributes = {CUT_ATTRIBUTE: watched.dropped} if watched.dropped else {ORPHANS_ATTRIBUTE: watched.orphans}
    return Span(name="tracegrade.capture", trace_id=format(trace_id, "032x"), span_id="tracegrade.capture",
                parent_id="", start_ns=watched.start_ns, end_ns=watched.start_ns, attributes=attributes)
