"""Model providers by name. A spec is ``local``, ``local:/path/to.gguf``,
``openai:MODEL`` or ``anthropic:MODEL``; the agent and the judge are configured
apart (``--agent-model``/``TRACEGRADE_AGENT_MODEL``, ``--judge-model``/
``TRACEGRADE_JUDGE_MODEL``), each with its own base URL
(``TRACEGRADE_AGENT_BASE_URL``/``TRACEGRADE_JUDGE_BASE_URL``, else
``OPENAI_BASE_URL``/``ANTHROPIC_BASE_URL``).
"""

from __future__ import annotations

import os
from typing import Literal

from tracegrade.errors import ConfigError
from tracegrade.models.base import ChatModel, ChatOptions, ChatResponse, Message, ModelToolCall, ToolSpec

Role = Literal["agent", "judge"]
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
        from tracegrade.models.local import local_model

        return local_model(name or None)
    if provider in ("openai", "anthropic") and not name:
        raise ConfigError(f"model spec {spec!r} needs a model name, e.g. {provider}:MODEL")
    base_url = os.environ.get(f"TRACEGRADE_{role.upper()}_BASE_URL")
    if provider == "openai":
        from tracegrade.models.openai_compat import OpenAIModel

        return OpenAIModel(name, base_url or os.environ.get("OPENAI_BASE_URL"), os.environ.get("OPENAI_API_KEY"))
    if provider == "anthropic":
        from tracegrade.models.anthropic_model import AnthropicModel

        return AnthropicModel(name, base_url or os.environ.get("ANTHROPIC_BASE_URL"), os.environ.get("ANTHROPIC_API_KEY"))
    raise ConfigError(
        f"unknown model spec {spec!r}: use local, local:/path/to/model.gguf, openai:MODEL or anthropic:MODEL"
    )
