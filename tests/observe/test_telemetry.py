"""Spans: the request tree and its attributes, eval-run spans, redaction before
any exporter, the SQLite store round trip, and OTLP/HTTP to a loopback receiver."""

from __future__ import annotations

import datetime as dt
import json
import socket
import sqlite3

import httpx
import pytest
from opentelemetry import trace as otel
from opentelemetry.sdk.trace.export import SpanExportResult

import support
from shopnest.agent import ShopNestAgent
from shopnest.auth import TestMode
from shopnest.app import create_app
from shopnest.orders import OrderBook
from tracegrade.case.schema import GoldenCase
from tracegrade.core.errors import ModelError
from tracegrade.judge.scoring import Judge
from judge_rubrics import SCALE_RUBRIC, SEED_METRICS as METRICS
from tracegrade.models import ChatResponse, ModelToolCall
from tracegrade.models.scripted import ScriptedModel
from tracegrade.core.results import Manifest
from tracegrade.run.runner import RunSettings, run_cases
from tracegrade.observe.otlp import FailFastExporter
from tracegrade.observe.spanstore import SpanStore, StoredSpan, reply_from_spans
from tracegrade.observe.telemetry import (
    CaseTimes, RequestInfo, activate, eval_run_spans, hash_customer, library_tracer, memory_telemetry, open_telemetry,
    DEFAULT_SPANS_DB, record_case, record_request, spans_db_path,
)
from tracegrade.core.trace import Reply, Step, ToolCall, Usage

TODAY = dt.date(2026, 6, 15)
# One of each kind the issue names, planted in every place a span can carry text.
PLANTED = {
    "email": "ann.lee@example.com",
    "card": "4111 1111 1111 1111",
    "phone": "+44 7700 900123",
    "bearer": "Bearer abcDEF123456789xyz",
    "api_key": "sk-live-1234567890abcdefghij",
}
SECRET_TEXT = " ".join(PLANTED.values())


def tool(name: str, order_id: str, call_id: str = "c1", **extra) -> ChatResponse:
    return ChatResponse(tool_calls=(ModelToolCall(name, {"orderId": order_id, **extra}, id=call_id),),
                        input_tokens=100, output_tokens=10, model="m1", retries=1)


def answer(text: str) -> ChatResponse:
    return ChatResponse(text=text, input_tokens=150, output_tokens=20, model="m1")


def shop_agent(fake_knowledge, script) -> ShopNestAgent:
    return ShopNestAgent(ScriptedModel(script, model_id="m1"), fake_knowledge, OrderBook(today=TODAY))


async def chat(app, question: str, customer: str = "C-100") -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        return await client.post("/chat", json={"question": question, "customerId": customer})


SERVER, CLIENT, INTERNAL = otel.SpanKind.SERVER, otel.SpanKind.CLIENT, otel.SpanKind.INTERNAL


def by_name(spans) -> dict:
    """Spans by name (the last of each name: several model rounds share ``chat MODEL``)."""
    return {span.name: span for span in spans}


# --- the request tree ------------------------------------------------------------


