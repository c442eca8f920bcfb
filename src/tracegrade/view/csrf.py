"""The view's guard on requests that change something (a label is one): a token per browser session.

    >>> guard = CsrfGuard(app=None, secret=b"s" * 32)  # type: ignore[arg-type]
    >>> guard.token_for("a-session") == guard.token_for("a-session") != guard.token_for("another")
    True

Every page request without a session cookie gets one (``tracegrade_view_csrf``:
random, HttpOnly, SameSite=Strict); the page's forms carry the token made from
it with the server's secret (``request.state.csrf``). A POST (any method but GET,
HEAD and OPTIONS) must send that token as the form field ``csrf`` or the header
``X-CSRF-Token``, and a browser's ``Origin`` must be this very host and port,
else a 403 that says why. WHY both, beyond the Host/Origin allow-list (HostGuard):
that list admits any port of localhost, so a page another local server serves is
same-site, and its form posts would carry a SameSite=Strict cookie. The guard
reads the (small, urlencoded) form once and hands it on as ``request.state.form``,
the last value of each field.

The secret is made when the server starts: a page opened before a restart must be
reloaded before its forms work. The monitor's pages under /production/ are its own
app, and its one POST (a golden-case draft) changes nothing: it is left alone.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from html import escape
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qs, urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "tracegrade_view_csrf"
FIELD = "csrf"  # the form field
HEADER = b"x-csrf-token"
MAX_FORM_BYTES = 16 * 1024  # a label form is a few hundred bytes; a note is cut at 2,000 characters
MAX_FIELDS = 20
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
EXEMPT = ("/production/",)
_SESSION = re.compile(r"[A-Za-z0-9_-]{32,64}")


class CsrfGuard:
    """ASGI middleware: sets the session cookie, and refuses a POST without its token."""

    def __init__(self, app: ASGIApp, secret: bytes | None = None) -> None:
        self.app = app
        self.secret = secret or secrets.token_bytes(32)

    def token_for(self, session: str) -> str:
        return hmac.new(self.secret, f"tracegrade-view-csrf:{session}".encode(), hashlib.sha256).hexdigest()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(EXEMPT):
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        session = _cookie(headers.get(b"cookie", b"").decode("latin-1"))
        if scope["method"] not in SAFE_METHODS:
            return await self._checked(scope, receive, send, headers, session)
        fresh = session is None
        session = session or secrets.token_urlsafe(32)
        scope.setdefault("state", {})["csrf"] = self.token_for(session)
        if not fresh:
            return await self.app(scope, receive, send)
        cookie = f"{COOKIE}={session}; Path=/; HttpOnly; SameSite=Strict".encode()

        async def with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", cookie)]}
            await send(message)

        await self.app(scope, receive, with_cookie)

    async def _checked(self, scope: Scope, receive: Receive, send: Send, headers: dict[bytes, bytes],
                       session: str | None) -> None:
        origin = headers.get(b"origin", b"").decode("latin-1")
        host = headers.get(b"host", b"").decode("latin-1")
        if origin and urlsplit(origin).netloc.lower() != host.lower():
            return await _refuse(send, 403, f"a change may only come from this page's own address ({host}), "
                                            f"not from {origin}")
        body = await _body(receive, headers)
        if body is None:
            return await _refuse(send, 413, f"a form here is at most {MAX_FORM_BYTES} bytes")
        try:
            form = parse_qs(body.decode("utf-8", "replace"), max_num_fields=MAX_FIELDS)
        except ValueError:  # more fields than any form here has
            return await _refuse(send, 400, f"a form here has at most {MAX_FIELDS} fields")
        given = headers.get(HEADER, b"").decode("latin-1") or (form.get(FIELD) or [""])[0]
        if session is None or not given or not hmac.compare_digest(given.encode(), self.token_for(session).encode()):
            why = "no form token was sent" if not given else "the form token is not this session's"
            return await _refuse(send, 403, f"refused: {why} (CSRF protection). Reload the page and try again: "
                                            "a page opened before the view restarted, or in another browser, "
                                            "carries an old token")
        scope.setdefault("state", {})["form"] = {name: values[-1] for name, values in form.items()}
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def _cookie(header: str) -> str | None:
    """This session's id from the Cookie header; None when absent or not one this guard made."""
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except CookieError:  # a malformed header: no session, a new one is made
        return None
    morsel = jar.get(COOKIE)
    return morsel.value if morsel is not None and _SESSION.fullmatch(morsel.value) else None


async def _body(receive: Receive, headers: dict[bytes, bytes]) -> bytes | None:
    """The request body, or None as soon as it is known to be over MAX_FORM_BYTES (nothing past it is read)."""
    declared = headers.get(b"content-length", b"").decode("latin-1")
    if declared.isdigit() and int(declared) > MAX_FORM_BYTES:
        return None
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return bytes(body)
        body += message.get("body", b"")
        if len(body) > MAX_FORM_BYTES:
            return None
        if not message.get("more_body"):
            return bytes(body)


async def _refuse(send: Send, status: int, problem: str) -> None:
    body = (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Refused · tracegrade view</title>'
            f'</head><body><p id="problem">{escape(problem)}</p><p><a href="/">all runs</a></p></body></html>'
            ).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/html; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})

