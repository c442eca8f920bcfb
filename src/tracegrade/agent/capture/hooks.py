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

from tracegrade.agent.capture.recorder import Provider, current, record, snapshot
from tracegrade.agent.capture.streams import GATHERERS, managed, tapped
from tracegrade.core.errors import ConfigError

# source -> (modules, class, method, provider, required) for each method hooked. WHY several
# modules: the SDKs moved their resources into packages (openai 1.55's chat/completions.py is
# 3.x's chat/completions/completions.py); the first that imports is used. WHY optional: an SDK
# older than the Responses API (openai < 1.66) still has chat completions to capture.
_CHAT = ("openai.resources.chat.completions.completions", "openai.resources.chat.completions")
_RESPONSES = ("openai.resources.responses.responses",)
_MESSAGES = ("anthropic.resources.messages.messages", "anthropic.resources.messages")
_TARGETS: dict[str, tuple[tuple[tuple[str, ...], str, str, Provider, bool], ...]] = {
    "openai": (
        (_CHAT, "Completions", "create", "openai-chat", True),
        (_CHAT, "AsyncCompletions", "create", "openai-chat", True),
        (_RESPONSES, "Responses", "create", "openai-responses", False),
        (_RESPONSES, "AsyncResponses", "create", "openai-responses", False),
    ),
    "anthropic": (
        (_MESSAGES, "Messages", "create", "anthropic", True),
        (_MESSAGES, "AsyncMessages", "create", "anthropic", True),
        # WHY the stream helper too: it posts the request itself, not through create
        (_MESSAGES, "Messages", "stream", "anthropic", False),
        (_MESSAGES, "AsyncMessages", "stream", "anthropic", False),
    ),
}
_INHERITED = object()  # a hooked method the class got from a base: removed again, not set on it
_lock = threading.Lock()
_installed: dict[tuple[str, str, str], tuple[Any, int]] = {}  # (module, class, method) -> (original, users)


@contextlib.contextmanager
def hooked(source: str) -> Iterator[None]:
    """The SDK of ``source`` ("openai", "anthropic") hooked inside the block.
    Nested and concurrent blocks share one hook (counted), removed by the last."""
    found = [(_load(source, modules, name, required), (modules[0], name, method), provider)
             for modules, name, method, provider, required in _TARGETS[source]]
    hooks = [(cls, key, provider) for cls, key, provider in found if cls is not None and hasattr(cls, key[2])]
    with _lock:
        for cls, key, provider in hooks:
            # WHY the class's own entry kept apart: another instrumentor's wrapper (wrapt) binds anew on each
            # read, so what is put back must be the entry itself, not the method read through it
            own, users = _installed.get(key, (cls.__dict__.get(key[2], _INHERITED), 0))
            if users == 0:
                wrap = _wrap if key[2] == "create" else _wrap_stream_helper
                setattr(cls, key[2], wrap(getattr(cls, key[2]), provider))
            _installed[key] = (own, users + 1)
    try:
        yield
    finally:
        with _lock:
            for cls, key, _ in hooks:
                own, users = _installed[key]
                if users == 1:
                    if own is _INHERITED:
                        delattr(cls, key[2])
                    else:
                        setattr(cls, key[2], own)
                    del _installed[key]
                else:
                    _installed[key] = (own, users - 1)


def check_installed(source: str) -> None:
    """ConfigError, before any case runs, when the SDK of ``source`` is not installed."""
    for modules, name, _, _, required in _TARGETS[source]:
        _load(source, modules, name, required)


def _load(source: str, modules: tuple[str, ...], name: str, required: bool) -> Any:
    """The SDK class ``name`` from the first of ``modules`` that has it; None for an optional one
    this SDK version lacks, ConfigError for a required one."""
    for module in modules:
        try:
            found = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if found is not None:
            return found
    if not required:
        return None
    raise ConfigError(f"--capture {source} needs the {source!r} package, which is not installed (or is too old "
                      f"to have {name}): pip install 'tracegrade[{source}]'")


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
