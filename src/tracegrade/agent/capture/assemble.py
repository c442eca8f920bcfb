"""A case's recorded model calls (or spans) put together into one Reply.

The conversation comes from the last model call: a tool loop sends its whole
history every round, so the last request plus its response holds every call,
every tool result and the answer. A Responses API call continued with
``previous_response_id`` is read with the recorded calls it continues. Calls
that only earlier responses asked for (an agent that trims its history) are
added in front, with their results where the next call sent them back. Tokens
add up over all calls; each call is a model step with its timing.

A call is this trial's only when a response recorded in it asked for it: what the
agent sends from before (a checkpointer's, session's or memory's history) is context,
never a new call. A call another trial's response asked for means the two trials
share the agent's memory: the trace is not this trial's own (Recorder.close says so).
"""

from __future__ import annotations

from typing import Any, Mapping

from tracegrade.agent.capture.recorder import Exchange, Recorder, asked_ids
from tracegrade.core.from_otel import otel_traces
from tracegrade.core.trace import Reply, Step, ToolCall, Usage


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
    # WHY by id: a Responses call continued with previous_response_id carries only what is new
    responses = {str(e.response["id"]): e for e in recorder.exchanges
                 if e.provider == "openai-responses" and e.response.get("id")}
    # WHY every request's tools: the agent a handoff passed to no longer offers the handoff tool
    tools = _offered(recorder.exchanges)
    reply = _conversation(last, fields, responses, tools)
    known = {call.id for call in reply.tool_calls if call.id}
    earlier = _earlier_calls(recorder.exchanges, fields, responses, known, tools)
    calls = _reports_joined([*earlier, *reply.tool_calls])
    asked = {i for exchange in recorder.exchanges for i in asked_ids(exchange)}
    own = _renumbered([call for call in calls if call.id is None or call.id in asked])
    return reply if own == list(reply.tool_calls) else reply.model_copy(update={"tool_calls": tuple(own)})


def _reports_joined(calls: list[ToolCall]) -> list[ToolCall]:
    """Calls known only by a framework's report of their failure (no id: smolagents sends a failed call
    back as text alone) joined to the call a response asked for with that tool and those arguments."""
    reports = [c for c in calls if c.id is None and c.status == "error"]
    if not reports:
        return calls
    joined, used = list(calls), set()
    for report in reports:
        for index, call in enumerate(joined):
            if call.id is not None and not call.result and (call.name, call.arguments) == (report.name, report.arguments):
                joined[index] = call.model_copy(update={"status": "error", "result": report.result})
                used.add(id(report))
                break
    return [call for call in joined if id(call) not in used]


def _renumbered(calls: list[ToolCall]) -> list[ToolCall]:
    """This trial's calls with their rounds counted from 0: the rounds of the history before it
    (the agent's memory) are not this trial's."""
    rounds = sorted({call.round for call in calls if call.round is not None})
    if not rounds or rounds == list(range(len(rounds))):
        return calls
    rank = {number: index for index, number in enumerate(rounds)}
    return [call if call.round is None else call.model_copy(update={"round": rank[call.round]}) for call in calls]


def _offered(exchanges: list[Exchange]) -> list[Any]:
    """The tools the requests offered, each name once (the first offer's form)."""
    offered: dict[str, Any] = {}
    for exchange in exchanges:
        for tool in _listed(exchange.request.get("tools")):
            spec = tool.get("function", tool) if isinstance(tool, dict) else None
            name = spec.get("name") if isinstance(spec, dict) else None
            if isinstance(name, str):
                offered.setdefault(name, tool)
    return list(offered.values())


def _earlier_calls(exchanges: list[Exchange], fields: dict[str, Any], responses: Mapping[str, Exchange],
                   known: set[str], tools: list[Any]) -> list[ToolCall]:
    """The calls earlier responses asked for that the last conversation no longer holds.

    WHY only those responses' exchanges are read: an agent that sends its whole history
    holds every call in the last one, and reading every earlier request again would cost
    the square of its rounds. The next exchange is read first: it holds the call's result
    when the agent sent its own turn back."""
    earlier: list[ToolCall] = []
    for index, exchange in enumerate(exchanges[:-1]):
        asked = {i for i in asked_ids(exchange) if i not in known}
        for source in (exchanges[index + 1], exchange) if asked else ():
            for call in _conversation(source, fields, responses, tools).tool_calls:
                if call.id in asked and call.id not in known:
                    known.add(call.id)
                    earlier.append(call)
    return earlier


def _conversation(exchange: Exchange, fields: dict[str, Any], responses: Mapping[str, Exchange],
                  tools: list[Any]) -> Reply:
    request, response = exchange.request, exchange.response
    if exchange.provider == "anthropic":
        said = {"role": "assistant", "content": response.get("content") or []}
        return Reply.from_anthropic_messages([*_listed(request.get("messages")), said], tools, **fields)
    if exchange.provider == "openai-responses":
        items = [item for earlier in (*_continued(exchange, responses), exchange) for item in _turn_items(earlier)]
        return Reply.from_openai_messages(items, tools, **fields)
    choices = response.get("choices") or [{}]
    said = choices[0].get("message") or {"role": "assistant", "content": ""}
    return Reply.from_openai_messages([*_listed(request.get("messages")), said], tools, **fields)


def _continued(exchange: Exchange, responses: Mapping[str, Exchange]) -> list[Exchange]:
    """The recorded exchanges a Responses call continues with ``previous_response_id``, oldest first:
    the server holds that history, so the request carries only what is new."""
    chain: list[Exchange] = []
    previous = exchange.request.get("previous_response_id")
    while isinstance(previous, str) and previous in responses and len(chain) < len(responses):
        chain.append(responses[previous])
        previous = chain[-1].request.get("previous_response_id")
    return chain[::-1]


def _turn_items(exchange: Exchange) -> list[Any]:
    """A Responses call's input items (a string is the user's message) and its output items."""
    given = exchange.request.get("input")
    items = [{"role": "user", "content": given}] if isinstance(given, str) else _listed(given)
    return [*items, *_listed(exchange.response.get("output"))]


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
