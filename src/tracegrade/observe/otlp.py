"""OTLP/HTTP export that never slows or fails an eval run or a request.

    >>> sent = []
    >>> exporter = FailFastExporter(lambda spans: sent.append(spans) or False, "http://collector:4318", say=print)
    >>> exporter.export(["span"])
    span export to http://collector:4318 is failing; its spans are dropped (the local span store keeps them) and export is retried every 30 s
    <SpanExportResult.FAILURE: 1>
    >>> exporter.export(["another"]), len(sent)  # paused: dropped at once, nothing sent, nothing said
    (<SpanExportResult.FAILURE: 1>, 1)

WHY: the SDK's OTLP exporter retries an unreachable collector with backoff for
up to 10 s per batch, logging "Transient error ..." at each retry, and at the
end of a run the batch processor waits for those retries: a dead collector
made a 15 s golden run take 30 s. Here export runs on the batch processor's
worker thread (a bounded queue: spans beyond it are dropped, never waited
for) with a short timeout; the first failure is said once, the exporter's own
retry lines on that thread are dropped, and for ``pause_s`` after a failure
every batch is dropped at once instead of being sent, so a dead collector
costs one timeout, not one per batch.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from typing import Any, Callable, Sequence

from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from tracegrade.observe.destinations import otlp_destination  # noqa: F401 (re-exported: where spans go)

# Seconds one export may take (the SDK's default is 10); OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT wins.
EXPORT_TIMEOUT_S = 2.0
PAUSE_S = 30.0
# The logger the SDK's OTLP/HTTP span exporter reports its retries and failures on.
OTLP_LOGGER = "opentelemetry.exporter.otlp.proto.http.trace_exporter"


def _say(message: str) -> None:
    print(f"tracegrade: {message}", file=sys.stderr)


class _QuietOnOurThreads(logging.Filter):
    """Drops the exporter's log lines emitted on the threads this module exports
    from (it says the failure once itself); other threads' lines pass."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[int] = set()
        self.first_reason = ""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.thread not in self.threads:
            return True
        self.first_reason = self.first_reason or _reason(record)
        return False


def _reason(record: logging.LogRecord) -> str:
    """The error a retry or failure line is about, its end kept (where the cause is)."""
    args = record.args if isinstance(record.args, tuple) else ()
    text = next((str(a) for a in args if isinstance(a, BaseException)), None) or record.getMessage()
    return text if len(text) <= 160 else "..." + text[-157:]


class FailFastExporter(SpanExporter):
    """Wraps an exporter (or a function ``spans -> bool``) so that a failing
    destination is said once, paused for ``pause_s``, and never waited for."""

    def __init__(self, inner: SpanExporter | Callable[[Sequence[Any]], bool], where: str,
                 say: Callable[[str], None] = _say, pause_s: float = PAUSE_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.inner, self.where, self.say, self.pause_s, self.clock = inner, where, say, pause_s, clock
        self.dropped = 0
        self._failing = False
        self._paused_until = float("-inf")
        self._quiet = _QuietOnOurThreads()
        logging.getLogger(OTLP_LOGGER).addFilter(self._quiet)

    def export(self, spans: Sequence[Any]) -> SpanExportResult:
        if self.clock() < self._paused_until:
            self.dropped += len(spans)
            return SpanExportResult.FAILURE
        self._quiet.threads.add(threading.get_ident())
        if self._send(spans):
            if self._failing:
                self._failing = False
                self.say(f"span export to {self.where} works again")
            return SpanExportResult.SUCCESS
        self.dropped += len(spans)
        self._paused_until = self.clock() + self.pause_s
        if not self._failing:
            self._failing = True
            reason = f" ({self._quiet.first_reason})" if self._quiet.first_reason else ""
            self.say(f"span export to {self.where} is failing{reason}; its spans are dropped (the local span "
                     f"store keeps them) and export is retried every {self.pause_s:g} s")
        return SpanExportResult.FAILURE

    def _send(self, spans: Sequence[Any]) -> bool:
        try:
            if isinstance(self.inner, SpanExporter):
                return self.inner.export(spans) is SpanExportResult.SUCCESS
            return bool(self.inner(spans))
        except Exception:  # an exporter's bug must not reach the run either; it counts as a failure
            return False

    def shutdown(self) -> None:
        logging.getLogger(OTLP_LOGGER).removeFilter(self._quiet)
        if isinstance(self.inner, SpanExporter):
            self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def otlp_exporter(destination: str) -> SpanExporter:
    """The SDK's OTLP/HTTP exporter to ``destination`` with a short timeout,
    the other standard variables (headers, certificates, compression) applying."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    user_timeout = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") or os.environ.get("OTEL_EXPORTER_OTLP_TIMEOUT")
    return OTLPSpanExporter(endpoint=destination, timeout=None if user_timeout else EXPORT_TIMEOUT_S)
