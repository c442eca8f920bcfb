import datetime as dt

import pytest

from shopnest.agent import MAX_ROUNDS, ShopNestAgent, Turn
from shopnest.orders import OrderBook
from shopnest.prompts import RULES
from shopnest.tools import TOOL_SPECS
from tracegrade.core.errors import AgentError, ModelError, StepLimitError
from tracegrade.models import ChatResponse, ModelToolCall
from tracegrade.models.scripted import ScriptedModel
from tracegrade.core.trace import ToolCall

TODAY = dt.date(2026, 6, 15)


def call(name: str, order_id: str, call_id: str = "c1", **extra) -> ChatResponse:
    return ChatResponse(tool_calls=(ModelToolCall(name, {"orderId": order_id, **extra}, id=call_id),),
                        input_tokens=100, output_tokens=10, model="m1")


def answer(text: str) -> ChatResponse:
    return ChatResponse(text=text, input_tokens=150, output_tokens=20, model="m1")


@pytest.fixture
def make_agent(fake_knowledge):
    def make(script, **kwargs) -> tuple[ShopNestAgent, ScriptedModel]:
        model = ScriptedModel(script)
        return ShopNestAgent(model, fake_knowledge, OrderBook(today=TODAY), **kwargs), model

    return make


async def test_tool_call_then_answer_builds_the_trace(make_agent):
    agent, model = make_agent([call("getOrderStatus", " ord-101 "), answer(" It shipped yesterday. ")])
    reply = await agent.chat("Where is my order ORD-101?")

    assert reply.answer == "It shipped yesterday."
    assert reply.tool_calls == (
        ToolCall(name="getOrderStatus", arguments={"orderId": "ORD-101"}, argument="ORD-101",
                 result="Order ORD-101 is SHIPPED. It shipped 1 day(s) ago and has not been delivered yet.",
                 status="ok", id="c1"),  # the model's call id, kept for the span's gen_ai.tool.call.id
    )
    assert [(s.kind, s.name) for s in reply.steps] == [
        ("retrieval", "policies"), ("model", "round 1"), ("tool", "getOrderStatus"), ("model", "round 2"),
    ]
    assert [(s.input_tokens, s.output_tokens) for s in reply.steps if s.kind == "model"] == [(100, 10), (150, 20)]
    assert all(s.duration_ms >= 0 for s in reply.steps)
    assert [s.start_ms for s in reply.steps] == sorted(s.start_ms for s in reply.steps)
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (250, 30)
    assert reply.model == "m1"
    assert len(reply.retrieved_sources) == len(reply.retrieval_scores) == 1
    assert reply.context.startswith(f"SOURCE: {reply.retrieved_sources[0]}\n# ")

    # The second round saw the model's call and the tool's result, tied by id.
    second_messages, options = model.calls[1]
    assert options.tools == TOOL_SPECS
    assistant, tool = second_messages[-2:]
    assert assistant.role == "assistant" and assistant.tool_calls[0].name == "getOrderStatus"
    assert (tool.role, tool.name, tool.tool_call_id) == ("tool", "getOrderStatus", "c1")
    assert tool.content == reply.tool_calls[0].result


async def test_answer_without_tools(make_agent):
    agent, model = make_agent([answer("Returns are accepted within 30 days.")])
    reply = await agent.chat("How long do I have to return something?")
    assert reply.tool_calls == ()
    assert [s.kind for s in reply.steps] == ["retrieval", "model"]
    assert len(model.calls) == 1


async def test_system_prompt_is_rules_then_labelled_policy(make_agent, fake_knowledge):
    agent, model = make_agent([answer("ok")], top_k=2)
    reply = await agent.chat("How long does standard shipping take?")
    messages, _ = model.calls[0]
    system = messages[0]
    assert system.role == "system"
    assert system.content.startswith(RULES)
    assert "Today is 2026-06-15." in system.content
    policy = system.content.split("POLICY:\n", 1)[1]
    first, second = reply.retrieved_sources
    assert policy.startswith(f"SOURCE: {first}\n# ")
    assert f"\n\nSOURCE: {second}\n# " in policy
    assert policy == reply.context
    assert (messages[-1].role, messages[-1].content) == ("user", "How long does standard shipping take?")


async def test_history_comes_between_system_and_question(make_agent):
    agent, model = make_agent([answer("ok")])
    await agent.chat("And ORD-102?", history=[Turn("user", "Where is ORD-101?"), Turn("assistant", "Shipped.")])
    messages, _ = model.calls[0]
    assert [(m.role, m.content) for m in messages[1:]] == [
        ("user", "Where is ORD-101?"), ("assistant", "Shipped."), ("user", "And ORD-102?"),
    ]


async def test_each_request_gets_a_fresh_trace(make_agent):
    agent, _ = make_agent([call("getOrderStatus", "ORD-101"), answer("a"), call("getRefundStatus", "ORD-105"), answer("b")])
    first = await agent.chat("Where is ORD-101?")
    second = await agent.chat("Refund for ORD-105?")
    assert [c.argument for c in first.tool_calls] == ["ORD-101"]
    assert [c.argument for c in second.tool_calls] == ["ORD-105"]


async def test_customer_and_faults_reach_the_tools(make_agent):
    agent, _ = make_agent([call("getOrderStatus", "ORD-101"), call("getOrderStatus", "ORD-109", "c2"), answer("sorry")])
    reply = await agent.chat("Where are ORD-101 and ORD-109?", customer_id="C-100",
                             faults={"getOrderStatus": "server_error"})
    assert [c.status for c in reply.tool_calls] == ["error", "error"]
    tool_steps = [s for s in reply.steps if s.kind == "tool"]
    assert tool_steps[0].error == "ERROR: getOrderStatus failed. The order system returned a server error."

    agent, _ = make_agent([call("getOrderStatus", "ORD-109"), answer("not found")])
    reply = await agent.chat("Where is ORD-109?", customer_id="C-100")
    assert reply.tool_calls[0].status == "denied"


async def test_refund_draft_is_an_approval_step(make_agent):
    agent, _ = make_agent([call("createRefundDraft", "ORD-102", reason="too small"), answer("Please confirm.")])
    reply = await agent.chat("Please refund ORD-102, too small.")
    assert reply.tool_calls[0].status == "needs_approval"
    assert [s.kind for s in reply.steps] == ["retrieval", "model", "approval", "model"]
    assert reply.steps[2].error is None


@pytest.mark.parametrize("max_rounds", [MAX_ROUNDS, 2])
async def test_step_limit(make_agent, max_rounds):
    agent, model = make_agent(lambda messages, options: call("getOrderStatus", "ORD-101"), max_rounds=max_rounds)
    with pytest.raises(StepLimitError) as caught:
        await agent.chat("Where is ORD-101?")
    assert caught.value.rounds == max_rounds
    assert len(model.calls) == max_rounds
    assert f"all {max_rounds} model rounds" in str(caught.value)


def test_the_default_step_limit_is_five():
    assert MAX_ROUNDS == 5


@pytest.mark.parametrize("text", ["", "   \n"])
async def test_empty_answer_is_an_agent_error(make_agent, text):
    agent, _ = make_agent([ChatResponse(text=text)])
    with pytest.raises(AgentError, match="empty answer"):
        await agent.chat("Hello?")


async def test_model_errors_propagate(make_agent):
    agent, _ = make_agent([ModelError("local model call failed: boom")])
    with pytest.raises(ModelError, match="boom"):
        await agent.chat("Hello?")
