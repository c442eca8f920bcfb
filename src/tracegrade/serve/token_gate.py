"""The token both local servers ask for (`tracegrade monitor`, `tracegrade view`) when served beyond loopback.

    >>> session_for("t", "view") == session_for("t", "view") != session_for("t", "monitor")
    True

With a token every route but the login form (and the browser's request for
an icon, answered with no content) needs it: ``Authorization: Bearer
TOKEN``, or the session cookie the form sets (HttpOnly, SameSite=Strict). The
token never goes in a URL (logs, history): ``/login#token=...`` is a fragment,
never sent; the page fills the form from it and clears the address bar. Each
server has its own cookie and session: the two may share a browser and a host name.
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from tracegrade.serve.login_page import login_page

# WHY a cap before the token is known: the login form is the one body anyone may
# send, and read whole it let an anonymous client take the process to 3 GB.
MAX_LOGIN_BYTES = 4096


def session_for(token: str, server: str) -> str:
    # WHY not the token itself in the cookie: a copied cookie then opens nothing by header.
    return hmac.new(token.encode(), f"tracegrade-{server}-session".encode(), hashlib.sha256).hexdigest()


class TokenGate:
    """ASGI middleware: requests without the token (header or session cookie) get a
    redirect to /login (a page asked for with no bearer header) or a 401 (anything else)."""

    def __init__(self, app: ASGIApp, token: str, server: str, env_var: str) -> None:
        if not token:
            raise ValueError("TokenGate needs a token")
        self.app, self.server, self.env_var = app, server, env_var
        self.token = token.encode()
        self.session = session_for(token, server).encode()
        self.cookie = f"tracegrade_{server}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request = Request(scope, receive)
        if request.url.path == "/login":
            return await (await self._login(request))(scope, receive, send)
        if request.url.path == "/favicon.ico" and request.method in ("GET", "HEAD"):
            # WHY answered without the token: a browser asks for it on the login page, and a 401
            # there is a console error; there is no icon, so nothing is behind the gate.
            return await Response(status_code=204)(scope, receive, send)
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            allowed = hmac.compare_digest(header[7:].encode(), self.token)
        else:
            allowed = hmac.compare_digest(request.cookies.get(self.cookie, "").encode(), self.session)
        if allowed:
            return await self.app(scope, receive, send)
        if _wants_a_page(request) and not header:
            return await RedirectResponse("/login", status_code=303)(scope, receive, send)
        await JSONResponse({"detail": "missing or wrong bearer token"}, status_code=401,
                           headers={"WWW-Authenticate": "Bearer"})(scope, receive, send)

    async def _login(self, request: Request) -> Response:
        if request.method != "POST":
            if "token" in request.query_params:
                return JSONResponse({"detail": "the token does not go in the URL (it ends in logs and history): "
                                     "use the form at /login"}, status_code=400)
            return HTMLResponse(login_page(self.server, self.env_var))
        body = await _small_body(request, MAX_LOGIN_BYTES)
        if body is None:
            return JSONResponse({"detail": f"a login form is at most {MAX_LOGIN_BYTES} bytes"}, status_code=413,
                                headers={"Connection": "close"})
        given = (parse_qs(body.decode("utf-8", "replace")).get("token") or [""])[0].encode()
        if not hmac.compare_digest(given, self.token):
            return HTMLResponse(login_page(self.server, self.env_var, "Wrong token."), status_code=401)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(self.cookie, self.session.decode(), httponly=True, samesite="strict")
        return response


def _wants_a_page(request: Request) -> bool:
    """A browser's page request (or the front page): shown the login form, not a 401."""
    return request.method == "GET" and (request.url.path == "/" or "text/html" in request.headers.get("accept", ""))


async def _small_body(request: Request, limit: int) -> bytes | None:
    """The request body, or None as soon as it is known to be over ``limit`` bytes
    (by its Content-Length, or while it arrives: nothing past the limit is read)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)
