"""OpenTelemetry spans of an agent, turned into Replies (one per trace).

What is read, by convention (docs/agents.md has the table):

- **Tool spans** (GenAI ``execute_tool``: ``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
  ``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``; OpenInference ``TOOL``:
  ``tool.name``, ``input.value``, ``output.value``) are the calls that ran.
- **Model spans** (GenAI ``chat``; OpenInference ``LLM``; the indexed ``gen_ai.prompt`` /
  ``gen_ai.completion`` form) are model rounds: their model and tokens, and the calls
  their output asked for and the results their input sent back (``span_messages``).
  A requested call is paired with its tool span by id (else by name and arguments,
  else by name): the tool span wins, and a call is never counted twice. A requested
  call no tool span ran is a call of its own, its result read from a later round's input.
- ``RETRIEVER`` spans give the sources and context; the outermost other span (the
  agent's own, or a framework's chain) its question and answer.

Spans come as SDK ``ReadableSpan`` objects (captured in-process) or as an OTLP JSON
export (``core/spans.py`` reads and checks it). A span attribute
``tracegrade.case_id`` names the case a trace answers. Each Reply says where its
calls came from (``provenance``: source ``spans``, via ``openinference`` or
``genai``) and, when the trace is not a case's whole trace, why: cut at the span
cap, orphaned (no root agent span and no case id: spans made in a thread without
the caller's context start traces of their own), or missing such spans.
Everything here is linear in the number of spans (sorting aside).

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

import bisect
import json
from collections import deque
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from tracegrade.core.from_messages import nested_deeper, parse_arguments, text_of
from tracegrade.core.span_messages import Asked, Round, indexed_items, read_round
from tracegrade.core.spans import MAX_SPANS, Span, SpanFormatError, as_span, spans_of_otlp_json, whole_number

__all__ = ["CASE_ID_ATTRIBUTE", "MAX_SPANS", "OtelTrace", "Span", "SpanFormatError", "as_span", "otel_traces",
           "spans_of_otlp_json"]

CASE_ID_ATTRIBUTE = "tracegrade.case_id"
# Marker spans capture adds to a case's spans (capture/otel.py): how many spans were
# dropped at the cap, and how many root spans of other traces began while the case ran.
CUT_ATTRIBUTE = "tracegrade.spans_dropped"
ORPHANS_ATTRIBUTE = "tracegrade.orphan_spans"
_CHAT_OPERATIONS = {"chat", "text_completion", "generate_content"}
_CHAT_REQUESTS = {"chat", "completion"}  # the indexed form's llm.request.type
ORPHAN_FIX = ("start the agent's span around each question and carry its context into worker threads: "
              "pool.submit(contextvars.copy_context().run, fn, ...), or opentelemetry.context.attach(ctx) "
              "in the thread")
SILENT_MODEL_SPANS = (
    "model spans without their messages (the instrumentation records no content) and no tool span: the calls "
    "the model asked for cannot be read; record content on spans (OpenTelemetry GenAI: "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only; OpenInference: do not hide output messages) "
    "or instrument the tools")
ORPHAN_SAID = ("an orphaned trace: no root agent span and no tracegrade.case_id, only model or tool spans "
               "(spans made in a thread without the caller's context start traces of their own)")
ORPHANED = f"{ORPHAN_SAID}; fix: {ORPHAN_FIX}"


@dataclass(frozen=True)
class OtelTrace:
    """One trace's Reply (its wire form: ``Reply.from_wire(trace.wire)``), with
    what names its case: the ``tracegrade.case_id`` attribute if a span carries
    it, else the question (the first user message). ``orphan`` says why the trace
    is no case's own ("" when it has a root agent span or a case id)."""

    trace_id: str
    case_id: str | None
    question: str
    wire: dict[str, Any]
    orphan: str = ""
    start_ns: int = 0
    end_ns: int = 0


def otel_traces(spans: Iterable[Any]) -> list[OtelTrace]:
    """One OtelTrace per trace id among ``spans`` (SDK spans or OTLP JSON span dicts)."""
    by_trace: dict[str, list[Span]] = {}
    for raw in spans:
        span = as_span(raw)
        by_trace.setdefault(span.trace_id, []).append(span)
    traces = [_trace(trace_id, sorted(group, key=lambda s: (s.start_ns, s.end_ns)))
              for trace_id, group in by_trace.items()]
    return _with_lost_parts(traces)


