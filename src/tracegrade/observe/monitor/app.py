"""The monitor's web app: the dashboard page, a JSON API, and the golden-case action.

    >>> app = create_monitor_app(SpanStore(__import__("pathlib").Path("/tmp/doctest-spans.db")), "a-token")
    >>> sorted(r.path for r in app.routes if r.path.startswith("/api"))[:2]
    ['/api/summary', '/api/traces']

Reads are plain ``def`` routes: FastAPI runs them in its thread pool, so SQLite
never blocks the event loop the online judge runs on.

Every route but the login form needs the token: ``Authorization: Bearer
TOKEN``, or the session cookie the form sets (HttpOnly, SameSite=Strict, so
another site can neither read it nor make the browser send it). The token
never goes in a URL, where it would end in logs and browser history: the form
posts it, and ``/login#token=...`` (a fragment, never sent to the server)
fills the form and leaves the address bar clean.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import hmac
import time
from typing import Any, AsyncIterator, Awaitable, Callable, Iterable
from urllib.parse import parse_qs

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from tracegrade.core.names import REQUEST_SPAN
from tracegrade.observe.monitor.golden import golden_case_draft
from tracegrade.observe.monitor.judging import OnlineJudge
from tracegrade.observe.monitor.metrics import Filters, RequestTrace, over_time, summarize
from tracegrade.observe.monitor.page import render
from tracegrade.observe.login_page import login_page
from tracegrade.observe.serving import LOOPBACK_NAMES, HostGuard
from tracegrade.observe.spanstore import SpanStore, StoredSpan

COOKIE = "tracegrade_monitor"


def create_monitor_app(store: SpanStore, token: str, online_judge: OnlineJudge | None = None,
                       allowed_hosts: Iterable[str] = LOOPBACK_NAMES) -> FastAPI:
    """Every route needs ``token`` (a bearer header, or the cookie the login form
    sets); only ``allowed_hosts`` are answered (DNS rebinding)."""
    if not token:
        raise ValueError("the monitor needs a token: it serves traces")

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        task = asyncio.create_task(online_judge.run_forever()) if online_judge else None
        yield
        if task:
            task.cancel()

    app = FastAPI(title="tracegrade monitor", lifespan=lifespan)
    _require_token(app, token)

    def selected(prompt_version: str = "", model: str = "", window: int = 0) -> tuple[list[RequestTrace], list[RequestTrace]]:
        everything = [RequestTrace.from_spans(spans) for spans in store.requests()]
        filters = Filters(prompt_version, model, window)
        now = time.time_ns()
        return everything, [t for t in everything if filters.keep(t, now)]

    @app.get("/", response_class=HTMLResponse)
    def dashboard(prompt_version: str = "", model: str = "", window: int = 0) -> str:
        everything, traces = selected(prompt_version, model, window)
        note = (f"online judge on {online_judge.rate:.0%} of requests" if online_judge else "online judge off")
        return render(traces, store.judgements(), Filters(prompt_version, model, window),
                      versions=sorted({t.prompt_version for t in everything if t.prompt_version}),
                      models=sorted({t.model for t in everything if t.model}), store=str(store.path), judge_note=note)

    @app.get("/api/summary")
    def summary(prompt_version: str = "", model: str = "", window: int = 0) -> dict[str, Any]:
        _, traces = selected(prompt_version, model, window)
        judgements = store.judgements()
        return {"summary": dataclasses.asdict(summarize(traces, judgements)),
                "overTime": dataclasses.asdict(over_time(traces, judgements))}

    @app.get("/api/traces")
    def traces(limit: int = 50, prompt_version: str = "", model: str = "", window: int = 0) -> list[dict[str, Any]]:
        _, chosen = selected(prompt_version, model, window)
        return [dataclasses.asdict(t) for t in reversed(chosen[-limit:])]

    @app.get("/api/traces/{trace_id}")
    def trace(trace_id: str) -> list[dict[str, Any]]:
        return [dataclasses.asdict(s) for s in _spans(store, trace_id)]

    @app.post("/api/traces/{trace_id}/golden-case")
    def golden_case(trace_id: str) -> JSONResponse:
        return JSONResponse(golden_case_draft(_spans(store, trace_id)))

    # Added last, so it runs first: a foreign Host or Origin never reaches the token check.
    app.add_middleware(HostGuard, allowed=allowed_hosts)
    return app


def _spans(store: SpanStore, trace_id: str) -> list[StoredSpan]:
    spans = store.trace(trace_id)
    if not spans or spans[0].name != REQUEST_SPAN:
        raise HTTPException(status_code=404, detail=f"no request trace {trace_id}")
    return spans


def _require_token(app: FastAPI, token: str) -> None:
    expected = token.encode()
    # WHY not the token itself in the cookie: a copied cookie then opens no API by header.
    session = hmac.new(expected, b"tracegrade-monitor-session", hashlib.sha256).hexdigest()

    @app.middleware("http")
    async def check(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        if request.url.path == "/login":
            return await _login(request, expected, session)
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            allowed = hmac.compare_digest(header[7:].encode(), expected)
        else:
            allowed = hmac.compare_digest(request.cookies.get(COOKIE, "").encode(), session.encode())
        if allowed:
            return await call_next(request)
        if request.method == "GET" and request.url.path == "/":
            return RedirectResponse("/login", status_code=303)
        return JSONResponse(status_code=401, content={"detail": "missing or wrong bearer token"},
                            headers={"WWW-Authenticate": "Bearer"})


# WHY a cap before the token is known: the login form is the one body anyone may
# send, and read whole it let an anonymous client take the process to 3 GB.
MAX_LOGIN_BYTES = 4096


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


async def _login(request: Request, expected: bytes, session: str) -> Response:
    if request.method != "POST":
        if "token" in request.query_params:
            return JSONResponse(status_code=400, content={
                "detail": "the token does not go in the URL (it ends in logs and history): use the form at /login"})
        return HTMLResponse(login_page("monitor", "TRACEGRADE_MONITOR_TOKEN"))
    body = await _small_body(request, MAX_LOGIN_BYTES)
    if body is None:
        return JSONResponse(status_code=413, content={"detail": f"a login form is at most {MAX_LOGIN_BYTES} bytes"},
                            headers={"Connection": "close"})
    form = parse_qs(body.decode("utf-8", "replace"))
    given = (form.get("token") or [""])[0].encode()
    if not hmac.compare_digest(given, expected):
        return HTMLResponse(login_page("monitor", "TRACEGRADE_MONITOR_TOKEN", "Wrong token."), status_code=401)
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(COOKIE, session, httponly=True, samesite="strict")
    return response



