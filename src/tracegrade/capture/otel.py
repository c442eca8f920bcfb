"""Spans an agent emits in-process (GenAI or OpenInference conventions),
gathered per case.

Each case runs inside a span of its own, ``tracegrade.case`` (attribute
``tracegrade.case_id``): the agent's spans, started in that context, join its
trace, and a span processor hands every finished span of a registered trace to
that case's Recorder. Spans of other traces are left alone.

WHY the global tracer provider: instrumentors (OpenInference's for the OpenAI
Agents SDK and LangChain, OpenTelemetry's own) use it unless told otherwise.
If none is set, an SDK provider is set; if the application set one, the
processor is added to it. Either way it is added once per process.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator

from opentelemetry.sdk.trace import SpanProcessor

from tracegrade.capture.recorder import Recorder
from tracegrade.core.from_otel import CASE_ID_ATTRIBUTE

_lock = threading.Lock()
_processor: Any = None


@contextlib.contextmanager
def case_span(case_id: str, recorder: Recorder) -> Iterator[None]:
    """The agent's spans inside the block go to ``recorder``. WHY no try/finally
    around the yield: an agent that raises ends the case span all the same (the
    ``with``), and its spans are then of no use; ``forget`` is skipped only then,
    and a trace id is never reused."""
    processor = _the_processor()
    from opentelemetry import trace
    from opentelemetry.context import Context

    tracer = trace.get_tracer("tracegrade.capture")
    # WHY a new root (an empty parent context): inside an eval run's own span every
    # case would share its trace id, and the agents' spans could not be told apart.
    with tracer.start_as_current_span("tracegrade.case", context=Context(),
                                      attributes={CASE_ID_ATTRIBUTE: case_id}) as span:
        trace_id = span.get_span_context().trace_id
        processor.watch(trace_id, recorder)
        yield
    processor.forget(trace_id)  # after the case span itself ended and was handed over


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


class _ByTrace(SpanProcessor):
    """A span processor that gives each watched trace's finished spans to its Recorder."""

    def __init__(self) -> None:
        self._watched: dict[int, Recorder] = {}
        self._lock = threading.Lock()

    def watch(self, trace_id: int, recorder: Recorder) -> None:
        with self._lock:
            self._watched[trace_id] = recorder

    def forget(self, trace_id: int) -> None:
        with self._lock:
            self._watched.pop(trace_id, None)

    def on_end(self, span: Any) -> None:
        with self._lock:
            recorder = self._watched.get(span.context.trace_id)
        if recorder is not None and len(recorder.spans) < 100_000:
            recorder.spans.append(span)
