import json

import jsonschema
import pytest
from pydantic import ValidationError

from tracegrade.core.trace import SCHEMA_PATH, Reply, Step, ToolCall, Usage, reply_json_schema


def full_reply() -> Reply:
    return Reply(
        answer="Yes. ORD-102 was delivered 20 days ago, inside the 30 day window.",
        retrieved_sources=("return-policy.md", "refund-policy.md"),
        retrieval_scores=(0.71, 0.42),
        tool_calls=(
            ToolCall(name="getOrderStatus", arguments={"orderId": "ORD-102"}, argument="ORD-102",
                     result="Order ORD-102 is DELIVERED.", status="ok"),
            ToolCall(name="createRefundDraft", arguments={"orderId": "ORD-102", "reason": "too small"},
                     argument="ORD-102", result="Refund draft RD-102 created.", status="needs_approval"),
        ),
        context="SOURCE: return-policy.md\n# Return Policy\n...",
        steps=(
            Step(kind="retrieval", name="policies", duration_ms=12.5),
            Step(kind="model", name="round 1", start_ms=12.5, duration_ms=800.0, input_tokens=812, output_tokens=30),
            Step(kind="tool", name="getOrderStatus", start_ms=813.0, duration_ms=0.4, error=None),
            Step(kind="approval", name="createRefundDraft", start_ms=900.0, duration_ms=0.2, error="x"),
        ),
        model="qwen2.5-coder-1.5b-instruct-q4_k_m",
        usage=Usage(input_tokens=812, output_tokens=64, cost_usd=0.0012),
        route="order_status",
    )


def test_round_trip_through_the_wire_form_is_lossless():
    reply = full_reply()
    wire = reply.to_wire()
    assert Reply.from_wire(json.loads(json.dumps(wire))) == reply


def test_wire_keys_are_camel_case():
    wire = full_reply().to_wire()
    assert {"answer", "retrievedSources", "retrievalScores", "toolCalls", "context", "steps", "model", "usage"} <= set(wire)
    assert set(wire["steps"][1]) == {"kind", "name", "startMs", "durationMs", "inputTokens", "outputTokens", "error", "retries"}
    assert set(wire["usage"]) == {"inputTokens", "outputTokens", "costUsd"}
    assert wire["toolCalls"][0] == {
        "name": "getOrderStatus", "arguments": {"orderId": "ORD-102"}, "argument": "ORD-102",
        "result": "Order ORD-102 is DELIVERED.", "status": "ok",
    }


def test_the_design_example_parses():
    wire = {
        "answer": "Yes.",
        "retrievedSources": ["return-policy.md"],
        "toolCalls": [{"name": "getOrderStatus", "arguments": {"orderId": "ORD-102"},
                       "argument": "ORD-102", "result": "Order ORD-102 is DELIVERED.", "status": "ok"}],
        "context": "SOURCE: return-policy.md",
        "steps": [{"kind": "model", "name": "round 1", "startMs": 0, "durationMs": 12,
                   "inputTokens": 0, "outputTokens": 0, "error": None}],
        "model": "m",
        "usage": {"inputTokens": 812, "outputTokens": 64, "costUsd": 0.0},
    }
    reply = Reply.from_wire(wire)
    assert reply.tool_calls[0].argument == "ORD-102"
    assert reply.usage.input_tokens == 812
    assert reply.steps[0].duration_ms == 12


@pytest.mark.parametrize(
    "wire",
    [
        {"answer": "x", "toolcalls": []},  # a typo in a top-level key
        {"answer": "x", "toolCalls": [{"name": "t", "statuss": "ok"}]},
        {"answer": "x", "toolCalls": [{"name": "t", "status": "refunded"}]},  # not a known status
        {"answer": "x", "steps": [{"kind": "thinking", "name": "r"}]},  # not a known step kind
        {"toolCalls": []},  # no answer
    ],
)
def test_invalid_wire_is_rejected(wire):
    with pytest.raises(ValidationError):
        Reply.from_wire(wire)


def test_reply_is_immutable():
    reply = full_reply()
    with pytest.raises(ValidationError):
        reply.answer = "changed"  # type: ignore[misc]


def test_committed_schema_file_is_current():
    committed = json.loads(SCHEMA_PATH.read_text()) if SCHEMA_PATH.is_file() else None
    assert committed == reply_json_schema(), (
        f"{SCHEMA_PATH} is missing or stale; regenerate it with `python -m tracegrade.core.trace`"
    )


def test_wire_reply_validates_against_the_schema():
    schema = reply_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(full_reply().to_wire(), schema)


def test_schema_rejects_what_the_model_rejects():
    schema = reply_json_schema()
    bad = {**full_reply().to_wire(), "toolcalls": []}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
    wrong_status = full_reply().to_wire()
    wrong_status["toolCalls"][0]["status"] = "refunded"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(wrong_status, schema)
