"""Tool use for models that cannot emit tool-call tags reliably.

The small local model writes bare JSON, fenced JSON, ``{{...}}`` or
``<tool_call>`` tags when asked to call a tool. Instead of hoping, each turn is
constrained to a JSON Schema of {a tool call | a final answer}, and the reply
is parsed leniently in case a runtime ignores the constraint.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, Mapping, Sequence

from tracegrade.models.base import ModelToolCall, ToolSpec

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)


def decision_schema(tools: Sequence[ToolSpec]) -> dict[str, Any]:
    """One JSON object: either {"tool": NAME, "arguments": {...}} or {"answer": TEXT}."""
    answer = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    # WHY the answer first: listed last, the small local model picked a tool
    # even for pure policy questions.
    options: list[dict[str, Any]] = [answer] + [
        {
            "type": "object",
            "properties": {"tool": {"const": tool.name}, "arguments": tool.parameters},
            "required": ["tool", "arguments"],
        }
        for tool in tools
    ]
    return {"oneOf": options}


def decision_instructions(tools: Sequence[ToolSpec]) -> str:
    """The text that tells the model how to call a tool or answer."""
    lines = ["You can call these tools:"]
    for tool in tools:
        params = ", ".join(tool.parameters.get("properties", {}))
        lines.append(f"- {tool.name}({params}): {tool.description}")
    lines.append(
        'Reply with one JSON object only. To call a tool: {"tool": "NAME", "arguments": {...}}. '
        'To answer the customer: {"answer": "TEXT"}.'
    )
    return "\n".join(lines)


def parse_decision(text: str, tool_names: Sequence[str],
                   parameter_names: Mapping[str, Sequence[str]] | None = None) -> tuple[str, tuple[ModelToolCall, ...]]:
    """(answer text, tool calls) from a reply in any form the model produces.
    ``parameter_names``: each tool's parameters in order, to read a call the
    model wrote as code (``check_availability('Emma')``) as that call.

    Never raises: text that holds no recognisable tool call is the answer.
    """
    for candidate in _json_candidates(text):
        data = _loads(candidate)
        if isinstance(data, dict):
            call = _as_tool_call(data, tool_names)
            if call is not None:
                return "", (call,)
            if isinstance(data.get("answer"), str):
                return _answer_or_call(data["answer"].strip(), tool_names, parameter_names or {})
    return _answer_or_call(text.strip(), tool_names, parameter_names or {})


# An answer that is nothing but a call of an offered tool, written as code.
_WRITTEN_CALL = re.compile(r"`?(\w+)\((.*)\)`?\.?", re.DOTALL)
_WRITTEN_CALL_CHARS = 500  # bounded work on model output: longer text is an answer


def _answer_or_call(answer: str, tool_names: Sequence[str],
                    parameter_names: Mapping[str, Sequence[str]]) -> tuple[str, tuple[ModelToolCall, ...]]:
    """WHY: the small local model sometimes puts the call it means into the answer
    ("check_availability('Emma')") instead of the tool slot; no customer answer is
    only a call of an offered tool, so it is read as that call."""
    found = _WRITTEN_CALL.fullmatch(answer) if len(answer) <= _WRITTEN_CALL_CHARS else None
    if found is None or found.group(1) not in tool_names:
        return answer, ()
    arguments = _written_arguments(found.group(2), parameter_names.get(found.group(1), ()))
    return ("", (ModelToolCall(name=found.group(1), arguments=arguments),)) if arguments is not None else (answer, ())


def _written_arguments(written: str, parameters: Sequence[str]) -> dict[str, Any] | None:
    """``'Emma'`` or ``title='Emma', n=2`` as arguments (positional ones by the
    tool's parameter order); None when they are not plain literals."""
    try:
        call = ast.parse(f"f({written})", mode="eval").body
        if not isinstance(call, ast.Call):  # "1)+(2" closes the call early
            return None
        positional = [ast.literal_eval(a) for a in call.args]
        named = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return None
    if len(positional) > len(parameters):
        return None
    return {**dict(zip(parameters, positional)), **named}


def _json_candidates(text: str) -> list[str]:
    stripped = text.strip()
    candidates = [stripped]
    candidates += _TAG.findall(stripped)
    candidates += _FENCE.findall(stripped)
    if stripped.startswith("{{") and stripped.endswith("}}"):
        # Template-style escaping: either only the outer pair or every brace is doubled.
        candidates += [stripped[1:-1], stripped.replace("{{", "{").replace("}}", "}")]
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        candidates.append(stripped[start : end + 1])
    # WHY scan each "{": two calls on two lines are not one JSON document, but
    # the first of them is still the call the model meant.
    candidates += _embedded_objects(stripped)
    return candidates


def _embedded_objects(text: str) -> list[str]:
    decoder = json.JSONDecoder()
    found, position = [], text.find("{")
    while position >= 0:
        try:
            _, end = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):
            position = text.find("{", position + 1)
            continue
        found.append(text[position:end])
        position = text.find("{", end)
    return found


def _loads(candidate: str) -> Any:
    try:
        return json.loads(candidate)
    except (ValueError, RecursionError):
        return None


def _as_tool_call(data: dict[str, Any], tool_names: Sequence[str]) -> ModelToolCall | None:
    # Accept our schema's "tool" and the chat template's native "name".
    name = data.get("tool", data.get("name"))
    if not isinstance(name, str) or name not in tool_names:
        return None
    arguments = data.get("arguments", data.get("parameters", {}))
    if isinstance(arguments, str):
        arguments = _loads(arguments)
    if not isinstance(arguments, dict):
        arguments = {}
    return ModelToolCall(name=name, arguments=arguments)
