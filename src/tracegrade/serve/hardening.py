"""Serving over HTTP safely: the Host allow-list and the connection limits both
servers (``shopnest serve``, ``tracegrade monitor``) run with.

    >>> allowed_hosts_for("127.0.0.1")
    ('localhost', '127.0.0.1', '::1')

What it protects against (docs/reliability.md lists every number):

- **DNS rebinding**: a web page whose name resolves to 127.0.0.1 sends
  ``Host: attacker.example``; only the names the server is bound to (or
  ``--allowed-hosts``) are answered. A browser request from another origin
  (an ``Origin`` header naming another host) is refused as well.
- **Idle and slow connections**: a client must finish its request headers
  within ``header_timeout_s`` of connecting (or of its last response), and its
  body within ``body_timeout_s``; an idle keep-alive connection closes after
  ``keep_alive_s``. A request line and headers over ``max_header_bytes``
  together get a 431, whether they trickle in or come in one write. Past ``max_connections`` the oldest connection still
  waiting for its headers is closed to make room, so idle sockets can never
  lock out a real request; when every connection is busy, the newcomer gets a 503.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import socket
import sys
from typing import TYPE_CHECKING, Iterable
from urllib.parse import urlsplit

from tracegrade.serve.limits import Limits

if TYPE_CHECKING:
    import uvicorn
    from starlette.types import ASGIApp, Receive, Scope, Send
    from uvicorn.protocols.http.h11_impl import H11Protocol

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
_ANY_ADDRESS = ("0.0.0.0", "::", "")
_FD_RESERVE = 64  # files the process needs besides its connections (stores, logs, the model)
# WHY not longer: under a flood of connections a request waits behind the whole
# accept queue (a long one measured 5 s); the kernel refuses past it instead.
BACKLOG = 512


def allowed_hosts_for(bind_host: str, extra: Iterable[str] = ()) -> tuple[str, ...]:
    """The Host names a server bound to ``bind_host`` answers: loopback names, the
    bound address, this machine's names and address when bound to every address,
    and ``extra``. WHY its address is safe to answer: DNS rebinding needs a name
    the attacker controls; a Host that is an address is not one."""
    names = list(LOOPBACK_NAMES)
    if bind_host in _ANY_ADDRESS:
        names += [socket.gethostname(), socket.getfqdn(), *filter(None, [own_address()])]
    elif bind_host:
        names.append(bind_host)
    names += [h.strip() for h in extra if h.strip()]
    return tuple(dict.fromkeys(n.lower().rstrip(".") for n in names))


def own_address() -> str | None:
    """The IPv4 address this machine reaches others from, or None without a route.
    No packet is sent: connecting a UDP socket only picks the route."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1 (RFC 5737): routed by default, never answered
            return str(probe.getsockname()[0])
    except OSError:
        return None


def public_url(bind_host: str, port: int, loopback: str = "localhost") -> str:
    """A URL of a server bound to ``bind_host`` that its Host allow-list answers.
    WHY not the bound address: a browser sends ``Host: 0.0.0.0``, which no allow-list names."""
    if bind_host in LOOPBACK_NAMES:
        name = loopback
    elif bind_host in _ANY_ADDRESS:
        name = own_address() or socket.gethostname()
    else:
        name = bind_host
    return f"http://{f'[{name}]' if ':' in name else name}:{port}"


def other_names_hint(bind_host: str, env_prefix: str) -> str:
    """For a server bound to every address: how to answer a name it does not know
    (a DNS name, another interface's address); empty otherwise."""
    if bind_host not in _ANY_ADDRESS:
        return ""
    return (f"it answers this machine's name ({socket.gethostname()}) and address; to reach it under another "
            f"name or address, pass it: --allowed-hosts evals.example.com,10.0.0.7 "
            f"(or {env_prefix}_ALLOWED_HOSTS)")


def parse_hosts(value: str | None) -> tuple[str, ...]:
    """``--allowed-hosts a,b`` as a tuple."""
    return tuple(h.strip() for h in (value or "").split(",") if h.strip())


