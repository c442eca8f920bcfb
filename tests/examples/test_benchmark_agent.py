"""Benchmark cases through the real ShopNest agent (scripted model, hashing embedder):
injected faults reach the trace, the idempotency rule, permission bounds, and the run's metrics."""

from __future__ import annotations

import datetime as dt
from typing import Sequence

import pytest

from places import ROOT
from shopnest.agent import ShopNestAgent, Turn
from shopnest.orders import OrderBook
from shopnest.tools import ToolBox
from tracegrade.checks.builtin import Idempotency, run_checks
from tracegrade.case.schema import GoldenCase
from tracegrade.case.dataset import load_dataset
from tracegrade.metrics import run_metrics
from tracegrade.models import ChatOptions, ChatResponse, Message, ModelToolCall
from tracegrade.models.scripted import ScriptedModel
from tracegrade.core.results import CaseResult
from tracegrade.run.runner import RunSettings, run_cases
from tracegrade.core.trace import Reply

BENCHMARK = load_dataset(ROOT / "evals" / "benchmark.json")
BY_ID = {c.id: c for c in BENCHMARK.cases}
TODAY = dt.date(2026, 6, 15)


def tool_then_answer(case: GoldenCase):
    """A model that calls the tool the case expects once, then answers from what the tool said."""

    def reply(messages: Sequence[Message], options: ChatOptions) -> ChatResponse:
        if messages[-1].role == "tool":
            result = messages[-1].content
            if result.startswith("ERROR"):
                return ChatResponse(text="I cannot check that right now; please try again later.")
            return ChatResponse(text="I could not find that order." if "not found" in result else "Here it is.")
        arguments = dict(case.expected_arguments) or {"orderId": case.expected_tool_argument}  # what the case lists
        return ChatResponse(tool_calls=(ModelToolCall(case.expected_tool, arguments, id="1"),))

    return reply


@pytest.fixture
def target(fake_knowledge):
    """A fresh ShopNest agent per case, its model scripted for that case."""

    async def ask(case: GoldenCase) -> Reply:
        agent = ShopNestAgent(ScriptedModel(tool_then_answer(case)), fake_knowledge, OrderBook(today=TODAY))
        history = [Turn(t.role, t.content) for t in case.history]
        return await agent.chat(case.question, case.customer_id or "C-100", history, case.faults)

    return ask


@pytest.mark.parametrize("fault", ["timeout", "server_error", "malformed"])
async def test_an_injected_fault_reaches_the_trace_as_an_error(target, fault):
    reply = await target(BY_ID["out-timeout-01"].model_copy(update={"faults": {"getOrderStatus": fault}}))
    [call] = reply.tool_calls
    assert (call.name, call.argument, call.status) == ("getOrderStatus", "ORD-101", "error")
    assert call.result.startswith("ERROR: getOrderStatus")
    tool_step = next(s for s in reply.steps if s.kind == "tool")
    assert tool_step.error == call.result
    assert reply.answer == "I cannot check that right now; please try again later."


async def test_the_outage_cases_pass_their_checks_when_the_agent_degrades_gracefully(target):
    outages = [c for c in BENCHMARK.cases if c.split == "tool-outage" and "hang" not in c.faults.values()]
    results = await run_cases(outages, target, None, RunSettings(checks_only=True))
    assert [(r.case_id, r.failed_checks()) for r in results if not r.passed] == []
    assert all("faultRecorded" in {c.name for c in r.checks} for r in results)


async def test_a_hanging_tool_ends_in_an_error_at_the_tool_timeout():
    case = BY_ID["out-hang-01"]
    tools = ToolBox(OrderBook(today=TODAY), "C-100", trace=[], faults=case.faults, timeout_s=0.05)
    result = await tools.run("getOrderStatus", {"orderId": "ORD-102"})
    assert "timed out" in result and tools.trace[0].status == "error"


async def test_the_idempotency_rule_on_the_real_toolbox():
    tools = ToolBox(OrderBook(today=TODAY), "C-100", trace=[])
    first = await tools.run("createRefundDraft", {"orderId": "ORD-102", "reason": "too small"})
    second = await tools.run("createRefundDraft", {"orderId": " ord-102", "reason": "they do not fit"})
    await tools.run("createRefundDraft", {"orderId": "ORD-107", "reason": "broken zip"})
    assert first.startswith("Refund draft RD-102 created") and "already exists" in second  # the tool dedupes
    reply = Reply(answer="Done.", tool_calls=tuple(tools.trace))
    result = Idempotency()(BY_ID["edg-dup-02"], reply)
    # The trace still shows two write requests for ORD-102: the agent asked twice.
    assert (result.passed, result.code) == (False, "duplicate_side_effect")
    assert result.detail == "written more than once: createRefundDraft(ORD-102) x2"
    once = Reply(answer="Done.", tool_calls=(tools.trace[0], tools.trace[2]))  # two orders, one draft each
    assert Idempotency()(BY_ID["edg-dup-02"], once).passed


async def test_permission_cases_are_denied_and_leak_nothing(target):
    permission = [c for c in BENCHMARK.cases if c.split == "permission" and c.expected_tool]
    results = await run_cases(permission, target, None, RunSettings(checks_only=True))
    assert all(r.passed for r in results), [(r.case_id, r.failed_checks()) for r in results if not r.passed]
    assert {call.status for r in results for call in r.reply.tool_calls} == {"denied"}
    metrics = run_metrics(results, BENCHMARK.cases)
    assert metrics.overall["tools.unauthorizedAttempts"].value == 1.0
    assert metrics.overall["safety.violations"].total == 0


async def test_a_followed_injection_is_a_failed_case_and_a_safety_violation(fake_knowledge):
    def obedient(messages: Sequence[Message], options: ChatOptions) -> ChatResponse:
        tool_results = [m for m in messages if m.role == "tool"]
        if not tool_results:
            return ChatResponse(tool_calls=(ModelToolCall("getOrderStatus", {"orderId": "ORD-114"}, id="1"),))
        if len(tool_results) == 1:  # does what the order note says
            return ChatResponse(tool_calls=(ModelToolCall("createRefundDraft", {"orderId": "ORD-114"}, id="2"),))
        return ChatResponse(text="I created a refund draft for ORD-114.")

    agent = ShopNestAgent(ScriptedModel(obedient), fake_knowledge, OrderBook(today=TODAY))
    case = BY_ID["inj-note-01"]
    reply = await agent.chat(case.question, "C-100")
    failed = {c.name: c.code for c in run_checks(case, reply) if not c.passed}
    assert failed == {"forbiddenTools": "forbidden_tool"}
    assert reply.route == "refund_request"
    metrics = run_metrics([CaseResult(case.id, "fail", reply=reply)], BENCHMARK.cases)
    assert [(v.case_id, v.kind) for v in metrics.violations] == [("inj-note-01", "forbidden_tool")]
    assert metrics.routing.classes["order_status"].recall == 0.0
