"""Any OpenAI-compatible endpoint through the ``openai`` SDK (``openai-sdk:MODEL``).

The default ``openai:`` path is the lean client in ``openai_http``; this one
sends the same request body and reads the response the same way (both from
``openai_http``). The SDK's own retries are off so that every retry is ours:
bounded, jittered, counted in the result.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

from tracegrade.core.errors import ModelError
from tracegrade.core.redact import redact
from tracegrade.models.base import ChatOptions, ChatResponse, Message
from tracegrade.models.openai_http import RETRY_STATUS, chat_request, parse_response
from tracegrade.models.retry import Retryable, RetryPolicy, parse_retry_after, with_retries

__all__ = ["OpenAIModel", "RETRY_STATUS"]


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
        return parse_response(raw.model_dump(), self.model_id, time.perf_counter() - started, retries)

    async def _once(self, messages: Sequence[Message], options: ChatOptions) -> Any:
        errors = self._openai
        try:
            return await self._client.chat.completions.create(**chat_request(self.model_id, messages, options))
        except errors.APIStatusError as exc:
            reason = f"HTTP {exc.status_code}"
            if exc.status_code in RETRY_STATUS:
                raise Retryable(reason, parse_retry_after(exc.response.headers.get("retry-after"))) from None
            raise ModelError(f"{self.model_id}: {reason}: {redact(str(exc.message), self._secrets)}") from None
        except (errors.APITimeoutError, errors.APIConnectionError) as exc:
            raise Retryable(type(exc).__name__) from None
        except ValueError as exc:  # a body that is not JSON
            raise Retryable(f"malformed response: {type(exc).__name__}") from None