def host_name(header: str) -> str:
    """The name in a Host header or an Origin's authority: ``[::1]:8000`` -> ``::1``."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0].rstrip(".") if header.count(":") == 1 else header.rstrip(".")


class HostGuard:
    """ASGI middleware: a request whose Host, or whose browser Origin, is not an
    allowed name gets a 400 / 403 before any route runs. ``"*"`` allows any."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str]) -> None:
        self.app = app
        self.allowed = frozenset(h.lower().rstrip(".") for h in allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or "*" in self.allowed:
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        host = headers.get(b"host", b"").decode("latin-1")
        if host_name(host) not in self.allowed:
            # WHY refuse: a DNS-rebinding page reaches this port under its own name.
            return await _refuse(send, 400, f"host: {host or '(none)'!r} is not served here")
        origin = headers.get(b"origin", b"").decode("latin-1")
        if origin and host_name(urlsplit(origin).netloc) not in self.allowed:
            return await _refuse(send, 403, f"origin: requests from {origin!r} are not accepted")
        return await self.app(scope, receive, send)


async def _refuse(send: Send, status: int, problem: str) -> None:
    import json

    body = json.dumps({"error": "invalid request", "problems": [problem]}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


# --- the connection limits ------------------------------------------------------------


def guarded_protocol(limits: Limits) -> type[H11Protocol]:
    """uvicorn's h11 protocol with header and body deadlines, a bound on the
    request head, and a connection limit that evicts the oldest connection
    still waiting for its headers (``serve.guarded``, loaded when a server starts)."""
    from tracegrade.serve.guarded import protocol_for

    return protocol_for(limits)


def raise_file_limit(wanted: int) -> int:
    """Raise this process's open-file limit toward ``wanted`` (up to the hard
    limit); returns how many connections fit in what it got."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted + _FD_RESERVE if hard == resource.RLIM_INFINITY else min(hard, wanted + _FD_RESERVE)
    if target > soft:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
    return max(1, soft - _FD_RESERVE)


def uvicorn_config(app: ASGIApp, host: str, port: int, limits: Limits, log_level: str = "warning") -> uvicorn.Config:
    """The uvicorn Config both servers run with."""
    import uvicorn

    fits = raise_file_limit(limits.max_connections)
    if fits < limits.max_connections:
        print(f"warning: the open-file limit allows {fits} connections, not {limits.max_connections}; "
              f"serving at most {fits} (raise `ulimit -n`)", file=sys.stderr)
        limits = Limits(limits.header_timeout_s, limits.body_timeout_s, limits.keep_alive_s, fits,
                        limits.max_header_bytes)
    return uvicorn.Config(app, host=host, port=port, log_level=log_level, http=guarded_protocol(limits),
                          timeout_keep_alive=int(max(1, limits.keep_alive_s)),
                          h11_max_incomplete_event_size=limits.max_header_bytes, backlog=BACKLOG)


def serve(app: ASGIApp, host: str, port: int, limits: Limits = Limits(), log_level: str = "warning") -> None:
    """Run ``app`` on ``host:port`` until interrupted, with ``limits``."""
    import uvicorn

    uvicorn.Server(uvicorn_config(app, host, port, limits, log_level)).run()


def add_server_flags(parser: argparse.ArgumentParser, env_prefix: str) -> None:
    """The flags both servers take for the Host allow-list and the limits."""
    d = Limits()
    parser.add_argument("--allowed-hosts", metavar="NAMES",
                        help=f"comma-separated Host names to answer besides the bound ones, or * for any "
                        f"(env {env_prefix}_ALLOWED_HOSTS; default: localhost, 127.0.0.1, ::1 and --host; with --host "
                        "0.0.0.0 this machine's name and address)")
    parser.add_argument("--header-timeout", type=float, default=d.header_timeout_s, metavar="S",
                        help=f"seconds a client has to send its request headers (default {d.header_timeout_s:g})")
    parser.add_argument("--body-timeout", type=float, default=d.body_timeout_s, metavar="S",
                        help=f"seconds a client has to send its request body (default {d.body_timeout_s:g})")
    parser.add_argument("--keep-alive", type=float, default=d.keep_alive_s, metavar="S",
                        help=f"seconds an idle keep-alive connection stays open (default {d.keep_alive_s:g})")
    parser.add_argument("--max-connections", type=int, default=d.max_connections, metavar="N",
                        help=f"open connections at most (default {d.max_connections})")


def bearer_token(host: str, env_var: str) -> str | None:
    """The token ``env_var`` holds; ConfigError when ``host`` serves beyond this
    machine without one (loopback needs none: the Host allow-list guards it)."""
    from tracegrade.core.errors import ConfigError

    token = os.environ.get(env_var) or None
    if host not in LOOPBACK_NAMES and not token:
        raise ConfigError(f"--host {host} serves beyond this machine: set {env_var} first")
    return token


def server_settings(args: argparse.Namespace, env_prefix: str) -> tuple[tuple[str, ...], Limits]:
    """The allowed Host names and the limits the flags (and environment) ask for."""
    import os

    from tracegrade.core.errors import ConfigError

    extra = parse_hosts(args.allowed_hosts or os.environ.get(f"{env_prefix}_ALLOWED_HOSTS"))
    try:
        limits = Limits(args.header_timeout, args.body_timeout, args.keep_alive, args.max_connections)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return ("*",) if "*" in extra else allowed_hosts_for(args.host, extra), limits
