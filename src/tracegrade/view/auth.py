"""The view's token, when it has one: what serving beyond loopback needs.

    >>> session_for("t") == session_for("t") != session_for("u")
    True

With a token every route but the login form needs it: ``Authorization: Bearer
TOKEN``, or the session cookie the form sets (HttpOnly, SameSite=Strict). The
token never goes in a URL (logs, history): ``/login#token=...`` is a fragment,
never sent; the page fills the form from it and clears the address bar. The
same scheme as the monitor's (observe/monitor/app.py), under its own cookie:
the two servers may share a browser and a host name.
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from tracegrade.observe.login_page import login_page as shared_login_page

COOKIE = "tracegrade_view"
ENV_VAR = "TRACEGRADE_VIEW_TOKEN"
LOGIN_BODY_BYTES = 4096  # a token and a field name; a longer form is not a login


def session_for(token: str) -> str:
    # WHY not the token itself in the cookie: a copied cookie then opens nothing by header.
    return hmac.new(token.encode(), b"tracegrade-view-session", hashlib.sha256).hexdigest()


class TokenGate:
    """ASGI middleware: requests without the token (header or session cookie) get a
    redirect to /login (a page) or a 401 (anything else)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise ValueError("TokenGate needs a token")
        self.app = app
        self.token = token.encode()
        self.session = session_for(token).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request = Request(scope, receive)
        if request.url.path == "/login":
            return await (await self._login(request))(scope, receive, send)
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            allowed = hmac.compare_digest(header[7:].encode(), self.token)
        else:
            allowed = hmac.compare_digest(request.cookies.get(COOKIE, "").encode(), self.session)
        if allowed:
            return await self.app(scope, receive, send)
        if request.method == "GET" and "text/html" in request.headers.get("accept", ""):
            return await RedirectResponse("/login", status_code=303)(scope, receive, send)
        await JSONResponse({"detail": "missing or wrong bearer token"}, status_code=401,
                           headers={"WWW-Authenticate": "Bearer"})(scope, receive, send)

    async def _login(self, request: Request) -> Response:
        if request.method != "POST":
            if "token" in request.query_params:
                return JSONResponse({"detail": "the token does not go in the URL (it ends in logs and history): "
                                     "use the form at /login"}, status_code=400)
            return HTMLResponse(login_page(""))
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > LOGIN_BODY_BYTES:
                return JSONResponse({"detail": f"the login form is at most {LOGIN_BODY_BYTES} bytes"}, status_code=413)
        given = (parse_qs(body.decode("utf-8", "replace")).get("token") or [""])[0].encode()
        if not hmac.compare_digest(given, self.token):
            return HTMLResponse(login_page("Wrong token."), status_code=401)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(COOKIE, self.session.decode(), httponly=True, samesite="strict")
        return response


def login_page(message: str) -> str:
    return shared_login_page("view", ENV_VAR, message)
