"""Hooks on the ``openai`` and ``anthropic`` SDKs' create methods, installed
for the length of a run and removed after it.

WHY patch the resource classes and not a client: the agent makes its own
client, often at import. The hook only *records* (into the Recorder of the
case the call runs for, see ``recorder.py``) and returns the SDK's own result,
so an agent behaves the same with and without capture; outside a case's
context a hooked call records nothing.

Streaming chat completions (``stream=True``) are recorded when the stream
ends: the hook hands back a stream that passes every chunk through and puts
the chunks together.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import threading
import time
from typing import Any, Callable, Iterator

from tracegrade.capture.recorder import Exchange, Provider, current, record
from tracegrade.core.errors import ConfigError

# source -> (module, class, provider) for each create method hooked
_TARGETS: dict[str, tuple[tuple[str, str, Provider], ...]] = {
    "openai": (
        ("openai.resources.chat.completions.completions", "Completions", "openai-chat"),
        ("openai.resources.chat.completions.completions", "AsyncCompletions", "openai-chat"),
        ("openai.resources.responses.responses", "Responses", "openai-responses"),
        ("openai.resources.responses.responses", "AsyncResponses", "openai-responses"),
    ),
    "anthropic": (
        ("anthropic.resources.messages.messages", "Messages", "anthropic"),
        ("anthropic.resources.messages.messages", "AsyncMessages", "anthropic"),
    ),
}
_lock = threading.Lock()
_installed: dict[tuple[str, str], tuple[Any, int]] = {}  # (module, class) -> (original create, users)


@contextlib.contextmanager
def hooked(source: str) -> Iterator[None]:
    """The SDK of ``source`` ("openai", "anthropic") hooked inside the block.
    Nested and concurrent blocks share one hook (counted), removed by the last."""
    classes = [(_load(source, module, name), module, name, provider) for module, name, provider in _TARGETS[source]]
    with _lock:
        for cls, module, name, provider in classes:
            original, users = _installed.get((module, name), (cls.create, 0))
            if users == 0:
                cls.create = _wrap(original, provider)
            _installed[(module, name)] = (original, users + 1)
    try:
        yield
    finally:
        with _lock:
            for cls, module, name, _ in classes:
                original, users = _installed[(module, name)]
                if users == 1:
                    cls.create = original
                    del _installed[(module, name)]
                else:
                    _installed[(module, name)] = (original, users - 1)


def _load(source: str, module: str, name: str) -> Any:
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError:
        raise ConfigError(f"--capture {source} needs the {source!r} package, which is not installed: "
                          f"pip install 'tracegrade[{source}]'") from None


def _wrap(original: Callable[..., Any], provider: Provider) -> Callable[..., Any]:
    # WHY one wrapper for sync and async clients: the SDK's async create is
    # wrapped by a sync decorator, so it is told apart by what it returns.
    @functools.wraps(original)
    def create(self: Any, *args: Any, **kwargs: Any) -> Any:
        if current() is None:
            return original(self, *args, **kwargs)
        started = time.perf_counter()
        result = original(self, *args, **kwargs)
        if inspect.isawaitable(result):
            return _finish(provider, kwargs, result, started)
        return _recorded(provider, kwargs, result, started)
    return create


async def _finish(provider: Provider, request: dict[str, Any], pending: Any, started: float) -> Any:
    return _recorded(provider, request, await pending, started)


def _recorded(provider: Provider, request: dict[str, Any], result: Any, started: float) -> Any:
    if not request.get("stream"):
        record(provider, request, result, started)
        return result
    if provider != "openai-chat":
        return result  # WHY not recorded: only chat-completion chunks are put together here (docs/agents.md)
    recorder = current()

    def done(message: dict[str, Any]) -> None:
        if recorder is not None:
            recorder.add(_exchange(request, message, started))

    gather = _ChunkGatherer(done)
    return _AsyncStreamTap(result, gather) if hasattr(result, "__aiter__") else _StreamTap(result, gather)


def _exchange(request: dict[str, Any], response: dict[str, Any], started: float) -> Exchange:
    return Exchange("openai-chat", dict(request), response, started, time.perf_counter())


class _ChunkGatherer:
    """Chat completion chunks put together into one response dict."""

    def __init__(self, done: Callable[[dict[str, Any]], Any]) -> None:
        self._done = done
        self._text: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._model = ""
        self._usage: dict[str, Any] | None = None
        self._finished = False

    def add(self, chunk: Any) -> None:
        data = chunk.model_dump() if hasattr(chunk, "model_dump") else dict(chunk)
        self._model = data.get("model") or self._model
        self._usage = data.get("usage") or self._usage
        for choice in data.get("choices") or []:
            delta = choice.get("delta") or {}
            self._text.append(delta.get("content") or "")
            for call in delta.get("tool_calls") or []:
                slot = self._calls.setdefault(call.get("index", 0), {"id": "", "type": "function",
                                                                     "function": {"name": "", "arguments": ""}})
                slot["id"] = call.get("id") or slot["id"]
                function = call.get("function") or {}
                slot["function"]["name"] += function.get("name") or ""
                slot["function"]["arguments"] += function.get("arguments") or ""

    def finish(self) -> None:
        if self._finished:
            return
        self._finished = True
        message = {"role": "assistant", "content": "".join(self._text),
                   "tool_calls": [self._calls[i] for i in sorted(self._calls)] or None}
        self._done({"model": self._model, "choices": [{"message": message}], "usage": self._usage})


class _StreamTap:
    """The SDK's stream, every chunk passed through and gathered."""

    def __init__(self, stream: Any, gather: _ChunkGatherer) -> None:
        self._stream, self._gather = stream, gather

    def __iter__(self) -> Iterator[Any]:
        try:
            for chunk in self._stream:
                self._gather.add(chunk)
                yield chunk
        finally:
            self._gather.finish()

    def __enter__(self) -> _StreamTap:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._gather.finish()
        self._stream.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _AsyncStreamTap:
    def __init__(self, stream: Any, gather: _ChunkGatherer) -> None:
        self._stream, self._gather = stream, gather

    async def __aiter__(self) -> Any:
        try:
            async for chunk in self._stream:
                self._gather.add(chunk)
                yield chunk
        finally:
            self._gather.finish()

    async def __aenter__(self) -> _AsyncStreamTap:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self._gather.finish()
        await self._stream.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
