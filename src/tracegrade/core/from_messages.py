"""Conversations as the model providers write them, turned into a Reply.

An agent built on the ``openai`` or ``anthropic`` SDK already holds its trace:
the message list it sent in its last model call. These functions read it, so
no one has to build ``ToolCall`` objects by hand. They return the Reply's wire
form; ``Reply.from_openai_messages`` and ``Reply.from_anthropic_messages`` are
the public doors (WHY not Reply here: trace.py calls this module, and the
package's imports must not run in a circle).

    >>> messages = [
    ...     {"role": "user", "content": "Weather in Paris?"},
    ...     {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function",
    ...      "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
    ...     {"role": "tool", "tool_call_id": "call_1", "content": "18 C, sunny"},
    ...     {"role": "assistant", "content": "It is 18 C and sunny in Paris."}]
    >>> wire = openai_messages_wire(messages)
    >>> wire["answer"], wire["toolCalls"][0]["arguments"], wire["toolCalls"][0]["result"]
    ('It is 18 C and sunny in Paris.', {'city': 'Paris'}, '18 C, sunny')

Calls are numbered as the trace contract numbers them: ``turn`` is the user
message a call followed (1 = the question), ``round`` the assistant message
that asked for it (from 0, across the conversation; calls of one round ran in
parallel). A tool result is paired with its call by id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from tracegrade.core.frameworks import failed_call, read_conventions, text_calls, text_result, tool_descriptions

Status = str  # a trace contract tool status: "ok" or "error" here


@dataclass
class _Conversation:
    """What a message list holds, gathered in one pass."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    results: dict[str, tuple[str, Status]] = field(default_factory=dict)
    turns: list[dict[str, str]] = field(default_factory=list)
    turn: int = 0
    round: int = -1
    answer: str = ""
    # Responses API items carry no assistant message around parallel calls: a
    # run of consecutive function_call items is one round.
    last_was_call: bool = False
    descriptions: dict[str, str] = field(default_factory=dict)  # the offered tools', by name (handoffs)

    def user(self, text: str) -> None:
        self.turn += 1
        self.turns.append({"role": "user", "content": text})

    def assistant_text(self, text: str) -> None:
        if text:
            self.answer = text
            self.turns.append({"role": "assistant", "content": text})

    def call(self, call_id: str, name: str, arguments: Any) -> None:
        self.calls.append({"id": call_id or None, "name": name, "arguments": parse_arguments(arguments),
                           "turn": max(self.turn, 1), "round": self.round})

    def wire(self) -> dict[str, Any]:
        """The Reply's wire form (``Reply.from_wire`` reads it)."""
        turns = self.turns if sum(m["role"] == "user" for m in self.turns) > 1 else []
        calls, answer = read_conventions([self._tool_call(c) for c in self.calls], self.answer, self.descriptions)
        return {"answer": answer, "toolCalls": calls, "turns": turns}

    def _tool_call(self, call: dict[str, Any]) -> dict[str, Any]:
        result, status = call.get("sent") or self.results.get(call["id"] or "", ("", "ok"))
        first = next(iter(call["arguments"].values()), None)
        kept = {key: value for key, value in call.items() if key != "sent"}
        return {**kept, "argument": first if isinstance(first, str) else None, "result": result, "status": status}


MAX_ARGUMENT_DEPTH = 100  # of a call's arguments: deeper is kept as written, under _raw


