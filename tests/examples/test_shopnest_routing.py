"""The route ShopNest reports: read off the trace, in a fixed order of rules."""

from __future__ import annotations

import datetime as dt

import pytest

from shopnest.agent import ShopNestAgent
from shopnest.orders import OrderBook
from shopnest.routing import ROUTES, route_of
from tracegrade.models import ChatResponse, ModelToolCall
from tracegrade.models.scripted import ScriptedModel
from tracegrade.core.trace import ToolCall

SCOPE = "Sorry, I can only help with ShopNest orders and policies."


def calls(*names: str) -> list[ToolCall]:
    return [ToolCall(name=name, argument="ORD-101") for name in names]


@pytest.mark.parametrize("names, answer, route", [
    (("getOrderStatus",), "It shipped.", "order_status"),
    (("getDeliveryDate", "getOrderStatus"), "In 3 days.", "delivery_date"),  # the first tool
    (("getRefundStatus",), "In progress.", "refund_status"),
    (("getOrderStatus", "createRefundDraft"), "Draft ready.", "refund_request"),  # a write wins
    (("lookUpEverything", "getOrderStatus"), "It shipped.", "order_status"),  # an unknown tool is skipped
    ((), SCOPE, "out_of_scope"),
    ((), "Returns are accepted within 30 days.", "policy"),
    (("getOrderStatus",), SCOPE, "order_status"),  # a tool call outranks the wording
])
def test_route_rules(names, answer, route):
    assert route_of(calls(*names), answer) == route
    assert route in ROUTES


async def test_the_agent_reports_its_route(fake_knowledge):
    script = [ChatResponse(tool_calls=(ModelToolCall("getRefundStatus", {"orderId": "ORD-106"}, id="1"),)),
              ChatResponse(text="Your refund is in progress.")]
    agent = ShopNestAgent(ScriptedModel(script), fake_knowledge, OrderBook(today=dt.date(2026, 6, 15)))
    reply = await agent.chat("What is the status of my refund for ORD-106?")
    assert reply.route == "refund_status"
    assert reply.to_wire()["route"] == "refund_status"
