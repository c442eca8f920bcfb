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

from places import TESTS
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
    assert _grade_only_the_forbidden_write(tmp_path, tmp_path / "t.jsonl") == 1  # it passed, exit 0, before


def _grade_only_the_forbidden_write(tmp_path, traces) -> int:
    """`tracegrade grade` of a dataset whose one case only forbids the write the agent made."""
    (tmp_path / "fines.json").write_text(json.dumps(DATASET[1:]))
    return main(["grade", str(traces), "--dataset", str(tmp_path / "fines.json"), "--checks-only", "--quiet",
                 "--db", f"sqlite:///{tmp_path}/only.db", "--out", str(tmp_path / "only")])


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


# -- GenAI conventions, written by hand from the spec ------------------------------------------


def _otlp(spans: list[dict]) -> dict:
    """OTLP JSON of ``spans`` given as (name, id, parent, start, attributes) dicts."""
    def value(v):
        return {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v if isinstance(v, str) else json.dumps(v)}
    return {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": s["id"], "parentSpanId": s.get("parent", ""),
         "name": s["name"], "startTimeUnixNano": str(s["start"]), "endTimeUnixNano": str(s["start"] + 5),
         "attributes": [{"key": k, "value": value(v)} for k, v in s["attributes"].items()]} for s in spans]}]}]}


