"""OpenTelemetry spans of an agent, turned into Replies (one per trace).

Two conventions are read, as the instrumentors of the ecosystem emit them:

- **GenAI** (OpenTelemetry's ``gen_ai.*``): ``execute_tool`` spans are tool
  calls (``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
  ``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``); ``chat`` spans
  are model rounds (``gen_ai.response.model``, ``gen_ai.usage.*_tokens``,
  ``gen_ai.input.messages`` / ``gen_ai.output.messages``).
- **OpenInference** (``openinference.span.kind``): ``TOOL`` spans
  (``tool.name``, ``input.value``, ``output.value``), ``LLM`` spans
  (``llm.model_name``, ``llm.token_count.*``, ``llm.output_messages.*``),
  ``RETRIEVER`` spans (``retrieval.documents.N.document.*``) and the root
  ``AGENT``/``CHAIN`` span's ``input.value`` and ``output.value``.

Spans come as SDK ``ReadableSpan`` objects (captured in-process) or as an OTLP
JSON export (``{"resourceSpans": [...]}``, what a collector's file exporter
writes). A span attribute ``tracegrade.case_id`` names the case a trace answers.

    >>> spans = [{"name": "execute_tool get_weather", "traceId": "t1", "spanId": "b", "parentSpanId": "a",
    ...           "startTimeUnixNano": 2000000, "endTimeUnixNano": 5000000,
    ...           "attributes": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
    ...                          "gen_ai.tool.call.arguments": '{"city": "Rome"}', "gen_ai.tool.call.result": "21 C"}},
    ...          {"name": "invoke_agent", "traceId": "t1", "spanId": "a", "startTimeUnixNano": 0,
    ...           "endTimeUnixNano": 9000000, "attributes": {"input.value": "Weather in Rome?",
    ...                                                     "output.value": "21 C in Rome."}}]
    >>> [(t.question, t.wire["answer"], t.wire["toolCalls"][0]["arguments"]) for t in otel_traces(spans)]
    [('Weather in Rome?', '21 C in Rome.', {'city': 'Rome'})]
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from tracegrade.core.from_messages import parse_arguments, text_of

CASE_ID_ATTRIBUTE = "tracegrade.case_id"
_CHAT_OPERATIONS = {"chat", "text_completion", "generate_content"}
MAX_SPANS = 100_000  # of one export file: a bigger file is refused, not read into memory span by span


@dataclass(frozen=True)
class Span:
    """The part of a span the converter reads, whichever form it came in."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any]
    error: bool = False


@dataclass(frozen=True)
class OtelTrace:
    """One trace's Reply (its wire form: ``Reply.from_wire(trace.wire)``), with
    what names its case: the ``tracegrade.case_id`` attribute if a span carries
    it, else the question (the first user message)."""

    trace_id: str
    case_id: str | None
    question: str
    wire: dict[str, Any]


def otel_traces(spans: Iterable[Any]) -> list[OtelTrace]:
    """One OtelTrace per trace id among ``spans`` (SDK spans or OTLP JSON span dicts)."""
    by_trace: dict[str, list[Span]] = {}
    for raw in spans:
        span = as_span(raw)
        by_trace.setdefault(span.trace_id, []).append(span)
    return [_trace(trace_id, sorted(group, key=lambda s: (s.start_ns, s.end_ns))) for trace_id, group in by_trace.items()]


def spans_of_otlp_json(document: Mapping[str, Any]) -> list[Span]:
    """The spans of an OTLP JSON export (``resourceSpans`` → ``scopeSpans`` → ``spans``)."""
    if not isinstance(document, Mapping) or "resourceSpans" not in document:
        raise ValueError("not an OTLP JSON export: no 'resourceSpans' key")
    found: list[Span] = []
    for resource in document.get("resourceSpans") or []:
        for scope in resource.get("scopeSpans") or resource.get("instrumentationLibrarySpans") or []:
            for raw in scope.get("spans") or []:
                found.append(as_span(raw))
                if len(found) > MAX_SPANS:
                    raise ValueError(f"the export holds more than {MAX_SPANS:,} spans; split it")
    return found


def as_span(raw: Any) -> Span:
    if isinstance(raw, Span):
        return raw
    if isinstance(raw, Mapping):
        return _json_span(raw)
    return _sdk_span(raw)


def _json_span(raw: Mapping[str, Any]) -> Span:
    attributes = raw.get("attributes") or {}
    if isinstance(attributes, list):  # OTLP JSON: [{"key": ..., "value": {"stringValue": ...}}]
        attributes = {a.get("key", ""): _any_value(a.get("value") or {}) for a in attributes}
    status = raw.get("status") or {}
    return Span(name=str(raw.get("name") or ""), trace_id=str(raw.get("traceId") or ""),
                span_id=str(raw.get("spanId") or ""), parent_id=str(raw.get("parentSpanId") or ""),
                start_ns=int(raw.get("startTimeUnixNano") or 0), end_ns=int(raw.get("endTimeUnixNano") or 0),
                attributes=attributes, error=status.get("code") in (2, "STATUS_CODE_ERROR"))


