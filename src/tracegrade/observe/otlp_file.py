"""A span exporter that appends OTLP JSON to a file, one export per line: the
format a collector's file exporter writes and ``tracegrade grade`` reads.

    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter("traces.jsonl")))

For recording an agent's traces where no collector runs, to grade them later.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult


class OtlpJsonFileExporter(SpanExporter):
    """Each export appended to ``path`` as one line of OTLP JSON (``resourceSpans``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        from google.protobuf.json_format import MessageToDict
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        line = json.dumps(MessageToDict(encode_spans(spans)), separators=(",", ":"))
        with self._lock, self.path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None
