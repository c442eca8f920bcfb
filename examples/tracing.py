"""The tracer provider the traced examples share: the process's global one (set
if none is), writing OTLP JSON to ``$TRACES_FILE`` when it is set."""

from __future__ import annotations

import os

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tracegrade.observe.otlp_file import OtlpJsonFileExporter


def tracer_provider() -> TracerProvider:
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    if os.environ.get("TRACES_FILE"):
        provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(os.environ["TRACES_FILE"])))
    return provider