def parse_arguments(raw: Any) -> dict[str, Any]:
    """A call's arguments as a dict: providers send a JSON string (openai) or an
    object (anthropic). WHY keep what does not parse under ``_raw``: a model
    that wrote broken JSON made a wrong call, and the check should show it.
    Arguments nested deeper than MAX_ARGUMENT_DEPTH are kept as written too
    (WHY: every later reader of them would recurse that deep)."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if raw in (None, ""):
        return {}
    try:
        parsed = json.loads(raw)
    except (TypeError, ValueError, RecursionError):
        return {"_raw": str(raw)}
    if nested_deeper(parsed, MAX_ARGUMENT_DEPTH):
        return {"_raw": str(raw)}
    return parsed if isinstance(parsed, dict) else {"_raw": parsed}


def nested_deeper(value: Any, limit: int) -> bool:
    """Whether lists and dicts in ``value`` nest more than ``limit`` deep; without
    recursion, and stopping at the first level past the limit."""
    level = [value] if isinstance(value, (list, dict)) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        level = [child for item in level for child in (item.values() if isinstance(item, dict) else item)
                 if isinstance(child, (list, dict))]
    return False


def as_dict(message: Any) -> dict[str, Any]:
    """A message as a plain dict, whether it is one already or an SDK object."""
    if isinstance(message, Mapping):
        return dict(message)
    if hasattr(message, "model_dump"):
        dumped = message.model_dump(exclude_none=False)
        return dumped if isinstance(dumped, dict) else {}
    raise TypeError(f"a message must be a dict or an SDK message object, got {type(message).__name__}")


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or a list of parts of which
    the text ones count (``text``, ``output_text``, ``input_text``)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        return str(content.get("text") or content.get("content") or "") if _is_text(content) else ""
    if isinstance(content, Iterable):
        return "\n".join(t for t in (text_of(part) for part in content) if t)
    return str(content)


def _is_text(part: Mapping[str, Any]) -> bool:
    return part.get("type") in (None, "text", "output_text", "input_text")


# -- openai: chat completions messages and Responses API items ---------------------------


def openai_messages_wire(messages: Iterable[Any], tools: Any = None) -> dict[str, Any]:
    """A Reply from an OpenAI chat message list (user, assistant with
    ``tool_calls``, ``tool`` results, the final assistant answer), or from the
    Responses API's input and output items (``function_call``,
    ``function_call_output``, ``message``); both kinds may be mixed. ``tools``:
    the request's tools, whose descriptions tell a framework's handoff
    (core/frameworks.py). Returns the wire form; ``Reply.from_openai_messages``
    is the public door."""
    talk = _Conversation(descriptions=tool_descriptions(tools))
    for raw in messages:
        message = as_dict(raw)
        if message.get("type") in _RESPONSES_ITEMS:
            _responses_item(talk, message)
        else:
            _chat_message(talk, message)
    return talk.wire()


def _chat_message(talk: _Conversation, message: dict[str, Any]) -> None:
    role = message.get("role")
    if role == "user":
        _user_text(talk, text_of(message.get("content")))
    elif role == "assistant":
        calls = message.get("tool_calls") or text_calls(text_of(message.get("content"))) or []
        if calls and not message.get("tool_calls"):  # smolagents' text form: the calls, no text of the model's
            message = {**message, "content": None}
        if calls:
            talk.round += 1
        for call in calls:
            function = as_dict(call).get("function") or {}
            talk.call(str(as_dict(call).get("id") or ""), str(function.get("name") or ""), function.get("arguments"))
        talk.assistant_text(text_of(message.get("content")))
    elif role in ("tool", "function"):
        talk.results[str(message.get("tool_call_id") or message.get("name") or "")] = (
            text_of(message.get("content")), "ok")


def _user_text(talk: _Conversation, text: str) -> None:
    """A user message: the user speaking, or a tool's result a framework sent as the user's
    (smolagents: "Observation:\\n...", and an error report naming the tool)."""
    result = text_result(text)
    if result is None:
        talk.user(text)
        return
    said, output, status = result
    if said:
        talk.user(said)
    waiting = [c for c in talk.calls if c["round"] == talk.round and "sent" not in c
               and (c["id"] or "") not in talk.results]
    if status == "error":
        named = [c for c in waiting if output.startswith(f"Error executing tool '{c['name']}'")]
        if not named:  # the failed call was not sent back: it is known by its report alone, a round of its own
            talk.round += 1
            talk.call("", *failed_call(output))
            named = talk.calls[-1:]
        waiting = named[-1:]
    for call in waiting:
        call["sent"] = (output, status)


_RESPONSES_ITEMS = ("message", "function_call", "function_call_output", "reasoning")


def _responses_item(talk: _Conversation, item: dict[str, Any]) -> None:
    kind = item["type"]
    if kind == "function_call":
        if not talk.last_was_call:
            talk.round += 1
        talk.call(str(item.get("call_id") or item.get("id") or ""), str(item.get("name") or ""), item.get("arguments"))
    elif kind == "function_call_output":
        talk.results[str(item.get("call_id") or "")] = (text_of(item.get("output")), "ok")
    elif kind == "message" and item.get("role") == "user":
        talk.user(text_of(item.get("content")))
    elif kind == "message" and item.get("role") == "assistant":
        talk.assistant_text(text_of(item.get("content")))
    talk.last_was_call = kind == "function_call"


# -- anthropic: messages with tool_use and tool_result blocks ----------------------------


def anthropic_messages_wire(messages: Iterable[Any], tools: Any = None) -> dict[str, Any]:
    """A Reply from an Anthropic message list: assistant ``tool_use`` blocks are
    the calls, user ``tool_result`` blocks their results (``is_error`` marks a
    failed call), the last assistant text is the answer.

    >>> wire = anthropic_messages_wire([
    ...     {"role": "user", "content": "Weather in Oslo?"},
    ...     {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
    ...                                        "input": {"city": "Oslo"}}]},
    ...     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "4 C"}]},
    ...     {"role": "assistant", "content": [{"type": "text", "text": "4 C in Oslo."}]}])
    >>> wire["toolCalls"][0]["name"], wire["toolCalls"][0]["result"], wire["answer"]
    ('get_weather', '4 C', '4 C in Oslo.')
    """
    talk = _Conversation(descriptions=tool_descriptions(tools))
    for raw in messages:
        message = as_dict(raw)
        blocks = message.get("content")
        blocks = [{"type": "text", "text": blocks}] if isinstance(blocks, str) else [as_dict(b) for b in blocks or []]
        if message.get("role") == "assistant":
            _anthropic_assistant(talk, blocks)
        else:
            _anthropic_user(talk, blocks)
    return talk.wire()


def _anthropic_assistant(talk: _Conversation, blocks: list[dict[str, Any]]) -> None:
    uses = [b for b in blocks if b.get("type") == "tool_use"]
    if uses:
        talk.round += 1
    for block in uses:
        talk.call(str(block.get("id") or ""), str(block.get("name") or ""), block.get("input"))
    talk.assistant_text(text_of([b for b in blocks if b.get("type") == "text"]))


def _anthropic_user(talk: _Conversation, blocks: list[dict[str, Any]]) -> None:
    for block in blocks:
        if block.get("type") == "tool_result":
            status: Status = "error" if block.get("is_error") else "ok"
            talk.results[str(block.get("tool_use_id") or "")] = (text_of(block.get("content")), status)
    text = text_of([b for b in blocks if b.get("type") == "text"])
    if text:
        talk.user(text)


