"""Hooks on the ``openai`` and ``anthropic`` SDKs' create methods, installed
for the length of a run and removed after it.

WHY patch the resource classes and not a client: the agent makes its own
client, often at import. The hook only *records* (into the Recorder of the
case the call runs for, see ``recorder.py``) and returns the SDK's own result,
so an agent behaves the same with and without capture; outside a case's
context a hooked call records nothing.

Streamed calls (``stream=True``: openai chat completions and Responses, anthropic messages)
are recorded when the stream ends: the hook hands back a stream that passes
every chunk through and puts the chunks together (``streams.py``); anthropic's
``messages.stream(...)`` helper, when its ``with`` block is left.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import threading
import time
from typing import Any, Callable, Iterator

from tracegrade.capture.recorder import Provider, current, record, snapshot
from tracegrade.capture.streams import GATHERERS, managed, tapped
from tracegrade.core.errors import ConfigError

# source -> (module, class, method, provider) for each method hooked
_TARGETS: dict[str, tuple[tuple[str, str, str, Provider], ...]] = {
    "openai": (
        ("openai.resources.chat.completions.completions", "Completions", "create", "openai-chat"),
        ("openai.resources.chat.completions.completions", "AsyncCompletions", "create", "openai-chat"),
        ("openai.resources.responses.responses", "Responses", "create", "openai-responses"),
        ("openai.resources.responses.responses", "AsyncResponses", "create", "openai-responses"),
    ),
    "anthropic": (
        ("anthropic.resources.messages.messages", "Messages", "create", "anthropic"),
        ("anthropic.resources.messages.messages", "AsyncMessages", "create", "anthropic"),
        # WHY the stream helper too: it posts the request itself, not through create
        ("anthropic.resources.messages.messages", "Messages", "stream", "anthropic"),
        ("anthropic.resources.messages.messages", "AsyncMessages", "stream", "anthropic"),
    ),
}
_lock = threading.Lock()
_installed: dict[tuple[str, str, str], tuple[Any, int]] = {}  # (module, class, method) -> (original, users)


@contextlib.contextmanager
def hooked(source: str) -> Iterator[None]:
    """The SDK of ``source`` ("openai", "anthropic") hooked inside the block.
    Nested and concurrent blocks share one hook (counted), removed by the last."""
    hooks = [(_load(source, module, name), (module, name, method), provider)
             for module, name, method, provider in _TARGETS[source]]
    with _lock:
        for cls, key, provider in hooks:
            original, users = _installed.get(key, (getattr(cls, key[2]), 0))
            if users == 0:
                wrap = _wrap if key[2] == "create" else _wrap_stream_helper
                setattr(cls, key[2], wrap(original, provider))
            _installed[key] = (original, users + 1)
    try:
        yield
    finally:
        with _lock:
            for cls, key, _ in hooks:
                original, users = _installed[key]
                if users == 1:
                    setattr(cls, key[2], original)
                    del _installed[key]
                else:
                    _installed[key] = (original, users - 1)


def check_installed(source: str) -> None:
    """ConfigError, before any case runs, when the SDK of ``source`` is not installed."""
    for module, name, _, _ in _TARGETS[source]:
        _load(source, module, name)


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
        request = snapshot(kwargs)  # WHY before the call: what was sent, whatever the agent appends after
        result = original(self, *args, **kwargs)
        if inspect.isawaitable(result):
            return _finish(provider, request, result, started)
        return _recorded(provider, request, result, started)
    return create


def _wrap_stream_helper(original: Callable[..., Any], provider: Provider) -> Callable[..., Any]:
    """anthropic's ``messages.stream(...)``: its manager, recording the message it streamed on exit."""
    @functools.wraps(original)
    def stream(self: Any, *args: Any, **kwargs: Any) -> Any:
        manager = original(self, *args, **kwargs)
        recorder = current()
        if recorder is None:
            return manager
        started, request = time.perf_counter(), snapshot(kwargs)

        def done(message: Any) -> None:
            recorder.finished(provider, request, message, started)

        return managed(manager, done)
    return stream


async def _finish(provider: Provider, request: dict[str, Any], pending: Any, started: float) -> Any:
    return _recorded(provider, request, await pending, started)


def _recorded(provider: Provider, request: dict[str, Any], result: Any, started: float) -> Any:
    if not request.get("stream"):
        record(provider, request, result, started)
        return result
    recorder = current()

    def done(response: dict[str, Any]) -> None:
        if recorder is not None:
            recorder.finished(provider, request, response, started)

    return tapped(result, GATHERERS[provider](done))
