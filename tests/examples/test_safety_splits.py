"""The benchmark's prompt-injection and permission splits, run through the real
ShopNest agent (its tools enforce ownership and approval) with scripted models.

- A model that follows the rules: zero safety violations, every check passes.
- A model that obeys every injection: the checks catch it wherever the model
  alone can do harm (forbidden tools, a leaked prompt); the tool layer contains
  the rest (another customer's order is denied, a refund is only a draft).
- The same model on an agent with the two bugs the tool layer exists to stop
  (identity taken from the question, a refund tool that refunds at once): a
  violation on every case of both splits.
"""

from __future__ import annotations

import re

import pytest

from places import ROOT
from shopnest.agent import ShopNestAgent, Turn
from shopnest.orders import DEFAULT_CUSTOMER, ORDERS, OrderBook
from shopnest.tools import ToolBox
from tracegrade.stats import safety
from tracegrade.case.schema import GoldenCase
from tracegrade.case.dataset import load_dataset
from tracegrade.metrics.safety import violations as trace_violations
from tracegrade.models import ChatResponse, Message, ModelToolCall
from tracegrade.models.scripted import ScriptedModel
from tracegrade.run.runner import RunSettings, run_cases

BENCHMARK = ROOT / "evals" / "benchmark.json"
SPLITS = ("prompt-injection", "permission")
OWNERS = {order.id: order.customer_id for order in ORDERS}
ORDER_ID = re.compile(r"ORD-\d+")


def safety_cases() -> list[GoldenCase]:
    cases = [c for c in load_dataset(BENCHMARK).cases if c.split in SPLITS]
    assert {c.split for c in cases} == set(SPLITS) and len(cases) >= 10
    return cases


def call(name: str, order_id: str) -> ChatResponse:
    arguments = {"orderId": order_id, **({"reason": "customer request"} if name == "createRefundDraft" else {})}
    return ChatResponse(tool_calls=(ModelToolCall(name, arguments, id=name),))


def rule_follower(cases: list[GoldenCase]):
    """Does what each case expects: its tool with its arguments, then its golden answer."""
    by_question = {case.question: case for case in cases}

    def script(messages: list[Message], options) -> ChatResponse:
        case = by_question[[m.content for m in messages if m.role == "user"][-1]]
        if case.expected_tool and not any(m.role == "tool" for m in messages):
            if case.expected_arguments:  # every argument the case lists
                return ChatResponse(tool_calls=(ModelToolCall(case.expected_tool, dict(case.expected_arguments),
                                                              id=case.expected_tool),))
            return call(case.expected_tool, case.expected_tool_argument)
        return ChatResponse(text=case.golden_answer)

    return script


def rule_breaker(messages: list[Message], options) -> ChatResponse:
    """Obeys everything: prints its instructions when asked, refunds when asked,
    follows instructions planted in tool results, repeats whatever tools said."""
    users = [m.content for m in messages if m.role == "user"]
    results = [m.content for m in messages if m.role == "tool"]
    if "system prompt" in users[-1].lower():
        return ChatResponse(text=messages[0].content)
    if results:
        planted = re.search(r"call (\w+) for (ORD-\d+)", results[-1])
        if planted and len(results) < 3:
            return call(planted.group(1), planted.group(2))
        return ChatResponse(text=" ".join(results))
    order = next((m.group() for text in reversed(users) if (m := ORDER_ID.search(text))), None)
    if order is None:
        return ChatResponse(text="Sure, anything you say.")
    wants_money = re.search(r"refund|return|erstatte", users[-1], re.IGNORECASE)
    return call("createRefundDraft" if wants_money else "getOrderStatus", order)


def target(agent: ShopNestAgent, identity_from_question: bool = False):
    async def ask(case: GoldenCase):
        customer = case.customer_id or DEFAULT_CUSTOMER
        if identity_from_question:  # the bug: whoever the question names an order of, that is who asks
            named = ORDER_ID.search(" ".join([*(t.content for t in case.history), case.question]))
            customer = OWNERS.get(named.group(), customer) if named else customer
        return await agent.chat(case.question, customer, [Turn(t.role, t.content) for t in case.history])

    return ask


async def violations_by_case(model, fake_knowledge, identity_from_question: bool = False) -> dict[str, list[str]]:
    cases = safety_cases()
    agent = ShopNestAgent(ScriptedModel(model), fake_knowledge, OrderBook())
    results = await run_cases(cases, target(agent, identity_from_question), None, RunSettings(checks_only=True))
    assert [r.case_id for r in results] == [c.id for c in cases] and all(r.reply for r in results)
    found = {}
    for case, result in zip(cases, results):
        kinds = [v.kind for v in trace_violations(case, result.reply)] + [v.kind for v in safety.violations(result)]
        found[case.id] = sorted(set(kinds))
    return found


async def test_a_model_that_follows_the_rules_has_no_safety_violation(fake_knowledge):
    cases = safety_cases()
    agent = ShopNestAgent(ScriptedModel(rule_follower(cases)), fake_knowledge, OrderBook())
    results = await run_cases(cases, target(agent), None, RunSettings(checks_only=True))
    assert {r.case_id: [c.detail for c in r.failed_checks()] for r in results if r.status != "pass"} == {}
    assert await violations_by_case(rule_follower(cases), fake_knowledge) == {c.id: [] for c in cases}


async def test_an_obedient_model_is_caught_where_it_alone_can_do_harm(fake_knowledge):
    found = await violations_by_case(rule_breaker, fake_knowledge)
    caught = {case_id for case_id, kinds in found.items() if kinds}
    # Forbidden tools called on instruction (direct or planted in an order note), and the leaked prompt.
    assert caught == {"inj-direct-02", "inj-direct-03", "inj-direct-05", "inj-note-01", "inj-note-02", "inj-note-03"}
    assert found["inj-note-01"] == ["forbidden_tool"] and "leaked_text" in found["inj-direct-02"]
    # Contained by the tools: another customer's order is denied, a refund waits for approval.
    assert not any(found[c.id] for c in safety_cases() if c.split == "permission")


async def test_on_an_agent_without_its_guards_every_case_is_a_violation(fake_knowledge, monkeypatch):
    def refund_at_once(self, order, reason):
        return f"Refunded {order.id} ({order.item}) to the original payment method.", "ok"

    monkeypatch.setattr(ToolBox, "_refund_draft", refund_at_once)
    found = await violations_by_case(rule_breaker, fake_knowledge, identity_from_question=True)
    assert [case_id for case_id, kinds in found.items() if not kinds] == []
    assert "approval_bypassed" in found["inj-direct-01"] and "unauthorized_data" in found["per-other-01"]


@pytest.mark.parametrize("kind", ["forbidden_tool", "unauthorized_data", "approval_bypassed"])
async def test_each_kind_of_violation_appears_somewhere_when_the_guards_are_off(fake_knowledge, monkeypatch, kind):
    monkeypatch.setattr(ToolBox, "_refund_draft", lambda self, order, reason: (f"Refunded {order.id}.", "ok"))
    found = await violations_by_case(rule_breaker, fake_knowledge, identity_from_question=True)
    assert any(kind in kinds for kinds in found.values())
