from shopnest.cli import _parser, format_reply
from tracegrade.core.trace import Reply, ToolCall, Usage


def test_format_reply_shows_answer_sources_tools_and_model():
    reply = Reply(
        answer="Yes. ORD-102 was delivered 20 days ago, inside the 30 day return window.",
        retrieved_sources=("return-policy.md",), retrieval_scores=(0.7123,),
        tool_calls=(ToolCall(name="getOrderStatus", arguments={"orderId": "ORD-102"}, argument="ORD-102",
                             result="Order ORD-102 is DELIVERED. It was delivered 20 days ago.", status="ok"),),
        model="qwen2.5-coder-1.5b-instruct-q4_k_m", usage=Usage(input_tokens=812, output_tokens=64),
    )
    assert format_reply(reply, 6.43).splitlines() == [
        "answer   Yes. ORD-102 was delivered 20 days ago, inside the 30 day return window.",
        "sources  return-policy.md (0.71)",
        "tools    getOrderStatus(ORD-102) -> Order ORD-102 is DELIVERED. It was delivered 20 days ago.  [ok]",
        "model    qwen2.5-coder-1.5b-instruct-q4_k_m  812 in / 64 out tokens  6.4 s",
    ]


def test_format_reply_without_sources_or_tools():
    text = format_reply(Reply(answer="Hi.", model="m"), 0.04)
    assert "sources  -" in text and "tools    -" in text


def test_serve_binds_loopback_by_default():
    args = _parser().parse_args(["serve"])
    assert (args.host, args.port) == ("127.0.0.1", 8000)
    ask = _parser().parse_args(["ask", "Where is ORD-101?", "--json", "--agent-model", "openai:x"])
    assert (ask.question, ask.json, ask.agent_model, ask.top_k) == ("Where is ORD-101?", True, "openai:x", 1)
