"""Streamed model replies put together into the one response they stand for.

The hooks (``hooks.py``) hand an agent a tap on the SDK's stream: every chunk
passes through unchanged, and when the stream ends (read to its end, closed,
or left by an exception) the gathered response is recorded once.

    >>> seen = []
    >>> gather = AnthropicEvents(seen.append)
    >>> for event in [{"type": "message_start", "message": {"model": "c", "usage": {"input_tokens": 7}}},
    ...               {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use",
    ...                "id": "t1", "name": "weather", "input": {}}},
    ...               {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta",
    ...                "partial_json": '{"city": "Pa'}},
    ...               {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta",
    ...                "partial_json": 'ris"}'}},
    ...               {"type": "message_delta", "delta": {}, "usage": {"output_tokens": 3}}]:
    ...     gather.add(event)
    >>> gather.finish(); gather.finish()  # recorded once
    >>> seen
    [{'model': 'c', 'usage': {'input_tokens': 7, 'output_tokens': 3}, 'content': [{'type': 'tool_use', 'id': 't1', 'name': 'weather', 'input': {'city': 'Paris'}}]}]
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterator

from tracegrade.agent.capture.recorder import Provider

Done = Callable[[dict[str, Any]], Any]


class Gatherer:
    """Chunks in, one response dict out to ``done``, once."""

    def __init__(self, done: Done) -> None:
        self._done = done
        self._finished = False

    def add(self, chunk: Any) -> None:
        self.take(chunk.model_dump() if hasattr(chunk, "model_dump") else dict(chunk))

    def take(self, data: dict[str, Any]) -> None:
        raise NotImplementedError

    def response(self) -> dict[str, Any] | None:
        """The response the chunks stand for; None when there is none to record."""
        raise NotImplementedError

    def finish(self) -> None:
        if not self._finished:
            self._finished = True
            response = self.response()
            if response is not None:
                self._done(response)


class OpenAIChunks(Gatherer):
    """Chat completion chunks: the text and each tool call's name and arguments by index."""

    def __init__(self, done: Done) -> None:
        super().__init__(done)
        self._text: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._model = ""
        self._usage: dict[str, Any] | None = None

    def take(self, data: dict[str, Any]) -> None:
        self._model = data.get("model") or self._model
        self._usage = data.get("usage") or self._usage
        for choice in data.get("choices") or []:
            delta = choice.get("delta") or {}
            self._text.append(delta.get("content") or "")
            for call in delta.get("tool_calls") or []:
                # WHY pieces joined at the end: a string grown in a dict is copied at every chunk
                # (10 MB of arguments in 1 KB chunks took 15 s; 20 MB, 133 s)
                slot = self._calls.setdefault(call.get("index", 0), {"id": "", "name": [], "arguments": []})
                slot["id"] = call.get("id") or slot["id"]
                function = call.get("function") or {}
                slot["name"].append(function.get("name") or "")
                slot["arguments"].append(function.get("arguments") or "")

    def response(self) -> dict[str, Any]:
        calls = [{"id": slot["id"], "type": "function",
                  "function": {"name": "".join(slot["name"]), "arguments": "".join(slot["arguments"])}}
                 for _, slot in sorted(self._calls.items())]
        message = {"role": "assistant", "content": "".join(self._text), "tool_calls": calls or None}
        return {"model": self._model, "choices": [{"message": message}], "usage": self._usage}


class AnthropicEvents(Gatherer):
    """Message stream events: the message's start, each content block with its text or its
    tool input's JSON pieces, and the usage the message's end adds."""

    def __init__(self, done: Done) -> None:
        super().__init__(done)
        self._message: dict[str, Any] = {}
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, list[str]] = {}  # WHY pieces: see OpenAIChunks
        self._text: dict[int, list[str]] = {}

    def take(self, data: dict[str, Any]) -> None:
        kind, index = data.get("type"), data.get("index", 0)
        if kind == "message_start":
            self._message = dict(data.get("message") or {})
        elif kind == "content_block_start":
            self._blocks[index] = dict(data.get("content_block") or {})
        elif kind == "content_block_delta":
            delta = data.get("delta") or {}
            block = self._blocks.setdefault(index, {"type": "text", "text": ""})
            if delta.get("type") == "text_delta":
                self._text.setdefault(index, [block.get("text") or ""]).append(delta.get("text") or "")
            elif delta.get("type") == "input_json_delta":
                self._json.setdefault(index, []).append(delta.get("partial_json") or "")
        elif kind == "message_delta":
            usage = {k: v for k, v in (data.get("usage") or {}).items() if v is not None}
            self._message["usage"] = {**(self._message.get("usage") or {}), **usage}

    def response(self) -> dict[str, Any]:
        for index, pieces in self._text.items():
            self._blocks[index]["text"] = "".join(pieces)
        for index, pieces in self._json.items():
            self._blocks[index]["input"] = _json_or_text("".join(pieces))
        return {**self._message, "content": [self._blocks[i] for i in sorted(self._blocks)]}


