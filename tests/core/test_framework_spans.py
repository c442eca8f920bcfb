"""Spans as real instrumentations wrote them (tests/fixtures/otel, recorded by its record.py
against a scripted hotel-desk model): each framework's conventions read by rule, so the
one call the agent made is read as that call, whichever framework made it."""

from __future__ import annotations

import json

import pytest

from places import ROOT, TESTS
from tracegrade.agent.recorded import load_recorded
from tracegrade.cli import main
from tracegrade.core.from_otel import SILENT_MODEL_SPANS, otel_traces
from tracegrade.core.spans import json_span

FIXTURES = TESTS / "fixtures" / "otel"
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


def test_a_tool_error_llamaindex_reports_in_its_output_is_an_error():
    """LlamaIndex catches a tool's exception and returns a ToolOutput with is_error: the span's status is ok."""
    spans = _spans("llamaindex")
    tool = next(s for s in spans if s["attributes"].get("openinference.span.kind") == "TOOL")
    tool["attributes"]["output.value"] = json.dumps({"blocks": [], "tool_name": "cancel_booking", "is_error": True,
                                                     "raw_output": "Error: booking is locked"})
    [found] = otel_traces(spans)
    [call] = found.wire["toolCalls"]
    assert (call["status"], call["result"]) == ("error", "Error: booking is locked")


def test_a_transfer_tool_described_as_a_handoff_is_one_where_the_spans_offer_its_description():
    """GenAI spans (OpenLLMetry 0.62's gen_ai.tool.definitions) say what each tool is: the Agents SDK's
    transfer_to_* describes itself as a handoff; a user's own transfer_to_human tool does not."""
    spans = _spans("openllmetry")
    chat = spans[0]["attributes"]
    chat["gen_ai.tool.definitions"] = json.dumps([
        {"type": "function", "name": "transfer_to_refunds", "description":
         "Handoff to the Refunds agent to handle the request. "},
        {"type": "function", "name": "transfer_to_human", "description": "Transfer the guest to a person."}])
    chat["gen_ai.output.messages"] = json.dumps([{"role": "assistant", "parts": [
        {"type": "tool_call", "id": "h1", "name": "transfer_to_refunds", "arguments": {}},
        {"type": "tool_call", "id": "h2", "name": "transfer_to_human", "arguments": {}}]}])
    calls = otel_traces([spans[0]])[0].wire["toolCalls"]
    assert [(c["name"], c.get("handoff")) for c in calls] == [("transfer_to_refunds", "Refunds"),
                                                             ("transfer_to_human", None)]


def test_handoffs_and_conversations_are_read_in_linear_time():
    """Four times the handoff spans and turns take about four times as long (the square, sixteen).
    WHY the best of three and a ratio: the suite shares its machine."""
    import gc
    import time

    from tracegrade.agent.joined import match
    from tracegrade.agent.recorded import Recorded
    from tracegrade.core.trace import Reply
    from tracegrade.case.schema import GoldenCase

    def spans(n: int) -> list[dict]:
        root = {"traceId": "h", "spanId": "r", "name": "agent", "startTimeUnixNano": 0, "endTimeUnixNano": 10 * n,
                "attributes": {"openinference.span.kind": "AGENT", "input.value": "q"}}
        return [root] + [{"traceId": "h", "spanId": f"s{i}", "parentSpanId": "r", "name": f"handoff to Desk {i % 50}",
                          "startTimeUnixNano": i, "endTimeUnixNano": i + 1,
                          "attributes": {"openinference.span.kind": "TOOL", "output.value": f"Desk {i % 50}"}}
                         for i in range(n)]

    def turns(n: int) -> list[Recorded]:  # conversations of 4 turns under 7 session ids
        return [Recorded(f"t{i}", None, "q" if i % 4 == 0 else "f", Reply(answer="a"), conversation=f"c{i % 7}",
                         start_ns=i) for i in range(n)]

    case = [GoldenCase(id="c", question="q", follow_ups=("f", "f", "f"))]

    def best(work, n: int) -> float:
        given = work[0](n)
        times = []
        for _ in range(3):
            gc.collect()
            gc.disable()  # WHY: a collection inside one timing is noise, not the work's growth
            started = time.perf_counter()
            work[1](given)
            times.append(time.perf_counter() - started)
            gc.enable()
        return min(times)

    for work in ((spans, lambda s: otel_traces([json_span(x) for x in s])), (turns, lambda r: match(case, r))):
        assert best(work, 16000) / best(work, 4000) < 8


@pytest.mark.slow
def test_genai_event_form_is_read_live_under_capture_otel(tmp_path):
    """The same instrumentation live: its log events reach the case's spans, so the forbidden
    cancel is seen (before, the case read no call, no answer, and said no content was recorded)."""
    pytest.importorskip("opentelemetry.instrumentation.openai_v2")
    import os
    import subprocess
    import sys

    from fixtures.otel.hotel_server import desk
    from support import serving
    from tracegrade.models.scripted import ScriptedModel
    from tracegrade.serve.model_server import create_model_app

    dataset = tmp_path / "ds.json"
    dataset.write_text(json.dumps([{"id": "c", "question": "Please cancel my booking BK-1001.",
                                    "calls": {"forbidden": [{"tool": "cancel_booking"}]}}]))
    root = ROOT
    with serving(create_model_app(ScriptedModel(desk, model_id="scripted-desk"))) as url:
        env = {**os.environ, "OPENAI_BASE_URL": f"{url}/v1", "OPENAI_API_KEY": "local",
               "PYTHONPATH": os.pathsep.join([str(root / "src"), os.environ.get("PYTHONPATH", "")])}
        done = subprocess.run([sys.executable, str(FIXTURES / "genai_events_agent.py"), str(dataset),
                               f"sqlite:///{tmp_path}/r.db"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert said == {"status": "fail", "calls": ["cancel_booking"], "answer": ANSWER, "problem": ""}


def test_langgraph_turns_of_one_session_are_graded_as_one_conversation(tmp_path):
    """LangGraph with a checkpointer under OpenInference's using_session: one trace per turn.
    Before: turn 2 was 'not in the dataset' and turn 1 graded as the whole conversation (FAIL)."""
    dataset = tmp_path / "ds.json"
    dataset.write_text(json.dumps([{"id": "c", "question": "Is my booking BK-1001 refundable?",
                                    "followUps": ["Then cancel it, please."], "answerMustInclude": ["cancelled"],
                                    "calls": {"expected": [{"tool": "get_booking"}, {"tool": "cancel_booking"}]}}]))
    code = main(["grade", str(FIXTURES / "langgraph_session.jsonl"), "--dataset", str(dataset), "--checks-only",
                 "--quiet", "--db", f"sqlite:///{tmp_path}/r.db", "--out", str(tmp_path / "out")])
    [result] = json.loads(next((tmp_path / "out").rglob("results.json")).read_text())["results"]
    assert code == 0 and result["status"] == "pass", result["checks"]
    assert [(c["name"], c["turn"]) for c in result["reply"]["toolCalls"]] == [("get_booking", 1), ("cancel_booking", 2)]
