"""The narrow protocol every model provider implements.

    >>> from tracegrade.models.scripted import ScriptedModel
    >>> model = ScriptedModel(["Hello."])
    >>> import asyncio
    >>> asyncio.run(model.complete([Message("user", "Hi")])).text
    'Hello.'
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, AsyncContextManager, Iterator, Literal, Protocol, Sequence

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
    ``token_probabilities = True`` attribute; the judge reads it with getattr.
    A provider that runs one call at a time on one prompt cache (the local model)
    sets ``one_call_at_a_time = True``: the judge then asks one answer's questions
    in a row (``answer_turn``)."""

    model_id: str

    async def complete(
        self, messages: Sequence[Message], options: ChatOptions = ChatOptions()
    ) -> ChatResponse: ...


_TURNS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, weakref.WeakKeyDictionary[Any, asyncio.Lock]] = (
    weakref.WeakKeyDictionary())
_TURNS_LOCK = threading.Lock()


def answer_turn(model: Any) -> AsyncContextManager[Any]:
    """Held while the judge asks one answer's questions: on a model with ``one_call_at_a_time``,
    a lock per model and event loop, so no other answer's question comes between them; on any
    other model, nothing.

    WHY: the questions of one answer share its evidence as a prompt prefix, and the local model's
    cache keeps the last prompt only. With four cases judged at once their questions took turns,
    and each evaluated its evidence again where the previous question of its answer had left it
    in the cache. Such a model runs one call at a time anyway: keeping an answer's questions
    together costs no parallelism. A remote provider answers calls in parallel: no lock there.

        >>> import asyncio
        >>> class Local:
        ...     one_call_at_a_time = True
        >>> async def both():
        ...     model = Local()
        ...     async with answer_turn(model):
        ...         return answer_turn(model).locked(), answer_turn(object())
        >>> asyncio.run(both())  # doctest: +ELLIPSIS
        (True, <contextlib.nullcontext object at ...>)
    """
    if not getattr(model, "one_call_at_a_time", False):
        return contextlib.nullcontext()
    # WHY per event loop: an asyncio lock belongs to the loop it first waits on, and the judge
    # of a pytest plugin or of a Ray worker may run under more than one loop in a process.
    with _TURNS_LOCK:
        locks = _TURNS.setdefault(asyncio.get_running_loop(), weakref.WeakKeyDictionary())
        return locks.setdefault(model, asyncio.Lock())


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
