"""Any ChatModel served as an OpenAI-compatible endpoint (``tracegrade serve-model``).

    POST /v1/chat/completions   messages, tools, response_format (json_schema),
                                max_tokens, temperature, seed, logprobs/top_logprobs,
                                stream (the whole answer in one chunk)
    GET  /v1/models

A body that is not what OpenAI's API takes is a 400 naming the field
(``ChatRequest`` holds each bound: ``max_tokens`` at least 1 and served as at
most MAX_TOKENS_CAP, ``temperature`` 0 to 2, ``top_logprobs`` 0 to 20); it
never reaches the model.

So an agent in any language or framework (the openai SDK, the OpenAI Agents
SDK, LangChain) runs offline on the embedded model, and ``--capture`` records
its calls. Tools work with models that cannot write tool-call tags: the
provider constrains each turn to {a tool call | an answer} and the server
answers with OpenAI ``tool_calls``.

WHY FastAPI: the monitor already runs on it, behind the same Host allow-list
and connection limits (``serve/hardening.py``).
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any, Literal

import pydantic_core
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError

from tracegrade.core.errors import TracegradeError
from tracegrade.core.from_messages import text_of
from tracegrade.models.base import ChatModel, ChatOptions, ChatResponse, Message, ModelToolCall, Role, ToolSpec

MAX_BODY_BYTES = 4 * 1024 * 1024  # a request's messages; the local model's context is 4,096 tokens anyway
MAX_TOKENS_CAP = 4096  # a larger max_tokens is served as this many (clients send 16k and more by habit)
DEFAULT_MAX_TOKENS = 512
MAX_TOP_LOGPROBS = 20  # the OpenAI API's own bound
_INT64 = 2**63


class BadRequest(ValueError):
    """A request this server cannot take; the message says which field."""


# --- the request, as pydantic reads it ---------------------------------------------------
# WHY extra keys are ignored: the openai clients send fields this server does not use
# (model, user, n, stream_options...), and refusing them would refuse every client.


class _Edge(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class CalledFunction(_Edge):
    name: StrictStr = Field(min_length=1)
    arguments: Any = "{}"  # JSON text as OpenAI sends it; an object as some clients do


class PastCall(_Edge):
    id: StrictStr | None = None
    function: CalledFunction


class ChatMessage(_Edge):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: Any = None  # text, or a list of parts (text_of reads any shape)
    tool_calls: list[PastCall] | None = None
    tool_call_id: StrictStr | None = None
    name: StrictStr | None = None


class OfferedFunction(_Edge):
    name: StrictStr = Field(min_length=1)
    description: StrictStr | None = None
    parameters: dict[str, Any] | None = None


class ChatTool(_Edge):
    function: OfferedFunction


class JsonSchemaFormat(_Edge):
    schema_: dict[str, Any] | None = Field(None, alias="schema")


class ResponseFormat(_Edge):
    type: Literal["text", "json_object", "json_schema"] = "text"
    json_schema: JsonSchemaFormat | None = None


class ChatRequest(_Edge):
    """The fields of an OpenAI chat request this server reads, each bounded:
    ``max_tokens`` at least 1 (more than MAX_TOKENS_CAP is served as the cap),
    ``temperature`` 0 to 2, ``top_logprobs`` 0 to 20, ``seed`` a 64-bit integer."""

    messages: list[ChatMessage] = Field(min_length=1)
    tools: list[ChatTool] | None = None
    tool_choice: Any = None  # only "none" changes anything
    response_format: ResponseFormat | None = None
    max_tokens: StrictInt | None = Field(None, ge=1)
    max_completion_tokens: StrictInt | None = Field(None, ge=1)
    temperature: StrictFloat | None = Field(None, ge=0.0, le=2.0)
    seed: StrictInt | None = Field(None, ge=-_INT64, lt=_INT64)
    logprobs: StrictBool | None = None
    top_logprobs: StrictInt | None = Field(None, ge=0, le=MAX_TOP_LOGPROBS)
    stream: StrictBool | None = None


def create_model_app(model: ChatModel, token: str | None = None) -> FastAPI:
    """The app serving ``model``; with ``token``, requests need ``Authorization: Bearer TOKEN``."""
    app = FastAPI(title="tracegrade serve-model", docs_url=None, redoc_url=None, openapi_url=None)

    @app.middleware("http")
    async def authorise(request: Request, call_next: Any) -> Response:
        if token and not secrets.compare_digest(request.headers.get("authorization", ""), f"Bearer {token}"):
            return _error(401, "missing or wrong bearer token")
        return await call_next(request)  # type: ignore[no-any-return]

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": model.model_id, "object": "model", "owned_by": "tracegrade"}]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        try:
            body = await _body(request)
            messages, options = to_call(body)
            answer = await model.complete(messages, options)
        except BadRequest as exc:
            return _error(400, str(exc))
        except TracegradeError as exc:
            return _error(502, f"{type(exc).__name__}: {exc}")
        completion = to_completion(answer, model.model_id, bool(body.logprobs))
        if body.stream:
            return StreamingResponse(_chunks(completion), media_type="text/event-stream")
        return JSONResponse(completion)

    return app


async def _body(request: Request) -> ChatRequest:
    raw = bytearray()
    async for part in request.stream():  # WHY counted as it comes: a huge body never sits in memory whole
        raw += part
        if len(raw) > MAX_BODY_BYTES:
            raise BadRequest(f"request body over {MAX_BODY_BYTES // 2**20} MB")
    return parse_request(bytes(raw))


def parse_request(raw: bytes) -> ChatRequest:
    """The body as a ChatRequest; BadRequest naming the first fields that are wrong.

    WHY pydantic's JSON parser: it stops at a nesting depth (a body nested
    100,000 deep is refused, not a RecursionError) and refuses a lone surrogate,
    which could not be encoded on the way to the model."""
    try:
        return ChatRequest.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            raise BadRequest(f"request body is not JSON: {first['msg'].removeprefix('Invalid JSON: ')}") from None
        if first["type"] == "model_type" and not first["loc"]:
            raise BadRequest("request body must be a JSON object") from None
        raise BadRequest("; ".join(f"{_where(e['loc'])}: {e['msg']}" for e in exc.errors()[:3])) from None


def _where(loc: tuple[int | str, ...]) -> str:
    """A field's place as a client writes it: ``messages[0].tool_calls``."""
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".") or "body"