async def test_a_request_becomes_one_span_tree_with_genai_attributes(fake_knowledge):
    telemetry, memory = memory_telemetry()
    agent = shop_agent(fake_knowledge, [
        tool("getOrderStatus", "ORD-102"),
        tool("createRefundDraft", "ORD-102", "c2", reason="too small"),
        answer("A refund draft for ORD-102 is waiting for your confirmation."),
    ])
    response = await chat(create_app(agent, TestMode(), tracer=telemetry.tracer), "Please refund ORD-102, it is too small.")
    assert response.status_code == 200

    spans = memory.get_finished_spans()
    # Named and kinded as the GenAI conventions say: {operation} {model | tool | data source}.
    assert sorted((s.name, s.kind) for s in spans) == sorted([
        ("agent_request", SERVER), ("retrieval policies", CLIENT), ("chat m1", CLIENT), ("chat m1", CLIENT),
        ("chat m1", CLIENT), ("execute_tool getOrderStatus", INTERNAL), ("execute_tool createRefundDraft", INTERNAL),
        ("approval", INTERNAL),
    ])
    named = by_name(spans)
    root = named["agent_request"]
    assert root.parent is None and len({s.context.trace_id for s in spans}) == 1
    # Every step hangs off the request; the approval hangs off the tool call that asked for it.
    children = sorted((s for s in spans if s.parent and s.parent.span_id == root.context.span_id), key=lambda s: s.start_time)
    assert [s.name for s in children] == ["retrieval policies", "chat m1", "execute_tool getOrderStatus", "chat m1",
                                          "execute_tool createRefundDraft", "chat m1"]
    assert named["approval"].parent.span_id == named["execute_tool createRefundDraft"].context.span_id
    assert all(root.start_time <= s.start_time <= s.end_time <= root.end_time for s in spans)

    a = root.attributes
    assert a["gen_ai.operation.name"] == "invoke_agent" and a["gen_ai.agent.name"] == "shopnest"
    assert (a["gen_ai.request.model"], a["gen_ai.response.model"], a["gen_ai.provider.name"]) == ("m1", "m1", "scripted")
    assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (350, 40)
    assert a["tracegrade.prompt_version"] == "v1" and a["tracegrade.status"] == "ok"
    assert a["tracegrade.customer.hash"] == hash_customer("C-100") != "C-100"
    assert (a["tracegrade.steps"], a["tracegrade.retries"], a["tracegrade.approvals.asked"]) == (5, 2, 1)
    assert a["tracegrade.latency_ms"] >= 0 and a["tracegrade.cost_usd"] == 0.0
    model = children[-1].attributes
    assert (model["gen_ai.operation.name"], model["gen_ai.usage.input_tokens"], model["gen_ai.usage.output_tokens"]) == ("chat", 150, 20)
    assert (model["gen_ai.provider.name"], model["gen_ai.request.model"]) == ("scripted", "m1")
    status = named["execute_tool getOrderStatus"].attributes
    assert status["gen_ai.tool.name"] == "getOrderStatus" and json.loads(status["gen_ai.tool.call.arguments"]) == {"orderId": "ORD-102"}
    assert status["tracegrade.tool.status"] == "ok" and "DELIVERED" in status["gen_ai.tool.call.result"]
    # The model's own call ids, as the agent recorded them in its trace.
    assert (status["gen_ai.tool.call.id"], named["execute_tool createRefundDraft"].attributes["gen_ai.tool.call.id"]) == ("c1", "c2")
    assert named["approval"].attributes["tracegrade.approval.state"] == "asked"
    assert json.loads(named["retrieval policies"].attributes["gen_ai.retrieval.documents"])[0]["id"].endswith(".md")


async def test_every_step_span_lies_inside_its_request_over_many_requests(fake_knowledge):
    # WHY many: the agent once rounded its step times to 0.1 ms, and the app timed the
    # request with the wall clock but its steps with the monotonic one; a step then
    # ended up to 50 µs after its request in about one request in six.
    telemetry, memory = memory_telemetry()
    outside = 0
    for _ in range(150):
        memory.clear()
        agent = shop_agent(fake_knowledge, [tool("getOrderStatus", "ORD-102"), answer("It was delivered.")])
        assert (await chat(create_app(agent, TestMode(), tracer=telemetry.tracer), "Where is ORD-102?")).status_code == 200
        spans = memory.get_finished_spans()
        root = next(s for s in spans if s.parent is None)
        outside += any(not root.start_time <= s.start_time <= s.end_time <= root.end_time for s in spans)
    assert outside == 0


async def test_guardrail_counts_and_a_failed_request(fake_knowledge):
    telemetry, memory = memory_telemetry()
    agent = shop_agent(fake_knowledge, [
        tool("getOrderStatus", "ORD-109"),          # another customer's order: denied
        tool("deleteAccount", "ORD-101", "c2"),     # not a ShopNest tool: forbidden
        tool("getOrderStatus", "ORD-114", "c3"),    # the order note carries an injection
        answer("I cannot find that order."),
    ])
    app = create_app(agent, TestMode(), tracer=telemetry.tracer)
    assert (await chat(app, "Where are ORD-109 and ORD-114?")).status_code == 200
    root = by_name(memory.get_finished_spans())["agent_request"].attributes
    assert (root["tracegrade.guardrail.denied"], root["tracegrade.guardrail.forbidden"],
            root["tracegrade.guardrail.injection"]) == (1, 1, 1)

    memory.clear()
    broken = shop_agent(fake_knowledge, [ModelError("m1: gave up after 4 attempts")])
    response = await chat(create_app(broken, TestMode(), tracer=telemetry.tracer), "Where is ORD-101?")
    assert response.status_code == 503
    [span] = memory.get_finished_spans()
    assert (span.name, span.status.status_code) == ("agent_request", otel.StatusCode.ERROR)
    assert (span.attributes["error.type"], span.attributes["tracegrade.status"]) == ("ModelError", "error")


