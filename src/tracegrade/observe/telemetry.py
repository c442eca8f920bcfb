"""OpenTelemetry spans for agent requests and eval runs, and where they go.

    >>> from tracegrade.core.trace import Reply, Step
    >>> telemetry, memory = memory_telemetry()
    >>> info = RequestInfo(question="How long do returns take?", started_ns=0, ended_ns=5_000_000, model="m1")
    >>> record_request(telemetry.tracer, info, Reply(answer="30 days.", steps=(Step(kind="model", name="round 1"),)))
    >>> [span.name for span in memory.get_finished_spans()]
    ['chat m1', 'agent_request']

Span trees. Names and kinds follow the OpenTelemetry GenAI semantic conventions
(docs/observability.md says which version): ``{gen_ai.operation.name} {subject}``;
attributes are ``gen_ai.*`` where the conventions define one, ``tracegrade.*``
where they do not:

    agent_request          SERVER    one production request (gen_ai.operation.name invoke_agent)
    ├── retrieval SOURCE   CLIENT    the documents retrieved
    ├── chat MODEL         CLIENT    one per model round
    ├── execute_tool NAME  INTERNAL  one per tool call, with gen_ai.tool.call.id
    │   └── approval       INTERNAL  when the call ended as a draft for the customer
    └── chat MODEL         CLIENT    the round that produced the answer

    eval_run -> case -> invoke_agent AGENT (the steps above below it) -> checks -> chat JUDGE_MODEL

WHY the request tree is built from the Reply after the request, not by
instrumenting the agent loop: the Reply's steps already carry each step's
start and duration, so any agent that honours the trace contract (ShopNest,
or an agent in another language behind HTTP) gets the same spans with no
tracing code of its own, and one function serves production and eval runs.
The cost: a request that raises has no Reply, so it is recorded as the root
span with its error only.

Every exporter sits behind a RedactingExporter: secrets and personal data are
replaced before any span is stored or sent, whoever created the span.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

from opentelemetry import trace as otel
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode, Tracer

from tracegrade.core.names import (
    APPROVAL_SPAN, CASE_SPAN, CHAT, CHECKS_SPAN, EVAL_RUN_SPAN, EXECUTE_TOOL, INVOKE_AGENT, OPERATION, REQUEST_SPAN,
    RETRIEVAL, genai_span_name, tool_call_id,
)

from tracegrade.core.redact import redact
from tracegrade.observe.clock import CaseTimes, SpanClock  # noqa: F401  (SpanClock: re-exported for agents that time their requests)
from tracegrade.observe.destinations import named_spans_db, otlp_destination
from tracegrade.observe.spanbatch import SpanBatch
from tracegrade.core.trace import Reply, Step, ToolCall

if TYPE_CHECKING:
    from tracegrade.models.base import ChatModel

# What spans are started on: an application's live tracer, or our own batch of
# finished spans (tracegrade.observe.spanbatch), which has the same start_span.
SpanMaker = otel.Tracer | SpanBatch

DEFAULT_SPANS_DB = Path(".tracegrade/spans.db")
# Environment variables whose values are secrets wherever they show up.
SECRET_ENV = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SHOPNEST_API_TOKEN", "TRACEGRADE_MONITOR_TOKEN",
              "TRACEGRADE_TARGET_TOKEN")
_PROVIDERS = {"LocalModel": "llama.cpp", "OpenAIModel": "openai", "AnthropicModel": "anthropic",
              "ScriptedModel": "scripted"}
_INJECTION = ("ignore all previous", "ignore previous", "ignore the above", "disregard your rules",
              "system:", "you are now")


@dataclass(frozen=True)
class RequestInfo:
    """What the caller of an agent knows about one request besides the Reply."""

    question: str
    started_ns: int
    ended_ns: int
    customer_id: str = ""
    agent_name: str = "agent"  # the gen_ai.agent.name attribute; each agent passes its own
    prompt_version: str = ""
    model: str = ""
    provider: str = ""
    allowed_tools: tuple[str, ...] = ()  # empty: every tool is allowed
    faults: Mapping[str, str] = field(default_factory=dict)


def provider_name(model: object) -> str:
    """The GenAI ``provider.name`` of a ChatModel (``llama.cpp`` for the local one)."""
    return getattr(model, "provider", None) or _PROVIDERS.get(type(model).__name__, type(model).__name__)


def hash_customer(customer_id: str, salt: str | None = None) -> str:
    """An anonymised, stable customer id. Set ``TRACEGRADE_CUSTOMER_SALT``: short ids
    like ``C-100`` are guessable from an unsalted hash."""
    if not customer_id:
        return ""
    key = (salt if salt is not None else os.environ.get("TRACEGRADE_CUSTOMER_SALT", "")).encode()[:64]
    return "cust-" + hashlib.blake2b(customer_id.encode(), key=key, digest_size=8).hexdigest()


def looks_like_injection(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in _INJECTION)


# --- request spans --------------------------------------------------------------


def record_request(
    tracer: otel.Tracer, info: RequestInfo, reply: Reply | None = None, error: BaseException | None = None
) -> None:
    """Emit one ``agent_request`` tree for a finished request (reply) or a failed one (error)."""
    root = tracer.start_span(REQUEST_SPAN, start_time=info.started_ns, kind=otel.SpanKind.SERVER,
                             attributes=_request_attributes(info, reply))
    if reply is not None:
        add_reply_spans(tracer, reply, info.started_ns, info, parent=root)
    if error is not None:
        root.set_attributes({"tracegrade.status": "error", "error.type": type(error).__name__,
                             "tracegrade.error": str(error)})
        root.set_status(Status(StatusCode.ERROR, type(error).__name__))
    root.end(end_time=info.ended_ns)


def _request_attributes(info: RequestInfo, reply: Reply | None) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        OPERATION: INVOKE_AGENT,
        "gen_ai.agent.name": info.agent_name,
        "gen_ai.provider.name": info.provider,
        "gen_ai.request.model": info.model,
        "tracegrade.prompt_version": info.prompt_version,
        "tracegrade.customer.hash": hash_customer(info.customer_id),
        "tracegrade.question": info.question,
        "tracegrade.latency_ms": round((info.ended_ns - info.started_ns) / 1e6, 1),
        "tracegrade.status": "ok",
        "tracegrade.guardrail.injection": int(looks_like_injection(info.question)),
    }
    if info.faults:
        attributes["tracegrade.injected_faults"] = json.dumps(dict(info.faults), sort_keys=True)
    if reply is not None:
        attributes.update(_reply_summary(reply, info.allowed_tools))
        if any(looks_like_injection(call.result) for call in reply.tool_calls):
            attributes["tracegrade.guardrail.injection"] = 1
    return attributes


def _reply_summary(reply: Reply, allowed_tools: Sequence[str]) -> dict[str, Any]:
    calls = reply.tool_calls
    repeats = Counter((c.name, json.dumps(c.arguments, sort_keys=True)) for c in calls)
    return {
        "gen_ai.response.model": reply.model,
        "gen_ai.usage.input_tokens": reply.usage.input_tokens,
        "gen_ai.usage.output_tokens": reply.usage.output_tokens,
        "tracegrade.cost_usd": reply.usage.cost_usd,
        "tracegrade.answer": reply.answer,
        "tracegrade.route": reply.route or "",
        "tracegrade.steps": sum(1 for s in reply.steps if s.kind != "retrieval"),
        "tracegrade.retries": sum(s.retries for s in reply.steps),
        "tracegrade.tool_calls": len(calls),
        "tracegrade.duplicate_calls": sum(n - 1 for n in repeats.values()),
        "tracegrade.tool_failures": sum(c.status == "error" for c in calls),
        "tracegrade.guardrail.denied": sum(c.status == "denied" for c in calls),
        "tracegrade.guardrail.forbidden": sum(bool(allowed_tools) and c.name not in allowed_tools for c in calls),
        "tracegrade.approvals.asked": sum(c.status == "needs_approval" for c in calls),
    }


def add_reply_spans(
    tracer: SpanMaker, reply: Reply, base_ns: int, info: RequestInfo | None = None,
    parent: otel.Span | None = None,
) -> None:
    """Child spans for the Reply's steps, timed from ``base_ns``, under ``parent``
    (default: the current span), named and kinded as the GenAI conventions say."""
    context = otel.set_span_in_context(parent) if parent is not None else None
    info = info or RequestInfo(question="", started_ns=base_ns, ended_ns=base_ns, model=reply.model)
    calls = iter(enumerate(reply.tool_calls))
    for step in reply.steps:
        start = base_ns + int(step.start_ms * 1e6)
        end = start + int(step.duration_ms * 1e6)
        if step.kind == "retrieval":
            _span(tracer, genai_span_name(RETRIEVAL, step.name), otel.SpanKind.CLIENT, context, start, end, step,
                  _retrieval_attributes(reply, step, info))
        elif step.kind == "model":
            attributes = _model_attributes(reply, step, info)
            _span(tracer, genai_span_name(CHAT, attributes["gen_ai.request.model"]), otel.SpanKind.CLIENT, context,
                  start, end, step, attributes)
        else:
            index, call = next(calls, (len(reply.tool_calls), None))
            call = call if call is not None and call.name == step.name else None
            span = _span(tracer, genai_span_name(EXECUTE_TOOL, step.name), otel.SpanKind.INTERNAL, context, start,
                         end, step, _tool_attributes(step, index, call, info), end_now=False)
            if step.kind == "approval":
                approval = tracer.start_span(APPROVAL_SPAN, context=otel.set_span_in_context(span), start_time=end,
                                             attributes={"tracegrade.approval.state": "asked",
                                                         "gen_ai.tool.name": step.name})
                approval.end(end_time=end)
            span.end(end_time=end)


def _span(tracer: SpanMaker, name: str, kind: otel.SpanKind, context: Context | None, start: int, end: int, step: Step,
          attributes: dict[str, Any], end_now: bool = True) -> otel.Span:
    span = tracer.start_span(name, context=context, kind=kind, start_time=start, attributes=attributes)
    span.set_attribute("tracegrade.latency_ms", step.duration_ms)
    if step.error:
        span.set_attributes({"error.type": f"{step.kind}_error", "tracegrade.error": step.error})
        span.set_status(Status(StatusCode.ERROR, f"{step.kind}_error"))
    if end_now:
        span.end(end_time=end)
    return span


def _retrieval_attributes(reply: Reply, step: Step, info: RequestInfo) -> dict[str, Any]:
    documents = [{"id": s, "score": score} for s, score in zip(reply.retrieved_sources, reply.retrieval_scores)]
    return {
        OPERATION: RETRIEVAL,
        "gen_ai.data_source.id": step.name,
        "gen_ai.retrieval.query.text": info.question,
        "gen_ai.retrieval.documents": json.dumps(documents),
        "tracegrade.retrieval.sources": list(reply.retrieved_sources),
        "tracegrade.retrieval.context": reply.context,
    }


def _model_attributes(reply: Reply, step: Step, info: RequestInfo) -> dict[str, Any]:
    return {
        OPERATION: CHAT,
        "gen_ai.provider.name": info.provider,
        "gen_ai.request.model": info.model or reply.model,
        "gen_ai.response.model": reply.model,
        "gen_ai.usage.input_tokens": step.input_tokens,
        "gen_ai.usage.output_tokens": step.output_tokens,
        "tracegrade.round": step.name,
        "tracegrade.retries": step.retries,
    }


def _tool_attributes(step: Step, index: int, call: ToolCall | None, info: RequestInfo) -> dict[str, Any]:
    attributes: dict[str, Any] = {OPERATION: EXECUTE_TOOL, "gen_ai.tool.name": step.name, "gen_ai.tool.type": "function"}
    if call is None:
        attributes["gen_ai.tool.call.id"] = tool_call_id(index)
        return attributes
    attributes.update({
        "gen_ai.tool.call.id": call.id or tool_call_id(index),
        "gen_ai.tool.call.arguments": json.dumps(call.arguments, sort_keys=True),
        "gen_ai.tool.call.result": call.result,
        "tracegrade.tool.argument": call.argument or "",
        "tracegrade.tool.status": call.status,
        "tracegrade.guardrail": "denied" if call.status == "denied"
        else "forbidden" if info.allowed_tools and call.name not in info.allowed_tools else "",
    })
    return attributes


# --- eval-run spans -------------------------------------------------------------

_ACTIVE: Telemetry | None = None


def activate(telemetry: Telemetry | None) -> None:
    """Make ``telemetry`` the one library code (the runner) reports to; None turns
    it back to the global OpenTelemetry API, which records nothing unless an
    application installed an SDK provider there."""
    global _ACTIVE
    _ACTIVE = telemetry


def library_tracer(name: str) -> Tracer | None:
    """The tracer library code reports to, or None when no span exporter or store
    is on: then a caller builds no spans at all, not even no-op ones."""
    if _ACTIVE is not None:
        return _ACTIVE.tracer
    provider = otel.get_tracer_provider()
    if isinstance(provider, (otel.ProxyTracerProvider, otel.NoOpTracerProvider)):
        return None
    return provider.get_tracer(name)


@contextlib.contextmanager
def eval_run_spans(manifest: Any, spans_db: Path | None = None) -> Iterator[None]:
    """An ``eval_run`` span around a run, its cases below it, exported over OTLP
    when a collector is configured, and into a local span store only when one is
    named (``spans_db``, or a path in ``TRACEGRADE_SPANS_DB``).

    WHY no local store by default, unlike a server's requests: the run store
    already keeps every case's trace with its timings, and nothing reads eval
    spans back from the local store (the monitor shows production requests), so
    by default it would be a second copy (~1 KB a case) that costs a fifth of a
    checks-only run's CPU."""
    named = spans_db or named_spans_db()
    telemetry = open_telemetry("tracegrade", named, local_store=named is not None)
    if not telemetry.exporting:  # no store named and no collector: build no spans at all
        yield
        return
    activate(telemetry)
    attributes = {"tracegrade.run.id": manifest.run_id, "tracegrade.dataset": manifest.dataset,
                  "tracegrade.dataset.version": manifest.dataset_version, "gen_ai.request.model": manifest.agent_model,
                  "tracegrade.judge.model": manifest.judge_model or "", "tracegrade.prompt_version": manifest.prompt_version}
    try:
        with telemetry.tracer.start_as_current_span(EVAL_RUN_SPAN, attributes=attributes):
            yield
    finally:
        activate(None)
        telemetry.shutdown()


