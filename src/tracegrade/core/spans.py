"""Spans as the converter reads them, from an SDK ``ReadableSpan`` or an OTLP JSON export.

An OTLP JSON file comes from anywhere, so every field is checked for its shape:
anything else is a ``SpanFormatError`` naming where it is (``resourceSpans[0].
scopeSpans[0].spans[2].startTimeUnixNano``), with the value found kept apart for
the caller to show redacted: never a traceback that prints the value.

    >>> doc = {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t", "spanId": "a", "name": "chat",
    ...        "startTimeUnixNano": "1", "endTimeUnixNano": "x"}]}]}]}
    >>> spans_of_otlp_json(doc)
    Traceback (most recent call last):
    ...
    tracegrade.core.spans.SpanFormatError: resourceSpans[0].scopeSpans[0].spans[0].endTimeUnixNano: not a whole number
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

MAX_SPANS = 100_000  # of one export file: a bigger file is refused, not read into memory span by span
MAX_VALUE_DEPTH = 16  # an attribute value's arrays and key-value lists, nested
_MAX_NANOS = 2**64 - 1  # OTLP times are fixed64


class SpanFormatError(ValueError):
    """A span (or the export holding it) that is not the shape OTLP says. Its message
    names the field; the value found is kept apart (``value``), for the caller to show
    redacted. WHY not redacted here: importing core.redact would close an import cycle
    (redact -> storable -> trace -> from_otel -> spans)."""

    def __init__(self, message: str, *value: Any) -> None:
        super().__init__(message)
        self.value = value  # () or (the value found,)

    def described(self, show: Callable[[Any], str]) -> str:
        """The message with the value found, as ``show`` writes it."""
        return f"{self}" + (f" ({show(self.value[0])})" if self.value else "")


@dataclass(frozen=True)
class Span:
    """The part of a span the converter reads, whichever form it came in. ``origin`` says
    where it was read (file, line and field path), for an error about one of its values."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any]
    error: bool = False
    origin: str = ""
    # (name, attributes) of each event the span holds, and of each log event that names it
    # (``attach_log_events``): where an instrumentation's event form puts the messages
    events: tuple[tuple[str, Mapping[str, Any]], ...] = ()


def spans_of_otlp_json(document: Any, limit: int = MAX_SPANS, origin: str = "") -> list[Span]:
    """The spans of an OTLP JSON export (``resourceSpans`` → ``scopeSpans`` → ``spans``);
    SpanFormatError past ``limit`` spans or on any field of the wrong shape, its message
    starting with ``origin`` (where the document was read: a file and line)."""
    at = f"{origin} " if origin else ""
    if not isinstance(document, Mapping) or "resourceSpans" not in document:
        raise SpanFormatError(f"{at}not an OTLP JSON export: no 'resourceSpans' key")
    found: list[Span] = []
    for r, resource in enumerate(_listed(document["resourceSpans"], f"{at}resourceSpans")):
        resource = _mapping(resource, f"{at}resourceSpans[{r}]")
        key = "scopeSpans" if "scopeSpans" in resource else "instrumentationLibrarySpans"
        for s, scope in enumerate(_listed(resource.get(key), f"{at}resourceSpans[{r}].{key}")):
            where = f"{at}resourceSpans[{r}].{key}[{s}]"
            for n, raw in enumerate(_listed(_mapping(scope, where).get("spans"), f"{where}.spans")):
                if len(found) >= limit:
                    raise SpanFormatError(f"{at}more than {MAX_SPANS:,} spans in one file; split it")
                found.append(json_span(raw, f"{where}.spans[{n}]"))
    return found


def _listed(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise SpanFormatError(f"{where}: not a list", value)
    return value


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, dict) and not isinstance(value, Mapping):  # WHY dict first: typing's check is slow
        raise SpanFormatError(f"{where}: not an object", value)
    return value


def json_span(raw: Any, where: str = "span") -> Span:
    """One OTLP JSON span (or a plain dict of the same keys, attributes as a dict)."""
    raw = _mapping(raw, where)
    status = _mapping(raw.get("status") or {}, f"{where}.status")
    start = _nanos(raw.get("startTimeUnixNano"), f"{where}.startTimeUnixNano")
    end = _nanos(raw.get("endTimeUnixNano"), f"{where}.endTimeUnixNano")
    return Span(name=_text(raw.get("name"), f"{where}.name"), trace_id=_text(raw.get("traceId"), f"{where}.traceId"),
                span_id=_text(raw.get("spanId"), f"{where}.spanId"),
                parent_id=_text(raw.get("parentSpanId"), f"{where}.parentSpanId"),
                start_ns=start, end_ns=end or start,
                attributes=_attributes(raw.get("attributes"), f"{where}.attributes"),
                error=status.get("code") in (2, "STATUS_CODE_ERROR"), origin=where,
                events=_events(raw.get("events"), f"{where}.events"))


def _events(raw: Any, where: str) -> tuple[tuple[str, Mapping[str, Any]], ...]:
    """A span's events as (name, attributes)."""
    found = []
    for i, event in enumerate(_listed(raw, where)):
        event = _mapping(event, f"{where}[{i}]")
        found.append((_text(event.get("name"), f"{where}[{i}].name"),
                      _attributes(event.get("attributes"), f"{where}[{i}].attributes")))
    return tuple(found)