def test_the_same_customer_hashes_the_same_and_a_salt_changes_it():
    assert hash_customer("C-100", "") == hash_customer("C-100", "")
    assert hash_customer("C-100", "pepper") != hash_customer("C-100", "")
    assert hash_customer("C-100", "") != hash_customer("C-200", "")


# --- eval runs -------------------------------------------------------------------


@pytest.fixture
def active_spans():
    """Telemetry into memory, activated for library code (the runner) for one test."""
    telemetry, memory = memory_telemetry()
    activate(telemetry)
    yield telemetry, memory
    activate(None)


def golden_case_and_reply() -> tuple[GoldenCase, Reply]:
    case = GoldenCase(id="tool-status-01", question="Where is ORD-101?", expected_tool="getOrderStatus",
                      expected_tool_argument="ORD-101")
    reply = Reply(answer="It shipped.", tool_calls=(ToolCall(name="getOrderStatus", argument="ORD-101",
                                                             arguments={"orderId": "ORD-101"}),),
                  steps=(Step(kind="model", name="round 1", duration_ms=2), Step(kind="tool", name="getOrderStatus", start_ms=2),
                         Step(kind="model", name="round 2", start_ms=3)))
    return case, reply


async def test_an_eval_run_emits_case_agent_checks_judge_spans(active_spans):
    telemetry, memory = active_spans
    case, reply = golden_case_and_reply()

    async def target(_case):
        return reply

    scores = json.dumps({**{m: 5 for m in METRICS}, "reason": "fine"})
    judge = Judge(ScriptedModel([scores], model_id="judge-m"), rubric=SCALE_RUBRIC)
    with telemetry.tracer.start_as_current_span("eval_run"):
        [result] = await run_cases([case], target, judge, RunSettings(concurrency=1))
    assert result.status == "pass"

    spans = memory.get_finished_spans()
    named = by_name(spans)
    parent = lambda name: next(s.name for s in spans if s.context.span_id == named[name].parent.span_id)  # noqa: E731
    assert parent("case") == "eval_run"
    assert parent("invoke_agent target") == parent("checks") == parent("chat judge-m") == "case"
    assert parent("execute_tool getOrderStatus") == parent("chat") == "invoke_agent target"
    assert named["case"].attributes["tracegrade.case.id"] == "tool-status-01"
    assert named["case"].attributes["tracegrade.status"] == "pass"
    assert named["checks"].attributes["tracegrade.checks.failed"] == ()
    # The trace gave no call id: a stable one is derived from the call's place in it.
    assert named["execute_tool getOrderStatus"].attributes["gen_ai.tool.call.id"] == "tracegrade-call-1"
    judge_span = named["chat judge-m"]
    judged = judge_span.attributes
    assert (judged["gen_ai.request.model"], judged["gen_ai.evaluation.score.value"], judged["tracegrade.score.correctness"]) == ("judge-m", 1.0, 5)
    assert (judge_span.kind, judged["gen_ai.operation.name"], judged["gen_ai.provider.name"]) == (CLIENT, "chat", "scripted")
    # The phases follow each other inside the case, on one clock.
    case_span, agent_span = named["case"], named["invoke_agent target"]
    assert case_span.start_time == agent_span.start_time <= agent_span.end_time <= named["checks"].start_time
    assert named["checks"].end_time <= judge_span.start_time <= judge_span.end_time == case_span.end_time