def record_case(result: Any, times: CaseTimes, target: object = None, judge_model: ChatModel | None = None) -> None:
    """The spans of one finished case (a CaseResult), built at once after it and
    only when a span exporter or store is on: ``case`` -> ``invoke_agent`` (the
    reply's steps below it) -> ``checks`` -> ``chat {judge model}``."""
    # Our own telemetry: the spans as finished data, emitted together (tracegrade.observe.spanbatch);
    # an application's global provider: its live tracer.
    batch = SpanBatch(_ACTIVE.provider, _ACTIVE.processors) if _ACTIVE is not None and _ACTIVE.processors else None
    tracer = batch or library_tracer("tracegrade.run.runner")
    if tracer is None:
        return
    start = times.clock.started_ns
    agent_end = times.ends.get("agent", start)
    case = tracer.start_span(CASE_SPAN, start_time=start, attributes=_case_attributes(result))
    context = otel.set_span_in_context(case)
    _agent_spans(tracer, context, result, start, agent_end, target)
    if "checks" in times.ends:
        checks = tracer.start_span(CHECKS_SPAN, context=context, start_time=agent_end,
                                   attributes=checks_attributes(result.checks))
        checks.end(end_time=times.ends["checks"])
    if "judge" in times.ends and judge_model is not None:
        judge = tracer.start_span(genai_span_name(CHAT, judge_model.model_id), context=context,
                                  kind=otel.SpanKind.CLIENT, start_time=times.ends.get("checks", agent_end),
                                  attributes=judge_attributes(result, judge_model))
        judge.end(end_time=times.ends["judge"])
    if result.status == "error":
        case.set_status(Status(StatusCode.ERROR, "case_error"))
    case.end(end_time=max([start, *times.ends.values()]))
    if batch is not None:
        batch.emit()


