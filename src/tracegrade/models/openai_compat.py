"""Any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server).

Native tool calling and ``response_format`` json_schema. The SDK's own retries
are off so that every retry is ours: bounded, jittered, counted in the result.
"""

from __future__ import annotations

import json
import time
from typing import Any, Sequence

from tracegrade.core.errors import ModelError
from tracegrade.models.base import ChatOptions, ChatResponse, Message, ModelToolCall
from tracegrade.models.logprobs import top_logprobs
from tracegrade.models.retry import Retryable, RetryPolicy, parse_retry_after, with_retries
from tracegrade.core.redact import redact

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


class OpenAIModel:
    def __init__(
        self,
        model: str,
        base_url: str | None,
        api_key: str | None,
        timeout_s: float = 60.0,
        retry: RetryPolicy = RetryPolicy(),
        http_client: Any = None,
        token_probabilities: bool = False,
    ) -> None:
        """``http_client`` (an ``httpx.AsyncClient``) replaces the SDK's own, e.g.
        one with an ``httpx.MockTransport`` in tests. ``token_probabilities``: the
        endpoint honours ``logprobs`` (OpenAI, vLLM, llama.cpp server do; not every
        compatible server does), so the judge may score from them."""
        import openai  # optional dependency, imported only when used

        self.model_id = model
        self.token_probabilities = token_probabilities
        self._openai = openai
        self._client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=0,
            http_client=http_client,
        )
        self._retry = retry
        # Redacted by value too: an error body may echo the key in any shape.
        self._secrets = (api_key,) if api_key else ()

    async def complete(
        self, messages: Sequence[Message], options: ChatOptions = ChatOptions()
    ) -> ChatResponse:
        started = time.perf_counter()
        try:
            raw, retries = await with_retries(lambda: self._once(messages, options), self._retry)
        except Retryable as exc:
            raise ModelError(f"{self.model_id}: gave up after {self._retry.attempts} attempts: {exc}") from None
        return _response(raw, self.model_id, time.perf_counter() - started, retries)

    async def _once(self, messages: Sequence[Message], options: ChatOptions) -> Any:
        errors = self._openai
        try:
            return await self._client.chat.completions.create(**self._request(messages, options))
        except errors.APIStatusError as exc:
            reason = f"HTTP {exc.status_code}"
            if exc.status_code in RETRY_STATUS:
                raise Retryable(reason, parse_retry_after(exc.response.headers.get("retry-after"))) from None
            raise ModelError(f"{self.model_id}: {reason}: {redact(str(exc.message), self._secrets)}") from None
        except (errors.APITimeoutError, errors.APIConnectionError) as exc:
            raise Retryable(type(exc).__name__) from None
        except ValueError as exc:  # a body that is not JSON
            raise Retryable(f"malformed response: {type(exc).__name__}") from None

    def _request(self, messages: Sequence[Message], options: ChatOptions) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model_id,
            "messages": [_wire_message(m) for m in messages],
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
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": options.json_schema},
            }
        if options.logprobs:
            request["logprobs"] = True
            request["top_logprobs"] = min(options.logprobs, 20)  # OpenAI's upper bound
        return request


def _wire_message(message: Message) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        wire["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
            for c in message.tool_calls
        ]
    if message.role == "tool":
        wire["tool_call_id"] = message.tool_call_id
    return wire


def _response(raw: Any, model_id: str, latency: float, retries: int) -> ChatResponse:
    if not getattr(raw, "choices", None):
        raise ModelError(f"{model_id}: the response has no choices")
    message = raw.choices[0].message
    calls = tuple(
        ModelToolCall(name=c.function.name, arguments=_arguments(c.function.arguments), id=c.id)
        for c in (message.tool_calls or [])
    )
    usage = raw.usage
    return ChatResponse(
        text=(message.content or "").strip(),
        tool_calls=calls,
        input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        output_tokens=getattr(usage, "completion_tokens", 0) or 0,
        latency_s=latency,
        model=model_id,
        retries=retries,
        top_logprobs=top_logprobs(raw),
        cached_tokens=getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", 0) or 0,
    )


def _arguments(raw: str | None) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
