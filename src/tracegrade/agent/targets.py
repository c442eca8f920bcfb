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
import json
import os
import sys
import urllib.parse
from typing import Any, Callable, Sequence

from tracegrade.agent.capture.target import captured_target
from tracegrade.case.schema import GoldenCase
from tracegrade.core.errors import AgentError, ConfigError
from tracegrade.core.redact import redact_secrets
from tracegrade.core.trace import Reply
from tracegrade.agent.plugins import Target, TargetFactory, installed_targets, load_target_factory

__all__ = ["Target", "callable_target", "function_target", "http_target", "resolve_target"]

# What an HTTP target may send back. WHY limits: a target that streams forever
# took a run to 2.6 GB in 20 s; a limit ends that case as an error, not the run.
MAX_RESPONSE_BYTES = 10 * 1024 * 1024  # env TRACEGRADE_TARGET_MAX_BYTES
MAX_ANSWER_CHARS = 100_000  # env TRACEGRADE_TARGET_MAX_ANSWER_CHARS
_ERROR_BODY_BYTES = 4096  # of a non-200 answer, enough to say why


def callable_target(spec: str, capture: Sequence[str] = ()) -> Target:
    """``module:function`` as a target; the module is looked up in the working
    directory too (as ``python -m`` and uvicorn do), so a project's own agent
    needs no PYTHONPATH. See :func:`function_target` for what the function may
    take and return."""
    module_name, _, attribute = spec.partition(":")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        function = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"target {spec!r}: cannot import: {exc}") from None
    return function_target(function, capture)


def function_target(function: Callable[..., Any], capture: Sequence[str] = ()) -> Target:
    """A Python function as a target. It takes the case or the question string,
    may be sync (run in a worker thread, so it never blocks the other cases) or
    async, and returns a Reply, its wire dict, the answer string, or nothing
    when its model calls are captured (``capture``: "openai", "anthropic",
    "otel"; see ``tracegrade.capture``). A wrong return shape ends its case as
    an error that says what came and how to fix it."""
    return captured_target(function, capture)


def http_target(url: str, timeout_s: float = 600.0, token: str | None = None,
                max_response_bytes: int = MAX_RESPONSE_BYTES, max_answer_chars: int = MAX_ANSWER_CHARS) -> Target:
    """POST each case to ``url`` (the trace contract's request) and read the Reply.

    A response over ``max_response_bytes`` (counted as it arrives, so a stream
    without end stops there) or an answer over ``max_answer_chars`` fails the
    case with the reason. Error texts never carry ``token`` or any other
    configured secret (a server that echoes the request would put it there)."""
    secrets = (token,) if token else ()

    async def ask(case: GoldenCase) -> Reply:
        raw = await _post(url, _request_body(case), token, timeout_s, max_response_bytes, case.id, case.trial)
        try:
            reply = Reply.from_wire(json.loads(raw))
        except RecursionError:  # json recurses per level: a body nested ~1,000 deep
            raise AgentError(f"unusable reply from {url}: nested too deeply") from None
        except ValueError as exc:
            raise AgentError(redact_secrets(f"unusable reply from {url}: {exc}", secrets)[:500]) from None
        if len(reply.answer) > max_answer_chars:
            raise AgentError(f"the answer from {url} has {len(reply.answer):,} characters, over the limit of "
                             f"{max_answer_chars:,} (TRACEGRADE_TARGET_MAX_ANSWER_CHARS)")
        # WHY dropped: where the calls came from is the harness's to say; an agent's claim is no evidence
        return reply.model_copy(update={"provenance": None}) if reply.provenance is not None else reply

    ask.probe = functools.partial(probe_url, url)  # type: ignore[attr-defined]
    return ask


def _request_body(case: GoldenCase) -> dict[str, Any]:
    """The question and history; the customer and the faults only when the case sets
    them (an agent serving real customers refuses both: they are for its test mode)."""
    body: dict[str, Any] = {"question": case.question, "history": [t.model_dump() for t in case.history]}
    if case.customer_id:
        body["customerId"] = case.customer_id
    if case.faults:
        body["faults"] = dict(case.faults)
    return body


CASE_ID_HEADER = "X-Tracegrade-Case-Id"
TRIAL_HEADER = "X-Tracegrade-Trial"  # GoldenCase.trial: what an agent behind HTTP keys its memory by


async def _post(url: str, body: dict[str, Any], token: str | None, timeout_s: float, max_bytes: int, case_id: str,
                trial: str = "") -> bytes:
    """The body of a 200 answer; AgentError (redacted) for anything else. WHY the case
    id and trial as headers, not in the body: an agent's API that refuses unknown fields
    (ShopNest's does) keeps working, and one that wants them can log by them or key its memory."""
    from tracegrade.core.http import TooLarge, TransportFailed, post_json  # WHY here: only HTTP targets need aiohttp

    headers = {CASE_ID_HEADER: case_id[:200], **({TRIAL_HEADER: trial[:300]} if trial else {})}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        response = await post_json(url, body, headers, timeout_s, max_bytes, error_bytes=_ERROR_BODY_BYTES)
    except TooLarge as exc:
        raise AgentError(_too_big(url, exc.limit, exc.detail)) from None
    except TransportFailed as exc:
        raise AgentError(f"{url}: {exc}") from None
    if response.status != 200:
        secrets = (token,) if token else ()
        raise AgentError(redact_secrets(f"HTTP {response.status} from {url}: {response.text[:200]}", secrets))
    return response.body


def _too_big(url: str, limit: int, detail: str) -> str:
    return (f"the response from {url} is larger than the limit of {limit:,} bytes ({detail}; "
            f"TRACEGRADE_TARGET_MAX_BYTES): not read further")


def _limit(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"{name} must be a whole number of at least 1, got {raw!r}")
    return int(raw)


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


def resolve_target(spec: str, capture: Sequence[str] = (), **options: str | None) -> Target:
    """The target ``spec`` names; ``options`` (e.g. ``agent_model``) go to a
    registered target's factory, which takes the ones it knows. ``capture``
    records a ``module:function`` or registered target's model calls."""
    registered = installed_targets()
    if spec in registered:
        built = _build(spec, load_target_factory(spec), options)
        return captured_target(built, capture) if capture else built
    if spec.startswith(("http://", "https://")):
        if capture:
            raise ConfigError(f"--capture records model calls made in this process; the agent at {spec} runs in "
                              "another one (grade its exported traces with `tracegrade grade`, or use module:function)")
        return http_target(spec, token=os.environ.get("TRACEGRADE_TARGET_TOKEN"),
                           max_response_bytes=_limit("TRACEGRADE_TARGET_MAX_BYTES", MAX_RESPONSE_BYTES),
                           max_answer_chars=_limit("TRACEGRADE_TARGET_MAX_ANSWER_CHARS", MAX_ANSWER_CHARS))
    if ":" in spec:
        return callable_target(spec, capture)
    names = ", ".join(sorted(registered)) or "none installed"
    raise ConfigError(f"unknown target {spec!r}: use a registered target ({names}), "
                      "module:function or http://host:port/chat")


def _build(name: str, factory: TargetFactory, options: dict[str, str | None]) -> Target:
    accepted = inspect.signature(factory).parameters
    takes_any = any(p.kind is p.VAR_KEYWORD for p in accepted.values())
    given = {k: v for k, v in options.items() if v is not None and (takes_any or k in accepted)}
    try:
        return factory(**given)
    except TypeError as exc:
        raise ConfigError(f"target {name!r}: {exc}") from None
