"""ShopNest as a tracegrade target, registered under the ``tracegrade.targets``
entry point (see pyproject.toml), so ``tracegrade run --target shopnest`` finds
it while the harness imports nothing of ShopNest."""

from __future__ import annotations

from typing import Awaitable, Callable

from shopnest.agent import ShopNestAgent, Turn
from shopnest.orders import DEFAULT_CUSTOMER
from tracegrade.core.trace import Reply
from tracegrade.case.schema import GoldenCase


def make_target(agent_model: str | None = None, prompt_version: str | None = None,
                top_k: int = 1) -> Callable[[GoldenCase], Awaitable[Reply]]:
    """The in-process agent on the configured model (the target factory)."""
    from shopnest.factory import build_agent

    return agent_target(build_agent(agent_model, int(top_k), prompt_version))


def agent_target(agent: ShopNestAgent) -> Callable[[GoldenCase], Awaitable[Reply]]:
    """The target around a ShopNest agent already built (e.g. on a scripted model)."""

    async def ask(case: GoldenCase) -> Reply:
        history = [Turn(t.role, t.content) for t in case.history]
        return await agent.chat(case.question, case.customer_id or DEFAULT_CUSTOMER, history, case.faults)

    ask.model_id = agent.model.model_id  # type: ignore[attr-defined]
    ask.model = agent.model  # type: ignore[attr-defined]  (eval spans name its provider)
    ask.agent_name = "shopnest"  # type: ignore[attr-defined]
    ask.prompt_version = agent.prompt_version  # type: ignore[attr-defined]
    return ask
