"""`tracegrade grade`: recorded traces (JSONL of Replies, OTLP JSON exports) are
matched to their cases and graded like a live run, with the same verdicts."""

from __future__ import annotations

import json

import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import tracegrade
from tracegrade.cli import main
from tracegrade.core.from_otel import otel_traces, spans_of_otlp_json
from tracegrade.core.trace import Reply

DATASET = [
    {"id": "paris", "question": "What is the weather in Paris?",
     "calls": {"expected": [{"tool": "get_weather", "arguments": {"city": "Paris"}}]},
     "answerMustInclude": ["sunny"]},
    {"id": "oslo", "question": "What is the weather in Oslo?",
     "calls": {"expected": [{"tool": "get_weather", "arguments": {"city": "Oslo"}}]},
     "answerMustInclude": ["snow"]},
    {"id": "rome", "question": "Book me a table in Rome",
     "calls": {"expected": [{"tool": "book_table", "arguments": {"city": "Rome"}}]}},
]


def genai_agent(tracer):
    """An agent instrumented the way OpenTelemetry's GenAI instrumentors do it:
    an invoke_agent span, a chat span per model round, an execute_tool span per call.
    It answers Oslo wrongly and calls the wrong tool for Rome."""

    def answer(question: str) -> str:
        city = question.rstrip("?").split()[-1]
        with tracer.start_as_current_span("invoke_agent weather", attributes={
                "gen_ai.operation.name": "invoke_agent", "input.value": question}) as agent:
            with tracer.start_as_current_span("chat", attributes={
                    "gen_ai.operation.name": "chat", "gen_ai.request.model": "m1", "gen_ai.usage.input_tokens": 12,
                    "gen_ai.usage.output_tokens": 4,
                    "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
                        {"type": "tool_call", "id": f"call_{city}", "name": "get_weather",
                         "arguments": {"city": city}}]}])}):
                pass
            with tracer.start_as_current_span("execute_tool get_weather", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                    "gen_ai.tool.call.id": f"call_{city}", "gen_ai.tool.call.result": "sunny"}):
                pass
            text = "It is sunny." if city == "Paris" else "It is mild."
            with tracer.start_as_current_span("chat", attributes={
                    "gen_ai.operation.name": "chat", "gen_ai.request.model": "m1",
                    "gen_ai.output.messages": json.dumps([{"role": "assistant",
                                                           "parts": [{"type": "text", "content": text}]}])}):
                pass
            agent.set_attribute("output.value", text)
        return None  # the captured spans hold the answer

    return answer


@pytest.fixture
def exported():
    """A global tracer provider (the one instrumentors use) exporting to memory, for
    this test only. WHY reset after: OpenTelemetry sets its global provider once per
    process, and other tests rely on none being set."""
    from opentelemetry.util._once import Once

    import tracegrade.agent.capture.otel as capture_otel

    provider = TracerProvider()
    # WHY before too: a test before this one may have left capture's processor on its own provider
    capture_otel._processor = None
    trace._TRACER_PROVIDER_SET_ONCE = Once()
    trace.set_tracer_provider(provider)
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    yield memory
    trace._TRACER_PROVIDER = None
    trace._TRACER_PROVIDER_SET_ONCE = Once()
    capture_otel._processor = None


def test_a_recorded_otlp_export_is_graded_with_the_live_run_verdicts(tmp_path, exported, capsys):
    dataset = tmp_path / "ds.json"
    dataset.write_text(json.dumps(DATASET))
    agent = genai_agent(trace.get_tracer("weather-agent"))
    exported.clear()
    live = tracegrade.evaluate(str(dataset), agent, judge=None, capture=("otel",), store=f"sqlite:///{tmp_path}/a.db")
    live_verdicts = {r.case_id: r.passed for r in live.results}
    assert live_verdicts == {"paris": True, "oslo": False, "rome": False}, [(r.case_id, r.error, r.checks)
                                                                             for r in live.results]
    assert live.results[0].reply.tool_calls[0].arguments == {"city": "Paris"}  # from the chat span's tool_call part

    # The agent's own spans only (a collector sees those, not tracegrade's case span), one OTLP JSON per line.
    agent_spans = [s for s in exported.get_finished_spans() if s.instrumentation_scope.name == "weather-agent"]
    export = tmp_path / "traces.jsonl"
    export.write_text("\n".join(json.dumps(MessageToDict(encode_spans([s]))) for s in agent_spans) + "\n")

    code = main(["grade", str(export), "--dataset", str(dataset), "--checks-only", "--quiet",
                 "--db", f"sqlite:///{tmp_path}/b.db", "--out", str(tmp_path / "out")])
    assert code == 1
    results = json.loads((tmp_path / "out").rglob("results.json").__next__().read_text())
    graded = {c["case_id"]: c["status"] == "pass" for c in results["results"]}
    assert graded == live_verdicts


