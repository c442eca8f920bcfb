"""The agent under test is a plain async callable: GoldenCase -> Reply.

Three ways to name one: a target registered by an installed package (the
``tracegrade.targets`` entry point group; ShopNest registers ``shopnest``),
any Python callable ``module:function``, or an HTTP endpoint that returns the
trace JSON.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import inspect
import os
import sys
import urllib.parse


from tracegrade.eval.dataset import GoldenCase
from tracegrade.core.errors import AgentError, ConfigError
from tracegrade.core.trace import Reply
from tracegrade.eval.plugins import Target, installed_targets, load_target_factory

__all__ = ["Target", "callable_target", "http_target", "resolve_target"]


def callable_target(spec: str) -> Target:
    """``module:function`` as a target; the module is looked up in the working
    directory too (as ``python -m`` and uvicorn do), so a project's own agent
    needs no PYTHONPATH."""
    module_name, _, attribute = spec.partition(":")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
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
    import httpx  # WHY here: a run whose target is not HTTP should not pay for the client's import
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

    ask.probe = functools.partial(probe_url, url)  # type: ignore[attr-defined]
    return ask


async def probe_url(url: str, timeout_s: float = 5.0) -> None:
    """ConfigError naming ``url`` when nothing listens there: a wrong target fails
    once, before any case runs, instead of once per case."""
    parts = urllib.parse.urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(parts.hostname, port), timeout_s)
    except (OSError, asyncio.TimeoutError) as exc:
        reason = "timed out" if isinstance(exc, asyncio.TimeoutError) else (exc.strerror or type(exc).__name__)
        raise ConfigError(f"target {url}: cannot connect to {parts.hostname}:{port} ({reason}); "
                          "is the agent's server running?") from None
    writer.close()


def resolve_target(spec: str, **options: str) -> Target:
    """The target ``spec`` names; ``options`` (e.g. ``agent_model``) go to a
    registered target's factory, which takes the ones it knows."""
    registered = installed_targets()
    if spec in registered:
        return _build(spec, load_target_factory(spec), options)
    if spec.startswith(("http://", "https://")):
        import os

        return http_target(spec, token=os.environ.get("TRACEGRADE_TARGET_TOKEN"))
    if ":" in spec:
        return callable_target(spec)
    names = ", ".join(sorted(registered)) or "none installed"
    raise ConfigError(f"unknown target {spec!r}: use a registered target ({names}), "
                      "module:function or http://host:port/chat")


def _build(name: str, factory, options: dict[str, str]) -> Target:
    accepted = inspect.signature(factory).parameters
    takes_any = any(p.kind is p.VAR_KEYWORD for p in accepted.values())
    given = {k: v for k, v in options.items() if v is not None and (takes_any or k in accepted)}
    try:
        return factory(**given)
    except TypeError as exc:
        raise ConfigError(f"target {name!r}: {exc}") from None