async def test_a_failing_agent_marks_its_case_and_agent_spans(active_spans):
    _, memory = active_spans
    case, _ = golden_case_and_reply()

    async def target(_case):
        raise RuntimeError("order service unreachable")

    [result] = await run_cases([case], target, None, RunSettings(checks_only=True))
    named = by_name(memory.get_finished_spans())
    assert result.status == "error" and set(named) == {"case", "invoke_agent target"}
    assert named["invoke_agent target"].status.status_code == otel.StatusCode.ERROR
    assert named["case"].attributes["tracegrade.error"].startswith("agent failed: RuntimeError")


def test_without_telemetry_no_case_span_is_built_at_all():
    # WHY a result that breaks when read: building spans (even no-op ones) reads the
    # result; with no exporter and no store on, nothing may be built (issue 16).
    class Untouchable:
        def __getattr__(self, name):
            raise AssertionError(f"span building read result.{name} with telemetry off")

    activate(None)
    times = CaseTimes()
    times.mark("agent")
    record_case(Untouchable(), times)


async def test_eval_run_spans_go_to_the_store_and_then_stop(tmp_path):
    case, reply = golden_case_and_reply()

    async def target(_case):
        return reply

    manifest = Manifest("run-1", "golden.json", "v1", 1, "shopnest", "m1", None, None)
    with eval_run_spans(manifest, spans_db=tmp_path / "spans.db"):
        await run_cases([case], target, None, RunSettings(checks_only=True))
    await run_cases([case], target, None, RunSettings(checks_only=True))  # after the run: no spans

    store = SpanStore(tmp_path / "spans.db")
    assert store.requests() == []  # eval spans are not production requests
    rows = sqlite3.connect(tmp_path / "spans.db").execute("SELECT name, attributes FROM spans").fetchall()
    names = sorted(name for name, _ in rows)
    assert names.count("eval_run") == 1 and names.count("case") == 1 and "checks" in names
    run = json.loads(next(attributes for name, attributes in rows if name == "eval_run"))
    assert run["tracegrade.run.id"] == "run-1"


async def test_an_eval_run_stores_its_spans_where_tracegrade_spans_db_names(tmp_path, monkeypatch):
    case, reply = golden_case_and_reply()

    async def target(_case):
        return reply

    monkeypatch.setenv("TRACEGRADE_SPANS_DB", str(tmp_path / "named.db"))
    with eval_run_spans(Manifest("run-2", "golden.json", "v1", 1, "shopnest", "m1", None, None)):
        await run_cases([case], target, None, RunSettings(checks_only=True))
    names = [row[0] for row in sqlite3.connect(tmp_path / "named.db").execute("SELECT name FROM spans")]
    assert names.count("case") == 1 and names.count("eval_run") == 1


def test_a_server_keeps_its_default_span_store_when_nothing_is_set(monkeypatch):
    monkeypatch.delenv("TRACEGRADE_SPANS_DB", raising=False)
    assert spans_db_path() == DEFAULT_SPANS_DB
    monkeypatch.setenv("TRACEGRADE_SPANS_DB", "off")
    assert spans_db_path() is None


# --- redaction -------------------------------------------------------------------


def planted_reply() -> Reply:
    return Reply(
        answer=f"Sure. I sent it to {PLANTED['email']}; call {PLANTED['phone']}.",
        retrieved_sources=("return-policy.md",), retrieval_scores=(0.7,),
        tool_calls=(ToolCall(name="createRefundDraft", arguments={"orderId": "ORD-102", "reason": SECRET_TEXT},
                             argument="ORD-102", result=f"Draft for card {PLANTED['card']}", status="needs_approval"),),
        context=f"SOURCE: return-policy.md\nkey {PLANTED['api_key']}",
        steps=(Step(kind="retrieval", name="policies", duration_ms=1),
               Step(kind="approval", name="createRefundDraft", start_ms=1, duration_ms=1, error=PLANTED["bearer"]),
               Step(kind="model", name="round 1", start_ms=2, duration_ms=1)),
        model="m1", usage=Usage(input_tokens=5, output_tokens=5),
    )


def planted_info() -> RequestInfo:
    return RequestInfo(question=f"My card is {SECRET_TEXT}, refund ORD-102", started_ns=1_000_000_000,
                       ended_ns=1_010_000_000, customer_id=PLANTED["email"], model="m1", provider="scripted")


