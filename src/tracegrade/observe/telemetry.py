"""OpenTelemetry spans for agent requests and eval runs, and where they go.

    >>> from tracegrade.core.trace import Reply, Step
    >>> telemetry, memory = memory_telemetry()
    >>> info = RequestInfo(question="How long do returns take?", started_ns=0, ended_ns=5_000_000)
    >>> record_request(telemetry.tracer, info, Reply(answer="30 days.", steps=(Step(kind="model", name="round 1"),)))
    >>> [span.name for span in memory.get_finished_spans()]
    ['final_generation', 'agent_request']

Span trees (names; attributes follow the OpenTelemetry GenAI conventions where
they exist, ``tracegrade.*`` where they do not):

    agent_request                   one production request
    ├── retrieval
    ├── model_call                  one per model round that asked for tools
    ├── tool_call:NAME              one per tool call
    │   └── approval                when the call ended as a draft for the customer
    └── final_generation            the round that produced the answer

    eval_run -> case -> agent (the tree above, below it) -> checks -> judge

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
import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from opentelemetry import trace as otel
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode, Tracer

from tracegrade.core.names import REQUEST_SPAN

from tracegrade.core.redact import redact
from tracegrade.core.trace import Reply, Step, ToolCall

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
        "gen_ai.operation.name": "invoke_agent",
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
    tracer: otel.Tracer, reply: Reply, base_ns: int, info: RequestInfo | None = None,
    parent: otel.Span | None = None,
) -> None:
    """Child spans for the Reply's steps, timed from ``base_ns``, under ``parent``
    (default: the current span)."""
    context = otel.set_span_in_context(parent) if parent is not None else None
    tool_calls = iter(reply.tool_calls)
    rounds = [s for s in reply.steps if s.kind == "model"]
    for step in reply.steps:
        start = base_ns + int(step.start_ms * 1e6)
        end = start + int(step.duration_ms * 1e6)
        if step.kind == "retrieval":
            _span(tracer, "retrieval", context, start, end, step, _retrieval_attributes(reply, step, info))
        elif step.kind == "model":
            name = "final_generation" if step is rounds[-1] and reply.answer else "model_call"
            _span(tracer, name, context, start, end, step, _model_attributes(reply, step, info))
        else:
            call = next(tool_calls, None)
            span = _span(tracer, f"tool_call:{step.name}", context, start, end, step,
                         _tool_attributes(step, call if call and call.name == step.name else None, info),
                         end_now=False)
            if step.kind == "approval":
                approval = tracer.start_span("approval", context=otel.set_span_in_context(span), start_time=end,
                                             attributes={"tracegrade.approval.state": "asked",
                                                         "gen_ai.tool.name": step.name})
                approval.end(end_time=end)
            span.end(end_time=end)


def _span(tracer: otel.Tracer, name: str, context, start: int, end: int, step: Step,
          attributes: dict[str, Any], end_now: bool = True) -> otel.Span:
    span = tracer.start_span(name, context=context, start_time=start, attributes=attributes)
    span.set_attribute("tracegrade.latency_ms", step.duration_ms)
    if step.error:
        span.set_attributes({"error.type": f"{step.kind}_error", "tracegrade.error": step.error})
        span.set_status(Status(StatusCode.ERROR, f"{step.kind}_error"))
    if end_now:
        span.end(end_time=end)
    return span


def _retrieval_attributes(reply: Reply, step: Step, info: RequestInfo | None) -> dict[str, Any]:
    documents = [{"id": s, "score": score} for s, score in zip(reply.retrieved_sources, reply.retrieval_scores)]
    return {
        "gen_ai.operation.name": "retrieval",
        "gen_ai.data_source.id": step.name,
        "gen_ai.retrieval.query.text": info.question if info else "",
        "gen_ai.retrieval.documents": json.dumps(documents),
        "tracegrade.retrieval.sources": list(reply.retrieved_sources),
        "tracegrade.retrieval.context": reply.context,
    }


def _model_attributes(reply: Reply, step: Step, info: RequestInfo | None) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": info.provider if info else "",
        "gen_ai.request.model": (info.model if info else "") or reply.model,
        "gen_ai.response.model": reply.model,
        "gen_ai.usage.input_tokens": step.input_tokens,
        "gen_ai.usage.output_tokens": step.output_tokens,
        "tracegrade.round": step.name,
        "tracegrade.retries": step.retries,
    }


def _tool_attributes(step: Step, call: ToolCall | None, info: RequestInfo | None) -> dict[str, Any]:
    attributes: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": step.name}
    if call is not None:
        allowed = info.allowed_tools if info else ()
        attributes.update({
            "gen_ai.tool.call.arguments": json.dumps(call.arguments, sort_keys=True),
            "gen_ai.tool.call.result": call.result,
            "tracegrade.tool.argument": call.argument or "",
            "tracegrade.tool.status": call.status,
            "tracegrade.guardrail": "denied" if call.status == "denied"
            else "forbidden" if allowed and call.name not in allowed else "",
        })
    return attributes


# --- eval-run spans -------------------------------------------------------------

_ACTIVE: TracerProvider | None = None


def activate(telemetry: Telemetry | None) -> None:
    """Make ``telemetry`` the one library code (the runner) reports to; None turns
    it back to the global OpenTelemetry API, which does nothing unless an
    application installed a provider there."""
    global _ACTIVE
    _ACTIVE = telemetry.provider if telemetry is not None else None


def library_tracer(name: str) -> Tracer:
    return _ACTIVE.get_tracer(name) if _ACTIVE is not None else otel.get_tracer(name)


@contextlib.contextmanager
def eval_run_spans(manifest: Any, spans_db: Path | None = None) -> Iterator[None]:
    """An ``eval_run`` span around a run, its cases below it, exported like
    production spans (local store; OTLP when configured)."""
    telemetry = open_telemetry("tracegrade", spans_db)
    activate(telemetry)
    attributes = {"tracegrade.run.id": manifest.run_id, "tracegrade.dataset": manifest.dataset,
                  "tracegrade.dataset.version": manifest.dataset_version, "gen_ai.request.model": manifest.agent_model,
                  "tracegrade.judge.model": manifest.judge_model or "", "tracegrade.prompt_version": manifest.prompt_version}
    try:
        with telemetry.tracer.start_as_current_span("eval_run", attributes=attributes):
            yield
    finally:
        activate(None)
        telemetry.shutdown()



def case_attributes(case_id: str, split: str, category: str, repeat: int) -> dict[str, Any]:
    return {"tracegrade.case.id": case_id, "tracegrade.case.split": split,
            "tracegrade.case.category": category, "tracegrade.case.repeat": repeat}


def finish_case_span(span: otel.Span, status: str, error: str, seconds: float) -> None:
    span.set_attributes({"tracegrade.status": status, "tracegrade.latency_ms": round(seconds * 1000, 1)})
    if status == "error":
        span.set_attribute("tracegrade.error", error)
        span.set_status(Status(StatusCode.ERROR, "case_error"))


def checks_attributes(checks: Sequence[Any]) -> dict[str, Any]:
    failed = [c for c in checks if not c.passed]
    return {"tracegrade.checks.count": len(checks), "tracegrade.checks.failed": [c.name for c in failed],
            "tracegrade.checks.codes": [c.code for c in failed]}


def judge_attributes(outcome: Any, judge_model: str) -> dict[str, Any]:
    """GenAI evaluation attributes for a judge outcome (Scores or Unscored)."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": judge_model,
        "gen_ai.usage.input_tokens": outcome.input_tokens,
        "gen_ai.usage.output_tokens": outcome.output_tokens,
        "tracegrade.retries": getattr(outcome, "retries", 0),
        "tracegrade.judge.attempts": outcome.attempts,
    }
    values = getattr(outcome, "values", None)
    if not values:
        attributes.update({"error.type": "unscored", "tracegrade.error": outcome.reason})
        return attributes
    attributes.update({f"tracegrade.score.{metric}": score for metric, score in values.items()})
    attributes.update({"gen_ai.evaluation.name": "rubric", "gen_ai.evaluation.score.value": min(values.values()),
                       "gen_ai.evaluation.explanation": outcome.reason})
    return attributes


