"""The ShopNest agent: retrieve a policy, run the tool loop, return answer + trace.

    >>> # agent = ShopNestAgent(model, knowledge); reply = await agent.chat("Where is ORD-101?")
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from shopnest.knowledge import KnowledgeBase
from shopnest.orders import DEFAULT_CUSTOMER, OrderBook
from shopnest.prompts import PROMPTS, format_context, system_prompt
from shopnest.routing import route_of
from shopnest.tools import TOOL_SPECS, TOOL_TIMEOUT_S, ToolBox
from tracegrade.core.errors import AgentError, StepLimitError
from tracegrade.models import ChatModel, ChatOptions, Message
from tracegrade.core.trace import Reply, Step, ToolCall, Usage

MAX_ROUNDS = 5


@dataclass(frozen=True)
class Turn:
    """One earlier turn of a conversation, for multi-turn questions."""

    role: str  # "user" or "assistant"
    content: str


@dataclass
class _Clock:
    started: float = field(default_factory=time.perf_counter)

    def ms(self) -> float:
        # WHY not rounded here: a step's end rounded up to the next 0.1 ms could
        # fall after the request's own end, outside its span (Step keeps µs).
        return (time.perf_counter() - self.started) * 1000


class ShopNestAgent:
    """Answers one customer's question; safe to share across concurrent requests."""

    def __init__(
        self,
        model: ChatModel,
        knowledge: KnowledgeBase,
        orders: OrderBook | None = None,
        top_k: int = 1,
        max_rounds: int = MAX_ROUNDS,
        prompt_version: str = "v1",
        tool_timeout_s: float = TOOL_TIMEOUT_S,
    ) -> None:
        self.model = model
        self.knowledge = knowledge
        self.orders = orders or OrderBook()
        self.top_k = top_k
        self.max_rounds = max_rounds
        self.prompt_version = prompt_version
        self.tool_timeout_s = tool_timeout_s
        self._rules = PROMPTS[prompt_version]

    async def chat(
        self,
        question: str,
        customer_id: str = DEFAULT_CUSTOMER,
        history: Sequence[Turn] = (),
        faults: Mapping[str, str] | None = None,
    ) -> Reply:
        clock = _Clock()
        steps: list[Step] = []
        passages = await self.knowledge.search(question, self.top_k)
        steps.append(Step(kind="retrieval", name="policies", duration_ms=clock.ms()))
        context = format_context(passages)
        # WHY a new list per call: a trace shared by the app would mix two
        # customers' tool calls.
        tools = ToolBox(self.orders, customer_id, trace=[], faults=faults or {}, timeout_s=self.tool_timeout_s)
        messages = [
            Message("system", system_prompt(self._rules, context, self.orders.today.isoformat())),
            *(Message("assistant" if t.role == "assistant" else "user", t.content) for t in history),
            Message("user", question),
        ]
        answer, usage, model_id = await self._loop(messages, tools, steps, clock)
        return Reply(
            answer=answer,
            retrieved_sources=tuple(p.source for p in passages),
            retrieval_scores=tuple(p.score for p in passages),
            tool_calls=tuple(tools.trace),
            context=context,
            steps=tuple(steps),
            model=model_id,
            usage=usage,
            route=route_of(tools.trace, answer),
        )

    async def _loop(
        self, messages: list[Message], tools: ToolBox, steps: list[Step], clock: _Clock
    ) -> tuple[str, Usage, str]:
        tokens_in = tokens_out = 0
        options = ChatOptions(tools=TOOL_SPECS, max_tokens=200)
        for round_number in range(1, self.max_rounds + 1):
            start = clock.ms()
            response = await self.model.complete(messages, options)
            tokens_in += response.input_tokens
            tokens_out += response.output_tokens
            steps.append(Step(kind="model", name=f"round {round_number}", start_ms=start,
                              duration_ms=clock.ms() - start, input_tokens=response.input_tokens,
                              output_tokens=response.output_tokens, retries=response.retries))
            if not response.tool_calls:
                if not response.text.strip():
                    raise AgentError("the model returned an empty answer")
                return response.text.strip(), Usage(input_tokens=tokens_in, output_tokens=tokens_out), response.model
            messages.append(Message("assistant", response.text, tool_calls=response.tool_calls))
            for call in response.tool_calls:
                start = clock.ms()
                result = await tools.run(call.name, call.arguments, call.id)
                recorded = tools.trace[-1]
                steps.append(_tool_step(recorded, start, clock.ms() - start))
                messages.append(Message("tool", result, tool_call_id=call.id, name=call.name))
        raise StepLimitError(self.max_rounds)


def _tool_step(call: ToolCall, start: float, duration: float) -> Step:
    kind = "approval" if call.status == "needs_approval" else "tool"
    error = call.result if call.status == "error" else None
    return Step(kind=kind, name=call.name, start_ms=start, duration_ms=duration, error=error)
