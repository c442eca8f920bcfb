"""Model providers by name. A spec is ``local``, ``local:/path/to.gguf``,
``openai:MODEL`` (a lean aiohttp client), ``openai-sdk:MODEL`` (the ``openai`` SDK) or ``anthropic:MODEL``; the agent and the judge are configured
apart (``--agent-model``/``TRACEGRADE_AGENT_MODEL``, ``--judge-model``/
``TRACEGRADE_JUDGE_MODEL``; a simulated user's ``--user-model``/``TRACEGRADE_USER_MODEL``), each with its own base URL
(``TRACEGRADE_AGENT_BASE_URL``/``TRACEGRADE_JUDGE_BASE_URL``, else
``OPENAI_BASE_URL``/``ANTHROPIC_BASE_URL``). The HTTP providers share one
timeout and retry policy: ``TRACEGRADE_MODEL_TIMEOUT_S`` (default 60) and
``TRACEGRADE_MODEL_RETRIES`` (retries after the first attempt, default 3).
``TRACEGRADE_JUDGE_LOGPROBS=1`` (or ``_AGENT_``) says an OpenAI-compatible
endpoint returns token probabilities, so the judge scores from them.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from tracegrade.core.errors import ConfigError
from tracegrade.models.base import ChatModel, ChatOptions, ChatResponse, Message, ModelToolCall, ToolSpec
from tracegrade.models.retry import RetryPolicy

Role = Literal["agent", "judge", "user"]  # user: the simulated user of a conversation case
DEFAULT_SPEC = "local"

__all__ = [
    "ChatModel", "ChatOptions", "ChatResponse", "Message", "ModelToolCall", "ToolSpec",
    "load_model", "model_spec",
]


def model_spec(role: Role, flag: str | None = None) -> str:
    """The spec for a role: the flag, else its environment variable, else ``local``."""
    return flag or os.environ.get(f"TRACEGRADE_{role.upper()}_MODEL") or DEFAULT_SPEC


def load_model(spec: str, role: Role = "agent") -> ChatModel:
    """The ChatModel a spec names, or ConfigError saying what is accepted."""
    provider, _, name = spec.partition(":")
    if provider == "local":
        require("xllamacpp", "local", "the local model",
                f"or use another model (--{role}-model openai:MODEL, "
                f"anthropic:MODEL)" + (", or skip the judge with --checks-only" if role == "judge" else ""))
        from tracegrade.models.local import local_model

        return local_model(name or None)
    if provider in ("openai", "openai-sdk", "anthropic") and not name:
        raise ConfigError(f"model spec {spec!r} needs a model name, e.g. {provider}:MODEL")
    base_url = os.environ.get(f"TRACEGRADE_{role.upper()}_BASE_URL")
    if provider in ("openai", "openai-sdk"):
        logprobs = os.environ.get(f"TRACEGRADE_{role.upper()}_LOGPROBS", "").strip().lower() in ("1", "true", "yes")
        settings = dict(token_probabilities=logprobs, **http_settings())
        url, key = base_url or os.environ.get("OPENAI_BASE_URL"), os.environ.get("OPENAI_API_KEY")
        if provider == "openai-sdk":
            require("openai", "openai", "openai-sdk: models")
            from tracegrade.models.openai_compat import OpenAIModel

            return OpenAIModel(name, url, key, **settings)
        # WHY the lean client by default: the SDK's per-request CPU set the pace at high concurrency.
        from tracegrade.models.openai_http import OpenAIHTTPModel

        return OpenAIHTTPModel(name, url, key, **settings)
    if provider == "anthropic":
        require("anthropic", "anthropic", "anthropic: models")
        from tracegrade.models.anthropic_model import AnthropicModel

        return AnthropicModel(name, base_url or os.environ.get("ANTHROPIC_BASE_URL"), os.environ.get("ANTHROPIC_API_KEY"),
                              **http_settings())
    raise ConfigError(
        f"unknown model spec {spec!r}: use local, local:/path/to/model.gguf, openai:MODEL, openai-sdk:MODEL "
        "or anthropic:MODEL"
    )


def require(module: str, extra: str, what: str, otherwise: str = "") -> None:
    """ConfigError naming the extra to install when an optional package is missing,
    and ``otherwise``, what the user can do instead."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ConfigError(f"{what} needs the {module!r} package: pip install 'tracegrade[{extra}]'"
                          + (f"; {otherwise}" if otherwise else ""))


def http_settings() -> dict[str, Any]:
    """``timeout_s`` and ``retry`` for the HTTP providers, from the environment."""
    timeout_s = _env_number("TRACEGRADE_MODEL_TIMEOUT_S", 60.0, float)
    retries = _env_number("TRACEGRADE_MODEL_RETRIES", 3, int)
    if timeout_s <= 0 or retries < 0:
        raise ConfigError("TRACEGRADE_MODEL_TIMEOUT_S must be > 0 and TRACEGRADE_MODEL_RETRIES >= 0")
    return {"timeout_s": timeout_s, "retry": RetryPolicy(attempts=retries + 1)}


def _env_number(name: str, default: Any, kind: type) -> Any:
    raw = os.environ.get(name, "").strip()
    try:
        return kind(raw) if raw else default
    except ValueError:
        raise ConfigError(f"{name} must be a {kind.__name__}, got {raw!r}") from None
