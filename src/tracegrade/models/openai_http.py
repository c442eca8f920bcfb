"""A lean client for OpenAI-compatible chat endpoints: one JSON POST over a pooled
aiohttp session (``tracegrade.core.http``), no SDK.

    >>> chat_request("m", [Message("user", "hi")], ChatOptions(max_tokens=5))["max_tokens"]
    5

WHY not the ``openai`` SDK by default: it costs ~3 ms of CPU per request on
the event loop's one thread, httpx alone ~2 ms, aiohttp ~0.2 ms
(bench/run/client_cost.py); at concurrency 32 that CPU, not the endpoint, set the pace. The SDK stays
available as ``openai-sdk:MODEL``. Same contract as the SDK path: timeouts,
bounded jittered retries on 408/409/429/5xx, timeouts and dropped connections,
``Retry-After`` honoured, the key redacted from every error.
"""

from __future__ import annotations

import json
import time
from typing import Any, Sequence

from tracegrade.core.errors import ModelError
from tracegrade.core.http import HTTPResponse, TransportFailed, post_json
from tracegrade.core.redact import redact
from tracegrade.models.base import ChatOptions, ChatResponse, Message, ModelToolCall
from tracegrade.models.logprobs import top_logprobs
from tracegrade.models.retry import Retryable, RetryPolicy, parse_retry_after, with_retries

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIHTTPModel:
    """An OpenAI-compatible ``/chat/completions`` endpoint behind the ChatModel protocol."""

    def __init__(
        self,
        model: str,
        base_url: str | None,
        api_key: str | None,
        timeout_s: float = 60.0,
        retry: RetryPolicy = RetryPolicy(),
        token_probabilities: bool = False,
    ) -> None:
        """``token_probabilities``: the endpoint honours ``logprobs`` (OpenAI, vLLM
        and llama.cpp's server do)."""
        self.model_id = model
        self.token_probabilities = token_probabilities
        self._url = (base_url or DEFAULT_BASE_URL).rstrip("/") + "/chat/completions"
        self._headers = {"Authorization": f"Bearer {api_key or 'not-needed'}"}
        self._timeout_s = timeout_s
        self._retry = retry
        self._secrets = (api_key,) if api_key else ()

    async def complete(self, messages: Sequence[Message], options: ChatOptions = ChatOptions()) -> ChatResponse:
        started = time.perf_counter()
        body = chat_request(self.model_id, messages, options)
        try:
            raw, retries = await with_retries(lambda: self._once(body), self._retry)
        except Retryable as exc:
            raise ModelError(f"{self.model_id}: gave up after {self._retry.attempts} attempts: {exc}") from None
        return parse_response(raw, self.model_id, time.perf_counter() - started, retries)

    async def _once(self, body: dict[str, Any]) -> Any:
        try:
            response = await post_json(self._url, body, self._headers, self._timeout_s)
        except TransportFailed as exc:  # refused, reset, dropped mid-response, timed out
            raise Retryable("timed out" if exc.timed_out else "connection failed") from None
        if response.status in RETRY_STATUS:
            raise Retryable(f"HTTP {response.status}", parse_retry_after(response.headers.get("retry-after")))
        if response.status != 200:
            detail = redact(error_message(response), self._secrets)
            raise ModelError(f"{self.model_id}: HTTP {response.status}: {detail}")
        try:
            return response.json()
        except ValueError as exc:  # a body that is not JSON
            raise Retryable(f"malformed response: {type(exc).__name__}") from None


def error_message(response: HTTPResponse) -> str:
    """The ``error.message`` of an OpenAI-style error body, else the body's start."""
    try:
        message = response.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return response.text[:300]
    return str(message)[:300]


def chat_request(model_id: str, messages: Sequence[Message], options: ChatOptions) -> dict[str, Any]:
    """The ``/chat/completions`` body for ``messages`` under ``options``."""
    request: dict[str, Any] = {
        "model": model_id,
        "messages": [wire_message(m) for m in messages],
        "temperature": options.temperature,
        "max_tokens": options.max_tokens,
        "seed": options.seed,
    }
    if options.tools:
        request["tools"] = [
            {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in options.tools
        ]
    if options.json_schema is not None:
        request["response_format"] = {"type": "json_schema", "json_schema": {"name": "reply", "schema": options.json_schema}}
    if options.logprobs:
        request["logprobs"] = True
        request["top_logprobs"] = min(options.logprobs, 20)  # OpenAI's upper bound
    return request


def wire_message(message: Message) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        wire["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
            for c in message.tool_calls
        ]
    if message.role == "tool":
        wire["tool_call_id"] = message.tool_call_id
    return wire


def parse_response(raw: Any, model_id: str, latency: float, retries: int) -> ChatResponse:
    """A ChatResponse from a chat completion as JSON (a dict; the SDK path dumps its object to one)."""
    choices = raw.get("choices") if isinstance(raw, dict) else None
    if not choices:
        raise ModelError(f"{model_id}: the response has no choices")
    message = choices[0].get("message") or {}
    calls = tuple(
        ModelToolCall(name=c["function"]["name"], arguments=tool_arguments(c["function"].get("arguments")),
                      id=c.get("id", ""))
        for c in (message.get("tool_calls") or [])
    )
    usage = raw.get("usage") or {}
    return ChatResponse(
        text=(message.get("content") or "").strip(),
        tool_calls=calls,
        input_tokens=int(usage.get("prompt_tokens") or 0),
        output_tokens=int(usage.get("completion_tokens") or 0),
        latency_s=latency,
        model=model_id,
        retries=retries,
        top_logprobs=top_logprobs(raw),
        cached_tokens=int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0),
    )


def tool_arguments(raw: str | None) -> dict[str, Any]:
    """A tool call's JSON arguments; {} for anything that is not a JSON object."""
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
