"""What one model span says: the tool calls its output asked for, the tool results its
input sent back, its output text and the question. Three conventions write it:

- **GenAI, current** (``gen_ai.input.messages`` / ``gen_ai.output.messages``: JSON
  messages with ``parts``; a ``tool_call`` part ``{id, name, arguments}`` asks for a
  call, a ``tool_call_response`` part ``{id, response}`` sends its result back);
- **GenAI, indexed** (the older flattened form: ``gen_ai.prompt.N.role``,
  ``.content``, ``.tool_call_id``; ``gen_ai.completion.N.tool_calls.M.name``,
  ``.arguments``, ``.id``);
- **OpenInference** (``llm.input_messages.N.message.role``, ``.content``,
  ``.tool_call_id``; ``llm.output_messages.N.message.tool_calls.M.tool_call.id``,
  ``.tool_call.function.name``, ``.tool_call.function.arguments``).

Flattened attributes are grouped by index in one pass over a span's attributes, so
the work is linear in what the span holds.

    >>> r = read_round({"llm.output_messages.0.message.role": "assistant",
    ...     "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
    ...     "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "renew_loan",
    ...     "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"book": "b7"}'})
    >>> r.asked, r.via
    ((Asked(call_id='call_1', name='renew_loan', arguments='{"book": "b7"}'),), 'openinference')
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from tracegrade.core.from_messages import nested_deeper, text_of

MAX_MESSAGE_DEPTH = 64  # of a JSON message list: deeper is not a conversation, and is not read


@dataclass(frozen=True)
class Asked:
    """A tool call a model round asked for (its arguments as the span holds them)."""

    call_id: str
    name: str
    arguments: Any


@dataclass(frozen=True)
class Message:
    """One message of a model round's input or output, in any of the conventions."""

    role: str
    text: str = ""
    asked: tuple[Asked, ...] = ()
    results: tuple[tuple[str, str], ...] = ()  # (call id, result text) it sends back


@dataclass(frozen=True)
class Round:
    """What one model span says."""

    asked: tuple[Asked, ...] = ()
    text: str = ""
    results: dict[str, str] = field(default_factory=dict)
    question: str = ""
    via: str = ""
    said: bool = False  # whether the span holds its output messages at all (content capture may be off)


def read_round(attributes: Mapping[str, Any], events: Sequence[tuple[str, Mapping[str, Any]]] = ()) -> Round:
    """The calls, results, text and question one model span's attributes hold, or else its
    events (the event form: ``event_messages``)."""
    given, via_in = _messages(attributes, "gen_ai.input.messages", "llm.input_messages.", "gen_ai.prompt.")
    said, via_out = _messages(attributes, "gen_ai.output.messages", "llm.output_messages.", "gen_ai.completion.")
    if events and not via_out:
        inputs, outputs = event_messages(events)
        if outputs:
            said, via_out = [_genai_message(m) for m in outputs], "genai"
        if inputs and not via_in:
            given, via_in = [_genai_message(m) for m in inputs], "genai"
    texts = [m.text for m in said if m.text]
    return Round(asked=tuple(a for m in said for a in m.asked), text=texts[-1] if texts else "",
                 results={call_id: text for m in given for call_id, text in m.results},
                 question=next((m.text for m in given if m.role == "user" and m.text), ""),
                 via=via_out or via_in, said=bool(via_out))


# Per-message events (GenAI semantic conventions before the operation-details event): the
# role each says, and the choice event, which is the model's output.
_MESSAGE_EVENTS = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                   "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}


def event_messages(events: Sequence[tuple[str, Mapping[str, Any]]]) -> tuple[list[Mapping[str, Any]],
                                                                             list[Mapping[str, Any]]]:
    """The input and output messages a model span's events hold, in any of the event forms:
    ``gen_ai.client.inference.operation.details`` (``gen_ai.input.messages`` /
    ``gen_ai.output.messages``), ``gen_ai.content.prompt`` / ``gen_ai.content.completion``
    (``gen_ai.prompt`` / ``gen_ai.completion`` as JSON), and per-message events
    (``gen_ai.user.message`` ... ``gen_ai.choice``), their fields as attributes or as JSON in
    ``gen_ai.event.content``."""
    inputs: list[Mapping[str, Any]] = []
    outputs: list[Mapping[str, Any]] = []
    for name, a in events[:10_000]:
        if "gen_ai.input.messages" in a or "gen_ai.output.messages" in a:
            inputs += _json_list(a.get("gen_ai.input.messages"))
            outputs += _json_list(a.get("gen_ai.output.messages"))
        elif name == "gen_ai.content.prompt":
            inputs += _json_list(a.get("gen_ai.prompt"))
        elif name == "gen_ai.content.completion":
            outputs += _json_list(a.get("gen_ai.completion"))
        elif name in _MESSAGE_EVENTS or name == "gen_ai.choice":
            body = _event_body(a)
            if name == "gen_ai.choice":
                message = body.get("message")
                outputs.append({"role": "assistant", **(message if isinstance(message, dict) else body)})
            else:
                role = _MESSAGE_EVENTS[name]
                inputs.append({"role": role, **body, **({"tool_call_id": body["id"]}
                                                        if role == "tool" and "id" in body else {})})
    return inputs, outputs


