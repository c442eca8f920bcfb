"""The ShopNest API with a scripted model, for load tests in a server process of
its own: ``python -m uvicorn load_app:app`` with ``tests/`` on PYTHONPATH.

The model looks up the order named in the question twice (status, then refund),
with random delays so that concurrent requests interleave, then answers; it
counts how many requests it serves at once (GET /load-stats).
``LOAD_APP_LEAK_KB`` makes every request keep that many KB for good: the proof
that the memory test can fail.
"""

from __future__ import annotations

import asyncio
import os
import random
import re

from conftest import hashing_embedder
from shopnest.agent import ShopNestAgent
from shopnest.auth import TestMode
from shopnest.app import create_app
from shopnest.knowledge import KnowledgeBase, load_policies
from tracegrade.models import ChatResponse, Message, ModelToolCall

ORDER_ID = re.compile(r"ORD-\d+")
_LEAK_BYTES = int(os.environ.get("LOAD_APP_LEAK_KB", "0")) * 1024
_leaked: list[bytes] = []
_stats = {"inFlight": 0, "maxInFlight": 0, "modelCalls": 0}


async def two_lookups_then_answer(messages: list[Message], options) -> ChatResponse:
    question = next(m.content for m in messages if m.role == "user")
    order_id = ORDER_ID.search(question).group()
    done = [m for m in messages if m.role == "tool"]
    _stats["modelCalls"] += 1
    _stats["inFlight"] += 1
    _stats["maxInFlight"] = max(_stats["maxInFlight"], _stats["inFlight"])
    try:
        await asyncio.sleep(random.uniform(0, 0.02))
    finally:
        _stats["inFlight"] -= 1
    if len(done) < 2:
        name = ("getOrderStatus", "getRefundStatus")[len(done)]
        return ChatResponse(tool_calls=(ModelToolCall(name, {"orderId": order_id}, id=f"{order_id}-{len(done)}"),))
    if _LEAK_BYTES:
        _leaked.append(os.urandom(_LEAK_BYTES))
    return ChatResponse(text=f"About {order_id}: {done[0].content}")



class LookupModel:
    """The script above behind the ChatModel protocol. WHY not ScriptedModel: it
    keeps every call for assertions, 4 KB a request, which the memory test saw."""

    model_id = "scripted-lookups"

    async def complete(self, messages, options=None) -> ChatResponse:
        response = await two_lookups_then_answer(messages, options)
        return ChatResponse(**{**response.__dict__, "model": self.model_id})


app = create_app(ShopNestAgent(LookupModel(), KnowledgeBase(load_policies(), hashing_embedder)), TestMode())


@app.get("/load-stats")
async def load_stats() -> dict:
    return dict(_stats)