def genai_current(question: str, call: dict | None, answer: str) -> list[dict]:
    """An agent span and two chat spans in the current GenAI conventions (messages as JSON with parts),
    no execute_tool span: the call is only on the first chat span's output."""
    asked = [{"type": "tool_call", "id": "call_9", "name": call["name"], "arguments": call["arguments"]}] if call else []
    first_out = [{"role": "assistant", "parts": asked or [{"type": "text", "content": answer}],
                  "finish_reason": "tool_call" if call else "stop"}]
    second_in = [{"role": "user", "parts": [{"type": "text", "content": question}]},
                 {"role": "assistant", "parts": asked},
                 {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_9", "response": "done"}]}]
    spans = [{"name": "invoke_agent library", "id": "a1", "start": 0,
              "attributes": {"gen_ai.operation.name": "invoke_agent", "gen_ai.input.text": question}},
             {"name": "chat lib-model", "id": "c1", "parent": "a1", "start": 10,
              "attributes": {"gen_ai.operation.name": "chat", "gen_ai.request.model": "lib-model",
                             "gen_ai.usage.input_tokens": 7, "gen_ai.usage.output_tokens": 3,
                             "gen_ai.input.messages": second_in[:1], "gen_ai.output.messages": first_out}}]
    if call:
        spans.append({"name": "chat lib-model", "id": "c2", "parent": "a1", "start": 20,
                      "attributes": {"gen_ai.operation.name": "chat", "gen_ai.input.messages": second_in,
                                     "gen_ai.output.messages": [{"role": "assistant", "finish_reason": "stop",
                                                                 "parts": [{"type": "text", "content": answer}]}]}})
    return spans


def genai_indexed(question: str, call: dict | None, answer: str) -> list[dict]:
    """The same in the older indexed form (gen_ai.prompt.N.* / gen_ai.completion.N.*)."""
    first = {"gen_ai.system": "openai", "llm.request.type": "chat", "gen_ai.request.model": "lib-model",
             "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": question,
             "gen_ai.completion.0.role": "assistant"}
    spans = [{"name": "library.agent", "id": "a1", "start": 0, "attributes": {"input.value": question}},
             {"name": "openai.chat", "id": "c1", "parent": "a1", "start": 10, "attributes": first}]
    if not call:
        first["gen_ai.completion.0.content"] = answer
        return spans
    first.update({"gen_ai.completion.0.tool_calls.0.id": "call_9", "gen_ai.completion.0.tool_calls.0.name": call["name"],
                  "gen_ai.completion.0.tool_calls.0.arguments": json.dumps(call["arguments"])})
    spans.append({"name": "openai.chat", "id": "c2", "parent": "a1", "start": 20, "attributes": {
        "llm.request.type": "chat", "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": question,
        "gen_ai.prompt.1.role": "assistant", "gen_ai.prompt.1.tool_calls.0.id": "call_9",
        "gen_ai.prompt.1.tool_calls.0.name": call["name"], "gen_ai.prompt.2.role": "tool",
        "gen_ai.prompt.2.tool_call_id": "call_9", "gen_ai.prompt.2.content": "done",
        "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": answer}})
    return spans


@pytest.mark.parametrize("written", [genai_current, genai_indexed])
def test_a_forbidden_write_on_a_genai_chat_span_fails_the_graded_file(tmp_path, written, capsys):
    lines = [_otlp(written("Is Dune available?", {"name": "search_catalog", "arguments": {"query": "Dune"}},
                           "Dune is on the shelf.")),
             _otlp(written("How much are late fines?", {"name": "cancel_hold", "arguments": {"hold_id": "H-9"}},
                           "10c a day."))]
    lines[1]["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] = "0af7651916cd43dd8448eb211c80319c"
    for span in lines[1]["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        span["traceId"] = "0af7651916cd43dd8448eb211c80319c"
    (tmp_path / "t.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    (tmp_path / "ds.json").write_text(json.dumps(DATASET))
    code = main(["grade", str(tmp_path / "t.jsonl"), "--dataset", str(tmp_path / "ds.json"), "--checks-only",
                 "--quiet", "--db", f"sqlite:///{tmp_path}/r.db", "--out", str(tmp_path / "out")])
    results = json.loads(next((tmp_path / "out").rglob("results.json")).read_text())["results"]
    assert {r["case_id"]: r["status"] for r in results} == {"dune": "pass", "fines": "fail"}, capsys.readouterr()
    assert code == 1
    dune = next(r for r in results if r["case_id"] == "dune")["reply"]["toolCalls"]
    assert [(c["name"], c["arguments"], c["result"], c["id"]) for c in dune] == [
        ("search_catalog", {"query": "Dune"}, "done", "call_9")]
    assert _grade_only_the_forbidden_write(tmp_path, tmp_path / "t.jsonl") == 1  # it passed, exit 0, before


def _span(name: str, span_id: str, start: int, attributes: dict, parent: str = "a") -> dict:
    return {"name": name, "traceId": "t", "spanId": span_id, "parentSpanId": parent, "startTimeUnixNano": start,
            "endTimeUnixNano": start + 5, "attributes": attributes}


def _llm_asking(span_id: str, start: int, *calls: tuple[str, str, dict]) -> dict:
    attributes = {"openinference.span.kind": "LLM"}
    for m, (call_id, name, arguments) in enumerate(calls):
        prefix = f"llm.output_messages.0.message.tool_calls.{m}.tool_call."
        attributes.update({prefix + "function.name": name, prefix + "function.arguments": json.dumps(arguments)})
        attributes.update({prefix + "id": call_id} if call_id else {})
    return _span("llm", span_id, start, attributes)


def _tool(span_id: str, start: int, name: str, arguments: dict | None, call_id: str = "", parent: str = "a") -> dict:
    attributes = {"openinference.span.kind": "TOOL", "tool.name": name, "output.value": f"ran {name}"}
    attributes.update({"input.value": json.dumps(arguments)} if arguments is not None else {})
    attributes.update({"tool_call.id": call_id} if call_id else {})
    return _span(name, span_id, start, attributes, parent)


AGENT = _span("agent", "a", 0, {"openinference.span.kind": "AGENT", "input.value": "q"}, parent="")


@pytest.mark.parametrize("spans, expected", [
    # tool spans win over the requests they answer, by id: each call once, with the span's result
    ([AGENT, _llm_asking("m1", 10, ("c1", "hold", {"b": "1"}), ("c2", "hold", {"b": "2"})),
      _tool("t2", 20, "hold", None, "c2"), _tool("t1", 21, "hold", None, "c1")],
     [("hold", {"b": "2"}, "ran hold", "c2"), ("hold", {"b": "1"}, "ran hold", "c1")]),
    # no ids: paired by name and arguments, then by name
    ([AGENT, _llm_asking("m1", 10, ("", "hold", {"b": "1"}), ("", "find", {"q": "x"})),
      _tool("t1", 20, "hold", {"b": "1"}), _tool("t2", 21, "find", None)],
     [("hold", {"b": "1"}, "ran hold", None), ("find", {"q": "x"}, "ran find", None)]),
    # a request no tool span ran is a call of its own
    ([AGENT, _llm_asking("m1", 10, ("c1", "hold", {"b": "1"}), ("c2", "cancel", {"b": "1"})),
      _tool("t1", 20, "hold", {"b": "1"}, "c1")],
     [("cancel", {"b": "1"}, "", "c2"), ("hold", {"b": "1"}, "ran hold", "c1")]),
    # two instrumentations of one call: a tool span inside one of the same name and arguments,
    # and the same request on a framework's LLM span and the SDK's LLM span inside it
    ([AGENT, _llm_asking("m1", 10, ("c1", "hold", {"b": "1"})),
      {**_llm_asking("m2", 11, ("c1", "hold", {"b": "1"})), "parentSpanId": "m1"},
      _tool("t1", 20, "hold", {"b": "1"}), _tool("t2", 21, "hold", {"b": "1"}, parent="t1")],
     [("hold", {"b": "1"}, "ran hold", "c1")]),
    # without ids: the same request on an LLM span and one inside it is one call; in two rounds, two
    ([AGENT, _llm_asking("m1", 10, ("", "hold", {"b": "1"})),
      {**_llm_asking("m2", 11, ("", "hold", {"b": "1"})), "parentSpanId": "m1"}],
     [("hold", {"b": "1"}, "", None)]),
    ([AGENT, _llm_asking("m1", 10, ("", "hold", {"b": "1"})), _llm_asking("m2", 20, ("", "hold", {"b": "1"}))],
     [("hold", {"b": "1"}, "", None), ("hold", {"b": "1"}, "", None)]),
    # a tool span whose id no round asked for is not paired with another id's request
    ([AGENT, _llm_asking("m1", 10, ("c1", "hold", {"b": "1"})), _tool("t1", 20, "hold", {"b": "1"}, "c9")],
     [("hold", {"b": "1"}, "", "c1"), ("hold", {"b": "1"}, "ran hold", "c9")]),
])
def test_requested_calls_and_tool_spans_are_paired_once(spans, expected):
    [found] = otel_traces(spans)
    assert [(c["name"], c["arguments"], c["result"], c["id"]) for c in found.wire["toolCalls"]] == expected


# -- capture (run --capture otel): recorders released, the cap and orphans said ------------------


def test_a_case_that_raises_releases_its_recorder(tmp_path, exported):  # noqa: F811
    import tracegrade.agent.capture.otel as capture_otel

    tracer = trace.get_tracer("library-agent")

    def failing_agent(question: str) -> str:
        for n in range(50):
            with tracer.start_as_current_span("execute_tool search_catalog", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_catalog"}):
                pass
        raise RuntimeError("the catalog is down")

    (tmp_path / "ds.json").write_text(json.dumps([
        {**DATASET[0], "id": f"c{n}", "question": f"Is book {n} available?"} for n in range(20)]))
    run = tracegrade.evaluate(str(tmp_path / "ds.json"), failing_agent, judge=None, capture=("otel",),
                              store=f"sqlite:///{tmp_path}/r.db")
    assert all(r.error for r in run.results) and len(run.results) == 20
    assert capture_otel._processor._watched == {}  # nothing held after the cases


def test_a_case_past_the_span_cap_says_it_was_cut(tmp_path, exported, monkeypatch):  # noqa: F811
    import tracegrade.agent.capture.otel as capture_otel

    monkeypatch.setattr(capture_otel, "MAX_CASE_SPANS", 10)
    tracer = trace.get_tracer("library-agent")

    def busy_agent(question: str) -> str:
        for n in range(15):
            with tracer.start_as_current_span("execute_tool search_catalog", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_catalog",
                    "gen_ai.tool.call.arguments": json.dumps({"query": str(n)})}):
                pass
        return "Dune is on the shelf."

    (tmp_path / "ds.json").write_text(json.dumps(DATASET[:1]))
    run = tracegrade.evaluate(str(tmp_path / "ds.json"), busy_agent, judge=None, capture=("otel",),
                              store=f"sqlite:///{tmp_path}/r.db")
    provenance = run.results[0].reply.provenance
    assert provenance.source == "spans" and "cut at the span cap" in provenance.problem, provenance
    assert "5 more span(s)" in provenance.problem  # 10 kept, and the case span


def thread_pool_agent(question: str) -> str:
    """The library agent, its catalog look-up run in a thread pool without the context:
    the tool span begins a trace of its own (an orphan)."""
    from concurrent.futures import ThreadPoolExecutor

    tracer = trace.get_tracer("library-agent")

    def look_up(query: str) -> str:
        with tracer.start_as_current_span("execute_tool search_catalog", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_catalog",
                "gen_ai.tool.call.arguments": json.dumps({"query": query})}):
            return CATALOG.get(query, "not found")

    with tracer.start_as_current_span("invoke_agent library", attributes={
            "gen_ai.operation.name": "invoke_agent", "input.value": question}) as span:
        with ThreadPoolExecutor(2) as pool:
            found = pool.submit(look_up, question.split()[1]).result()
        span.set_attribute("output.value", f"Dune is {found}.")
    return f"Dune is {found}."


def test_orphaned_spans_are_named_with_the_fix_in_run_and_in_grade(tmp_path, exported, capsys):  # noqa: F811
    (tmp_path / "ds.json").write_text(json.dumps(DATASET[:1]))
    run = tracegrade.evaluate(str(tmp_path / "ds.json"), thread_pool_agent, judge=None, capture=("otel",),
                              store=f"sqlite:///{tmp_path}/r.db")
    problem = run.results[0].reply.provenance.problem
    assert "began in other traces" in problem and "copy_context" in problem, problem

    exported.clear()
    trace.get_tracer_provider().add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(tmp_path / "t.jsonl")))
    thread_pool_agent("Is Dune available?")
    code = main(["grade", str(tmp_path / "t.jsonl"), "--dataset", str(tmp_path / "ds.json"), "--checks-only",
                 "--quiet", "--db", f"sqlite:///{tmp_path}/g.db", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert "an orphaned trace: no root agent span" in err and "copy_context" in err, err
    assert "question '' is not in the dataset" not in err
    graded = json.loads(next((tmp_path / "out").rglob("results.json")).read_text())["results"][0]["reply"]
    assert "orphaned trace(s) began while this trace ran" in graded["provenance"]["problem"]
    assert code in (0, 1, 2)


ODD = [None, True, 0, -3, 1.5, "", "x", "tool", "user", '{"a":1}', "[1,2]", "[" * 80 + "]" * 80,
       '[{"role":"user","parts":[1,{"type":"text"}]}]', '[{"parts":"abc"}]', '{"messages":[1]}',
       '[{"role":"assistant","parts":[{"type":"tool_call","id":null,"name":[],"arguments":"{"}]}]',
       '[{"role":"tool","parts":[{"type":"tool_call_response","id":{},"response":{"x":[1]}}]}]',
       '[{"role":"assistant","tool_calls":{"a":1}}]', '[{"role":"assistant","tool_calls":[{"function":"x"}]}]',
       ["a", "b"], [1, 2]]
READ_KEYS = ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.name", "gen_ai.tool.call.id",
             "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "input.value", "output.value", "tool.name",
             "tool_call.id", "retrieval.documents.0.document.id", "gen_ai.response.model", "tracegrade.case_id",
             "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
             "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments",
             "llm.output_messages.0.message.tool_calls.0.tool_call.id", "llm.input_messages.0.message.role",
             "llm.input_messages.0.message.content", "llm.input_messages.0.message.tool_call_id",
             "llm.input_messages.1.message.contents.0.message_content.text", "gen_ai.completion.0.tool_calls.0.name",
             "gen_ai.completion.0.tool_calls.0.arguments", "gen_ai.prompt.0.role", "gen_ai.prompt.0.content",
             "gen_ai.prompt.0.tool_call_id", "traceloop.entity.name", "traceloop.entity.input",
             "traceloop.entity.output", "llm.tools.0.tool.json_schema", "gen_ai.tool.definitions", "session.id",
             "gen_ai.conversation.id"]
KINDS = [{"gen_ai.operation.name": "chat"}, {"gen_ai.operation.name": "execute_tool"},
         {"openinference.span.kind": "LLM"}, {"openinference.span.kind": "TOOL"},
         {"openinference.span.kind": "RETRIEVER"}, {"llm.request.type": "chat"}, {"traceloop.span.kind": "tool"}, {}]
ODD_NAMES = ["s", "handoff to ", "handoff to Desk", "x.tool", "execute_tool "]


def test_odd_attribute_values_never_break_the_reading():
    """Every attribute the readers look at, given values of other shapes, in random traces: a Reply each time."""
    from tracegrade.core.trace import Reply

    rng = __import__("random").Random(33)
    for _ in range(600):
        spans = [_span(rng.choice(ODD_NAMES), str(n), rng.randint(0, 50), {**rng.choice(KINDS), **{
            rng.choice(READ_KEYS): rng.choice(ODD) for _ in range(rng.randint(0, 6))}},
            parent=rng.choice(["", "0", "1", str(n)])) for n in range(rng.randint(1, 6))]
        for span in spans:  # the event forms too: message events with values of other shapes
            span["events"] = [{"name": rng.choice(EVENT_NAMES), "attributes": {rng.choice(EVENT_KEYS): rng.choice(ODD)}}
                              for _ in range(rng.randint(0, 3))]
        for found in otel_traces(spans):
            Reply.from_wire(found.wire)


EVENT_NAMES = ["gen_ai.client.inference.operation.details", "gen_ai.content.prompt", "gen_ai.content.completion",
               "gen_ai.user.message", "gen_ai.tool.message", "gen_ai.choice", "other"]
EVENT_KEYS = ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.prompt", "gen_ai.completion",
              "gen_ai.event.content", "content", "tool_calls", "id", "message"]


def test_model_spans_without_their_messages_do_not_pass_a_forbidden_write(tmp_path, capsys):
    """OpenTelemetry's GenAI instrumentations record no message content by default: the chat spans
    hold the model and tokens only, so a call the model asked for cannot be seen. Not a pass."""
    spans = [s for s in genai_current("How much are late fines?", {"name": "cancel_hold", "arguments": {}}, "10c.")]
    for span in spans:
        span["attributes"] = {k: v for k, v in span["attributes"].items() if not k.endswith(".messages")}
    spans[0]["attributes"]["output.value"] = "Late fines are 10c a day."  # the agent span's answer
    (tmp_path / "t.jsonl").write_text(json.dumps(_otlp(spans)) + "\n")
    code = _grade_only_the_forbidden_write(tmp_path, tmp_path / "t.jsonl")
    result = json.loads(next((tmp_path / "only").rglob("results.json")).read_text())["results"][0]
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in result["reply"]["provenance"]["problem"]
    assert result["status"] != "pass" and code != 0, capsys.readouterr().err


def _pairs(n: int) -> list[dict]:
    """An agent span, n chat spans each asking for one call by id, n tool spans answering them."""
    spans = [AGENT]
    for i in range(n):
        spans.append(_llm_asking(f"m{i}", 10 * i + 1, (f"c{i}", "look_up", {"n": i})))
        spans.append(_tool(f"t{i}", 10 * i + 5, "look_up", None, f"c{i}"))
    return spans


@pytest.mark.parametrize("shape", [
    _pairs,
    lambda n: [_span("s", f"s{i}", i, {}, parent=f"s{i - 1}" if i else "") for i in range(n)],  # a chain
    lambda n: [_span("s", f"s{i}", i, {}, parent=f"s{(i - 1) % n}") for i in range(n)],  # parent ids in a cycle
], ids=["chat+tool pairs", "chain", "cycle"])
def test_assembly_grows_linearly(shape):
    """Four times the spans take about four times as long (the square would take sixteen). WHY the best
    of three and a ratio, not a time: the suite shares its machine."""
    import time

    def best(n: int) -> float:
        spans = shape(n)
        times = []
        for _ in range(3):
            started = time.perf_counter()
            otel_traces(spans)
            times.append(time.perf_counter() - started)
        return min(times)

    small, large = best(1_000), best(4_000)
    assert large / small < 9, (small, large)


def test_the_judges_own_sdk_calls_are_not_the_agents_spans(instrumented):
    """An openai-SDK call made by tracegrade itself (an ``openai-sdk:`` judge) inside ``unobserved``
    makes no span for the agent's instrumentor; the agent's own call beside it still does."""
    import httpx
    import openai

    from tracegrade.models.base import unobserved

    def model(request):
        return httpx.Response(200, json={"id": "x", "object": "chat.completion", "created": 0, "model": "j",
                                         "choices": [{"index": 0, "finish_reason": "stop",
                                                      "message": {"role": "assistant", "content": "yes"}}]})
    client = openai.OpenAI(api_key="sk-judge", base_url="http://judge.test/v1",
                           http_client=httpx.Client(transport=httpx.MockTransport(model)))
    with unobserved():
        client.chat.completions.create(model="j", messages=[{"role": "user", "content": "is it faithful?"}])
    assert instrumented.get_finished_spans() == ()
    client.chat.completions.create(model="j", messages=[{"role": "user", "content": "the agent's question"}])
    assert len(instrumented.get_finished_spans()) == 1


def test_the_runner_asks_the_judge_unobserved():
    import asyncio

    from opentelemetry import context

    import tracegrade
    from tracegrade.core.results import Unscored

    seen = []

    class Judge:
        model = None

        async def score(self, case, reply):
            seen.append(context.get_value(context._SUPPRESS_INSTRUMENTATION_KEY))
            return Unscored("test judge")

    async def agent(case):
        return tracegrade.Reply(answer="ok")

    from tracegrade.case.schema import GoldenCase
    from tracegrade.run.runner import RunSettings, evaluate_case

    asyncio.run(evaluate_case(GoldenCase(id="a", question="q?"), agent, Judge(), RunSettings()))
    assert seen == [True]


def test_one_model_call_recorded_by_two_instrumentations_is_one_round_with_its_tokens_once():
    """LangChain's LLM span with the openai SDK's LLM span inside it (both instrumentors on): two
    calls, so rounds 0 and 1 and the tokens of two calls (before: rounds 1 and 3, tokens doubled)."""
    def call(n: int, call_id: str) -> list[dict]:
        outer = _llm_asking(f"lc{n}", 10 * n, (call_id, "look_up", {"n": n}))
        inner = {**_llm_asking(f"oa{n}", 10 * n + 1, (call_id, "look_up", {"n": n})), "parentSpanId": f"lc{n}"}
        for span in (outer, inner):
            span["attributes"] = {**span["attributes"], "llm.token_count.prompt": 30, "llm.token_count.completion": 5}
        inner["endTimeUnixNano"] = outer["endTimeUnixNano"] - 1
        return [outer, inner]

    [found] = otel_traces([AGENT, *call(1, "c1"), *call(2, "c2")])
    assert [c["round"] for c in found.wire["toolCalls"]] == [0, 1]
    assert found.wire["usage"] == {"inputTokens": 60, "outputTokens": 10}
    assert sum(s["kind"] == "model" for s in found.wire["steps"]) == 2


def test_a_call_two_instrumentations_recorded_one_without_content_is_graded(tmp_path, capsys):
    """OpenInference's LLM span holds the messages; OpenTelemetry's GenAI openai instrumentation,
    installed beside it with content capture off, adds a chat span of the same call holding none.
    The round is read from the span that says it (before: every case unscored, "model spans
    without their messages")."""
    recorded = TESTS / "fixtures" / "otel" / "openinference-and-genai.jsonl"
    (tmp_path / "ds.json").write_text(json.dumps(DATASET))
    code = main(["grade", str(recorded), "--dataset", str(tmp_path / "ds.json"), "--checks-only", "--quiet",
                 "--db", f"sqlite:///{tmp_path}/r.db", "--out", str(tmp_path / "out")])
    results = json.loads(next((tmp_path / "out").rglob("results.json")).read_text())["results"]
    assert {r["case_id"]: r["status"] for r in results} == {"dune": "pass", "fines": "fail"}, capsys.readouterr()
    assert code == 1
