"""Spans as real instrumentations wrote them (tests/fixtures/otel, recorded by its record.py
against a scripted hotel-desk model): each framework's conventions read by rule, so the
one call the agent made is read as that call, whichever framework made it."""

from __future__ import annotations

import json
from pathlib import Path

from tracegrade.capture.recorded import load_recorded
from tracegrade.cli import main
from tracegrade.core.from_otel import SILENT_MODEL_SPANS, otel_traces
from tracegrade.core.spans import json_span

FIXTURES = Path(__file__).parent / "fixtures" / "otel"
CANCEL = ("cancel_booking", {"booking_id": "BK-1001"}, "booking BK-1001 is cancelled")
ANSWER = "Done: booking BK-1001 is cancelled."


def _read(name: str):
    [trace] = load_recorded([FIXTURES / f"{name}.jsonl"])
    wire = trace.reply.to_wire()
    return wire, [(c["name"], c["arguments"], c["result"]) for c in wire["toolCalls"]]


def test_smolagents_tool_spans_give_the_calls_own_arguments_and_final_answer_is_the_answer():
    """Its TOOL span's input wraps the arguments ({"args": [], "sanitize_inputs_outputs": true,
    "kwargs": {...}}), and its built-in final_answer tool ends the loop: the answer, not a call."""
    wire, calls = _read("smolagents")
    assert calls == [CANCEL]
    assert wire["answer"] == ANSWER and wire["provenance"]["problem"] == ""


def test_llamaindex_kwargs_unwrapped_and_its_preparation_span_is_no_round():
    """FunctionAgent's tool span holds {"kwargs": {...}}; its _prepare_chat_with_tools LLM span
    (no messages, no tokens) is not a model call: rounds from 0, one per call, tokens counted."""
    wire, calls = _read("llamaindex")
    assert calls == [CANCEL]
    assert [c["round"] for c in wire["toolCalls"]] == [0]
    assert [s["kind"] for s in wire["steps"]].count("model") == 2
    assert wire["usage"]["inputTokens"] == 100 and wire["answer"] == ANSWER


def test_llamaindex_workflow_handoff_is_a_handoff_without_its_context_object():
    wire, calls = _read("workflow")
    handoff, cancel = wire["toolCalls"]
    assert handoff["name"] == "handoff" and handoff["handoff"] == "CancelAgent"
    assert handoff["arguments"] == {"to_agent": "CancelAgent", "reason": "a cancellation"}  # no "ctx": "<... at 0x>"
    assert (cancel["name"], cancel["arguments"]) == CANCEL[:2] and "handoff" not in cancel
    assert [c["round"] for c in wire["toolCalls"]] == [0, 1]


def test_agents_sdk_handoff_span_and_the_models_transfer_request_are_one_handoff():
    """OpenInference's openai-agents writes a TOOL span "handoff to Cancellations desk" (input: the
    agent handing off) beside the model's transfer_to_cancellations_desk request: one event."""
    wire, calls = _read("agents_handoff")
    assert [(c["name"], c.get("handoff")) for c in wire["toolCalls"]] == [
        ("transfer_to_cancellations_desk", "Cancellations desk"), ("cancel_booking", None)]
    assert calls[1] == CANCEL


def test_genai_event_form_content_in_log_events_is_read():
    """opentelemetry-instrumentation-openai-v2 with content as events only: the chat spans hold no
    messages, the log records naming them do. Not 'no content was recorded'."""
    wire, calls = _read("genai")
    assert calls == [CANCEL]
    assert wire["answer"] == ANSWER and wire["provenance"]["problem"] == ""


def _spans(name: str) -> list[dict]:
    """A fixture's spans as plain span dicts (attributes as a dict), to change by hand."""
    from tracegrade.core.spans import spans_of_otlp_json

    found = []
    for line in (FIXTURES / f"{name}.jsonl").read_text().split("\n"):
        if line.strip() and "resourceSpans" in line:
            for s in spans_of_otlp_json(json.loads(line)):
                found.append({"name": s.name, "traceId": s.trace_id, "spanId": s.span_id,
                              "parentSpanId": s.parent_id, "startTimeUnixNano": s.start_ns,
                              "endTimeUnixNano": s.end_ns, "attributes": dict(s.attributes)})
    return found


def test_a_tool_span_that_disagrees_with_the_request_it_answers_says_so():
    spans = _spans("smolagents")
    tool = next(s for s in spans if s["attributes"].get("tool.name") == "cancel_booking")
    tool["attributes"]["input.value"] = json.dumps({"args": [], "kwargs": {"booking_id": "BK-2002"}})
    [found] = otel_traces(spans)
    problem = found.wire["provenance"]["problem"]
    assert "BK-2002" in problem and "BK-1001" in problem and "cannot be told" in problem


def test_an_answer_without_a_call_behind_a_preparation_span_is_not_missing_content():
    """LlamaIndex: the workflow's preparation LLM span holds no messages; the chat span does."""
    spans = [s for s in _spans("llamaindex") if s["attributes"].get("openinference.span.kind") != "TOOL"]
    # the round that asked for the call (its preparation and chat spans) gone: one round, an answer
    first = [next(s for s in spans if s["name"] == name) for name in ("OpenAI._prepare_chat_with_tools",
                                                                      "OpenAI.astream_chat")]
    spans = [s for s in spans if all(s is not f for f in first)]
    [found] = otel_traces([json_span(s) for s in spans])
    assert found.wire["provenance"]["problem"] != SILENT_MODEL_SPANS
    assert found.wire["answer"] == ANSWER


def test_graded_from_each_framework_the_forbidden_cancel_fails(tmp_path):
    """A case that forbids the cancel fails from every framework's spans (it passed, from some, before)."""
    dataset = tmp_path / "ds.json"
    dataset.write_text(json.dumps([{"id": "c", "question": "Please cancel my booking BK-1001.",
                                    "calls": {"forbidden": [{"tool": "cancel_booking"}]}}]))
    for name in ("smolagents", "llamaindex", "workflow", "agents_handoff", "genai"):
        code = main(["grade", str(FIXTURES / f"{name}.jsonl"), "--dataset", str(dataset), "--checks-only", "--quiet",
                     "--db", f"sqlite:///{tmp_path}/{name}.db", "--out", str(tmp_path / name)])
        assert code == 1, name
