"""Any ChatModel served as an OpenAI-compatible endpoint (``tracegrade serve-model``).

    POST /v1/chat/completions   messages, tools, response_format (json_schema),
                                max_tokens, temperature, seed, logprobs/top_logprobs,
                                stream (the whole answer in one chunk)
    GET  /v1/models

So an agent in any language or framework (the openai SDK, the OpenAI Agents
SDK, LangChain) runs offline on the embedded model, and ``--capture`` records
its calls. Tools work with models that cannot write tool-call tags: the
provider constrains each turn to {a tool call | an answer} and the server
answers with OpenAI ``tool_calls``.

WHY FastAPI: the monitor already runs on it, behind the same Host allow-list
and connection limits (``observe/serving.py``).
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from tracegrade.core.errors import TracegradeError
from tracegrade.core.from_messages import text_of
from tracegrade.models.base import ChatModel, ChatOptions, ChatResponse, Message, ModelToolCall, Role, ToolSpec

MAX_BODY_BYTES = 4 * 1024 * 1024  # a request's messages; the local model's context is 4,096 tokens anyway
MAX_TOKENS_CAP = 4096


class BadRequest(ValueError):
    """A request this server cannot take; the message says which field."""


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
        completion = to_completion(answer, model.model_id, bool(body.get("logprobs")))
        if body.get("stream"):
            return StreamingResponse(_chunks(completion), media_type="text/event-stream")
        return JSONResponse(completion)

    return app


async def _body(request: Request) -> dict[str, Any]:
    raw = bytearray()
    async for part in request.stream():  # WHY counted as it comes: a huge body never sits in memory whole
        raw += part
        if len(raw) > MAX_BODY_BYTES:
            raise BadRequest(f"request body over {MAX_BODY_BYTES // 2**20} MB")
    try:
        body = json.loads(raw)
    except ValueError as exc:
        raise BadRequest(f"request body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise BadRequest("request body must be a JSON object")
    return body


def to_call(body: dict[str, Any]) -> tuple[list[Message], ChatOptions]:
    """An OpenAI chat request as the provider protocol's messages and options."""
    raw_messages = body.get("messages")
    if not isinstance(raw_messages, list) or not raw_messages:
        raise BadRequest("'messages' must be a non-empty list")
    messages = [_message(i, m) for i, m in enumerate(raw_messages)]
    tools = tuple(_tool(i, t) for i, t in enumerate(body.get("tools") or []))
    if body.get("tool_choice") == "none":
        tools = ()
    schema = None
    response_format = body.get("response_format") or {}
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
    max_tokens = body.get("max_completion_tokens") or body.get("max_tokens") or 512
    options = ChatOptions(tools=tools, json_schema=schema, temperature=float(body.get("temperature") or 0.0),
                          max_tokens=min(int(max_tokens), MAX_TOKENS_CAP), seed=int(body.get("seed") or 0),
                          logprobs=int(body.get("top_logprobs") or (1 if body.get("logprobs") else 0)))
    return messages, options


def _message(index: int, raw: Any) -> Message:
    if not isinstance(raw, dict) or raw.get("role") not in ("system", "developer", "user", "assistant", "tool"):
        raise BadRequest(f"messages[{index}]: a message needs a role of system, user, assistant or tool")
    role: Role = "system" if raw["role"] == "developer" else raw["role"]
    calls = tuple(_call(index, c) for c in raw.get("tool_calls") or [])
    return Message(role=role, content=text_of(raw.get("content")), tool_calls=calls,
                   tool_call_id=str(raw.get("tool_call_id") or ""), name=str(raw.get("name") or ""))


def _call(index: int, raw: Any) -> ModelToolCall:
    function = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(function, dict) or not function.get("name"):
        raise BadRequest(f"messages[{index}].tool_calls: each call needs function.name")
    try:
        arguments = json.loads(function.get("arguments") or "{}")
    except ValueError:
        arguments = {}
    return ModelToolCall(name=function["name"], arguments=arguments if isinstance(arguments, dict) else {},
                         id=str(raw.get("id") or ""))


def _tool(index: int, raw: Any) -> ToolSpec:
    function = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(function, dict) or not function.get("name"):
        raise BadRequest(f"tools[{index}]: a tool needs function.name")
    parameters = function.get("parameters") or {"type": "object", "properties": {}}
    return ToolSpec(name=function["name"], description=str(function.get("description") or ""), parameters=parameters)


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
