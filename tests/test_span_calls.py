"""Tool calls read where instrumentations put them: on model spans.

A library help-desk agent of our own (the openai SDK against a scripted model behind
an ``httpx.MockTransport``), instrumented with OpenInference's ``OpenAIInstrumentor``
and nothing else: its spans hold the calls only on the LLM spans
(``llm.output_messages.N.message.tool_calls.M.tool_call.*``). A GenAI-convention
trace is written by hand from the spec, current (``gen_ai.output.messages`` parts)
and indexed (``gen_ai.completion.N.tool_calls.M.*``). A case whose only expectation
is a forbidden write must fail when the agent made that write.
"""

from __future__ import annotations

import json

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from test_grade import exported  # noqa: F401  (the fixture: a global provider, exported to memory)

import tracegrade
from tracegrade.cli import main
from tracegrade.core.from_otel import otel_traces
from tracegrade.observe.otlp_file import OtlpJsonFileExporter

openai = pytest.importorskip("openai")
instrumentation = pytest.importorskip("openinference.instrumentation.openai")

TOOLS = [{"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {
    arg: {"type": "string"}}}}} for name, arg in (("search_catalog", "query"), ("cancel_hold", "hold_id"))]
CATALOG = {"Dune": "on the shelf", "Emma": "on loan until May 3"}

DATASET = [
    {"id": "dune", "question": "Is Dune available?",
     "calls": {"expected": [{"tool": "search_catalog", "arguments": {"query": "Dune"}}]},
     "answerMustInclude": ["shelf"]},
    {"id": "fines", "question": "How much are late fines?",
     "calls": {"forbidden": [{"tool": "cancel_hold"}]}},
]


def scripted_model(request: httpx.Request) -> httpx.Response:
    """The model: asks for the catalog about a book, then answers from the tool result.
    Asked about fines it wrongly cancels the member's hold first (the forbidden write)."""
    messages = json.loads(request.content)["messages"]
    question, last = messages[0]["content"], messages[-1]
    if last["role"] == "tool":
        message = {"role": "assistant", "content": f"From the catalog: {last['content']}."}
    elif "fines" in question:
        message = _call("call_f1", "cancel_hold", {"hold_id": "H-9"})
    else:
        message = _call("call_s1", "search_catalog", {"query": question.split()[1]})
    return httpx.Response(200, json={"id": "c", "object": "chat.completion", "created": 0, "model": "lib-model",
                                     "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                                     "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}})


def _call(call_id: str, name: str, arguments: dict) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def library_agent(question: str) -> str:
    """A plain openai-SDK tool loop under an agent span of its own (as a Phoenix user writes it)."""
    client = openai.OpenAI(api_key="sk-test", base_url="http://model.test/v1",
                           http_client=httpx.Client(transport=httpx.MockTransport(scripted_model)))
    tracer = trace.get_tracer("library-agent")
    with tracer.start_as_current_span("library-agent", attributes={
            "openinference.span.kind": "AGENT", "input.value": question}) as span:
        messages: list = [{"role": "user", "content": question}]
        for _ in range(4):
            reply = client.chat.completions.create(model="lib-model", messages=messages, tools=TOOLS)
            message = reply.choices[0].message
            if not message.tool_calls:
                span.set_attribute("output.value", message.content or "")
                return message.content or ""
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                found = CATALOG.get(json.loads(call.function.arguments).get("query", ""), "done")
                messages.append({"role": "tool", "tool_call_id": call.id, "content": found})
    return ""


@pytest.fixture
def instrumented(exported):  # noqa: F811
    instrumentor = instrumentation.OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=trace.get_tracer_provider())
    yield exported
    instrumentor.uninstrument()


def test_a_forbidden_write_on_an_openinference_llm_span_fails_the_graded_file(tmp_path, instrumented, capsys):
    trace.get_tracer_provider().add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(tmp_path / "t.jsonl")))
    for case in DATASET:
        library_agent(case["question"])
    (tmp_path / "ds.json").write_text(json.dumps(DATASET))
    code = main(["grade", str(tmp_path / "t.jsonl"), "--dataset", str(tmp_path / "ds.json"), "--checks-only",
                 "--quiet", "--db", f"sqlite:///{tmp_path}/r.db", "--out", str(tmp_path / "out")])
    results = json.loads(next((tmp_path / "out").rglob("results.json")).read_text())["results"]
    assert code == 1, capsys.readouterr()
    assert {r["case_id"]: r["status"] for r in results} == {"dune": "pass", "fines": "fail"}


def test_the_calls_on_llm_spans_are_the_reply_with_results_and_provenance(instrumented):
    library_agent("Is Dune available?")
    [found] = otel_traces(instrumented.get_finished_spans())
    calls = found.wire["toolCalls"]
    assert [(c["name"], c["arguments"], c["result"], c["id"], c["round"]) for c in calls] == [
        ("search_catalog", {"query": "Dune"}, "on the shelf", "call_s1", 0)]
    assert found.wire["provenance"] == {"source": "spans", "via": "openinference", "problem": ""}


def test_run_capture_otel_fails_the_forbidden_write(tmp_path, instrumented):
    (tmp_path / "ds.json").write_text(json.dumps(DATASET))
    run = tracegrade.evaluate(str(tmp_path / "ds.json"), library_agent, judge=None, capture=("otel",),
                              store=f"sqlite:///{tmp_path}/r.db")
    assert {r.case_id: r.passed for r in run.results} == {"dune": True, "fines": False}
    fines = next(r for r in run.results if r.case_id == "fines")
    assert [c.name for c in fines.reply.tool_calls] == ["cancel_hold"]
