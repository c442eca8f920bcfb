"""Where spans would go, read from the environment without loading OpenTelemetry.

    >>> import os
    >>> os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None) and None
    >>> otlp_destination("http://collector:4318")
    'http://collector:4318/v1/traces'

WHY a module of its own: an eval run decides from these whether to build spans
at all, before its first case, and importing the OpenTelemetry SDK to learn
that nothing is to be exported cost ~30 ms of a run's start.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def otlp_destination(endpoint: str | None = None) -> str | None:
    """The URL spans go to: ``endpoint``, else the standard OTEL_EXPORTER_OTLP_*
    variables; None when none is set."""
    if endpoint:
        return endpoint.rstrip("/") + "/v1/traces"
    if traces := os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        return traces
    if base := os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return base.rstrip("/") + "/v1/traces"
    return None


def named_spans_db() -> Path | None:
    """The span store ``TRACEGRADE_SPANS_DB`` names, if it names one (not unset, not ``off``)."""
    setting = os.environ.get("TRACEGRADE_SPANS_DB", "")
    return Path(setting) if setting and setting.lower() != "off" else None


def eval_spans_wanted() -> bool:
    """An eval run exports spans only to a collector or a span store the environment names."""
    return otlp_destination() is not None or named_spans_db() is not None


def tracer_possible() -> bool:
    """Whether any tracer in this process could take a span: OpenTelemetry's API is loaded (our
    telemetry on, or an application that set its provider) or the environment names a provider.

    WHY asked before each case's spans: loading the SDK to learn that no tracer is set cost the
    first case of a run 40 ms, while the other cases' replies waited. WHY the environment's raw
    bytes when CPython has them: ``os.environ`` encodes the name and raises and catches a
    KeyError for a variable not set, the larger part of this question's cost."""
    if "opentelemetry.trace" in sys.modules:
        return True
    raw = getattr(os.environ, "_data", None)
    if os.supports_bytes_environ and isinstance(raw, dict):  # its names are bytes
        return bool(raw.get(b"OTEL_PYTHON_TRACER_PROVIDER"))
    return bool(os.environ.get("OTEL_PYTHON_TRACER_PROVIDER"))