def _with_lost_parts(traces: list[OtelTrace]) -> list[OtelTrace]:
    """A rooted trace during which an orphaned trace began may be missing those calls:
    it says so. WHY by time alone: an orphan carries nothing else that names its parent;
    a bisect over the orphans' start times keeps this n log n."""
    starts = sorted(t.start_ns for t in traces if t.orphan)
    if not starts:
        return traces
    marked = []
    for t in traces:
        began = bisect.bisect_right(starts, t.end_ns) - bisect.bisect_left(starts, t.start_ns)
        if t.orphan or not began:
            marked.append(t)
            continue
        problem = (f"{began} orphaned trace(s) began while this trace ran: calls made in them may be missing "
                   f"here; fix: {ORPHAN_FIX}")
        marked.append(OtelTrace(t.trace_id, t.case_id, t.question, _problem(t.wire, problem), t.orphan,
                                t.start_ns, t.end_ns))
    return marked


def _problem(wire: dict[str, Any], problem: str) -> dict[str, Any]:
    return {**wire, "provenance": {**wire["provenance"], "problem": problem}}


# -- one trace -----------------------------------------------------------------------------


@dataclass
class _Trace:
    """A trace's spans (by start) with what is worked out once per span."""

    spans: list[Span]
    kinds: list[str]
    models: list[tuple[Span, Round]]  # by end: the rounds in order


def _trace(trace_id: str, spans: list[Span]) -> OtelTrace:
    kinds = [_kind(s) for s in spans]
    models = sorted(((s, read_round(s.attributes)) for s, k in zip(spans, kinds) if k == "model"),
                    key=lambda m: m[0].end_ns)
    parts = _Trace(spans, kinds, models)
    outer = _outer(parts)
    case_id = next((str(s.attributes[CASE_ID_ATTRIBUTE]) for s in spans if CASE_ID_ATTRIBUTE in s.attributes), None)
    orphan = _orphaned(parts, case_id)
    wire = _wire(parts, outer)
    wire["provenance"] = {"source": "spans", "via": _via(parts), "problem": orphan or _problem_of(parts)}
    return OtelTrace(trace_id=trace_id, case_id=case_id, question=_question(parts, outer), wire=wire,
                     orphan=orphan, start_ns=spans[0].start_ns if spans else 0,
                     end_ns=max((s.end_ns for s in spans), default=0))


def _wire(parts: _Trace, outer: list[Span]) -> dict[str, Any]:
    start = parts.spans[0].start_ns if parts.spans else 0
    steps: list[dict[str, Any]] = []
    found: list[tuple[str, str]] = []
    for span, kind in zip(parts.spans, parts.kinds):
        step = {"kind": kind, "name": span.name, "startMs": (span.start_ns - start) / 1e6,
                "durationMs": (span.end_ns - span.start_ns) / 1e6, "error": "error" if span.error else None}
        if kind == "tool":
            steps.append({**step, "name": _tool_name(span)})
        elif kind == "model":
            given, taken = _tokens(span)
            steps.append({**step, "name": _model(span) or span.name, "inputTokens": given, "outputTokens": taken})
        elif kind == "retrieval":
            found += _documents(span)
            steps.append(step)
    models = [m for m in (_model(s) for s, _ in parts.models) if m]
    return {"answer": _answer(parts, outer), "toolCalls": _calls(parts), "steps": steps,
            "model": models[-1] if models else "", "retrievedSources": [source for source, _ in found],
            "context": "\n\n".join(text for _, text in found if text),
            "usage": {"inputTokens": sum(s.get("inputTokens", 0) for s in steps),
                      "outputTokens": sum(s.get("outputTokens", 0) for s in steps)}}


def _kind(span: Span) -> str:
    return kind_of(span.attributes)


def kind_of(a: Mapping[str, Any]) -> str:
    """What a span with attributes ``a`` is: tool, model, retrieval, marker or other."""
    operation = a.get("gen_ai.operation.name")
    openinference = str(a.get("openinference.span.kind") or "").upper()
    if CUT_ATTRIBUTE in a or ORPHANS_ATTRIBUTE in a:
        return "marker"
    if operation == "execute_tool" or openinference == "TOOL":
        return "tool"
    if operation in _CHAT_OPERATIONS or openinference == "LLM" or a.get("llm.request.type") in _CHAT_REQUESTS:
        return "model"
    if openinference == "RETRIEVER":
        return "retrieval"
    return "other"


