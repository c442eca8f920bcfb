"""Anthropic's Messages API with tool use.

A JSON Schema reply is asked for as a forced call of a single ``reply`` tool
whose input schema is that schema: the API's own way to get structured output.
"""

from __future__ import annotations

import json
import time
from typing import Any, Sequence

from tracegrade.core.errors import ModelError
from tracegrade.models.base import ChatOptions, ChatResponse, Message, ModelToolCall
from tracegrade.models.openai_http import RETRY_STATUS
from tracegrade.models.retry import Retryable, RetryPolicy, parse_retry_after, with_retries
from tracegrade.core.redact import redact

_REPLY_TOOL = "reply"


class AnthropicModel:
    def __init__(
        self, model: str, base_url: str | None, api_key: str | None,
        timeout_s: float = 60.0, retry: RetryPolicy = RetryPolicy(), http_client: Any = None,
    ) -> None:
        import anthropic  # optional dependency, imported only when used

        self.model_id = model
        self._sdk = anthropic
        self._client = anthropic.AsyncAnthropic(
            base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0, http_client=http_client
        )
        self._retry = retry
        self._secrets = (api_key,) if api_key else ()

    async def complete(
        self, messages: Sequence[Message], options: ChatOptions = ChatOptions()
    ) -> ChatResponse:
        started = time.perf_counter()
        try:
            raw, retries = await with_retries(lambda: self._once(messages, options), self._retry)
        except Retryable as exc:
            raise ModelError(f"{self.model_id}: gave up after {self._retry.attempts} attempts: {exc}") from None
        text = "".join(block.text for block in raw.content if block.type == "text")
        calls = tuple(
            ModelToolCall(name=b.name, arguments=dict(b.input), id=b.id)
            for b in raw.content if b.type == "tool_use"
        )
        if options.json_schema is not None and calls and calls[0].name == _REPLY_TOOL:
            text, calls = json.dumps(calls[0].arguments), ()
        return ChatResponse(
            text=text.strip(), tool_calls=calls,
            input_tokens=raw.usage.input_tokens, output_tokens=raw.usage.output_tokens,
            latency_s=time.perf_counter() - started, model=self.model_id, retries=retries,
        )

    async def _once(self, messages: Sequence[Message], options: ChatOptions) -> Any:
        sdk = self._sdk
        try:
            return await self._client.messages.create(**_request(self.model_id, messages, options))
        except sdk.APIStatusError as exc:
            reason = f"HTTP {exc.status_code}"
            if exc.status_code in RETRY_STATUS or exc.status_code == 529:
                raise Retryable(reason, parse_retry_after(exc.response.headers.get("retry-after"))) from None
            raise ModelError(f"{self.model_id}: {reason}: {redact(str(exc.message), self._secrets)}") from None
        except (sdk.APITimeoutError, sdk.APIConnectionError) as exc:
            raise Retryable(type(exc).__name__) from None


def _request(model: str, messages: Sequence[Message], options: ChatOptions) -> dict[str, Any]:
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    request: dict[str, Any] = {
        "model": model,
        "max_tokens": options.max_tokens,
        # No temperature: the pinned SDK's messages.create no longer accepts one.
        "messages": [_wire_message(m) for m in messages if m.role != "system"],
    }
    if system:
        request["system"] = system
    tools = [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in options.tools]
    if options.json_schema is not None:
        tools.append({"name": _REPLY_TOOL, "description": "Give the reply.", "input_schema": options.json_schema})
        request["tool_choice"] = {"type": "tool", "name": _REPLY_TOOL}
    if tools:
        request["tools"] = tools
    return request


def _wire_message(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        block = {"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.content}
        return {"role": "user", "content": [block]}
    if message.tool_calls:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": message.content}] if message.content else []
        blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in message.tool_calls]
        return {"role": "assistant", "content": blocks}
    return {"role": message.role, "content": message.content}