def test_a_jsonl_of_replies_matches_by_case_id_and_by_question_and_lists_the_rest(tmp_path, capsys):
    dataset = tmp_path / "ds.json"
    dataset.write_text(json.dumps(DATASET))
    ok = Reply(answer="Sunny.", tool_calls=[{"name": "get_weather", "arguments": {"city": "Paris"}}]).to_wire()
    lines = [{"caseId": "paris", **ok},
             {"question": "Book me a table in Rome", "reply": {"answer": "Booked.", "toolCalls": [
                 {"name": "book_table", "arguments": {"city": "Rome"}}]}},
             {"caseId": "nope", "answer": "?"}]
    traces = tmp_path / "replies.jsonl"
    traces.write_text("\n".join(json.dumps(line) for line in lines))
    code = main(["grade", str(traces), "--dataset", str(dataset), "--checks-only",
                 "--db", f"sqlite:///{tmp_path}/c.db", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 0
    assert "case id 'nope' is not in the dataset" in err
    assert "1 case(s) have no trace and are not graded: oslo" in err


def test_a_bad_line_is_named_by_file_and_line(tmp_path, capsys):
    dataset = tmp_path / "ds.json"
    dataset.write_text(json.dumps(DATASET))
    traces = tmp_path / "bad.jsonl"
    traces.write_text('{"caseId": "paris", "answer": "x"}\n{"caseId": "oslo", "anwser": "x"}\n')
    code = main(["grade", str(traces), "--dataset", str(dataset), "--checks-only", "--db", f"sqlite:///{tmp_path}/d.db"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{traces}:2: not a Reply" in err


def test_openinference_spans_become_a_reply():
    """What OpenInference's instrumentors (OpenAI Agents SDK, LangChain) emit."""
    document = {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "t", "spanId": "1", "name": "Agent workflow", "startTimeUnixNano": "0", "endTimeUnixNano": "90",
         "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "AGENT"}},
                        {"key": "input.value", "value": {"stringValue": "Weather in Lima?"}},
                        {"key": "output.value", "value": {"stringValue": "Warm in Lima."}}]},
        {"traceId": "t", "spanId": "2", "parentSpanId": "1", "name": "llm", "startTimeUnixNano": "10",
         "endTimeUnixNano": "20",
         "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "LLM"}},
                        {"key": "llm.model_name", "value": {"stringValue": "gpt-x"}},
                        {"key": "llm.token_count.prompt", "value": {"intValue": "30"}}]},
        {"traceId": "t", "spanId": "3", "parentSpanId": "1", "name": "get_weather", "startTimeUnixNano": "30",
         "endTimeUnixNano": "40",
         "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "TOOL"}},
                        {"key": "tool.name", "value": {"stringValue": "get_weather"}},
                        {"key": "input.value", "value": {"stringValue": "{\"city\": \"Lima\"}"}},
                        {"key": "output.value", "value": {"stringValue": "warm"}}]},
        {"traceId": "t", "spanId": "4", "parentSpanId": "1", "name": "retrieve", "startTimeUnixNano": "41",
         "endTimeUnixNano": "45",
         "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "RETRIEVER"}},
                        {"key": "retrieval.documents.0.document.id", "value": {"stringValue": "climate.md"}},
                        {"key": "retrieval.documents.0.document.content", "value": {"stringValue": "Lima is warm."}}]},
    ]}]}]}
    [found] = otel_traces(spans_of_otlp_json(document))
    reply = Reply.from_wire(found.wire)
    assert found.question == "Weather in Lima?"
    assert reply.answer == "Warm in Lima."
    assert [(c.name, c.arguments, c.result, c.round) for c in reply.tool_calls] == [
        ("get_weather", {"city": "Lima"}, "warm", 0)]
    assert reply.model == "gpt-x" and reply.usage.input_tokens == 30
    assert reply.retrieved_sources == ("climate.md",) and reply.context == "Lima is warm."