def _first(span: Span, *keys: str) -> Any:
    return next((span.attributes[k] for k in keys if span.attributes.get(k) not in (None, "")), None)


def _model(span: Span) -> str:
    return str(_first(span, "gen_ai.response.model", "gen_ai.request.model", "llm.model_name") or "")


def _tokens(span: Span) -> tuple[int, int]:
    return (_count(span, "gen_ai.usage.input_tokens", "llm.token_count.prompt", "gen_ai.usage.prompt_tokens"),
            _count(span, "gen_ai.usage.output_tokens", "llm.token_count.completion", "gen_ai.usage.completion_tokens"))


def _count(span: Span, *keys: str) -> int:
    key = next((k for k in keys if span.attributes.get(k) not in (None, "")), None)
    return whole_number(span.attributes[key], f"{span.origin}.attributes[{key}]") if key else 0


# -- the calls: tool spans, paired with what the model rounds asked for -----------------------


def _calls(parts: _Trace) -> list[dict[str, Any]]:
    """Every call once, in the order it happened: each tool span (with the request it
    answers), then each requested call no tool span ran, at the end of its round."""
    requests = _Requests(parts)
    tools, calls = _tool_calls(parts)
    paired = [requests.take_exact(call) for call in calls]
    paired = [asked or requests.take_by_name(call) for call, asked in zip(calls, paired)]
    results = {call_id: text for _, r in parts.models for call_id, text in r.results.items()}
    ends = [s.end_ns for s, _ in parts.models]
    timed: list[tuple[int, int, dict[str, Any]]] = []
    for n, (span, call, asked) in enumerate(zip(tools, calls, paired)):
        round_ = asked[0] if asked else (max(bisect.bisect_right(ends, span.start_ns) - 1, 0) if ends else None)
        timed.append((span.start_ns, n, _joined(call, asked[1] if asked else None, round_, results)))
    for n, (m, request) in enumerate(requests.left(), len(timed)):
        call = {"name": request.name, "arguments": parse_arguments(request.arguments), "result": "", "status": "ok",
                "id": request.call_id or None}
        timed.append((ends[m], n, _joined(call, None, m, results)))
    return [call for _, _, call in sorted(timed, key=lambda t: (t[0], t[1]))]


def _tool_calls(parts: _Trace) -> tuple[list[Span], list[dict[str, Any]]]:
    """The tool spans and their calls, less a second span of the same call: the same id,
    or a tool span directly inside one of the same name and arguments (two instrumentations
    of one call)."""
    spans: list[Span] = []
    calls: list[dict[str, Any]] = []
    ids: set[str] = set()
    keys: dict[str, tuple[str, str]] = {}
    for span, kind in zip(parts.spans, parts.kinds):
        if kind != "tool":
            continue
        call = _tool_call(span)
        key = (call["name"], _arguments_key(call["arguments"]))
        if (call["id"] and call["id"] in ids) or keys.get(span.parent_id) == key:
            continue
        if call["id"]:
            ids.add(call["id"])
        keys[span.span_id] = key
        spans.append(span)
        calls.append(call)
    return spans, calls


def _tool_name(span: Span) -> str:
    return str(_first(span, "gen_ai.tool.name", "tool.name") or span.name.removeprefix("execute_tool ").strip())


def _tool_arguments(span: Span) -> Any:
    # WHY not tool.parameters: in OpenInference that is the tool's schema, not this call's arguments
    return _first(span, "gen_ai.tool.call.arguments", "input.value", "tool_call.function.arguments")


def _tool_call(span: Span) -> dict[str, Any]:
    call_id = _first(span, "gen_ai.tool.call.id", "tool_call.id", "tool.id")
    return {"name": _tool_name(span), "arguments": parse_arguments(_tool_arguments(span)),
            "result": _tool_output(_first(span, "gen_ai.tool.call.result", "output.value")),
            "status": "error" if span.error else "ok", "id": str(call_id)[:200] if call_id else None}


def _joined(call: dict[str, Any], asked: Asked | None, round_: int | None,
            results: Mapping[str, str]) -> dict[str, Any]:
    """A call with what its request adds: the arguments when the tool span's are missing
    or unreadable, the id, the result a later round sent back when the span had none."""
    if asked is not None:
        requested = parse_arguments(asked.arguments)
        if requested and (not call["arguments"] or set(call["arguments"]) == {"_raw"}):
            call = {**call, "arguments": requested}
        call = {**call, "id": call["id"] or asked.call_id or None}
    if not call["result"] and call["id"]:
        call = {**call, "result": results.get(call["id"], "")}
    first = next(iter(call["arguments"].values()), None)
    return {**call, "argument": first if isinstance(first, str) else None,
            **({"round": round_} if round_ is not None else {})}


