"""What the dashboard shows, as pure functions over a list of request traces.

    >>> t = RequestTrace(trace_id="a" * 32, start_ns=0, latency_ms=120.0)
    >>> summarize([t]).requests
    1

A request *succeeds* when the agent answered and none of its tool calls failed;
it is an *error* when the agent could not answer at all (HTTP 503). Whether the
answer was any good is the online judge's business, shown apart as quality.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from statistics import mean
from typing import Callable, Mapping, Sequence

from tracegrade.core.names import APPROVAL_SPAN, EXECUTE_TOOL, OPERATION
from tracegrade.observe.spanstore import Judgement, StoredSpan
from tracegrade.stats.summary import percentile

# Bucket widths to choose from, so a chart has at most MAX_BUCKETS points.
_WIDTHS_S = (60, 300, 900, 3600, 6 * 3600, 86400, 7 * 86400)
MAX_BUCKETS = 24


@dataclass(frozen=True)
class RequestTrace:
    trace_id: str
    start_ns: int
    latency_ms: float
    status: str = "ok"  # ok | error
    error_type: str = ""
    provider: str = ""
    model: str = ""
    prompt_version: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    steps: int = 0
    duplicate_calls: int = 0
    tool_calls: tuple[tuple[str, str], ...] = ()  # (tool name, status)
    tool_arguments: tuple[str, ...] = ()  # each call's arguments as JSON text, in the same order
    denied: int = 0
    forbidden: int = 0
    injection: int = 0
    approvals_asked: int = 0
    approvals_confirmed: int = 0
    question: str = ""
    answer: str = ""
    customer: str = ""

    @property
    def succeeded(self) -> bool:
        return self.status == "ok" and not any(status == "error" for _, status in self.tool_calls)

    @classmethod
    def from_spans(cls, spans: Sequence[StoredSpan]) -> RequestTrace:
        root = next(s for s in spans if s.parent_id is None)
        a = root.attributes
        calls = [s for s in sorted(spans, key=lambda s: s.start_ns) if s.attributes.get(OPERATION) == EXECUTE_TOOL]
        tools = tuple((s.attributes.get("gen_ai.tool.name", ""), s.attributes.get("tracegrade.tool.status", "ok"))
                      for s in calls)
        approvals = [s.attributes.get("tracegrade.approval.state") for s in spans if s.name == APPROVAL_SPAN]
        return cls(
            trace_id=root.trace_id, start_ns=root.start_ns, latency_ms=root.duration_ms,
            status=a.get("tracegrade.status", "ok"), error_type=a.get("error.type", ""),
            provider=a.get("gen_ai.provider.name", ""), model=a.get("gen_ai.request.model", ""),
            prompt_version=a.get("tracegrade.prompt_version", ""),
            input_tokens=a.get("gen_ai.usage.input_tokens", 0), output_tokens=a.get("gen_ai.usage.output_tokens", 0),
            cost_usd=a.get("tracegrade.cost_usd", 0.0), steps=a.get("tracegrade.steps", 0),
            duplicate_calls=a.get("tracegrade.duplicate_calls", 0), tool_calls=tools,
            tool_arguments=tuple(s.attributes.get("gen_ai.tool.call.arguments", "{}") for s in calls),
            denied=a.get("tracegrade.guardrail.denied", 0), forbidden=a.get("tracegrade.guardrail.forbidden", 0),
            injection=a.get("tracegrade.guardrail.injection", 0),
            approvals_asked=approvals.count("asked"), approvals_confirmed=approvals.count("confirmed"),
            question=a.get("tracegrade.question", ""), answer=a.get("tracegrade.answer", ""),
            customer=a.get("tracegrade.customer.hash", ""),
        )


@dataclass(frozen=True)
class Filters:
    prompt_version: str = ""
    model: str = ""
    window_s: int = 0  # 0: all time

    def keep(self, trace: RequestTrace, now_ns: int) -> bool:
        return ((not self.prompt_version or trace.prompt_version == self.prompt_version)
                and (not self.model or trace.model == self.model)
                and (not self.window_s or trace.start_ns >= now_ns - self.window_s * 1_000_000_000))


@dataclass(frozen=True)
class Summary:
    requests: int = 0
    success_rate: float = 0.0
    error_rate: float = 0.0
    p50_ms: float = 0.0
    p95_ms: float = 0.0
    p99_ms: float = 0.0
    avg_steps: float = 0.0
    duplicate_rate: float = 0.0  # share of requests with a repeated identical tool call
    input_tokens: int = 0
    output_tokens: int = 0
    spend_usd: float = 0.0
    denied: int = 0
    forbidden: int = 0
    injection: int = 0
    approvals_asked: int = 0
    approvals_confirmed: int = 0
    tool_failures: Mapping[str, int] = field(default_factory=dict)
    provider_failures: Mapping[str, int] = field(default_factory=dict)
    judged: int = 0
    quality: float | None = None  # mean judge score (1..5) over judged requests


def summarize(traces: Sequence[RequestTrace], judgements: Mapping[str, Judgement] | None = None) -> Summary:
    if not traces:
        return Summary()
    n = len(traces)
    latencies = [t.latency_ms for t in traces]
    tool_failures = Counter(name for t in traces for name, status in t.tool_calls if status == "error")
    # A provider fails a request when the agent could not answer, or a tool call failed under it.
    provider_failures = Counter(t.provider or "unknown" for t in traces if not t.succeeded)
    scores = judged_scores(traces, judgements or {})
    return Summary(
        requests=n,
        success_rate=sum(t.succeeded for t in traces) / n,
        error_rate=sum(t.status == "error" for t in traces) / n,
        p50_ms=percentile(latencies, 50), p95_ms=percentile(latencies, 95), p99_ms=percentile(latencies, 99),
        avg_steps=mean(t.steps for t in traces),
        duplicate_rate=sum(t.duplicate_calls > 0 for t in traces) / n,
        input_tokens=sum(t.input_tokens for t in traces), output_tokens=sum(t.output_tokens for t in traces),
        spend_usd=sum(t.cost_usd for t in traces),
        denied=sum(t.denied for t in traces), forbidden=sum(t.forbidden for t in traces),
        injection=sum(t.injection for t in traces),
        approvals_asked=sum(t.approvals_asked for t in traces),
        approvals_confirmed=sum(t.approvals_confirmed for t in traces),
        tool_failures=dict(tool_failures.most_common()), provider_failures=dict(provider_failures.most_common()),
        judged=len(scores), quality=mean(scores.values()) if scores else None,
    )


def judged_scores(traces: Sequence[RequestTrace], judgements: Mapping[str, Judgement]) -> dict[str, float]:
    """trace id -> mean of its judge scores, for the traces the judge scored."""
    out = {}
    for t in traces:
        j = judgements.get(t.trace_id)
        if j is not None and j.scores:
            out[t.trace_id] = mean(j.scores.values())
    return out


@dataclass(frozen=True)
class Series:
    """Per time bucket: labels and one value list per line (None: no data)."""

    labels: tuple[str, ...]
    volume: tuple[int, ...]
    success: tuple[float | None, ...]
    errors: tuple[float | None, ...]
    p50: tuple[float | None, ...]
    p95: tuple[float | None, ...]
    p99: tuple[float | None, ...]
    quality: tuple[float | None, ...]


def over_time(traces: Sequence[RequestTrace], judgements: Mapping[str, Judgement] | None = None) -> Series:
    if not traces:
        return Series((), (), (), (), (), (), (), ())
    first, last = min(t.start_ns for t in traces) // 10**9, max(t.start_ns for t in traces) // 10**9
    width = next((w for w in _WIDTHS_S if (last - first) / w < MAX_BUCKETS), _WIDTHS_S[-1])
    start = first - first % width
    buckets: list[list[RequestTrace]] = [[] for _ in range((last - start) // width + 1)]
    for t in traces:
        buckets[(t.start_ns // 10**9 - start) // width].append(t)
    scores = judged_scores(traces, judgements or {})

    def each(fn: Callable[[list[RequestTrace]], float]) -> tuple[float | None, ...]:
        return tuple(fn(b) if b else None for b in buckets)

    return Series(
        labels=tuple(_label(start + i * width, width) for i in range(len(buckets))),
        volume=tuple(len(b) for b in buckets),
        success=each(lambda b: 100 * sum(t.succeeded for t in b) / len(b)),
        errors=each(lambda b: 100 * sum(t.status == "error" for t in b) / len(b)),
        p50=each(lambda b: percentile([t.latency_ms for t in b], 50)),
        p95=each(lambda b: percentile([t.latency_ms for t in b], 95)),
        p99=each(lambda b: percentile([t.latency_ms for t in b], 99)),
        quality=tuple(mean(s) if (s := [scores[t.trace_id] for t in b if t.trace_id in scores]) else None
                      for b in buckets),
    )


def _label(epoch_s: int, width: int) -> str:
    moment = dt.datetime.fromtimestamp(epoch_s, dt.timezone.utc)
    return moment.strftime("%m-%d" if width >= 86400 else "%H:%M" if width < 3600 else "%m-%d %H:%M")
