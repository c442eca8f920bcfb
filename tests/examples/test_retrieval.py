"""Retrieval with the real all-MiniLM-L6-v2 model: each phrasing, written the
way a customer would ask, must put the right policy file first."""

import pytest

from shopnest.knowledge import KnowledgeBase, Passage, load_policies

pytestmark = pytest.mark.slow  # the real embeddings model

PHRASINGS = [
    ("Can I send back shoes I bought last week?", "return-policy.md"),
    ("How many days do I have to return an item?", "return-policy.md"),
    ("Do you give me a prepaid label when I send something back?", "return-policy.md"),
    ("How long does delivery take once my order has shipped?", "shipping-policy.md"),
    ("Do you deliver to P.O. boxes?", "shipping-policy.md"),
    ("How much does express shipping cost?", "shipping-policy.md"),
    ("How long does a refund take to reach my card?", "refund-policy.md"),
    ("Will I get a refund if my order was cancelled?", "refund-policy.md"),
    ("Do you refund the shipping costs?", "refund-policy.md"),
    ("My blender stopped working after six months, is that covered?", "warranty-policy.md"),
    ("What does the warranty not cover?", "warranty-policy.md"),
    ("The coffee grinder has a manufacturing defect, will you repair or replace it?", "warranty-policy.md"),
]


def test_the_shop_has_the_required_policies():
    assert {p.source for p in load_policies()} >= {
        "return-policy.md", "shipping-policy.md", "refund-policy.md", "warranty-policy.md"}


@pytest.mark.parametrize("question, source", PHRASINGS)
def test_real_embedder_puts_the_right_policy_first(minilm_knowledge, question, source):
    best = minilm_knowledge.search_now(question, top_k=1)
    assert [p.source for p in best] == [source], f"{question!r} -> {best[0].source} ({best[0].score})"


def test_known_confusion_returns_versus_refunds_needs_top_2(minilm_knowledge):
    # Measured: "money back after returning" ranks the return policy first
    # (0.60 vs 0.54). Top-1 misses the refund file; top-2 holds both.
    question = "When will I get my money back after returning something?"
    assert {p.source for p in minilm_knowledge.search_now(question, 2)} == {"return-policy.md", "refund-policy.md"}


def test_every_policy_is_covered_by_the_phrasings():
    assert {source for _, source in PHRASINGS} == {p.source for p in load_policies()}


async def test_top_k_returns_sources_in_score_order_with_scores(minilm_knowledge):
    passages = await minilm_knowledge.search("Can I return my order?", top_k=3)
    assert len(passages) == 3 and len({p.source for p in passages}) == 3
    scores = [p.score for p in passages]
    assert scores == sorted(scores, reverse=True)
    assert all(-1.0 <= s <= 1.0 for s in scores)
    assert passages[0].text.startswith("# ")


def test_search_with_a_fake_embedder_uses_cosine_similarity(fake_embedder):
    passages = [Passage("a.md", "apples and pears"), Passage("b.md", "trains and buses")]
    knowledge = KnowledgeBase(passages, fake_embedder)
    assert knowledge.sources == ("a.md", "b.md")
    [best] = knowledge.search_now("buses and trains")
    assert (best.source, best.score) == ("b.md", 1.0)


def test_the_registered_shopnest_target_retrieves_with_minilm_and_asks_the_model_its_flag_names(
        minilm_knowledge, tmp_path, monkeypatch):
    """`tracegrade run --target shopnest --agent-model openai:...`: the entry point builds the real
    agent, MiniLM retrieval included, around the model the flag names. Here, not in a subprocess
    of its own: the model is loaded once a process, and this file loads it anyway
    (tests/run/test_fault_run.py runs the same agent on the fault server without torch)."""
    import json

    from shopnest.orders import ORDERS
    from tracegrade.cli import main
    from tracegrade.testing.fault_server import FaultServer

    order = ORDERS[1]
    question = f"[case s1] Where is my order {order.id}?"
    dataset = tmp_path / "cases.json"
    dataset.write_text(json.dumps([{"id": "s1", "question": question, "expectedTool": "getOrderStatus",
                                    "expectedToolArgument": order.id, "customerId": order.customer_id}]))
    with FaultServer() as server:
        monkeypatch.setenv("TRACEGRADE_AGENT_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-local")
        code = main(["run", str(dataset), "--target", "shopnest", "--agent-model", "openai:fault-agent",
                     "--checks-only", "--quiet", "--db", f"sqlite:///{tmp_path / 'runs.db'}", "--out", str(tmp_path / "out")])
    [results] = (tmp_path / "out").rglob("results.json")
    [result] = json.loads(results.read_text())["results"]
    assert code == 0 and result["status"] == "pass", result
    reply = result["reply"]
    assert [(c["name"], c["argument"]) for c in reply["toolCalls"]] == [("getOrderStatus", order.id)]
    assert reply["answer"].startswith(f"About {order.id}: ")  # the served model's answer
    assert reply["retrievedSources"] == [p.source for p in minilm_knowledge.search_now(question, top_k=1)]
    assert [(s.role, s.case) for s in server.log] == [("agent", "s1"), ("agent", "s1")]
