"""ShopNest's HTTP API: POST /chat -> the Reply in the trace contract's wire form.

Who may ask for whom is ``shopnest.auth``: in customer mode the bearer token
names the customer; only the eval harness's test mode lets the body do so.
"""

from __future__ import annotations

from typing import Iterable, Literal, Mapping, NamedTuple, Sequence

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from opentelemetry.trace import Tracer
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

from shopnest.agent import ShopNestAgent, Turn
from shopnest.auth import Auth, CustomerTokens, TestMode, bearer
from shopnest.orders import DEFAULT_CUSTOMER
from shopnest.tools import TOOL_NAMES
from tracegrade.core.errors import TracegradeError
from tracegrade.serve.hardening import LOOPBACK_NAMES, HostGuard
from tracegrade.observe.telemetry import RequestInfo, SpanClock, provider_name, record_request
from tracegrade.core.trace import Reply

MAX_QUESTION_CHARS = 4000
# Far above any valid request (21 texts of 4,000 characters, JSON-escaped), far
# below what would hurt: a bigger body is refused before it is read to the end.
MAX_BODY_BYTES = 1 << 20


class HistoryTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant"]
    content: str = Field(max_length=MAX_QUESTION_CHARS)


class ChatRequest(BaseModel):
    """A customer's request: the customer is whoever the bearer token belongs to."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(max_length=MAX_QUESTION_CHARS)
    history: list[HistoryTurn] = Field(default_factory=list, max_length=20)

    @field_validator("question")
    @classmethod
    def not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("question must not be empty")
        return value


class TestChatRequest(ChatRequest):
    """Test mode only: the eval harness says which customer a case plays, and which tools fail."""

    __test__ = False
    customer_id: str = Field(DEFAULT_CUSTOMER, alias="customerId", min_length=1, max_length=64)
    # Tool faults to inject, for outage evals: {"getOrderStatus": "timeout"}.
    faults: dict[str, Literal["timeout", "server_error", "malformed", "hang"]] = Field(default_factory=dict)


# Fields a customer-mode body may not carry, and why (said in the 422).
_TEST_ONLY = {"customerId": "the customer is the bearer token's; only test mode takes it from the body",
              "faults": "fault injection exists only in test mode (shopnest serve --test-mode)"}


def create_app(agent: ShopNestAgent, auth: Auth, tracer: Tracer | None = None,
               allowed_hosts: Iterable[str] = LOOPBACK_NAMES) -> FastAPI:
    """The API around one shared agent.

    ``auth``: ``CustomerTokens`` (each request's bearer token names its customer)
    or ``TestMode`` (the eval harness: the body names the customer and faults).
    ``allowed_hosts``: the Host names answered (DNS rebinding). With ``tracer``,
    every answered or failed chat is recorded as an ``agent_request`` span tree."""
    app = FastAPI(title="ShopNest", version="0.1.0")
    # Added first, so it runs inside the token check: an anonymous caller gets a 401, never a 413.
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES)

    @app.middleware("http")
    async def authenticate(request: Request, call_next):
        # WHY a middleware, not a check inside each route: it runs before the
        # body is parsed, so an anonymous caller gets a 401 and never a 422
        # describing the API.
        token = bearer(request.headers.get("authorization", ""))
        if isinstance(auth, CustomerTokens):
            request.state.customer = auth.customer_for(token)
            allowed = request.state.customer is not None
        else:
            allowed = auth.accepts(token)
        if not allowed:
            return JSONResponse(status_code=401, content={"detail": "missing or wrong bearer token"},
                                headers={"WWW-Authenticate": "Bearer"})
        return await call_next(request)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [_problem(e) for e in exc.errors()]
        return JSONResponse(status_code=422, content={"error": "invalid request", "problems": problems})

    @app.exception_handler(StarletteHTTPException)
    async def unreadable_body(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # FastAPI answers a body its JSON parser chokes on (not UTF-8, nested too
        # deep) with a bare 400; say which, in the same shape as a 422.
        if exc.status_code != 400 or exc.__cause__ is None:
            return await http_exception_handler(request, exc)
        why = {RecursionError: "nested too deeply", UnicodeDecodeError: "not UTF-8 text"}.get(type(exc.__cause__), "unreadable")
        return JSONResponse(status_code=400, content={"error": "invalid request", "problems": [f"body: {why}"]})

    @app.get("/health")
    async def health() -> dict:
        return {"status": "ok", "model": agent.model.model_id, "promptVersion": agent.prompt_version}

    async def answer(question: str, history: Sequence[HistoryTurn], customer: str,
                     faults: Mapping[str, str]) -> JSONResponse:
        turns = [Turn(t.role, t.content) for t in history]
        clock = SpanClock()
        request = _Asked(question, customer, faults)
        try:
            reply = await agent.chat(question, customer, turns, faults)
        except TracegradeError as exc:
            _record(tracer, agent, request, clock, error=exc)
            return JSONResponse(status_code=503, content={"error": f"{type(exc).__name__}: {exc}"})
        _record(tracer, agent, request, clock, reply=reply)
        return JSONResponse(reply.to_wire())

    if isinstance(auth, TestMode):
        @app.post("/chat")
        async def chat_as_test(body: TestChatRequest) -> JSONResponse:
            return await answer(body.question, body.history, body.customer_id, body.faults)
    else:
        @app.post("/chat")
        async def chat(request: Request, body: ChatRequest) -> JSONResponse:
            return await answer(body.question, body.history, request.state.customer, {})

    # Added last, so it runs first: a request under a foreign Host name never reaches a route.
    app.add_middleware(HostGuard, allowed=allowed_hosts)
    return app


def _problem(error: Mapping) -> str:
    field = ".".join(str(p) for p in error["loc"][1:]) or "body"
    if error["type"] == "extra_forbidden" and field in _TEST_ONLY:
        return f"{field}: not accepted: {_TEST_ONLY[field]}"
    return f"{field}: {error['msg']}"


class BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes gets a 413 before it is parsed.

    WHY count the bytes and not trust Content-Length: a chunked body has none.
    """

    def __init__(self, app, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        raw = dict(scope["headers"]).get(b"content-length", b"")
        declared = int(raw) if raw.isdigit() else 0  # the server already refused a malformed one
        body, more = b"", declared <= self.limit
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False) and len(body) <= self.limit
        if max(declared, len(body)) > self.limit:
            problems = [f"body: larger than {self.limit} bytes"]
            response = JSONResponse(status_code=413, content={"error": "invalid request", "problems": problems})
            return await response(scope, receive, send)
        replay = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive_again():
            return replay.pop() if replay else await receive()

        await self.app(scope, receive_again, send)


class _Asked(NamedTuple):
    question: str
    customer_id: str
    faults: Mapping[str, str]


def _record(tracer: Tracer | None, agent: ShopNestAgent, asked: _Asked, clock: SpanClock,
            reply: Reply | None = None, error: Exception | None = None) -> None:
    if tracer is None:
        return
    info = RequestInfo(
        question=asked.question, started_ns=clock.started_ns, ended_ns=clock.now_ns(), customer_id=asked.customer_id,
        agent_name="shopnest", prompt_version=agent.prompt_version, model=agent.model.model_id,
        provider=provider_name(agent.model), allowed_tools=TOOL_NAMES, faults=dict(asked.faults),
    )
    record_request(tracer, info, reply, error)
