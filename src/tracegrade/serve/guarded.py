"""uvicorn's h11 protocol guarded: header and body deadlines, a bound on the request head, and a
connection limit that evicts the oldest connection still waiting for its headers (``serve.hardening``
says what each protects against).

WHY a module of its own, loaded when a server starts: it subclasses uvicorn's and h11's classes,
which a command that serves nothing need not import.
"""

from __future__ import annotations

import asyncio
import os
import socket
from typing import Any, Callable

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle

from tracegrade.serve.limits import Limits


def protocol_for(limits: Limits) -> type[GuardedProtocol]:
    """A protocol class for one server: its limits, and its own list of waiting connections."""
    return type("Guarded", (GuardedProtocol,), {"limits": limits, "waiting": {}})


class GuardedProtocol(H11Protocol):
    """One server's connections: its ``limits``, and its connections waiting for request headers,
    oldest first (``waiting``), set on the subclass ``protocol_for`` makes for it."""

    limits: Limits
    waiting: dict[Any, None]
    _deadline: asyncio.TimerHandle | None = None
    _cycle_seen: RequestResponseCycle | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = BoundedHead(self.conn.our_role, max_incomplete_event_size=self.limits.max_header_bytes)

    def send_400_response(self, msg: str) -> None:
        if not getattr(self.conn, "head_too_large", False):
            return super().send_400_response(msg)
        body = f"request line and headers over {self.limits.max_header_bytes} bytes".encode()
        self.transport.write(b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain\r\n"
                             b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body))
        self.transport.close()

    # WHY the ignore: uvicorn's H11Protocol narrows the transport to asyncio.Transport the same way.
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections and not _evict_oldest(self.waiting, self):
            transport.write(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            transport.close()
            return
        self._await_headers()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.cycle is not None and self.cycle is not self._cycle_seen:  # a request's headers are in
            self._cycle_seen = self.cycle
            self.waiting.pop(self, None)
            self._arm(self.limits.body_timeout_s, self._body_late)

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may start a pipelined request at once
        if self.transport.is_closing():
            return
        if self.cycle is not self._cycle_seen and not self.cycle.response_complete:
            self._cycle_seen = self.cycle
            self._arm(self.limits.body_timeout_s, self._body_late)
        else:
            # WHY again: uvicorn's keep-alive timer stops at the first byte,
            # so a client could then trickle a header forever.
            self._await_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self.waiting.pop(self, None)
        self._arm(None, None)
        super().connection_lost(exc)

    def _await_headers(self) -> None:
        self.waiting[self] = None
        self._arm(self.limits.header_timeout_s, self._close)

    def _body_late(self) -> None:
        if self.cycle is not None and self.cycle.more_body:
            self._close()

    def _arm(self, seconds: float | None, callback: Callable[[], None] | None) -> None:
        """Call ``callback`` in ``seconds`` instead of what was armed before; (None, None) disarms."""
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = self.loop.call_later(seconds, callback) if seconds and callback else None

    def _close(self) -> None:
        self.waiting.pop(self, None)
        if not self.transport.is_closing():
            self.transport.close()


class BoundedHead(h11.Connection):
    """An h11 server connection that refuses a request whose line and headers pass its
    ``max_incomplete_event_size``. WHY besides h11's own bound: that bounds only a head still
    arriving; a 120 KB request line sent in one write is complete at once and passed it."""

    head_too_large = False

    def __init__(self, our_role: Any, max_incomplete_event_size: int) -> None:
        super().__init__(our_role, max_incomplete_event_size=max_incomplete_event_size)
        self._max_head = max_incomplete_event_size

    def next_event(self) -> Any:
        try:
            event = super().next_event()
        except h11.RemoteProtocolError as exc:
            self.head_too_large = exc.error_status_hint == 431  # h11's own bound, on a head still arriving
            raise
        if isinstance(event, h11.Request) and _head_bytes(event) > self._max_head:
            self.head_too_large = True
            raise h11.RemoteProtocolError("request head too large", error_status_hint=431)
        return event


def _head_bytes(request: Any) -> int:
    """The size of a request's line and headers as sent (each line with its CRLF)."""
    line = len(request.method) + len(request.target) + len(b" HTTP/1.1\r\n") + 1
    return line + sum(len(name) + len(value) + 4 for name, value in request.headers.raw_items())


def _evict_oldest(waiting: dict[Any, None], newcomer: object) -> bool:
    """Close the oldest connection that is waiting for its headers and has sent
    nothing not yet read. WHY the second test: the event loop accepts a burst of
    connections before it reads any, so a request already sitting in its socket
    (a health probe in the middle of a flood) looks idle but is not."""
    for victim in waiting:
        if victim is not newcomer and not _unread_bytes(victim.transport):
            victim._close()
            return True
    return False


def _unread_bytes(transport: asyncio.BaseTransport) -> bool:
    raw = transport.get_extra_info("socket")
    if raw is None:
        return False
    try:
        with socket.socket(fileno=os.dup(raw.fileno())) as sock:  # a duplicate: closing it leaves the original
            return bool(sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return False
