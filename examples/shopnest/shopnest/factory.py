"""Builds the agent from configuration: one agent (and model) per process and settings."""

from __future__ import annotations

import functools
import os

from shopnest.agent import ShopNestAgent
from shopnest.knowledge import KnowledgeBase, load_policies, minilm_embedder
from tracegrade.models import load_model, model_spec


@functools.lru_cache(maxsize=8)
def build_agent(agent_model: str | None = None, top_k: int = 1, prompt_version: str | None = None) -> ShopNestAgent:
    """The real agent: the configured model and all-MiniLM-L6-v2 retrieval."""
    # The embedding model ships inside a package; never try a model hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    model = load_model(model_spec("agent", agent_model), role="agent")
    knowledge = KnowledgeBase(load_policies(), minilm_embedder())
    version = prompt_version or os.environ.get("SHOPNEST_PROMPT_VERSION", "v1")
    return ShopNestAgent(model, knowledge, top_k=top_k, prompt_version=version)