def test_not_an_otlp_export_is_refused():
    with pytest.raises(ValueError, match="no 'resourceSpans'"):
        spans_of_otlp_json({"spans": []})


def test_a_line_that_is_not_json_is_named_and_a_broken_document_too(tmp_path, capsys):
    dataset = tmp_path / "ds.json"
    dataset.write_text(json.dumps(DATASET))
    lines, document = tmp_path / "lines.jsonl", tmp_path / "doc.json"
    lines.write_text('{"caseId": "paris", "answer": "x"}\n{"caseId": "oslo", "answer": \n')
    document.write_text('{\n  "resourceSpans": [\n')
    for traces, said in ((lines, f"{lines}:2: not JSON"), (document, f"{document}: neither JSON lines nor one JSON")):
        assert main(["grade", str(traces), "--dataset", str(dataset), "--checks-only",
                     "--db", f"sqlite:///{tmp_path}/e.db"]) == 2
        assert said in capsys.readouterr().err


def test_the_file_exporter_writes_hex_ids_that_grade_reads_back(tmp_path, exported, capsys):
    import re

    from tracegrade.observe.otlp_file import OtlpJsonFileExporter

    trace.get_tracer_provider().add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(tmp_path / "t.jsonl")))
    genai_agent(trace.get_tracer("weather-agent"))("What is the weather in Paris?")
    lines = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    spans = [s for line in lines for r in line["resourceSpans"] for sc in r["scopeSpans"] for s in sc["spans"]]
    sdk = {format(s.context.span_id, "016x"): format(s.context.trace_id, "032x") for s in exported.get_finished_spans()}
    for span in spans:
        assert re.fullmatch("[0-9a-f]{32}", span["traceId"]) and re.fullmatch("[0-9a-f]{16}", span["spanId"])
        assert sdk[span["spanId"]] == span["traceId"]
        assert span.get("parentSpanId", "") == "" or span["parentSpanId"] in sdk
        assert isinstance(span["kind"], int)  # OTLP/JSON: enums as integers
    dataset = tmp_path / "ds.json"
    dataset.write_text(json.dumps(DATASET))
    assert main(["grade", str(tmp_path / "t.jsonl"), "--dataset", str(dataset), "--checks-only", "--quiet",
                 "--db", f"sqlite:///{tmp_path}/h.db", "--out", str(tmp_path / "out")]) == 0
    results = json.loads(next((tmp_path / "out").rglob("results.json")).read_text())["results"]
    assert [(r["case_id"], r["reply"]["toolCalls"][0]["arguments"]) for r in results] == [("paris", {"city": "Paris"})]


def test_a_graded_run_names_its_agent_by_the_traces_it_read(tmp_path, capsys):
    """Issue 34: not `replay_target.<locals>.recorded`."""
    dataset = tmp_path / "ds.json"
    dataset.write_text(json.dumps(DATASET))
    traces = tmp_path / "replies.jsonl"
    traces.write_text(json.dumps({"caseId": "paris", "answer": "Sunny.", "toolCalls": [
        {"name": "get_weather", "arguments": {"city": "Paris"}}]}))
    assert main(["grade", str(traces), "--dataset", str(dataset), "--checks-only", "--quiet",
                 "--db", f"sqlite:///{tmp_path}/n.db", "--out", str(tmp_path / "out")]) == 0
    assert f"agent     recorded:{traces}" in capsys.readouterr().out
    from tracegrade.store.runstore import open_store

    with open_store(f"sqlite:///{tmp_path}/n.db") as store:
        [info] = store.runs(limit=2)
    assert info.manifest.agent_model == info.manifest.target == f"recorded:{traces}"