def _case_attributes(result: Any) -> dict[str, Any]:
    attributes = {"tracegrade.case.id": result.case_id, "tracegrade.case.split": result.split,
                  "tracegrade.case.category": result.category, "tracegrade.case.repeat": result.repeat,
                  "tracegrade.status": result.status, "tracegrade.latency_ms": round(result.seconds * 1000, 1)}
    if result.status == "error":
        attributes["tracegrade.error"] = result.error
    return attributes


def _agent_spans(tracer: SpanMaker, context: Context, result: Any, start: int, end: int, target: object) -> None:
    model = getattr(target, "model", None)
    info = RequestInfo(question=result.question, started_ns=start, ended_ns=end,
                       agent_name=getattr(target, "agent_name", "") or getattr(target, "__name__", "agent"),
                       model=getattr(target, "model_id", ""), provider=provider_name(model) if model else "")
    agent = tracer.start_span(genai_span_name(INVOKE_AGENT, info.agent_name), context=context, start_time=start,
                              attributes={OPERATION: INVOKE_AGENT, "gen_ai.agent.name": info.agent_name,
                                          "gen_ai.request.model": info.model})
    if result.reply is not None:
        add_reply_spans(tracer, result.reply, start, info, parent=agent)
    else:  # the agent raised or timed out: the case's error says which
        agent.set_attributes({"error.type": "agent_error", "tracegrade.error": result.error})
        agent.set_status(Status(StatusCode.ERROR, "agent_error"))
    agent.end(end_time=end)


