"""The monitor's web app: the dashboard page, a JSON API, and the golden-case action.

    >>> app = create_monitor_app(SpanStore(__import__("pathlib").Path("/tmp/doctest-spans.db")))
    >>> sorted(r.path for r in app.routes if r.path.startswith("/api"))[:2]
    ['/api/summary', '/api/traces']

Reads are plain ``def`` routes: FastAPI runs them in its thread pool, so SQLite
never blocks the event loop the online judge runs on.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hmac
import time

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse

from tracegrade.core.names import REQUEST_SPAN
from tracegrade.observe.monitor.golden import golden_case_draft
from tracegrade.observe.monitor.judging import OnlineJudge
from tracegrade.observe.monitor.metrics import Filters, RequestTrace, over_time, summarize
from tracegrade.observe.monitor.page import render
from tracegrade.observe.spanstore import SpanStore

COOKIE = "tracegrade_monitor"


def create_monitor_app(store: SpanStore, token: str | None = None, online_judge: OnlineJudge | None = None) -> FastAPI:
    """With ``token``, every route needs ``Authorization: Bearer TOKEN`` or the cookie
    that ``/login?token=TOKEN`` sets (a browser cannot send a header on navigation)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        task = asyncio.create_task(online_judge.run_forever()) if online_judge else None
        yield
        if task:
            task.cancel()

    app = FastAPI(title="tracegrade monitor", lifespan=lifespan)
    if token:
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
    def summary(prompt_version: str = "", model: str = "", window: int = 0) -> dict:
        _, traces = selected(prompt_version, model, window)
        judgements = store.judgements()
        return {"summary": dataclasses.asdict(summarize(traces, judgements)),
                "overTime": dataclasses.asdict(over_time(traces, judgements))}

    @app.get("/api/traces")
    def traces(limit: int = 50, prompt_version: str = "", model: str = "", window: int = 0) -> list[dict]:
        _, chosen = selected(prompt_version, model, window)
        return [dataclasses.asdict(t) for t in reversed(chosen[-limit:])]

    @app.get("/api/traces/{trace_id}")
    def trace(trace_id: str) -> list[dict]:
        return [dataclasses.asdict(s) for s in _spans(store, trace_id)]

    @app.post("/api/traces/{trace_id}/golden-case")
    def golden_case(trace_id: str) -> JSONResponse:
        return JSONResponse(golden_case_draft(_spans(store, trace_id)))

    return app


def _spans(store: SpanStore, trace_id: str) -> list:
    spans = store.trace(trace_id)
    if not spans or spans[0].name != REQUEST_SPAN:
        raise HTTPException(status_code=404, detail=f"no request trace {trace_id}")
    return spans


def _require_token(app: FastAPI, token: str) -> None:
    expected = token.encode()

    @app.middleware("http")
    async def check(request: Request, call_next):
        if request.url.path == "/login":
            given = request.query_params.get("token", "").encode()
            if not hmac.compare_digest(given, expected):
                return JSONResponse(status_code=401, content={"detail": "wrong token"})
            response = RedirectResponse("/", status_code=303)
            response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
            return response
        header = request.headers.get("authorization", "")
        given = header[7:] if header.lower().startswith("bearer ") else request.cookies.get(COOKIE, "")
        if not hmac.compare_digest(given.encode(), expected):
            return JSONResponse(status_code=401, content={"detail": "missing or wrong bearer token"},
                                headers={"WWW-Authenticate": "Bearer"})
        return await call_next(request)
