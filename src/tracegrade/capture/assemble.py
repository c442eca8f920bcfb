"""A case's recorded model calls (or spans) put together into one Reply.

The conversation comes from the last model call: a tool loop sends its whole
history every round, so the last request plus its response holds every call,
every tool result and the answer. Calls that only earlier responses asked for
(an agent that trims its history) are added in front. Tokens add up over all
calls; each call is a model step with its timing.
"""

from __future__ import annotations

from typing import Any

from tracegrade.capture.recorder import Exchange, Recorder
from tracegrade.core.from_otel import otel_traces
from tracegrade.core.trace import Reply, Step, Usage


def reply_of(recorder: Recorder) -> Reply | None:
    """The Reply of what ``recorder`` holds; None when nothing was recorded."""
    if recorder.exchanges:
        return _from_exchanges(recorder)
    if recorder.spans:
        traces = otel_traces(recorder.spans)
        return Reply.from_wire(traces[0].wire) if traces else None
    return None


def _from_exchanges(recorder: Recorder) -> Reply:
    last = recorder.exchanges[-1]
    steps = tuple(_step(e, recorder.started_s) for e in recorder.exchanges)
    used = [_tokens(e) for e in recorder.exchanges]
    usage = Usage(input_tokens=sum(u[0] for u in used), output_tokens=sum(u[1] for u in used))
    fields: dict[str, Any] = {"steps": steps, "usage": usage, "model": str(last.response.get("model") or "")}
    reply = _conversation(last, fields)
    known = {call.id for call in reply.tool_calls if call.id}
    earlier = []
    for exchange in recorder.exchanges[:-1]:
        for call in _conversation(exchange, fields).tool_calls:
            if call.id and call.id not in known:
                known.add(call.id)
                earlier.append(call)
    return reply.model_copy(update={"tool_calls": (*earlier, *reply.tool_calls)}) if earlier else reply


def _conversation(exchange: Exchange, fields: dict[str, Any]) -> Reply:
    request, response = exchange.request, exchange.response
    if exchange.provider == "anthropic":
        said = {"role": "assistant", "content": response.get("content") or []}
        return Reply.from_anthropic_messages([*_listed(request.get("messages")), said], **fields)
    if exchange.provider == "openai-responses":
        given = request.get("input")
        items = [{"role": "user", "content": given}] if isinstance(given, str) else _listed(given)
        return Reply.from_openai_messages([*items, *_listed(response.get("output"))], **fields)
    choices = response.get("choices") or [{}]
    said = choices[0].get("message") or {"role": "assistant", "content": ""}
    return Reply.from_openai_messages([*_listed(request.get("messages")), said], **fields)


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


def _tokens(exchange: Exchange) -> tuple[int, int]:
    usage = exchange.response.get("usage") or {}
    given = usage.get("prompt_tokens", usage.get("input_tokens", 0)) or 0
    taken = usage.get("completion_tokens", usage.get("output_tokens", 0)) or 0
    return int(given), int(taken)


def _step(exchange: Exchange, started_s: float) -> Step:
    given, taken = _tokens(exchange)
    return Step(kind="model", name=str(exchange.response.get("model") or exchange.provider),
                start_ms=max(0.0, (exchange.start_s - started_s) * 1000), duration_ms=(exchange.end_s - exchange.start_s) * 1000,
                input_tokens=given, output_tokens=taken)