def checks_attributes(checks: Sequence[Any]) -> dict[str, Any]:
    failed = [c for c in checks if not c.passed]
    return {"tracegrade.checks.count": len(checks), "tracegrade.checks.failed": [c.name for c in failed],
            "tracegrade.checks.codes": [c.code for c in failed]}


def judge_attributes(result: Any, judge_model: ChatModel) -> dict[str, Any]:
    """GenAI attributes of a judge call, from the CaseResult it scored (or left unscored)."""
    attributes: dict[str, Any] = {
        OPERATION: CHAT,
        "gen_ai.provider.name": provider_name(judge_model),
        "gen_ai.request.model": judge_model.model_id,
        "gen_ai.usage.input_tokens": result.judge_tokens[0],
        "gen_ai.usage.output_tokens": result.judge_tokens[1],
        "tracegrade.retries": result.judge_retries,
        "tracegrade.judge.attempts": result.judge_attempts,
    }
    if result.scores is None:
        attributes.update({"error.type": "unscored", "tracegrade.error": result.error})
        return attributes
    attributes.update({f"tracegrade.score.{metric}": score for metric, score in result.scores.items()})
    # WHY a share, not min(scores): metrics now mix scales (probabilities, 1..5, code 0/1).
    judged = [m for m in result.metrics if m.passed is not None]
    share = sum(bool(m.passed) for m in judged) / len(judged) if judged else 0.0
    attributes.update({"gen_ai.evaluation.name": "rubric", "gen_ai.evaluation.score.value": round(share, 4),
                       "gen_ai.evaluation.score.label": "pass" if result.status == "pass" else result.status,
                       "gen_ai.evaluation.explanation": result.judge_reason})
    return attributes


