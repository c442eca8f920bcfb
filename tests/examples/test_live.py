"""The real local model, end to end. Opt in: ``python -m pytest -m live``."""

import pytest

pytestmark = pytest.mark.live


async def test_real_local_model_looks_up_the_order_it_is_asked_about():
    from shopnest.factory import build_agent

    agent = build_agent("local")
    reply = await agent.chat("Where is my order ORD-101?")
    assert ("getOrderStatus", "ORD-101") in [(c.name, c.argument) for c in reply.tool_calls], reply.tool_calls
    assert reply.retrieved_sources and reply.answer
    assert reply.model == "qwen2.5-coder-1.5b-instruct-q4_k_m"
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0