# --- redaction and exporters ----------------------------------------------------


def known_secrets() -> tuple[str, ...]:
    return tuple(v for v in (os.environ.get(name, "") for name in SECRET_ENV) if len(v) >= 4)


def redact_value(value: Any, secrets: tuple[str, ...] = ()) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, (list, tuple)):
        return type(value)(redact_value(v, secrets) for v in value)
    return value


class RedactingExporter(SpanExporter):
    """Passes ``inner`` a copy of each span with its name, attributes, events and
    status text redacted."""

    def __init__(self, inner: SpanExporter, secrets: tuple[str, ...] = ()) -> None:
        self.inner = inner
        self.secrets = secrets

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.inner.export([self._redacted(span) for span in spans])

    def _redacted(self, span: ReadableSpan) -> ReadableSpan:
        clean = lambda attrs: {k: redact_value(v, self.secrets) for k, v in (attrs or {}).items()}  # noqa: E731
        status = span.status
        if status.description:
            status = Status(status.status_code, redact(status.description, self.secrets))
        return ReadableSpan(
            name=redact(span.name, self.secrets), context=span.context, parent=span.parent,
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

    def shutdown(self) -> None:
        """Flush what is queued and stop the exporters."""
        self.provider.shutdown()


def open_telemetry(
    service: str, spans_db: Path | None = None, otlp_endpoint: str | None = None,
    secrets: tuple[str, ...] | None = None, id_generator: IdGenerator | None = None,
) -> Telemetry:
    """Spans to the local SQLite store (``spans_db``, env ``TRACEGRADE_SPANS_DB``,
    default .tracegrade/spans.db) and, when ``otlp_endpoint`` or the standard
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set, over OTLP/HTTP to a collector too."""
    from tracegrade.observe.spanstore import SqliteSpanExporter

    secrets = known_secrets() if secrets is None else secrets
    path = spans_db or Path(os.environ.get("TRACEGRADE_SPANS_DB") or DEFAULT_SPANS_DB)
    exporters: list[SpanExporter] = [SqliteSpanExporter(path)]
    otlp = _otlp_exporter(otlp_endpoint)
    if otlp is not None:
        exporters.append(otlp)
    provider = TracerProvider(resource=Resource.create({"service.name": service}), id_generator=id_generator)
    for exporter in exporters:
        # WHY a batch: export happens on a worker thread, never in the request.
        provider.add_span_processor(BatchSpanProcessor(RedactingExporter(exporter, secrets), schedule_delay_millis=1000))
    return Telemetry(provider, provider.get_tracer("tracegrade"))


def _otlp_exporter(endpoint: str | None) -> SpanExporter | None:
    if not (endpoint or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
            or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")):
        return None
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    if endpoint:
        return OTLPSpanExporter(endpoint=endpoint.rstrip("/") + "/v1/traces")
    return OTLPSpanExporter()  # reads the standard OTEL_EXPORTER_OTLP_* variables


def memory_telemetry(secrets: tuple[str, ...] = ()) -> tuple[Telemetry, InMemorySpanExporter]:
    """Telemetry into memory, redacted like every other exporter: for tests."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "test"}))
    provider.add_span_processor(SimpleSpanProcessor(RedactingExporter(memory, secrets)))
    return Telemetry(provider, provider.get_tracer("tracegrade")), memory
