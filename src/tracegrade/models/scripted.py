"""A scripted fake model for unit tests: replies from a list or a function.

    >>> import asyncio
    >>> model = ScriptedModel(lambda messages, options: ChatResponse(text="hi"))
    >>> asyncio.run(model.complete([Message("user", "x")])).text
    'hi'
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Awaitable, Callable, Sequence, Union

from tracegrade.models.base import ChatOptions, ChatResponse, Message

ScriptFn = Callable[[Sequence[Message], ChatOptions], Union[ChatResponse, str, Awaitable[ChatResponse | str]]]
Scripted = Union[str, ChatResponse, Exception]


class ScriptedModel:
    """Plays back replies in order (a str is text, an Exception is raised), or
    calls a function with the messages and options for each reply."""

    def __init__(self, script: Sequence[Scripted] | ScriptFn, model_id: str = "scripted",
                 token_probabilities: bool = False, one_call_at_a_time: bool = False) -> None:
        """``token_probabilities``: the script's replies carry ``top_logprobs``, as a
        local or logprobs-capable provider's would. ``one_call_at_a_time``: the model
        says it runs one call at a time on one prompt cache, as the local model does."""
        self.model_id = model_id
        self.token_probabilities = token_probabilities
        self.one_call_at_a_time = one_call_at_a_time
        self._script = script if callable(script) else list(script)
        self._position = 0
        self.calls: list[tuple[tuple[Message, ...], ChatOptions]] = []

    async def complete(
        self, messages: Sequence[Message], options: ChatOptions = ChatOptions()
    ) -> ChatResponse:
        self.calls.append((tuple(messages), options))
        reply = self._next(messages, options)
        if inspect.isawaitable(reply):
            reply = await reply
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, str):
            reply = ChatResponse(text=reply, input_tokens=10, output_tokens=5)
        await asyncio.sleep(0)
        return ChatResponse(**{**reply.__dict__, "model": reply.model or self.model_id})

    def _next(self, messages: Sequence[Message], options: ChatOptions) -> Any:
        if callable(self._script):
            return self._script(messages, options)
        if self._position >= len(self._script):
            raise AssertionError(f"scripted model ran out of replies after {self._position}")
        reply = self._script[self._position]
        self._position += 1
        return reply
