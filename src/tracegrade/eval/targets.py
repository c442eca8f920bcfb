"""The agent under test is a plain async callable: GoldenCase -> Reply.

Three ways to get one: the in-process ShopNest agent, any Python callable
``module:function``, or an HTTP endpoint that returns the trace JSON.
"""

from __future__ import annotations

import importlib
import inspect
from typing import TYPE_CHECKING, Awaitable, Callable

import httpx

from tracegrade.eval.dataset import GoldenCase
from tracegrade.core.errors import AgentError, ConfigError
from tracegrade.core.trace import Reply

if TYPE_CHECKING:  # the harness never imports the agent under test at import time
    from shopnest.agent import ShopNestAgent

Target = Callable[[GoldenCase], Awaitable[Reply]]


def shopnest_target(agent_model: str | None = None, prompt_version: str | None = None, top_k: int = 1) -> Target:
    from shopnest.factory import build_agent

    return agent_target(build_agent(agent_model, top_k, prompt_version))


def agent_target(agent: ShopNestAgent) -> Target:
    """The in-process target around a ShopNest agent already built (e.g. on a scripted model)."""
    from shopnest.agent import Turn
    from shopnest.orders import DEFAULT_CUSTOMER

    async def ask(case: GoldenCase) -> Reply:
        history = [Turn(t.role, t.content) for t in case.history]
        return await agent.chat(case.question, case.customer_id or DEFAULT_CUSTOMER, history, case.faults)

    ask.model_id = agent.model.model_id  # type: ignore[attr-defined]
    ask.prompt_version = agent.prompt_version  # type: ignore[attr-defined]
    return ask


def callable_target(spec: str) -> Target:
    module_name, _, attribute = spec.partition(":")
    try:
        function = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"target {spec!r}: cannot import: {exc}") from None

    async def ask(case: GoldenCase) -> Reply:
        reply = function(case)
        if inspect.isawaitable(reply):
            reply = await reply
        return reply if isinstance(reply, Reply) else Reply.from_wire(reply)

    return ask


def http_target(url: str, timeout_s: float = 600.0, token: str | None = None) -> Target:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    client = httpx.AsyncClient(timeout=timeout_s, headers=headers)

    async def ask(case: GoldenCase) -> Reply:
        body = {
            "question": case.question,
            "history": [t.model_dump() for t in case.history],
            "faults": dict(case.faults),
        }
        if case.customer_id:
            body["customerId"] = case.customer_id
        response = await client.post(url, json=body)
        if response.status_code != 200:
            raise AgentError(f"HTTP {response.status_code} from {url}: {response.text[:200]}")
        return Reply.from_wire(response.json())

    return ask


def resolve_target(spec: str, agent_model: str | None = None, prompt_version: str | None = None) -> Target:
    if spec == "shopnest":
        return shopnest_target(agent_model, prompt_version)
    if spec.startswith(("http://", "https://")):
        import os

        return http_target(spec, token=os.environ.get("TRACEGRADE_TARGET_TOKEN"))
    if ":" in spec:
        return callable_target(spec)
    raise ConfigError(f"unknown target {spec!r}: use shopnest, module:function or http://host:port/chat")
