"""What one tool span says: the tool's name, the call's own arguments, its result and
whether it failed, in the conventions instrumentations write it:

- **GenAI** ``execute_tool``: ``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
  ``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``;
- **OpenInference** ``TOOL``: ``tool.name``, ``input.value``, ``output.value``, ``tool_call.id``;
- **traceloop / OpenLLMetry** (``traceloop.span.kind`` = ``tool``): ``traceloop.entity.name``,
  ``traceloop.entity.input``, ``traceloop.entity.output``.

Frameworks record a tool's *invocation*, not the call the model asked for, so the
arguments are read by rule: an input that wraps them (``{"args": [], "kwargs": {...}}``
as smolagents, LlamaIndex and traceloop write it) gives the ``kwargs``; a value that is an
object's repr (``<workflows.context.context.Context object at 0x...>``, a framework's
context handed to the tool) is never an argument. A result a framework wraps
(LlamaIndex's ``ToolOutput``: ``raw_output``, ``is_error``) gives its own output.

    >>> own_arguments({"args": [], "sanitize_inputs_outputs": True, "kwargs": {"booking_id": "BK-1"}})
    {'booking_id': 'BK-1'}
    >>> own_arguments({"to_agent": "Refunds", "ctx": "<workflows.context.context.Context object at 0x7f3e>"})
    {'to_agent': 'Refunds'}
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

from tracegrade.core.from_messages import parse_arguments, text_of
from tracegrade.core.spans import Span

# Keys a framework's wrapper of a tool invocation holds besides ``args`` and ``kwargs``
# (smolagents' flag); anything else beside them means the object is the arguments themselves.
_WRAPPER_KEYS = frozenset({"args", "kwargs", "sanitize_inputs_outputs"})
# An object's repr: ``<Context object at 0x7f...>``, ``<FunctionTool object>``, ``<function f at 0x...>``
_OBJECT_REPR = re.compile(r"<[A-Za-z_][\w.]*(?: [\w.]+)*(?: at 0x[0-9a-fA-F]+)?>", re.ASCII)
_SDK_HANDOFF_SPAN = "handoff to "  # OpenInference openai-agents: a handoff's span name


def first(span: Span, *keys: str) -> Any:
    return next((span.attributes[k] for k in keys if span.attributes.get(k) not in (None, "")), None)


def is_traceloop_tool(a: Mapping[str, Any]) -> bool:
    return a.get("traceloop.span.kind") == "tool"


def tool_name(span: Span) -> str:
    name = first(span, "gen_ai.tool.name", "tool.name", "traceloop.entity.name")
    if name is None and is_traceloop_tool(span.attributes):
        return span.name.removesuffix(".tool")
    return str(name or span.name.removeprefix("execute_tool ").strip())


def handoff_span_target(span: Span) -> str | None:
    """The agent an Agents SDK handoff span (OpenInference: a TOOL span named ``handoff to
    <agent>``, no tool name) passes the conversation to; None for any other span."""
    if first(span, "gen_ai.tool.name", "tool.name") is not None or not span.name.startswith(_SDK_HANDOFF_SPAN):
        return None
    to = first(span, "output.value")
    return str(to) if isinstance(to, str) and to else span.name[len(_SDK_HANDOFF_SPAN):].strip() or None


def tool_call(span: Span) -> dict[str, Any]:
    """The call a tool span ran: name, own arguments, result, status and id."""
    call_id = first(span, "gen_ai.tool.call.id", "tool_call.id", "tool.id")
    # WHY not tool.parameters: in OpenInference that is the tool's schema, not this call's arguments
    raw = first(span, "gen_ai.tool.call.arguments", "input.value", "tool_call.function.arguments",
                "traceloop.entity.input")
    result, failed = tool_output(first(span, "gen_ai.tool.call.result", "output.value", "traceloop.entity.output"))
    return {"name": tool_name(span), "arguments": own_arguments(parse_arguments(raw)), "result": result,
            "status": "error" if span.error or failed else "ok", "id": str(call_id)[:200] if call_id else None}


def own_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """The call's own arguments out of what a framework recorded of its invocation: the
    ``kwargs`` of a wrapper (positional ``args`` kept as ``args`` when there are any), less any
    value that is an object's repr."""
    if _is_wrapper(arguments):
        positional = arguments.get("args") or []
        arguments = {**arguments.get("kwargs", {}), **({"args": positional} if positional else {})}
    return {k: v for k, v in arguments.items() if not (isinstance(v, str) and is_object_repr(v))}


def _is_wrapper(arguments: Mapping[str, Any]) -> bool:
    return ("kwargs" in arguments and arguments.keys() <= _WRAPPER_KEYS and isinstance(arguments["kwargs"], dict)
            and isinstance(arguments.get("args", []), list))


def is_object_repr(text: str) -> bool:
    """Whether ``text`` is an object's default repr, not a value anyone wrote."""
    return len(text) <= 300 and _OBJECT_REPR.fullmatch(text.strip()) is not None


def tool_output(value: Any) -> tuple[str, bool]:
    """A tool span's output as the text the model saw, and whether it says the tool failed.
    LangChain's instrumentor records the whole ToolMessage as JSON (``{"type": "tool",
    "data": {"content": ...}}``, ``status: "error"``); LlamaIndex a ToolOutput (``raw_output``,
    ``is_error``); traceloop the return value as JSON."""
    if not isinstance(value, str):
        return text_of(value), False
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return value, False
    if isinstance(parsed, str):
        return parsed, False
    message = parsed.get("data", parsed) if isinstance(parsed, dict) else None
    if isinstance(message, dict) and message.get("type") == "tool" and "content" in message:
        return text_of(message["content"]), message.get("status") == "error"
    if isinstance(parsed, dict) and "raw_output" in parsed and "tool_name" in parsed:
        raw = parsed["raw_output"]
        return (raw if isinstance(raw, str) else value), parsed.get("is_error") is True
    return value, False


def tool_descriptions(spans: list[Span]) -> dict[str, str]:
    """Each tool's description as the model spans offered it (OpenInference ``llm.tools.N.
    tool.json_schema``, GenAI ``gen_ai.tool.definitions``): a handoff tool says it is one."""
    from tracegrade.core.span_messages import indexed_items

    found: dict[str, str] = {}
    for span in spans:
        schemas = [t.get("tool.json_schema") for t in indexed_items(span.attributes, "llm.tools.")]
        definitions = span.attributes.get("gen_ai.tool.definitions")
        for tool in [*_listed([_json(s) for s in schemas]), *_listed(_json(definitions))]:
            inner = tool.get("function")
            function: dict[str, Any] = inner if isinstance(inner, dict) else tool
            name, description = function.get("name"), function.get("description")
            if isinstance(name, str) and isinstance(description, str):
                found.setdefault(name, description[:1000])
    return found


def _json(value: Any) -> Any:
    if isinstance(value, str) and len(value) < 100_000:
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return {}
    return value if isinstance(value, (dict, list)) else {}


def _listed(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