def _any_value(value: Mapping[str, Any]) -> Any:
    """An OTLP AnyValue as a Python value (int64 comes as a string in JSON)."""
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_any_value(v) for v in (value["arrayValue"].get("values") or [])]
    if "kvlistValue" in value:
        return {kv.get("key", ""): _any_value(kv.get("value") or {}) for kv in value["kvlistValue"].get("values") or []}
    return None


def _sdk_span(span: Any) -> Span:
    context = span.get_span_context() if hasattr(span, "get_span_context") else span.context
    parent = getattr(span, "parent", None)
    status = getattr(span, "status", None)
    return Span(name=span.name, trace_id=format(context.trace_id, "032x"), span_id=format(context.span_id, "016x"),
                parent_id=format(parent.span_id, "016x") if parent else "",
                start_ns=span.start_time or 0, end_ns=span.end_time or span.start_time or 0,
                attributes=dict(span.attributes or {}),
                error=bool(status is not None and getattr(status.status_code, "name", "") == "ERROR"))


# -- one trace -----------------------------------------------------------------------------


def _trace(trace_id: str, spans: list[Span]) -> OtelTrace:
    start = spans[0].start_ns if spans else 0
    calls: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    models: list[str] = []
    found: list[tuple[str, str]] = []
    for span in spans:
        kind = _kind(span)
        step = {"kind": kind, "name": span.name, "startMs": (span.start_ns - start) / 1e6,
                "durationMs": (span.end_ns - span.start_ns) / 1e6, "error": "error" if span.error else None}
        if kind == "tool":
            calls.append(_tool_call(span, spans))
            steps.append({**step, "name": calls[-1]["name"]})
        elif kind == "model":
            given, taken = _tokens(span)
            model = str(_first(span, "gen_ai.response.model", "gen_ai.request.model", "llm.model_name") or "")
            models += [model] if model else []
            steps.append({**step, "name": model or span.name, "inputTokens": given, "outputTokens": taken})
        elif kind == "retrieval":
            found += _documents(span)
            steps.append(step)
    used = [(s.get("inputTokens", 0), s.get("outputTokens", 0)) for s in steps]
    outer = _outer(spans)
    wire = {"answer": _answer(spans, outer), "toolCalls": _number_rounds(calls, spans), "steps": steps,
            "model": models[-1] if models else "", "retrievedSources": [source for source, _ in found],
            "context": "\n\n".join(text for _, text in found if text),
            "usage": {"inputTokens": sum(u[0] for u in used), "outputTokens": sum(u[1] for u in used)}}
    case_id = next((str(s.attributes[CASE_ID_ATTRIBUTE]) for s in spans if CASE_ID_ATTRIBUTE in s.attributes), None)
    return OtelTrace(trace_id=trace_id, case_id=case_id, question=_question(spans, outer), wire=wire)


def _kind(span: Span) -> str:
    a = span.attributes
    operation = a.get("gen_ai.operation.name")
    openinference = str(a.get("openinference.span.kind") or "").upper()
    if operation == "execute_tool" or openinference == "TOOL":
        return "tool"
    if operation in _CHAT_OPERATIONS or openinference == "LLM":
        return "model"
    if openinference == "RETRIEVER":
        return "retrieval"
    return "other"


def _first(span: Span, *keys: str) -> Any:
    return next((span.attributes[k] for k in keys if span.attributes.get(k) not in (None, "")), None)


def _tokens(span: Span) -> tuple[int, int]:
    given = _first(span, "gen_ai.usage.input_tokens", "llm.token_count.prompt") or 0
    taken = _first(span, "gen_ai.usage.output_tokens", "llm.token_count.completion") or 0
    return int(given), int(taken)


def _tool_call(span: Span, spans: list[Span]) -> dict[str, Any]:
    name = str(_first(span, "gen_ai.tool.name", "tool.name") or span.name.removeprefix("execute_tool ").strip())
    call_id = _first(span, "gen_ai.tool.call.id", "tool_call.id", "tool.id")
    # WHY not tool.parameters: in OpenInference that is the tool's schema, not this call's arguments
    raw_arguments = _first(span, "gen_ai.tool.call.arguments", "input.value", "tool_call.function.arguments")
    if raw_arguments is None and call_id:
        raw_arguments = _requested_arguments(str(call_id), spans)
    arguments = parse_arguments(raw_arguments)
    result = _first(span, "gen_ai.tool.call.result", "output.value")
    first = next(iter(arguments.values()), None)
    return {"name": name, "arguments": arguments, "argument": first if isinstance(first, str) else None,
            "result": _tool_output(result),
            "status": "error" if span.error else "ok", "id": str(call_id)[:200] if call_id else None}


def _tool_output(value: Any) -> str:
    """A tool span's output as the text the model saw. LangChain's instrumentor
    records the whole ToolMessage as JSON (``{"type": "tool", "data": {"content": ...}}``)."""
    if not isinstance(value, str):
        return text_of(value)
    try:
        parsed = json.loads(value)
    except ValueError:
        return value
    message = parsed.get("data", parsed) if isinstance(parsed, Mapping) else None
    if isinstance(message, Mapping) and message.get("type") == "tool" and "content" in message:
        return text_of(message["content"])
    return value


