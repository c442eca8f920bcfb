"""A span exporter that appends OTLP JSON to a file, one export per line: the
format a collector's file exporter writes and ``tracegrade grade`` reads.

    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter("traces.jsonl")))

For recording an agent's traces where no collector runs, to grade them later.
"""

from __future__ import annotations

import base64
import json
import threading
from pathlib import Path
from typing import Any, Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult


class OtlpJsonFileExporter(SpanExporter):
    """Each export appended to ``path`` as one line of OTLP JSON (``resourceSpans``), ids in
    hex and enums as integers, as OTLP/JSON specifies (protobuf's own JSON writes ids in base64)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        from google.protobuf.json_format import MessageToDict
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        document = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
        line = json.dumps(hex_ids(document), separators=(",", ":"))
        with self._lock, self.path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


_ID_KEYS = ("traceId", "spanId", "parentSpanId")


def hex_ids(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` (protobuf JSON of an export) with its spans' and links' ids in lowercase hex."""
    for resource in document.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                _hex(span)
                for link in span.get("links", []):
                    _hex(link)
    return document


def _hex(item: dict[str, Any]) -> None:
    for key in _ID_KEYS:
        if item.get(key):
            item[key] = base64.b64decode(item[key]).hex()