class ResponsesEvents(Gatherer):
    """Responses API stream events: the last one carries the whole response
    (``response.completed``, or ``.incomplete`` / ``.failed``); a stream broken
    off before it records nothing, as the SDK itself has no response then."""

    ENDS = ("response.completed", "response.incomplete", "response.failed")

    def __init__(self, done: Done) -> None:
        super().__init__(done)
        self._response: dict[str, Any] | None = None

    def take(self, data: dict[str, Any]) -> None:
        if data.get("type") in self.ENDS and isinstance(data.get("response"), dict):
            self._response = data["response"]

    def response(self) -> dict[str, Any] | None:
        return self._response


def _json_or_text(text: str) -> Any:
    """A tool input's JSON; as written when the stream broke off mid-way (the trace shows what came)."""
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return text


# WHY keyed by Provider: every provider hooked has its gatherer (mypy checks the keys).
GATHERERS: dict[Provider, Callable[[Done], Gatherer]] = {
    "openai-chat": OpenAIChunks, "openai-responses": ResponsesEvents, "anthropic": AnthropicEvents}


def tapped(stream: Any, gather: Gatherer) -> Any:
    """``stream`` (sync or async) passed through ``gather``."""
    return AsyncStreamTap(stream, gather) if hasattr(stream, "__aiter__") else StreamTap(stream, gather)


class StreamTap:
    """The SDK's stream, every chunk passed through and gathered."""

    def __init__(self, stream: Any, gather: Gatherer) -> None:
        self._stream, self._gather = stream, gather

    def __iter__(self) -> Iterator[Any]:
        try:
            for chunk in self._stream:
                self._gather.add(chunk)
                yield chunk
        finally:
            self._gather.finish()

    def __enter__(self) -> StreamTap:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._gather.finish()
        self._stream.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class AsyncStreamTap:
    def __init__(self, stream: Any, gather: Gatherer) -> None:
        self._stream, self._gather = stream, gather

    async def __aiter__(self) -> Any:
        try:
            async for chunk in self._stream:
                self._gather.add(chunk)
                yield chunk
        finally:
            self._gather.finish()

    async def __aenter__(self) -> AsyncStreamTap:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self._gather.finish()
        await self._stream.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def managed(manager: Any, done: Callable[[Any], Any]) -> Any:
    """A stream helper's context manager (sync or async) that hands ``done`` the message
    streamed so far when the block is left, then leaves the SDK's own manager."""
    return AsyncManagerTap(manager, done) if hasattr(manager, "__aenter__") else ManagerTap(manager, done)


def _snapshot(stream: Any) -> Any:
    try:
        return stream.current_message_snapshot  # the SDK's message, put together from the events read
    except Exception:  # noqa: BLE001 - nothing read yet: nothing to record
        return None


class ManagerTap:
    def __init__(self, manager: Any, done: Callable[[Any], Any]) -> None:
        self._manager, self._done, self._stream = manager, done, None

    def __enter__(self) -> Any:
        self._stream = self._manager.__enter__()
        return self._stream

    def __exit__(self, *exc: Any) -> Any:
        message = _snapshot(self._stream)
        if message is not None:
            self._done(message)
        return self._manager.__exit__(*exc)


class AsyncManagerTap:
    def __init__(self, manager: Any, done: Callable[[Any], Any]) -> None:
        self._manager, self._done, self._stream = manager, done, None

    async def __aenter__(self) -> Any:
        self._stream = await self._manager.__aenter__()
        return self._stream

    async def __aexit__(self, *exc: Any) -> Any:
        message = _snapshot(self._stream)
        if message is not None:
            self._done(message)
        return await self._manager.__aexit__(*exc)
