"""``--target fault_target:ask`` for subprocess runs: the ShopNest agent with the
agent model from the environment (e.g. the fault server) and the hashing
embedder, and the judge's long evidence ranked by words, so a run never loads
torch (its import and the embeddings model cost a run seconds of CPU).

WHY the judge's ranking too: the fault server's judge answers from the case's tag,
whatever evidence it is shown; conftest's ``evidence_ranked_by_words`` does the same
for the suite's scripted judges, and tests/judge/test_judge_evidence.py tests the model's
ranking. tests/examples/test_retrieval.py runs the registered ``shopnest`` target itself."""

from __future__ import annotations

from conftest import hashing_embedder
from shopnest.agent import ShopNestAgent
from shopnest.knowledge import KnowledgeBase, load_policies
from tracegrade.case.schema import GoldenCase
from tracegrade.judge import relevant
from tracegrade.models import load_model, model_spec
from tracegrade.core.trace import Reply

_AGENT = ShopNestAgent(load_model(model_spec("agent"), role="agent"), KnowledgeBase(load_policies(), hashing_embedder))
relevant.default_rank = lambda: relevant.lexical_rank


async def ask(case: GoldenCase) -> Reply:
    return await _AGENT.chat(case.question, case.customer_id or "C-100")