def _arguments_key(arguments: Mapping[str, Any]) -> str:
    try:
        return json.dumps(arguments, sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):  # keys of mixed types, values that are not JSON
        return repr([str(key) for key in arguments])


class _Requests:
    """The calls the model rounds asked for, each taken at most once: by id, else by name
    and arguments, else by name, first asked first taken. A tool span with an id takes a
    request with that id, or one without an id, never one with another id. WHY queues with
    a taken flag: every request is looked at a bounded number of times, so pairing stays linear."""

    def __init__(self, parts: _Trace) -> None:
        self.asked: list[tuple[int, Asked]] = []
        self.taken: list[bool] = []
        self.by_id: dict[str, int] = {}
        # [0]: every request, for a tool span without an id; [1]: those without an id
        self.by_key: tuple[dict[tuple[str, str], deque[int]], ...] = ({}, {})
        self.by_name: tuple[dict[str, deque[int]], ...] = ({}, {})
        ids: set[str] = set()
        keys_of: dict[str, set[tuple[str, str]]] = {}  # model span id: what it asked for
        by_start = sorted(range(len(parts.models)), key=lambda m: parts.models[m][0].start_ns)  # parents first
        for m in by_start:
            span, round_ = parts.models[m]
            keys_of[span.span_id] = set()
            for asked in round_.asked:
                key = (asked.name, _arguments_key(parse_arguments(asked.arguments)))
                keys_of[span.span_id].add(key)
                # WHY: one request on two spans of one model call (a framework's and the SDK's
                # instrumentor): the same id, or, without ids, the same call inside its parent's
                if asked.call_id in ids or (not asked.call_id and key in keys_of.get(span.parent_id, ())):
                    continue
                if asked.call_id:
                    ids.add(asked.call_id)
                self._add(m, asked, key)

    def _add(self, m: int, asked: Asked, key: tuple[str, str]) -> None:
        n = len(self.asked)
        self.asked.append((m, asked))
        self.taken.append(False)
        if asked.call_id:
            self.by_id.setdefault(asked.call_id, n)
        for anonymous in (False, True) if not asked.call_id else (False,):
            self.by_key[anonymous].setdefault(key, deque()).append(n)
            self.by_name[anonymous].setdefault(asked.name, deque()).append(n)

    def take_exact(self, call: Mapping[str, Any]) -> tuple[int, Asked] | None:
        """The request with the call's id, else one with its name and arguments."""
        if call["id"] and call["id"] in self.by_id:
            return self._take(self.by_id[call["id"]])
        if not call["arguments"]:
            return None
        return self._pop(self.by_key[bool(call["id"])].get((call["name"], _arguments_key(call["arguments"]))))

    def take_by_name(self, call: Mapping[str, Any]) -> tuple[int, Asked] | None:
        return self._pop(self.by_name[bool(call["id"])].get(call["name"]))

    def _pop(self, queue: deque[int] | None) -> tuple[int, Asked] | None:
        while queue:
            n = queue.popleft()
            if not self.taken[n]:
                return self._take(n)
        return None

    def _take(self, n: int) -> tuple[int, Asked] | None:
        if self.taken[n]:
            return None
        self.taken[n] = True
        return self.asked[n]

    def left(self) -> list[tuple[int, Asked]]:
        return [asked for asked, taken in zip(self.asked, self.taken) if not taken]


# -- what the trace is, and where its calls came from ---------------------------------------


def _outer(parts: _Trace) -> list[Span]:
    """Spans that are neither a tool, a model round nor a retrieval (the agent's
    own and a framework's chains), outermost first."""
    depth = _depths(parts.spans)
    return sorted((s for s, k in zip(parts.spans, parts.kinds) if k == "other"), key=lambda s: depth[s.span_id])


def _depths(spans: list[Span]) -> dict[str, int]:
    """Each span's number of ancestors in the trace. WHY a walk that stops at a known
    depth: a long chain costs its length once, not once per span; a cycle of parent
    ids (a broken file) stops where it closes and counts from there."""
    parent = {s.span_id: s.parent_id for s in spans}
    depth: dict[str, int] = {}
    for span in spans:
        path: list[str] = []
        on_path: set[str] = set()
        at = span.span_id
        while at in parent and at not in depth and at not in on_path:
            path.append(at)
            on_path.add(at)
            at = parent[at]
        level = depth[at] + 1 if at in depth else 0
        for span_id in reversed(path):
            depth[span_id] = level
            level += 1
    return depth


