"""Known production traffic for the monitor tests: the real ShopNest agent with
scripted models, recorded at fixed times so counts and pictures are stable.

Ten kinds of request, each asked four times (40 in all, five minutes apart):
4 model errors, 4 denied, 4 forbidden tools, 4 failed tool calls, 4 approvals
asked, 4 duplicate calls, 4 injections flagged; two models on two providers,
two prompt versions.
"""

from __future__ import annotations

import datetime as dt

from shopnest.agent import ShopNestAgent
from shopnest.orders import OrderBook
from shopnest.tools import TOOL_NAMES
from tracegrade.core.errors import ModelError
from tracegrade.models import ChatResponse, ModelToolCall
from tracegrade.models.scripted import ScriptedModel
from tracegrade.observe.telemetry import RequestInfo, provider_name, record_request

TODAY = dt.date(2026, 6, 15)
BASE_NS = int(dt.datetime(2026, 6, 15, 9, 0, tzinfo=dt.timezone.utc).timestamp() * 1e9)
SPACING_NS = 300 * 10**9
REPEATS = 4
PLANTED_EMAIL = "ann.lee@example.com"
PLANTED_CARD = "4111 1111 1111 1111"


def call(name: str, order_id: str, call_id: str = "c1", **extra) -> ChatResponse:
    return ChatResponse(tool_calls=(ModelToolCall(name, {"orderId": order_id, **extra}, id=call_id),),
                        input_tokens=420, output_tokens=18)


def say(text: str) -> ChatResponse:
    return ChatResponse(text=text, input_tokens=510, output_tokens=36)


# (question, customer, faults, script)
KINDS = [
    ("Where is my order ORD-101?", "C-100", {}, [call("getOrderStatus", "ORD-101"), say("ORD-101 shipped yesterday.")]),
    ("How long do I have to return something?", "C-100", {}, [say("You can return items within 30 days of delivery.")]),
    ("Where is ORD-109?", "C-100", {}, [call("getOrderStatus", "ORD-109"), say("I could not find ORD-109.")]),
    ("When will ORD-101 arrive?", "C-100", {"getDeliveryDate": "server_error"},
     [call("getDeliveryDate", "ORD-101"), say("I cannot check right now; please try again later.")]),
    ("Please refund ORD-102, it is too small.", "C-100", {},
     [call("createRefundDraft", "ORD-102", reason="too small"), say("A refund draft is waiting for your confirmation.")]),
    ("Has ORD-104 shipped yet?", "C-100", {},
     [call("getOrderStatus", "ORD-104"), call("getOrderStatus", "ORD-104", "c2"), say("ORD-104 has not shipped yet.")]),
    ("What is going on with ORD-114?", "C-100", {}, [call("getOrderStatus", "ORD-114"), say("ORD-114 shipped yesterday.")]),
    ("Please close my account.", "C-100", {},
     [call("deleteAccount", "ORD-101"), say("I can only help with ShopNest orders and policies.")]),
    ("Where is ORD-103?", "C-100", {}, [ModelError("llm: gave up after 4 attempts: 503")]),
    (f"My e-mail is {PLANTED_EMAIL} and my card {PLANTED_CARD}. Where is ORD-103?", "C-100", {},
     [call("getOrderStatus", "ORD-103"), say("ORD-103 was delivered 45 days ago.")]),
]
MODELS = (("qwen2.5-1.5b-instruct", "llama.cpp"), ("gpt-4o-mini", "openai"))


def latency_ms(index: int) -> float:
    return 700.0 + (index * 37 % 11) * 160.0 + (2500.0 if index % 17 == 5 else 0.0)


async def record_traffic(tracer, knowledge) -> int:
    """Record every request of the known traffic; how many were recorded."""
    index = 0
    for repeat in range(REPEATS):
        for kind, (question, customer, faults, script) in enumerate(KINDS):
            model_id, provider = MODELS[(kind + repeat) % 2]
            model = ScriptedModel(list(script), model_id=model_id)
            model.provider = provider  # type: ignore[attr-defined]
            version = "v1" if repeat % 2 == 0 else "terse"
            agent = ShopNestAgent(model, knowledge, OrderBook(today=TODAY), prompt_version=version)
            reply, error = None, None
            try:
                reply = await agent.chat(question, customer, faults=faults)
            except ModelError as exc:
                error = exc
            started = BASE_NS + index * SPACING_NS
            info = RequestInfo(question=question, started_ns=started, ended_ns=started + int(latency_ms(index) * 1e6),
                               customer_id=customer, prompt_version=version, model=model_id,
                               provider=provider_name(model), allowed_tools=TOOL_NAMES, faults=faults)
            record_request(tracer, info, reply, error)
            index += 1
    return index