def assert_clean(text: str) -> None:
    found = [kind for kind, value in PLANTED.items() if value in text or value.split()[-1] in text]
    assert not found, f"planted {found} reached an exporter"


def test_planted_secrets_reach_no_exporter(tmp_path):
    telemetry, memory = memory_telemetry()
    record_request(telemetry.tracer, planted_info(), planted_reply())
    record_request(telemetry.tracer, planted_info(), error=ModelError(f"call failed with {SECRET_TEXT}"))
    span = telemetry.tracer.start_span(f"custom {PLANTED['email']}")
    span.record_exception(RuntimeError(SECRET_TEXT))
    span.end()

    spans = memory.get_finished_spans()
    dumped = json.dumps([[s.name, dict(s.attributes), [dict(e.attributes) for e in s.events], s.status.description]
                         for s in spans], default=list)
    assert "[REDACTED_EMAIL]" in dumped and "[REDACTED_CARD]" in dumped and "[REDACTED_PHONE]" in dumped
    assert_clean(dumped)

    # And what the store keeps, and what is rebuilt from it for the judge and golden cases.
    store_path = tmp_path / "spans.db"
    stored = open_telemetry("test", spans_db=store_path, otlp_endpoint=None, secrets=())
    record_request(stored.tracer, planted_info(), planted_reply())
    stored.shutdown()
    assert_clean(store_path.read_bytes().decode("utf-8", "replace"))
    [request] = SpanStore(store_path).requests()
    assert_clean(reply_from_spans(request).model_dump_json())


def test_known_secret_values_are_redacted_whatever_their_shape():
    telemetry, memory = memory_telemetry(secrets=("hunter2hunter2",))
    record_request(telemetry.tracer, RequestInfo(question="the token is hunter2hunter2", started_ns=0, ended_ns=1))
    assert "hunter2hunter2" not in json.dumps(dict(memory.get_finished_spans()[0].attributes))


# --- the SQLite store ------------------------------------------------------------


def test_the_store_gives_back_the_reply_a_tree_was_built_from(tmp_path):
    reply = Reply(
        answer="ORD-101 shipped yesterday.", retrieved_sources=("shipping-policy.md",), retrieval_scores=(0.61,),
        tool_calls=(ToolCall(name="getOrderStatus", arguments={"orderId": "ORD-101"}, argument="ORD-101",
                             result="Order ORD-101 is SHIPPED.", status="ok", id="call_7"),),
        context="SOURCE: shipping-policy.md\n# Shipping",
        steps=(Step(kind="retrieval", name="policies", duration_ms=3.0),
               Step(kind="model", name="round 1", start_ms=3.0, duration_ms=40.0, input_tokens=80, output_tokens=9, retries=1),
               Step(kind="tool", name="getOrderStatus", start_ms=43.0, duration_ms=0.5),
               Step(kind="model", name="round 2", start_ms=44.0, duration_ms=30.0, input_tokens=120, output_tokens=12)),
        model="m1", usage=Usage(input_tokens=200, output_tokens=21, cost_usd=0.002), route="order_status",
    )
    telemetry = open_telemetry("test", spans_db=tmp_path / "spans.db", otlp_endpoint=None)
    record_request(telemetry.tracer, RequestInfo(question="Where is ORD-101?", started_ns=5_000_000_000,
                                                 ended_ns=5_080_000_000), reply)
    telemetry.shutdown()

    [spans] = SpanStore(tmp_path / "spans.db").requests()
    assert spans[0].name == "agent_request" and spans[0].duration_ms == 80.0
    rebuilt = reply_from_spans(spans)
    assert rebuilt.model_dump(exclude={"steps"}) == reply.model_dump(exclude={"steps"})
    assert [(s.kind, s.name, round(s.start_ms, 3), s.retries) for s in rebuilt.steps] == [
        (s.kind, s.name, s.start_ms, s.retries) for s in reply.steps]


# --- OTLP/HTTP -------------------------------------------------------------------


@pytest.fixture
def otlp_receiver():
    with support.otlp_receiver() as receiver:
        yield receiver


