"""``--target fault_target:ask`` for subprocess runs: the ShopNest agent with the
agent model from the environment (e.g. the fault server) and the hashing
embedder, so a run starts without loading torch."""

from __future__ import annotations

from conftest import hashing_embedder
from shopnest.agent import ShopNestAgent
from shopnest.knowledge import KnowledgeBase, load_policies
from tracegrade.eval.dataset import GoldenCase
from tracegrade.models import load_model, model_spec
from tracegrade.core.trace import Reply

_AGENT = ShopNestAgent(load_model(model_spec("agent"), role="agent"), KnowledgeBase(load_policies(), hashing_embedder))


async def ask(case: GoldenCase) -> Reply:
    return await _AGENT.chat(case.question, case.customer_id or "C-100")