def _orphaned(parts: _Trace, case_id: str | None) -> str:
    """ORPHANED when the trace holds model or tool spans but no case id and no root
    agent span (a root: a span whose parent is not in the trace)."""
    if case_id is not None or "marker" in parts.kinds or not any(k in ("model", "tool") for k in parts.kinds):
        return ""  # (a marker: capture's, of a case's trace)
    ids = {s.span_id for s in parts.spans}
    rooted = any(k == "other" and (not s.parent_id or s.parent_id not in ids) for s, k in zip(parts.spans, parts.kinds))
    return "" if rooted else ORPHANED


def _via(parts: _Trace) -> str:
    """The conventions the calls and rounds were read in: openinference, genai, or both."""
    found = set()
    for span, kind in zip(parts.spans, parts.kinds):
        if kind in ("model", "tool"):
            if "openinference.span.kind" in span.attributes:
                found.add("openinference")
            elif any(key.startswith("gen_ai.") for key in span.attributes):
                found.add("genai")
    return "+".join(sorted(found))


def _problem_of(parts: _Trace) -> str:
    """Why the trace is not the case's whole trace, from capture's marker spans or its
    lack of any model or tool span; "" when it is whole as far as can be told."""
    a: dict[str, Any] = {}
    for span, kind in zip(parts.spans, parts.kinds):
        if kind == "marker":
            a.update(span.attributes)
    if CUT_ATTRIBUTE in a:
        return (f"the trace was cut at the span cap ({a[CUT_ATTRIBUTE]} more span(s) were dropped): it is not "
                "whole, so its calls are not graded; make the case smaller or its spans fewer")
    if ORPHANS_ATTRIBUTE in a:
        return (f"{a[ORPHANS_ATTRIBUTE]} span(s) with no parent began in other traces while this case ran: "
                f"calls made there are missing here; fix: {ORPHAN_FIX}")
    if not any(k in ("model", "tool") for k in parts.kinds):
        return ("the trace holds no model or tool span: what the agent called was not recorded (instrument its "
                "model client, e.g. OpenInference's OpenAIInstrumentor, or its tools)")
    if "tool" not in parts.kinds and any(not r.said and not s.error for s, r in parts.models):
        return SILENT_MODEL_SPANS
    return ""


def _documents(span: Span) -> list[tuple[str, str]]:
    found = []
    for document in indexed_items(span.attributes, "retrieval.documents.")[:1000]:
        source = document.get("document.id") or document.get("document.metadata") or ""
        found.append((str(source)[:500], str(document.get("document.content") or "")))
    return found


def _answer(parts: _Trace, outer: list[Span]) -> str:
    """The outermost agent span's output, else the last model round's text."""
    for span in outer:
        value = _first(span, "output.value", "gen_ai.output.text")
        if isinstance(value, str) and value:
            return _unwrap(value)
    return next((round_.text for _, round_ in reversed(parts.models) if round_.text), "")


def _question(parts: _Trace, outer: list[Span]) -> str:
    """The outermost agent span's input, else the first model round's first user message."""
    for span in outer:
        value = _first(span, "input.value", "gen_ai.input.text")
        if isinstance(value, str) and value:
            return _unwrap(value, last=False)
    by_start = sorted(parts.models, key=lambda m: m[0].start_ns)
    return next((round_.question for _, round_ in by_start if round_.question), "")


def _tool_output(value: Any) -> str:
    """A tool span's output as the text the model saw. LangChain's instrumentor
    records the whole ToolMessage as JSON (``{"type": "tool", "data": {"content": ...}}``)."""
    if not isinstance(value, str):
        return text_of(value)
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return value
    message = parsed.get("data", parsed) if isinstance(parsed, Mapping) else None
    if isinstance(message, Mapping) and message.get("type") == "tool" and "content" in message:
        return text_of(message["content"])
    return value


def _unwrap(value: str, last: bool = True) -> str:
    """An ``input.value``/``output.value`` that is JSON holding one text (a
    framework's ``{"input": "..."}``, or a message list whose first message is
    the question and last the answer) gives that text; plain text is itself."""
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return value
    if nested_deeper(parsed, 64):  # WHY: reading a text out of it recurses
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