# --- redaction and exporters ----------------------------------------------------


def known_secrets() -> tuple[str, ...]:
    return tuple(v for v in (os.environ.get(name, "") for name in SECRET_ENV) if len(v) >= 4)


class RedactingExporter(SpanExporter):
    """Passes ``inner`` a copy of each span with its name, attributes, events and
    status text redacted."""

    def __init__(self, inner: SpanExporter, secrets: tuple[str, ...] = ()) -> None:
        self.inner = inner
        self.secrets = secrets
        # WHY a memo: most texts recur from span to span and case to case (the
        # context the model saw, model and tool names, operation names), and
        # redaction is the dearest part of exporting; redact() is a pure function.
        self._text = functools.lru_cache(maxsize=1024)(lambda text: redact(text, secrets))

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.inner.export([self._redacted(span) for span in spans])

    def _value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._text(value)
        if isinstance(value, (list, tuple)):
            return type(value)(self._value(v) for v in value)
        return value

    def _redacted(self, span: ReadableSpan) -> ReadableSpan:
        def clean(attrs: Mapping[str, Any] | None) -> dict[str, Any]:
            return {k: self._value(v) for k, v in (attrs or {}).items()}

        status = span.status
        if status.description:
            status = Status(status.status_code, self._text(status.description))
        return ReadableSpan(
            name=self._text(span.name), context=span.context, parent=span.parent,
            resource=span.resource, attributes=clean(span.attributes),
            events=[Event(e.name, clean(e.attributes), e.timestamp) for e in span.events],
            links=span.links, kind=span.kind, status=status, start_time=span.start_time,
            end_time=span.end_time, instrumentation_scope=span.instrumentation_scope,
        )

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


