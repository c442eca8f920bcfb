"""What one case's agent asked its model, recorded while the case runs.

A Recorder lives in a context variable set around one case: the SDK hooks add
to the Recorder of the context they run in, so concurrent cases never mix
their calls (asyncio tasks copy the context; so do ``asyncio.to_thread`` and
the thread pools of LangChain and the OpenAI Agents SDK). A call made outside
any case's context is not recorded at all.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Literal

Provider = Literal["openai-chat", "openai-responses", "anthropic"]
MAX_EXCHANGES = 1000  # of one case: an agent stuck in a loop stops being recorded, the run goes on


@dataclass(frozen=True)
class Exchange:
    """One model call: the request's keyword arguments and the response as a dict."""

    provider: Provider
    request: dict[str, Any]
    response: dict[str, Any]
    start_s: float
    end_s: float


@dataclass
class Recorder:
    """The model calls of one case, in the order they finished."""

    started_s: float = field(default_factory=time.perf_counter)
    exchanges: list[Exchange] = field(default_factory=list)
    spans: list[Any] = field(default_factory=list)
    dropped: int = 0

    def add(self, exchange: Exchange) -> None:
        if len(self.exchanges) >= MAX_EXCHANGES:
            self.dropped += 1
            return
        self.exchanges.append(exchange)

    def finished(self, provider: Provider, request: dict[str, Any], response: Any, start_s: float) -> None:
        """A call that ends now: its request, and its response as a plain dict."""
        self.add(Exchange(provider, dict(request), as_plain(response), start_s, time.perf_counter()))


_current: contextvars.ContextVar[Recorder | None] = contextvars.ContextVar("tracegrade_recorder", default=None)


def current() -> Recorder | None:
    """The Recorder of the case this code runs for, if any."""
    return _current.get()


@contextlib.contextmanager
def recording() -> Iterator[Recorder]:
    """A new Recorder for the code inside the block (one case)."""
    recorder = Recorder()
    token = _current.set(recorder)
    try:
        yield recorder
    finally:
        _current.reset(token)


def record(provider: Provider, request: dict[str, Any], response: Any, start_s: float) -> None:
    """Add a finished call to the current case's Recorder (nothing outside a case)."""
    recorder = current()
    if recorder is not None:
        recorder.finished(provider, request, response, start_s)


def as_plain(response: Any) -> dict[str, Any]:
    """An SDK response as a plain dict (a raw-response wrapper is parsed first)."""
    if isinstance(response, dict):
        return response
    if not hasattr(response, "model_dump") and hasattr(response, "parse"):
        response = response.parse()  # ``with_raw_response``: the SDK caches what it parsed
    dumped = response.model_dump() if hasattr(response, "model_dump") else {}
    return dumped if isinstance(dumped, dict) else {}
