"""The narrow protocol every model provider implements.

    >>> from tracegrade.models.scripted import ScriptedModel
    >>> model = ScriptedModel(["Hello."])
    >>> import asyncio
    >>> asyncio.run(model.complete([Message("user", "Hi")])).text
    'Hello.'
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Iterator, Literal, Protocol, Sequence

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ModelToolCall:
    """A tool call the model asked for (before the agent runs it)."""

    name: str
    arguments: dict[str, Any]
    id: str = ""


@dataclass(frozen=True)
class Message:
    """One chat message. An assistant message may carry tool calls; a tool
    message answers the call with ``tool_call_id``."""

    role: Role
    content: str = ""
    tool_calls: tuple[ModelToolCall, ...] = ()
    tool_call_id: str = ""
    name: str = ""


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model: its name, purpose and JSON Schema of arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


# The most likely tokens at one output position, with their log probabilities.
TokenAlternatives = tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class ChatResponse:
    """What one model call returned: text or tool calls, with its cost in tokens and time.

    ``top_logprobs`` holds, per generated token, the alternatives the provider
    reported (only when ``ChatOptions.logprobs`` asked for them and the provider
    can); ``cached_tokens`` is how many prompt tokens it reused from its cache."""

    text: str = ""
    tool_calls: tuple[ModelToolCall, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    model: str = ""
    retries: int = 0
    top_logprobs: tuple[TokenAlternatives, ...] = ()
    cached_tokens: int = 0


@dataclass(frozen=True)
class ChatOptions:
    """How to answer: offered tools, a JSON Schema the reply must follow, sampling."""

    tools: tuple[ToolSpec, ...] = ()
    json_schema: dict[str, Any] | None = None
    temperature: float = 0.0
    max_tokens: int = 512
    seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    logprobs: int = 0  # > 0: return this many most likely tokens per output position


class ChatModel(Protocol):
    """Messages in, text or tool calls out. Implementations must be safe to call
    concurrently from one event loop. A provider that returns token
    probabilities when asked (``ChatOptions.logprobs``) sets a
    ``token_probabilities = True`` attribute; the judge reads it with getattr."""

    model_id: str

    async def complete(
        self, messages: Sequence[Message], options: ChatOptions = ChatOptions()
    ) -> ChatResponse: ...


@contextlib.contextmanager
def unobserved() -> Iterator[None]:
    """Model calls made inside the block are not seen by the agent's OpenTelemetry instrumentors.

    WHY: the judge's own SDK calls (an ``openai-sdk:`` judge) would otherwise become root spans of
    the agent's instrumentation while cases run, and ``--capture otel`` would count them as orphans
    of the running cases. Instrumentors (OpenInference's, OpenTelemetry's) honour this context key."""
    try:
        from opentelemetry import context
    except ImportError:  # no OpenTelemetry: nothing instruments the calls
        yield
        return
    key = getattr(context, "_SUPPRESS_INSTRUMENTATION_KEY", None)
    if key is None:
        yield
        return
    token = context.attach(context.set_value(key, True))
    try:
        yield
    finally:
        context.detach(token)
