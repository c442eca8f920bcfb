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
import re
from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping

from tracegrade.core.from_messages import nested_deeper, text_of
from tracegrade.core.span_calls import Parts, read_calls
from tracegrade.core.span_messages import Round, indexed_items, read_round
from tracegrade.core.span_tools import first, is_object_repr, is_traceloop_tool, tool_name
from tracegrade.core.spans import MAX_SPANS, Span, SpanFormatError, as_span, spans_of_otlp_json, whole_number

__all__ = ["CASE_ID_ATTRIBUTE", "MAX_SPANS", "OtelTrace", "Span", "SpanFormatError", "as_span", "otel_traces",
           "spans_of_otlp_json"]

CASE_ID_ATTRIBUTE = "tracegrade.case_id"
# Marker spans capture adds to a case's spans (agent/capture/otel.py): how many spans were
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
    is no case's own ("" when it has a root agent span or a case id);
    ``conversation`` is the session or conversation id its spans carry ("" when none);
    ``trace_ids`` the trace ids it was read from (several: fragments of one conversation)."""

    trace_id: str
    case_id: str | None
    question: str
    wire: dict[str, Any]
    orphan: str = ""
    start_ns: int = 0
    end_ns: int = 0
    conversation: str = ""
    trace_ids: tuple[str, ...] = ()


# The attributes that name a conversation (GenAI, OpenInference, OpenLLMetry's association
# property, Langfuse): what joins a trace's parts and a conversation's turns
CONVERSATION_ATTRIBUTES = ("gen_ai.conversation.id", "session.id", "traceloop.association.properties.session_id",
                           "langfuse.session.id")


def otel_traces(spans: Iterable[Any]) -> list[OtelTrace]:
    """One OtelTrace per trace id among ``spans`` (SDK spans or OTLP JSON span dicts);
    orphaned traces (no root agent span, no case id) that carry one conversation id are
    one trace: an instrumentation with no span around the agent makes each model call a
    trace of its own, and only their conversation id says they belong together."""
    by_trace: dict[str, list[Span]] = {}
    seen: dict[tuple[str, str], Span] = {}
    for raw in spans:
        span = as_span(raw)
        first = seen.get((span.trace_id, span.span_id))
        if first is not None and _same(first, span):
            continue  # WHY: a collector that delivers at least once can write a span twice; it is one span
        seen.setdefault((span.trace_id, span.span_id), span)
        by_trace.setdefault(span.trace_id, []).append(span)
    groups: dict[str, list[str]] = {}
    for trace_id, group in by_trace.items():
        conversation = _conversation(group)
        rooted = _orphaned(group, [_kind(s) for s in group], _case_id(group)) == ""
        groups.setdefault(f"c:{conversation}" if conversation and not rooted else f"t:{trace_id}", []).append(trace_id)
    traces = []
    for key, trace_ids in groups.items():
        group = sorted((s for t in trace_ids for s in by_trace[t]), key=lambda s: (s.start_ns, s.end_ns))
        traces.append(_trace(trace_ids, group, joined=key.startswith("c:")))
    return _with_lost_parts(traces)


def _same(one: Span, other: Span) -> bool:
    """Whether two spans with one id are one span written twice (all but where they were read)."""
    return replace(one, origin="") == replace(other, origin="")


def _conversation(spans: list[Span]) -> str:
    return next((str(s.attributes[k])[:200] for s in spans for k in CONVERSATION_ATTRIBUTES
                 if s.attributes.get(k) not in (None, "")), "")


def _case_id(spans: list[Span]) -> str | None:
    return next((str(s.attributes[CASE_ID_ATTRIBUTE]) for s in spans if CASE_ID_ATTRIBUTE in s.attributes), None)


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
        marked.append(replace(t, wire=_problem(t.wire, problem)))
    return marked


def _problem(wire: dict[str, Any], problem: str) -> dict[str, Any]:
    return {**wire, "provenance": {**wire["provenance"], "problem": problem}}


# -- one trace -----------------------------------------------------------------------------


def _trace(trace_ids: list[str], spans: list[Span], joined: bool = False) -> OtelTrace:
    """``joined``: the trace is orphaned fragments one conversation id joins (no root of its own)."""
    kinds = [_kind(s) for s in spans]
    read = [read_round(s.attributes, s.events) if k == "model" else None for s, k in zip(spans, kinds)]
    kinds = _without_preparations(spans, kinds, read)
    models = sorted(((s, r) for s, k, r in zip(spans, kinds, read) if k == "model" and r is not None),
                    key=lambda m: m[0].end_ns)
    parts = Parts(spans, kinds, models, _rounds(models))
    outer = _outer(parts)
    case_id = _case_id(spans)
    orphan = "" if joined else _orphaned(spans, kinds, case_id)
    calls = read_calls(parts)
    wire = _wire(parts, outer, calls.calls, calls.answer)
    wire["provenance"] = {"source": "spans", "via": _via(parts), "problem": orphan or calls.problem or _problem_of(parts)}
    return OtelTrace(trace_id=trace_ids[0], case_id=case_id, question=_question(parts, outer), wire=wire,
                     orphan=orphan, start_ns=spans[0].start_ns if spans else 0,
                     end_ns=max((s.end_ns for s in spans), default=0), conversation=_conversation(spans),
                     trace_ids=tuple(trace_ids))


def _without_preparations(spans: list[Span], kinds: list[str], read: list[Round | None]) -> list[str]:
    """The kinds, with a framework's preparation step (a model span that holds no message
    and no tokens, followed under the same parent by a model span that holds the call:
    LlamaIndex's ``_prepare_chat_with_tools``) as ``prepared``: it is no model call, and
    no evidence that content went unrecorded."""
    said_from: dict[str, int] = {}  # parent id: the latest start of a model span under it that said something
    for span, r in zip(spans, read):
        if r is not None and r.said:
            said_from[span.parent_id] = max(said_from.get(span.parent_id, -1), span.start_ns)
    return ["prepared" if r is not None and not r.said and not r.via and _tokens(span) == (0, 0)
            and said_from.get(span.parent_id, -1) >= span.start_ns else kind
            for span, kind, r in zip(spans, kinds, read)]


def _rounds(models: list[tuple[Span, Round]]) -> list[int]:
    """Each model span's round: model calls numbered in the order they ended, a model span
    inside another (one call recorded by a framework and by the SDK's instrumentor) taking
    its outer span's number."""
    index = {span.span_id: m for m, (span, _) in enumerate(models)}
    outer = []
    for span, _ in models:
        at, seen = span, 0
        while at.parent_id in index and seen < 64:  # WHY a bound: a cycle of parent ids in a broken file
            at, seen = models[index[at.parent_id]][0], seen + 1
        outer.append(index[at.span_id])
    number: dict[int, int] = {}
    for m in sorted(set(outer)):
        number[m] = len(number)
    return [number[m] for m in outer]


def _wire(parts: Parts, outer: list[Span], calls: list[dict[str, Any]], terminal: str) -> dict[str, Any]:
    start = parts.spans[0].start_ns if parts.spans else 0
    steps: list[dict[str, Any]] = []
    found: list[tuple[str, str]] = []
    inner = _inner_tokens(parts)
    for span, kind in zip(parts.spans, parts.kinds):
        step = {"kind": kind, "name": span.name, "startMs": (span.start_ns - start) / 1e6,
                "durationMs": (span.end_ns - span.start_ns) / 1e6, "error": "error" if span.error else None}
        if kind == "tool":
            steps.append({**step, "name": tool_name(span)})
        elif kind == "model" and span.span_id in inner:
            given, taken = max(_tokens(span), inner[span.span_id])
            steps.append({**step, "name": _model(span) or span.name, "inputTokens": given, "outputTokens": taken})
        elif kind == "retrieval":
            found += _documents(span)
            steps.append(step)
    models = [m for m in (_model(s) for s, _ in parts.models) if m]
    return {"answer": _answer(parts, outer) or terminal, "toolCalls": calls, "steps": steps,
            "model": models[-1] if models else "", "retrievedSources": [source for source, _ in found],
            "context": "\n\n".join(text for _, text in found if text),
            "usage": {"inputTokens": sum(s.get("inputTokens", 0) for s in steps),
                      "outputTokens": sum(s.get("outputTokens", 0) for s in steps)}}


def _inner_tokens(parts: Parts) -> dict[str, tuple[int, int]]:
    """Each outermost model span of a round (a step of its own) with the most tokens a span of
    its round counted: one call recorded twice is counted once."""
    outermost: dict[int, str] = {}
    tokens: dict[int, tuple[int, int]] = {}
    for (span, _), round_ in zip(parts.models, parts.round_of):
        outermost[round_] = span.span_id  # WHY the last: by end, the outer span ends after those inside it
        tokens[round_] = max(tokens.get(round_, (0, 0)), _tokens(span))
    return {span_id: tokens[round_] for round_, span_id in outermost.items()}


def _kind(span: Span) -> str:
    return kind_of(span.attributes)


def kind_of(a: Mapping[str, Any]) -> str:
    """What a span with attributes ``a`` is: tool, model, retrieval, marker or other."""
    operation = a.get("gen_ai.operation.name")
    openinference = str(a.get("openinference.span.kind") or "").upper()
    if CUT_ATTRIBUTE in a or ORPHANS_ATTRIBUTE in a:
        return "marker"
    if operation == "execute_tool" or openinference == "TOOL" or is_traceloop_tool(a):
        return "tool"
    if operation in _CHAT_OPERATIONS or openinference == "LLM" or a.get("llm.request.type") in _CHAT_REQUESTS:
        return "model"
    if openinference == "RETRIEVER":
        return "retrieval"
    return "other"


def _model(span: Span) -> str:
    return str(first(span, "gen_ai.response.model", "gen_ai.request.model", "llm.model_name") or "")


def _tokens(span: Span) -> tuple[int, int]:
    return (_count(span, "gen_ai.usage.input_tokens", "llm.token_count.prompt", "gen_ai.usage.prompt_tokens"),
            _count(span, "gen_ai.usage.output_tokens", "llm.token_count.completion", "gen_ai.usage.completion_tokens"))


def _count(span: Span, *keys: str) -> int:
    key = next((k for k in keys if span.attributes.get(k) not in (None, "")), None)
    return whole_number(span.attributes[key], f"{span.origin}.attributes[{key}]") if key else 0


# -- what the trace is, and where its calls came from ---------------------------------------


def _outer(parts: Parts) -> list[Span]:
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


def _orphaned(spans: list[Span], kinds: list[str], case_id: str | None) -> str:
    """ORPHANED when the trace holds model or tool spans but no case id and no root
    agent span (a root: a span whose parent is not in the trace)."""
    if case_id is not None or "marker" in kinds or not any(k in ("model", "tool") for k in kinds):
        return ""  # (a marker: capture's, of a case's trace)
    ids = {s.span_id for s in spans}
    rooted = any(k == "other" and (not s.parent_id or s.parent_id not in ids) for s, k in zip(spans, kinds))
    return "" if rooted else ORPHANED


def _via(parts: Parts) -> str:
    """The conventions the calls and rounds were read in: openinference, genai, or both."""
    found = set()
    for span, kind in zip(parts.spans, parts.kinds):
        if kind in ("model", "tool"):
            if "openinference.span.kind" in span.attributes:
                found.add("openinference")
            elif any(key.startswith("gen_ai.") for key in span.attributes):
                found.add("genai")
    return "+".join(sorted(found))


def _problem_of(parts: Parts) -> str:
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
    if "tool" not in parts.kinds and _silent_round(parts):
        return SILENT_MODEL_SPANS
    return ""


def _silent_round(parts: Parts) -> bool:
    """Whether some model round has no span that holds its messages. WHY by round: a second
    instrumentation of the same call (GenAI's without content beside OpenInference's) or a
    framework's preparation span says nothing, while the round's other span says it all."""
    rounds = list(zip(parts.models, parts.round_of))
    said = {round_ for (span, read), round_ in rounds if read.said or span.error}
    return any(round_ not in said for _, round_ in rounds)


def _documents(span: Span) -> list[tuple[str, str]]:
    found = []
    for document in indexed_items(span.attributes, "retrieval.documents.")[:1000]:
        source = document.get("document.id") or document.get("document.metadata") or ""
        found.append((str(source)[:500], str(document.get("document.content") or "")))
    return found


def _answer(parts: Parts, outer: list[Span]) -> str:
    """The outermost agent span's output, else the last model round's text."""
    for span in outer:
        value = first(span, "output.value", "gen_ai.output.text", "traceloop.entity.output")
        if isinstance(value, str) and (text := _unwrap(value)):
            return text
    return next((round_.text for _, round_ in reversed(parts.models) if round_.text), "")


def _question(parts: Parts, outer: list[Span]) -> str:
    """The outermost agent span's input, else the first model round's first user message."""
    for span in outer:
        value = first(span, "input.value", "gen_ai.input.text", "traceloop.entity.input")
        if isinstance(value, str) and (text := _unwrap(value, last=False)):
            return text
    by_start = sorted(parts.models, key=lambda m: m[0].start_ns)
    return next((round_.question for _, round_ in by_start if round_.question), "")


# A framework's event or result object written as its repr: ``StopEvent(result=...)``,
# ``AgentInput(input=[...])``; never a question or an answer
# (instrumentations cut a long value, so its start decides: a class name, then a keyword argument)
_CALL_REPR = re.compile(r"[A-Z][A-Za-z0-9_]{0,80}\((?:[a-z_][a-z0-9_]*=|\)$)", re.ASCII)


def _unwrap(value: str, last: bool = True) -> str:
    """An ``input.value``/``output.value`` that is JSON holding one text (a
    framework's ``{"input": "..."}``, or a message list whose first message is
    the question and last the answer) gives that text; plain text is itself;
    an object's repr, or JSON that holds no one text, gives "" (not a question or answer)."""
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return "" if _is_repr(value) else value
    if nested_deeper(parsed, 64):  # WHY: reading a text out of it recurses
        return value
    if isinstance(parsed, str):
        return "" if _is_repr(parsed) else parsed
    if isinstance(parsed, Mapping):
        messages = parsed.get("messages")
        if isinstance(messages, list) and messages:
            text = _message_content(messages[-1] if last else messages[0])
            return "" if _is_repr(text) else text
        texts = [v for v in parsed.values() if isinstance(v, str) and not _is_repr(v)]
        return texts[0] if len(texts) == 1 else ""
    return "" if isinstance(parsed, list) else value


def _is_repr(text: str) -> bool:
    return is_object_repr(text) or _CALL_REPR.match(text.strip()[:200]) is not None


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
