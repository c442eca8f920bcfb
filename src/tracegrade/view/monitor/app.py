"""The monitor's web app: the dashboard page, a JSON API, and the golden-case action.

    >>> app = create_monitor_app(SpanStore(__import__("pathlib").Path("/tmp/doctest-spans.db")), "a-token")
    >>> sorted(r.path for r in app.routes if r.path.startswith("/api"))[:2]
    ['/api/summary', '/api/traces']

Reads are plain ``def`` routes: FastAPI runs them in its thread pool, so SQLite
never blocks the event loop the online judge runs on.

Every route but the login form needs the token (serve/token_gate.py, the
same gate as `tracegrade view`'s): ``Authorization: Bearer TOKEN``, or the
session cookie the form sets (HttpOnly, SameSite=Strict, so another site can
neither read it nor make the browser send it); never in a URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from typing import Any, AsyncIterator, Iterable

from fastapi import FastAPI, HTTPException
from fastapi.responses import HTMLResponse, JSONResponse

from tracegrade.core.names import REQUEST_SPAN
from tracegrade.view.monitor.golden import golden_case_draft
from tracegrade.view.monitor.judging import OnlineJudge
from tracegrade.view.monitor.metrics import Filters, RequestTrace, over_time, summarize
from tracegrade.view.monitor.page import render
from tracegrade.serve.hardening import LOOPBACK_NAMES, HostGuard
from tracegrade.observe.spanstore import SpanStore, StoredSpan
from tracegrade.serve.token_gate import TokenGate

ENV_VAR = "TRACEGRADE_MONITOR_TOKEN"


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
    app.add_middleware(TokenGate, token=token, server="monitor", env_var=ENV_VAR)

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