def to_call(request: ChatRequest) -> tuple[list[Message], ChatOptions]:
    """An OpenAI chat request as the provider protocol's messages and options."""
    messages = [_message(m) for m in request.messages]
    tools = () if request.tool_choice == "none" else tuple(_tool(t) for t in request.tools or ())
    response_format = request.response_format
    schema = (response_format.json_schema.schema_ if response_format and response_format.type == "json_schema"
              and response_format.json_schema else None)
    max_tokens = request.max_completion_tokens or request.max_tokens or DEFAULT_MAX_TOKENS
    top = request.top_logprobs or (1 if request.logprobs else 0)
    options = ChatOptions(tools=tools, json_schema=schema, temperature=request.temperature or 0.0,
                          max_tokens=min(max_tokens, MAX_TOKENS_CAP), seed=request.seed or 0, logprobs=top)
    return messages, options


def _message(raw: ChatMessage) -> Message:
    role: Role = "system" if raw.role == "developer" else raw.role
    calls = tuple(ModelToolCall(name=c.function.name, arguments=_arguments(c.function.arguments), id=c.id or "")
                  for c in raw.tool_calls or ())
    return Message(role=role, content=text_of(raw.content), tool_calls=calls, tool_call_id=raw.tool_call_id or "",
                   name=raw.name or "")


def _arguments(raw: Any) -> dict[str, Any]:
    """A past call's arguments; text that is not a JSON object reads as none, as the model wrote it.
    WHY pydantic_core's parser: the text is the client's, and its nesting depth is bounded."""
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return {}
    try:
        arguments = pydantic_core.from_json(raw or "{}")
    except ValueError:
        return {}
    return arguments if isinstance(arguments, dict) else {}


def _tool(raw: ChatTool) -> ToolSpec:
    parameters = raw.function.parameters or {"type": "object", "properties": {}}
    return ToolSpec(name=raw.function.name, description=raw.function.description or "", parameters=parameters)


def to_completion(answer: ChatResponse, model_id: str, logprobs: bool) -> dict[str, Any]:
    """The provider's answer as an OpenAI chat completion."""
    calls = [{"id": f"call_{secrets.token_hex(8)}", "type": "function",
              "function": {"name": c.name, "arguments": json.dumps(c.arguments)}} for c in answer.tool_calls]
    message: dict[str, Any] = {"role": "assistant", "content": None if calls else answer.text}
    if calls:
        message["tool_calls"] = calls
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop",
                              "logprobs": None}
    if logprobs and answer.top_logprobs:
        choice["logprobs"] = {"content": [
            {"token": alts[0][0], "logprob": alts[0][1],
             "top_logprobs": [{"token": t, "logprob": p} for t, p in alts]} for alts in answer.top_logprobs if alts]}
    return {"id": f"chatcmpl-{secrets.token_hex(8)}", "object": "chat.completion", "created": int(time.time()),
            "model": model_id, "choices": [choice],
            "usage": {"prompt_tokens": answer.input_tokens, "completion_tokens": answer.output_tokens,
                      "total_tokens": answer.input_tokens + answer.output_tokens}}


async def _chunks(completion: dict[str, Any]) -> Any:
    """The whole completion as one streamed chunk, then [DONE] (what streaming clients read)."""
    message = completion["choices"][0]["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(message["tool_calls"])]
    chunk = {"id": completion["id"], "object": "chat.completion.chunk", "created": completion["created"],
             "model": completion["model"], "usage": completion["usage"],
             "choices": [{"index": 0, "delta": delta, "finish_reason": completion["choices"][0]["finish_reason"]}]}
    yield f"data: {json.dumps(chunk)}\n\n"
    yield "data: [DONE]\n\n"


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": "invalid_request_error" if status == 400 else "error"}},
                        status_code=status)