def _requested_arguments(call_id: str, spans: list[Span]) -> Any:
    """The arguments a model round asked for with ``call_id`` (its output messages),
    for a tool span that does not repeat them."""
    for span in spans:
        for message in _messages(span, "gen_ai.output.messages"):
            for part in message.get("parts") or []:
                if isinstance(part, Mapping) and part.get("type") == "tool_call" and part.get("id") == call_id:
                    return part.get("arguments")
    return None


def _number_rounds(calls: list[dict[str, Any]], spans: list[Span]) -> list[dict[str, Any]]:
    """Rounds from the model spans: a call belongs to the round of the last
    model span that ended before it started (tool spans do not say it)."""
    model_ends = sorted(s.end_ns for s in spans if _kind(s) == "model")
    tool_starts = [s.start_ns for s in spans if _kind(s) == "tool"]
    if not model_ends or len(tool_starts) != len(calls):
        return calls
    numbered = []
    for call, started in zip(calls, tool_starts):
        round_ = sum(end <= started for end in model_ends) - 1
        numbered.append({**call, "round": max(round_, 0)})
    return numbered


def _documents(span: Span) -> list[tuple[str, str]]:
    found = []
    for index in range(1000):
        prefix = f"retrieval.documents.{index}.document."
        if not any(k.startswith(prefix) for k in span.attributes):
            break
        source = span.attributes.get(prefix + "id") or (span.attributes.get(prefix + "metadata") or "")
        found.append((str(source)[:500], str(span.attributes.get(prefix + "content") or "")))
    return found


def _messages(span: Span, key: str) -> list[Mapping[str, Any]]:
    raw = span.attributes.get(key)
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return []
    return [m for m in raw if isinstance(m, Mapping)] if isinstance(raw, list) else []


def _message_text(message: Mapping[str, Any]) -> str:
    parts = message.get("parts")
    if isinstance(parts, list):
        return "\n".join(str(p.get("content") or "") for p in parts if isinstance(p, Mapping) and p.get("type") == "text")
    return text_of(message.get("content"))


def _outer(spans: list[Span]) -> list[Span]:
    """Spans that are neither a tool, a model round nor a retrieval (the agent's
    own and a framework's chains), outermost first."""
    parent = {s.span_id: s.parent_id for s in spans}

    def depth(span: Span) -> int:
        seen, at = 0, span.parent_id
        while at in parent and seen < len(spans):
            seen, at = seen + 1, parent[at]
        return seen

    return sorted((s for s in spans if _kind(s) == "other"), key=depth)


def _answer(spans: list[Span], outer: list[Span]) -> str:
    """The outermost agent span's output, else the last model round's text."""
    for span in outer:
        value = _first(span, "output.value", "gen_ai.output.text")
        if isinstance(value, str) and value:
            return _unwrap(value)
    for span in reversed([s for s in spans if _kind(s) == "model"]):
        for message in reversed(_messages(span, "gen_ai.output.messages")):
            if text := _message_text(message):
                return text
        if text := _first(span, "llm.output_messages.0.message.content"):
            return str(text)
    return ""


def _question(spans: list[Span], outer: list[Span]) -> str:
    """The outermost agent span's input, else a model round's first user message."""
    for span in outer:
        value = _first(span, "input.value", "gen_ai.input.text")
        if isinstance(value, str) and value:
            return _unwrap(value, last=False)
    for span in spans:
        for message in _messages(span, "gen_ai.input.messages"):
            if message.get("role") == "user":
                return _message_text(message)
        for index in range(100):
            role = span.attributes.get(f"llm.input_messages.{index}.message.role")
            if role is None:
                break
            if role == "user":
                return str(span.attributes.get(f"llm.input_messages.{index}.message.content") or "")
    return ""


def _unwrap(value: str, last: bool = True) -> str:
    """An ``input.value``/``output.value`` that is JSON holding one text (a
    framework's ``{"input": "..."}``, or a message list whose first message is
    the question and last the answer) gives that text; plain text is itself."""
    try:
        parsed = json.loads(value)
    except ValueError:
        return value
    if isinstance(parsed, str):
        return parsed
    if isinstance(parsed, Mapping):
        messages = parsed.get("messages")
        if isinstance(messages, list) and messages:
            return _message_content(messages[-1] if last else messages[0])
        texts = [v for v in parsed.values() if isinstance(v, str)]
        if len(texts) == 1:
            return texts[0]
    return value


def _message_content(message: Any) -> str:
    """A message's text in the forms frameworks serialise it: a dict with
    ``content``, LangChain's ``{"kwargs": {"content": ...}}`` or
    ``{"type": "ai", "data": {"content": ...}}``, a ``[role, text]`` pair."""
    if isinstance(message, Mapping):
        inner = next((message[k] for k in ("kwargs", "data") if isinstance(message.get(k), Mapping)), message)
        return text_of(inner.get("content"))
    if isinstance(message, list) and len(message) == 2 and isinstance(message[0], str):
        return text_of(message[1])
    return text_of(message)