@dataclass(frozen=True)
class Telemetry:
    provider: TracerProvider
    tracer: otel.Tracer
    exporting: bool = True  # False: no store and no collector, so nothing is worth building
    processors: tuple[SpanProcessor, ...] = ()  # what the provider exports through, for span batches

    def shutdown(self) -> None:
        """Flush what is queued and stop the exporters."""
        self.provider.shutdown()


def spans_db_path(spans_db: Path | None = None) -> Path | None:
    """The local span store: ``spans_db``, else ``TRACEGRADE_SPANS_DB`` (``off``: none),
    else .tracegrade/spans.db."""
    if spans_db is not None:
        return spans_db
    if os.environ.get("TRACEGRADE_SPANS_DB", "").lower() == "off":
        return None
    return named_spans_db() or DEFAULT_SPANS_DB


def open_telemetry(
    service: str, spans_db: Path | None = None, otlp_endpoint: str | None = None,
    secrets: tuple[str, ...] | None = None, id_generator: IdGenerator | None = None,
    local_store: bool = True,
) -> Telemetry:
    """Spans to the local SQLite store (see :func:`spans_db_path`; none with
    ``local_store=False``) and, when ``otlp_endpoint`` or the standard
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set, over OTLP/HTTP to a collector too,
    fail-fast (tracegrade.observe.otlp)."""
    from tracegrade.observe import otlp
    from tracegrade.observe.spanstore import SqliteSpanExporter

    secrets = known_secrets() if secrets is None else secrets
    exporters: list[SpanExporter] = []
    if local_store and (path := spans_db_path(spans_db)) is not None:
        exporters.append(RedactingExporter(SqliteSpanExporter(path), secrets))
    if (destination := otlp_destination(otlp_endpoint)) is not None:
        # WHY redaction inside the fail-fast wrapper: a batch it drops is never redacted.
        exporters.append(otlp.FailFastExporter(RedactingExporter(otlp.otlp_exporter(destination), secrets), destination))
    provider = TracerProvider(resource=Resource.create({"service.name": service}), id_generator=id_generator)
    # WHY a batch processor each: export happens on a worker thread, never in the
    # request or the run, and a slow destination holds up no other.
    processors = tuple(BatchSpanProcessor(exporter, schedule_delay_millis=1000) for exporter in exporters)
    for processor in processors:
        provider.add_span_processor(processor)
    return Telemetry(provider, provider.get_tracer("tracegrade"), exporting=bool(exporters), processors=processors)


def memory_telemetry(secrets: tuple[str, ...] = ()) -> tuple[Telemetry, InMemorySpanExporter]:
    """Telemetry into memory, redacted like every other exporter: for tests."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "test"}))
    processor = SimpleSpanProcessor(RedactingExporter(memory, secrets))
    provider.add_span_processor(processor)
    return Telemetry(provider, provider.get_tracer("tracegrade"), processors=(processor,)), memory
