"""One HTTP POST with a JSON body, over a pooled aiohttp session: the transport of
the ``openai:`` model client and of HTTP targets.

    >>> HTTPResponse(200, {"content-type": "application/json"}, b'{"ok": true}').json()
    {'ok': True}

WHY aiohttp and not httpx: measured on the same mock endpoint, 32 requests in
flight, a bare httpx POST costs ~2.0 ms of CPU per request and a bare aiohttp
POST ~0.19 ms (``bench/run/client_cost.py``); at ~3 requests per case, httpx's
connection pool and anyio layers were most of the harness's CPU per case.

A session belongs to one event loop. Each loop gets its own, closed when the
loop shuts down (``asyncio.run`` finalises async generators: one holds the
session open and closes it in its ``finally``), so no caller has to remember.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from dataclasses import dataclass
from typing import Any, AsyncIterator, Mapping

__all__ = ["HTTPResponse", "TooLarge", "TransportFailed", "post_json"]


class TransportFailed(Exception):
    """The request got no HTTP response: refused, reset, dropped, or timed out."""

    def __init__(self, reason: str, timed_out: bool = False) -> None:
        super().__init__(reason)
        self.timed_out = timed_out


class TooLarge(Exception):
    """The response body passed the caller's byte limit; ``detail`` says how it was seen."""

    def __init__(self, limit: int, detail: str) -> None:
        super().__init__(f"larger than {limit:,} bytes ({detail})")
        self.limit, self.detail = limit, detail


@dataclass(frozen=True)
class HTTPResponse:
    status: int
    headers: Mapping[str, str]  # lower-case names
    body: bytes

    def json(self) -> Any:
        """The body as JSON; ValueError when it is not."""
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


async def post_json(url: str, body: Any, headers: Mapping[str, str], timeout_s: float,
                    max_bytes: int | None = None, error_bytes: int = 4096) -> HTTPResponse:
    """POST ``body`` as JSON; the response, read as it arrives.

    ``max_bytes``: a 2xx body (or its declared Content-Length) over it raises
    TooLarge, and the rest is not read. Any other status keeps only the first
    ``error_bytes`` of its body: enough to say why. Raises TransportFailed when
    no response came within ``timeout_s``."""
    import aiohttp

    session = await _session()
    try:
        async with asyncio.timeout(timeout_s):
            async with session.post(url, data=json.dumps(body).encode(), headers=_with_json(headers)) as response:
                if 200 <= response.status < 300:
                    read = await _read(response, max_bytes, cut=False)
                else:
                    read = await _read(response, error_bytes, cut=True)
                return HTTPResponse(response.status, {k.lower(): v for k, v in response.headers.items()}, read)
    except TimeoutError:
        raise TransportFailed(f"no response within {timeout_s:g} s", timed_out=True) from None
    except aiohttp.ClientError as exc:  # refused, reset, dropped mid-response, malformed HTTP
        raise TransportFailed(_why(exc)) from None


def _why(exc: Exception) -> str:
    """What went wrong, in words, without the request (it may carry a secret)."""
    import aiohttp

    if isinstance(exc, aiohttp.ClientConnectorError):
        return f"cannot connect ({exc.os_error.strerror or type(exc.os_error).__name__})"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the server closed the connection without a response"
    return f"connection failed ({type(exc).__name__})"


def _with_json(headers: Mapping[str, str]) -> dict[str, str]:
    return {"Content-Type": "application/json", **headers}


async def _read(response: Any, max_bytes: int | None, cut: bool) -> bytes:
    """The body; over ``max_bytes``: TooLarge, or with ``cut`` its first ``max_bytes``."""
    if max_bytes is None:
        return bytes(await response.read())
    declared = response.headers.get("Content-Length", "")
    if not cut and declared.isdigit() and int(declared) > max_bytes:
        raise TooLarge(max_bytes, f"Content-Length {int(declared):,}")
    body = bytearray()
    async for chunk in response.content.iter_chunked(65536):
        body += chunk
        if len(body) > max_bytes:
            if cut:
                return bytes(body[:max_bytes])
            raise TooLarge(max_bytes, f"{len(body):,} bytes arrived")
    return bytes(body)


_SESSIONS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()
_KEEPERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncIterator[None]] = weakref.WeakKeyDictionary()


async def _session() -> Any:
    """This loop's session, made on first use."""
    loop = asyncio.get_running_loop()
    session = _SESSIONS.get(loop)
    if session is None or session.closed:
        session = _new_session()
        _SESSIONS[loop] = session
        keeper = _close_at_shutdown(session)
        await keeper.__anext__()  # started: the loop now finalises it when it shuts down
        _KEEPERS[loop] = keeper
    return session


def _new_session() -> Any:
    import aiohttp

    # WHY these limits: a run keeps up to --concurrency requests in flight; the
    # pool must not queue them (limit 0 = none), and idle connections are reused
    # for 30 s rather than re-opened per request.
    connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=30)
    return aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=None),
                                 skip_auto_headers=("User-Agent",), raise_for_status=False)


async def _close_at_shutdown(session: Any) -> AsyncIterator[None]:
    try:
        yield
    finally:
        await session.close()


async def close_sessions() -> None:
    """Close this loop's session now (for a caller that keeps the loop running)."""
    loop = asyncio.get_running_loop()
    session = _SESSIONS.pop(loop, None)
    _KEEPERS.pop(loop, None)
    if session is not None:
        await session.close()