def test_spans_arrive_over_otlp_http_when_the_standard_variable_is_set(otlp_receiver, tmp_path, monkeypatch):
    endpoint, received = otlp_receiver
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    telemetry = open_telemetry("shopnest", spans_db=tmp_path / "spans.db")
    record_request(telemetry.tracer, planted_info(), planted_reply())
    telemetry.shutdown()  # flushes the batch

    assert received and {path for path, _ in received} == {"/v1/traces"}
    decoded = support.otlp_spans(received)
    assert {service for service, _ in decoded} == {"shopnest"}
    spans = [span for _, span in decoded]
    assert sorted(s.name for s in spans) == ["agent_request", "approval", "chat m1", "execute_tool createRefundDraft",
                                            "retrieval policies"]
    root = next(s for s in spans if s.name == "agent_request")
    attributes = {a.key: a.value for a in root.attributes}
    assert attributes["gen_ai.request.model"].string_value == "m1"
    assert attributes["gen_ai.usage.input_tokens"].int_value == 5
    assert (root.end_time_unix_nano - root.start_time_unix_nano) == 10_000_000
    assert_clean(b"".join(body for _, body in received).decode("utf-8", "replace"))
    # The local store got the same request.
    assert len(SpanStore(tmp_path / "spans.db").requests()) == 1


def test_stored_span_from_a_readable_span_keeps_ids_and_parent():
    telemetry, memory = memory_telemetry()
    record_request(telemetry.tracer, RequestInfo(question="q", started_ns=0, ended_ns=10),
                   Reply(answer="a", steps=(Step(kind="model", name="round 1"),)))
    child, root = (StoredSpan.from_readable(s) for s in memory.get_finished_spans())
    assert child.parent_id == root.span_id and root.parent_id is None and child.trace_id == root.trace_id


# --- a dead collector ------------------------------------------------------------


def test_a_failing_destination_is_said_once_paused_and_never_waited_for():
    said, sent, now = [], [], [0.0]
    answers = iter([False, True])
    exporter = FailFastExporter(lambda spans: sent.append(list(spans)) or next(answers), "http://c:4318/v1/traces",
                                say=said.append, pause_s=30, clock=lambda: now[0])
    assert exporter.export(["a", "b"]) == SpanExportResult.FAILURE
    for t in (1.0, 10.0, 29.9):  # paused: dropped at once, not sent, not said again
        now[0] = t
        assert exporter.export(["c"]) == SpanExportResult.FAILURE
    assert sent == [["a", "b"]] and exporter.dropped == 5
    now[0] = 30.0
    assert exporter.export(["d"]) == SpanExportResult.SUCCESS and sent[-1] == ["d"]
    assert len(said) == 2 and "is failing" in said[0] and "works again" in said[1]


def test_a_dead_collector_is_said_once_without_retry_lines_and_the_store_keeps_the_spans(tmp_path, capsys, caplog):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    telemetry = open_telemetry("shopnest", spans_db=tmp_path / "spans.db", otlp_endpoint=dead, secrets=())
    for _ in range(3):
        record_request(telemetry.tracer, planted_info(), planted_reply())
        telemetry.provider.force_flush()
    telemetry.shutdown()

    err = capsys.readouterr().err
    assert err.count("is failing") == 1 and f"span export to {dead}/v1/traces" in err
    assert not [r for r in caplog.records if "Transient error" in r.getMessage() or "Failed to export" in r.getMessage()]
    assert len(SpanStore(tmp_path / "spans.db").requests()) == 3


@pytest.mark.parametrize("setting", ["off", None])
def test_an_eval_run_builds_no_spans_without_a_named_store_or_collector(tmp_path, monkeypatch, setting):
    # Unset means no local store for an eval run (a server's requests still get the default one).
    monkeypatch.chdir(tmp_path)
    if setting is None:
        monkeypatch.delenv("TRACEGRADE_SPANS_DB", raising=False)
    else:
        monkeypatch.setenv("TRACEGRADE_SPANS_DB", setting)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    manifest = Manifest("run-1", "golden.json", "v1", 1, "shopnest", "m1", None, None)
    with eval_run_spans(manifest):
        assert library_tracer("x") is None
    assert not list(tmp_path.iterdir())  # no store file, under any name