def _event_body(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """A per-message event's fields: its attributes, or the JSON object in ``gen_ai.event.content``."""
    content = attributes.get("gen_ai.event.content")
    if isinstance(content, str):
        try:
            parsed = json.loads(content)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict) and not nested_deeper(parsed, MAX_MESSAGE_DEPTH):
            return parsed
    return {k: v for k, v in attributes.items() if not k.startswith("gen_ai.") or k == "gen_ai.event.content"}


def _messages(attributes: Mapping[str, Any], json_key: str, openinference: str,
              indexed: str) -> tuple[list[Message], str]:
    """The messages under one of the three conventions' keys, and which one held them."""
    if json_key in attributes:
        return [_genai_message(m) for m in _json_list(attributes[json_key])], "genai"
    if found := indexed_items(attributes, openinference):
        return [_openinference_message(m) for m in found], "openinference"
    if found := indexed_items(attributes, indexed):
        return [_indexed_message(m) for m in found], "genai"
    return [], ""


def indexed_items(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Flattened list attributes (``prefix.N.rest``) as one dict of ``rest`` keys per N,
    in N's order, read in one pass. WHY a dict keyed by N, not a list N long: an index
    of 10**6 in a hostile file must not allocate a million slots."""
    items: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if key.startswith(prefix):
            index, dot, rest = key[len(prefix):].partition(".")
            if dot and index.isdigit() and len(index) <= 6:
                items.setdefault(int(index), {})[rest] = value
    return [items[i] for i in sorted(items)]


# -- GenAI, current: JSON messages with parts --------------------------------------------


def _json_list(raw: Any) -> list[Mapping[str, Any]]:
    """A JSON message list (a string, or already a list). WHY dict, not Mapping, below:
    parsed JSON holds dicts, and typing's isinstance check costs ten times more."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError):
            return []
    if nested_deeper(raw, MAX_MESSAGE_DEPTH):  # WHY: reading text out of it recurses
        return []
    return [m for m in raw if isinstance(m, dict)] if isinstance(raw, list) else []


def _genai_message(message: Mapping[str, Any]) -> Message:
    """A message with ``parts`` (current conventions), or the chat form some emitters
    write (``content``, ``tool_calls`` with ``function``, ``tool_call_id``)."""
    role = str(message.get("role") or "")
    parts = [p for p in message.get("parts") or [] if isinstance(p, dict)] \
        if isinstance(message.get("parts"), list) else []
    asked = [Asked(_id(p.get("id")), str(p.get("name") or ""), p.get("arguments"))
             for p in parts if p.get("type") == "tool_call"]
    results = [(_id(p.get("id")), as_text(p.get("response"))) for p in parts if p.get("type") == "tool_call_response"]
    text = "\n".join(as_text(p.get("content")) for p in parts if p.get("type") == "text")
    if not parts:
        asked = [_chat_call(c) for c in message.get("tool_calls") or [] if isinstance(c, dict)] \
            if isinstance(message.get("tool_calls"), list) else []
        text = text_of(message.get("content"))
        if role == "tool" and message.get("tool_call_id"):
            results, text = [(_id(message.get("tool_call_id")), text)], ""
    return Message(role, text, tuple(asked), tuple(results))


def _chat_call(call: Mapping[str, Any]) -> Asked:
    function = call.get("function")
    function = function if isinstance(function, dict) else call
    return Asked(_id(call.get("id")), str(function.get("name") or ""), function.get("arguments"))


# -- OpenInference and GenAI indexed: flattened attributes -------------------------------


def _openinference_message(fields: Mapping[str, Any]) -> Message:
    role = str(fields.get("message.role") or "")
    contents = indexed_items(fields, "message.contents.")
    text = as_text(fields.get("message.content")) or "\n".join(
        as_text(c.get("message_content.text")) for c in contents if c.get("message_content.text"))
    asked = tuple(Asked(_id(c.get("tool_call.id")), str(c.get("tool_call.function.name") or ""),
                        c.get("tool_call.function.arguments")) for c in indexed_items(fields, "message.tool_calls."))
    if role == "tool" and fields.get("message.tool_call_id"):
        return Message(role, "", asked, ((_id(fields.get("message.tool_call_id")), text),))
    return Message(role, text, asked)


def _indexed_message(fields: Mapping[str, Any]) -> Message:
    role = str(fields.get("role") or "")
    text = _content_text(fields.get("content"))
    asked = tuple(Asked(_id(c.get("id")), str(c.get("name") or ""), c.get("arguments"))
                  for c in indexed_items(fields, "tool_calls."))
    if role == "tool" and fields.get("tool_call_id"):
        return Message(role, "", asked, ((_id(fields.get("tool_call_id")), text),))
    return Message(role, text, asked)


def _content_text(content: Any) -> str:
    """An indexed ``content``: text, or a list of parts written as JSON."""
    if isinstance(content, str) and content.startswith("[{"):
        try:
            return text_of(json.loads(content))
        except (ValueError, RecursionError):
            return content
    return as_text(content)


def _id(value: Any) -> str:
    return str(value)[:200] if value not in (None, "") else ""


def as_text(value: Any) -> str:
    """A tool result or message content as text: a string is itself, other JSON is written out."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return f"<a {type(value).__name__} that is not JSON>"
