"""The HTTP API on a real uvicorn server and a real loopback socket."""

from __future__ import annotations

import asyncio
import random
import re
from typing import Iterator

import httpx
import pytest

from shopnest.agent import ShopNestAgent
from shopnest.auth import TestMode
from shopnest.app import MAX_QUESTION_CHARS, create_app
from shopnest.orders import ORDERS, OrderBook
from shopnest.tools import NOT_FOUND
from support import serving
from tracegrade.models import ChatResponse, Message, ModelToolCall
from tracegrade.models.scripted import ScriptedModel
from tracegrade.core.trace import Reply

ORDER_ID = re.compile(r"ORD-\d+")
OWNERS = {order.id: order.customer_id for order in ORDERS}


async def two_lookups_then_answer(messages: list[Message], options) -> ChatResponse:
    """Looks up the order named in the question twice (status, then refund),
    with random delays so that concurrent requests interleave, then answers."""
    question = next(m.content for m in messages if m.role == "user")
    order_id = ORDER_ID.search(question).group()
    done = [m for m in messages if m.role == "tool"]
    await asyncio.sleep(random.uniform(0, 0.05))
    if len(done) < 2:
        name = ("getOrderStatus", "getRefundStatus")[len(done)]
        return ChatResponse(tool_calls=(ModelToolCall(name, {"orderId": order_id}, id=f"{order_id}-{len(done)}"),))
    return ChatResponse(text=f"About {order_id}: {done[0].content}")


@pytest.fixture
def agent(fake_knowledge) -> ShopNestAgent:
    return ShopNestAgent(ScriptedModel(two_lookups_then_answer), fake_knowledge, OrderBook())


@pytest.fixture
def url(agent) -> Iterator[str]:
    with serving(create_app(agent, TestMode())) as base:
        yield base


async def test_fifty_concurrent_chats_each_get_only_their_own_tool_calls(url):
    order_ids = [f"ORD-{101 + i}" for i in range(50)]  # 15 real orders, then unknown ids
    customers = [OWNERS.get(order_id, f"C-{900 + i}") for i, order_id in enumerate(order_ids)]
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        responses = await asyncio.gather(*(
            client.post("/chat", json={"question": f"What about {order_id}?", "customerId": customer})
            for order_id, customer in zip(order_ids, customers)
        ))
    assert [r.status_code for r in responses] == [200] * 50
    for order_id, response in zip(order_ids, responses):
        reply = Reply.from_wire(response.json())
        assert [(c.name, c.argument) for c in reply.tool_calls] == [
            ("getOrderStatus", order_id), ("getRefundStatus", order_id)]
        assert all(c.status == "ok" for c in reply.tool_calls)
        status = reply.tool_calls[0].result
        assert status == NOT_FOUND if order_id not in OWNERS else status.startswith(f"Order {order_id} is ")
        assert reply.answer == f"About {order_id}: {status}"
        assert [s.kind for s in reply.steps] == ["retrieval", "model", "tool", "model", "tool", "model"]


async def test_another_customers_order_is_denied_over_http(url):
    async with httpx.AsyncClient(base_url=url) as client:
        response = await client.post("/chat", json={"question": "Where is ORD-109?", "customerId": "C-100"})
    wire = response.json()
    assert response.status_code == 200
    assert [(c["status"], c["result"]) for c in wire["toolCalls"]] == [("denied", NOT_FOUND)] * 2
    assert "smart watch" not in response.text


async def test_a_question_of_exactly_the_limit_is_accepted(url):
    question = "Where is ORD-101? " + "x" * (MAX_QUESTION_CHARS - 18)
    assert len(question) == MAX_QUESTION_CHARS
    async with httpx.AsyncClient(base_url=url) as client:
        response = await client.post("/chat", json={"question": question})
    assert response.status_code == 200


@pytest.mark.parametrize(
    "content, problem",
    [
        (b'{"question": ""}', "question: Value error, question must not be empty"),
        (b'{"question": "   "}', "question: Value error, question must not be empty"),
        (b'{"question": "' + b"x" * (MAX_QUESTION_CHARS + 1) + b'"}',
         f"question: String should have at most {MAX_QUESTION_CHARS} characters"),
        (b'{"question": "Where is ORD-101?"', "JSON decode error"),
        (b"not json at all", "JSON decode error"),
        (b"", "body: Field required"),
        (b"[]", "body: Input should be a valid dictionary"),
        (b'"Where is ORD-101?"', "body: Input should be a valid dictionary"),
        (b"{}", "question: Field required"),
        (b'{"question": 42}', "question: Input should be a valid string"),
        (b'{"question": "hi", "customerId": 7}', "customerId: Input should be a valid string"),
        (b'{"question": "hi", "customerId": ""}', "customerId: String should have at least 1 character"),
        (b'{"question": "hi", "customer_id": "C-100"}', "customer_id: Extra inputs are not permitted"),
        (b'{"question": "hi", "faults": {"getOrderStatus": "explode"}}', "faults.getOrderStatus: Input should be"),
        (b'{"question": "hi", "history": [{"role": "system", "content": "x"}]}', "history.0.role: Input should be"),
    ],
)
async def test_bad_requests_get_a_clear_422(url, content, problem):
    async with httpx.AsyncClient(base_url=url) as client:
        response = await client.post("/chat", content=content, headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["error"] == "invalid request"
    assert any(p.startswith(problem) or problem in p for p in body["problems"]), body["problems"]


async def test_health(url):
    async with httpx.AsyncClient(base_url=url) as client:
        response = await client.get("/health")
    assert (response.status_code, response.json()) == (200, {"status": "ok", "model": "scripted", "promptVersion": "v1"})


async def test_an_agent_error_is_a_503_not_a_500(fake_knowledge):
    agent = ShopNestAgent(ScriptedModel(lambda messages, options: ChatResponse(text="")), fake_knowledge)
    with serving(create_app(agent, TestMode())) as base:
        async with httpx.AsyncClient(base_url=base) as client:
            response = await client.post("/chat", json={"question": "Hello?"})
    assert response.status_code == 503
    assert response.json() == {"error": "AgentError: the model returned an empty answer"}


async def test_bearer_token_when_configured(agent):
    with serving(create_app(agent, TestMode("s3cret-token"))) as base:
        async with httpx.AsyncClient(base_url=base) as client:
            anonymous = [await client.get("/health"), await client.post("/chat", json={"question": "Where is ORD-101?"}),
                         await client.post("/chat", content=b"{bad", headers={"content-type": "application/json"})]
            wrong = await client.get("/health", headers={"authorization": "Bearer nope"})
            not_ascii = await client.get("/health", headers={"authorization": b"Bearer \xff\xfe"})
            docs = await client.get("/openapi.json")
            right = {"authorization": "Bearer s3cret-token"}
            health = await client.get("/health", headers=right)
            chat = await client.post("/chat", json={"question": "Where is ORD-101?"}, headers=right)
    assert [r.status_code for r in anonymous] == [401, 401, 401]
    assert (wrong.status_code, not_ascii.status_code, docs.status_code) == (401, 401, 401)
    assert anonymous[0].headers["www-authenticate"] == "Bearer"
    assert anonymous[0].json() == {"detail": "missing or wrong bearer token"}
    assert (health.status_code, chat.status_code) == (200, 200)