def log_events_of_otlp_json(document: Any, origin: str = "") -> list[tuple[str, str, str, dict[str, Any]]]:
    """The log records of an OTLP JSON logs export (``resourceLogs``) that name a span, as
    (trace id, span id, event name, attributes): an instrumentation's event form (OpenTelemetry
    GenAI's ``gen_ai.client.inference.operation.details``, per-message events) writes a model
    call's messages there. A record's body, when an object, is read as attributes beside its own."""
    at = f"{origin} " if origin else ""
    found = []
    for r, resource in enumerate(_listed(_mapping(document, f"{at}document").get("resourceLogs"), f"{at}resourceLogs")):
        for s, scope in enumerate(_listed(_mapping(resource, f"{at}resourceLogs[{r}]").get("scopeLogs"),
                                          f"{at}resourceLogs[{r}].scopeLogs")):
            where = f"{at}resourceLogs[{r}].scopeLogs[{s}].logRecords"
            for n, record in enumerate(_listed(_mapping(scope, where).get("logRecords"), where)):
                record = _mapping(record, f"{where}[{n}]")
                trace_id, span_id = (_text(record.get(k), f"{where}[{n}].{k}") for k in ("traceId", "spanId"))
                if not trace_id or not span_id:
                    continue
                attributes = _attributes(record.get("attributes"), f"{where}[{n}].attributes")
                body = any_value(record.get("body"), f"{where}[{n}].body") if record.get("body") else None
                name = _text(record.get("eventName") or attributes.get("event.name") or "", f"{where}[{n}].eventName")
                found.append((trace_id, span_id, name, {**(body if isinstance(body, dict) else {}), **attributes}))
    return found


def _text(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise SpanFormatError(f"{where}: not a string", value)
    return value


def _nanos(value: Any, where: str) -> int:
    number = whole_number(value, where) if value not in (None, "") else 0
    if not 0 <= number <= _MAX_NANOS:
        raise SpanFormatError(f"{where}: out of range", value)
    return number


def whole_number(value: Any, where: str) -> int:
    """An integer as OTLP JSON writes it (a number, or a string of digits for 64 bits)."""
    if isinstance(value, bool):
        raise SpanFormatError(f"{where}: not a whole number", value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    text = value.strip() if isinstance(value, str) else ""
    if 0 < len(text) <= 24 and text.lstrip("-").isdigit() and text.isascii():
        return int(text)
    raise SpanFormatError(f"{where}: not a whole number", value)


def _attributes(raw: Any, where: str) -> dict[str, Any]:
    """OTLP JSON's ``[{"key": ..., "value": {"stringValue": ...}}]``, or a plain dict."""
    if raw is None:
        return {}
    if isinstance(raw, dict) or isinstance(raw, Mapping):
        return {str(k): v for k, v in raw.items()}
    attributes: dict[str, Any] = {}
    for i, pair in enumerate(_listed(raw, where)):
        pair = _mapping(pair, f"{where}[{i}]")
        key = _text(pair.get("key"), f"{where}[{i}].key")
        attributes[key] = any_value(pair.get("value"), f"{where}[{key}]")
    return attributes


def any_value(value: Any, where: str, depth: int = 0) -> Any:
    """An OTLP AnyValue as a Python value (int64 comes as a string in JSON)."""
    if depth > MAX_VALUE_DEPTH:
        raise SpanFormatError(f"{where}: nested deeper than {MAX_VALUE_DEPTH}")
    value = _mapping(value or {}, where)
    if "stringValue" in value:
        return _text(value["stringValue"], f"{where}.stringValue")
    if "boolValue" in value:
        return _flag(value["boolValue"], f"{where}.boolValue")
    if "intValue" in value:
        return whole_number(value["intValue"], f"{where}.intValue")
    if "doubleValue" in value:
        return _double(value["doubleValue"], f"{where}.doubleValue")
    if "arrayValue" in value:
        items = _listed(_mapping(value["arrayValue"], where).get("values"), f"{where}.arrayValue.values")
        return [any_value(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(items)]
    if "kvlistValue" in value:
        pairs = _listed(_mapping(value["kvlistValue"], where).get("values"), f"{where}.kvlistValue.values")
        return {_text(_mapping(kv, f"{where}{{{i}}}").get("key"), f"{where}{{{i}}}.key"):
                any_value(kv.get("value"), f"{where}{{{i}}}", depth + 1) for i, kv in enumerate(pairs)}
    if "bytesValue" in value:
        return _text(value["bytesValue"], f"{where}.bytesValue")
    return None


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise SpanFormatError(f"{where}: not true or false", value)
    return value


def _double(value: Any, where: str) -> float:
    """A double; proto3 JSON writes NaN and the infinities as strings ("NaN", "Infinity")."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and len(value) <= 40:
        try:
            return float(value)
        except ValueError:
            pass
    raise SpanFormatError(f"{where}: not a number", value)


def sdk_span(span: Any) -> Span:
    """An OpenTelemetry SDK ``ReadableSpan`` (captured in-process)."""
    context = span.get_span_context() if hasattr(span, "get_span_context") else span.context
    parent = getattr(span, "parent", None)
    status = getattr(span, "status", None)
    return Span(name=span.name, trace_id=format(context.trace_id, "032x"), span_id=format(context.span_id, "016x"),
                parent_id=format(parent.span_id, "016x") if parent else "",
                start_ns=span.start_time or 0, end_ns=span.end_time or span.start_time or 0,
                attributes=dict(span.attributes or {}),
                error=bool(status is not None and getattr(status.status_code, "name", "") == "ERROR"),
                origin=f"span {span.name!r}",
                events=tuple((e.name, dict(e.attributes or {})) for e in getattr(span, "events", None) or ()))


def as_span(raw: Any) -> Span:
    """A Span from any of the forms spans come in."""
    if isinstance(raw, Span):
        return raw
    if isinstance(raw, Mapping):
        return json_span(raw)
    return sdk_span(raw)
