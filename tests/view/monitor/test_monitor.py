"""The monitor over known traffic: its numbers, filters, the golden-case draft,
the sampled online judge, and the token."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from tracegrade.cli import main
from tracegrade.case.schema import GoldenCase
from tracegrade.judge.scoring import Judge
from judge_rubrics import SCALE_RUBRIC, SEED_METRICS as METRICS
from tracegrade.models.scripted import ScriptedModel
from tracegrade.view.monitor.app import create_monitor_app
from tracegrade.view.monitor.golden import golden_case_draft
from tracegrade.view.monitor.judging import OnlineJudge, sampled
from tracegrade.view.monitor.metrics import Filters, RequestTrace, over_time, summarize
from tracegrade.view.monitor.page import render
from tracegrade.observe.spanstore import SpanStore
from tracegrade.observe.telemetry import open_telemetry
from traffic import BASE_NS, PLANTED_EMAIL, latency_ms, record_traffic


@pytest.fixture
def store(tmp_path, fake_knowledge) -> SpanStore:
    telemetry = open_telemetry("shopnest", spans_db=tmp_path / "spans.db", otlp_endpoint=None)
    assert asyncio.run(record_traffic(telemetry.tracer, fake_knowledge)) == 40
    telemetry.shutdown()
    return SpanStore(tmp_path / "spans.db")


def traces(store: SpanStore) -> list[RequestTrace]:
    return [RequestTrace.from_spans(spans) for spans in store.requests()]


def scripted_judge(score: int = 4) -> Judge:
    reply = json.dumps({**{m: score for m in METRICS}, "reason": "grounded in the tool result"})
    return Judge(ScriptedModel(lambda messages, options: reply, model_id="judge-m"), rubric=SCALE_RUBRIC)


def test_the_summary_counts_what_the_traffic_did(store):
    s = summarize(traces(store))
    assert s.requests == 40
    assert (s.error_rate, s.success_rate) == (0.1, 0.7)  # 4 model errors; 4 + 4 + 4 failed requests
    assert (s.denied, s.forbidden, s.injection, s.approvals_asked) == (4, 4, 4, 4)
    assert s.duplicate_rate == 0.1
    assert s.tool_failures == {"getDeliveryDate": 4, "deleteAccount": 4}
    assert s.provider_failures == {"llama.cpp": 6, "openai": 6}
    assert s.p50_ms <= s.p95_ms <= s.p99_ms == max(latency_ms(i) for i in range(40))  # the slowest request
    assert s.input_tokens > 0 and s.spend_usd == 0.0 and s.quality is None


def test_filters_and_buckets(store):
    everything = traces(store)
    terse = [t for t in everything if Filters(prompt_version="terse").keep(t, BASE_NS)]
    assert len(terse) == 20 and {t.prompt_version for t in terse} == {"terse"}
    openai = [t for t in everything if Filters(model="gpt-4o-mini").keep(t, BASE_NS)]
    assert len(openai) == 20
    series = over_time(everything)
    assert sum(series.volume) == 40 and len(series.labels) <= 24
    assert series.labels[0] == "09:00" and all(v is None or 0 <= v <= 100 for v in series.success)


def test_a_trace_becomes_a_redacted_golden_case_with_fields_to_fill(store):
    planted = next(spans for spans in store.requests() if "ORD-103" in spans[0].attributes["tracegrade.question"]
                   and spans[0].attributes["tracegrade.status"] == "ok")
    draft = golden_case_draft(planted)
    case = GoldenCase.model_validate(draft["case"])  # a valid case as it stands
    assert case.id.startswith("prod-") and case.split == "production"
    assert (case.expected_tool, case.expected_tool_argument) == ("getOrderStatus", "ORD-103")
    assert {"goldenAnswer", "expectedBehaviour", "customerId"} <= set(draft["toFill"])
    assert draft["observed"]["answer"] == "ORD-103 was delivered 45 days ago."
    text = json.dumps(draft)
    assert PLANTED_EMAIL not in text and "1111 1111" not in text and "[REDACTED_EMAIL]" in text


async def test_the_online_judge_scores_a_stable_sample_once(store):
    answered = [t for t in traces(store) if t.status == "ok"]
    judge = OnlineJudge(store, scripted_judge, rate=0.5, batch=100)
    judged = await judge.judge_pending()
    assert judged == sum(sampled(t.trace_id, 0.5) for t in answered) and 0 < judged < len(answered)
    assert await judge.judge_pending() == 0  # nothing twice
    judgements = store.judgements()
    assert all(j.scores == {m: 4 for m in METRICS} and j.judge_model == "judge-m" for j in judgements.values())
    s = summarize(traces(store), judgements)
    assert (s.judged, s.quality) == (judged, 4.0)
    assert any(q == 4.0 for q in over_time(traces(store), judgements).quality)


async def test_the_api_and_the_golden_case_action(store):
    transport = httpx.ASGITransport(app=create_monitor_app(store, "s3cret-token"))
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost",
                                 headers={"Authorization": "Bearer s3cret-token"}) as client:
        summary = (await client.get("/api/summary", params={"prompt_version": "v1"})).json()["summary"]
        assert summary["requests"] == 20
        recent = (await client.get("/api/traces", params={"limit": 3})).json()
        assert len(recent) == 3 and recent[0]["start_ns"] > recent[1]["start_ns"]
        draft = (await client.post(f"/api/traces/{recent[0]['trace_id']}/golden-case")).json()
        assert draft["observed"]["traceId"] == recent[0]["trace_id"]
        assert (await client.post("/api/traces/" + "0" * 32 + "/golden-case")).status_code == 404
        page = (await client.get("/")).text
        assert "task success" in page and "70%" in page
        assert 'src="http' not in page and "<link" not in page  # self-contained: nothing fetched


async def test_a_token_guards_every_route(store):
    transport = httpx.ASGITransport(app=create_monitor_app(store, "s3cret-token"))
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        assert (await client.get("/")).headers["location"] == "/login"
        for path in ("/api/summary", "/api/traces", "/api/traces/" + "0" * 32):
            assert (await client.get(path)).status_code == 401
        assert (await client.get("/api/summary", headers={"Authorization": "Bearer nope"})).status_code == 401
        assert (await client.get("/api/summary", headers={"Authorization": "Bearer s3cret-token"})).status_code == 200
        assert (await client.post("/login", data={"token": "nope"})).status_code == 401
        login = await client.post("/login", data={"token": "s3cret-token"})
        assert login.status_code == 303 and "httponly" in login.headers["set-cookie"].lower()
        assert "samesite=strict" in login.headers["set-cookie"].lower()
        assert "s3cret-token" not in login.headers["set-cookie"]  # the cookie is a session, not the token
        assert (await client.get("/")).status_code == 200  # the cookie now


async def test_the_token_never_goes_in_a_url(store):
    # Issue 15.4: /login?token=... ends in logs and browser history.
    transport = httpx.ASGITransport(app=create_monitor_app(store, "s3cret-token"))
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        in_url = await client.get("/login", params={"token": "s3cret-token"})
        form = await client.get("/login")
    assert in_url.status_code == 400 and "set-cookie" not in in_url.headers
    assert "does not go in the URL" in in_url.json()["detail"]
    assert form.status_code == 200 and 'method=post action=/login' in form.text


async def test_traces_are_not_served_under_a_foreign_host_or_to_another_origin(store):
    # Issue 15.4: a DNS-rebinding page read every trace (573 KB) from the monitor.
    transport = httpx.ASGITransport(app=create_monitor_app(store, "s3cret-token"))
    bearer = {"Authorization": "Bearer s3cret-token"}
    async with httpx.AsyncClient(transport=transport, base_url="http://attacker.example:8100") as client:
        rebinding = await client.get("/api/traces", headers=bearer)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost:8100") as client:
        cross_site = await client.post("/api/traces/" + "0" * 32 + "/golden-case",
                                       headers={**bearer, "Origin": "http://attacker.example"})
    assert rebinding.status_code == 400 and "trace_id" not in rebinding.text
    assert cross_site.status_code == 403


def test_monitor_refuses_to_serve_beyond_loopback_without_a_token(monkeypatch, capsys):
    monkeypatch.delenv("TRACEGRADE_MONITOR_TOKEN", raising=False)
    assert main(["monitor", "--host", "0.0.0.0"]) == 2
    assert "TRACEGRADE_MONITOR_TOKEN" in capsys.readouterr().err
    assert main(["monitor", "--judge-sample", "2"]) == 2


def test_a_request_shows_its_tool_arguments_as_json(store):
    page = render(traces(store), {}, Filters(), versions=[], models=[], store="spans.db")
    assert "getOrderStatus {&quot;orderId&quot;: &quot;ORD-" in page
    assert "{&#x27;orderId&#x27;" not in page


async def test_the_login_form_reads_no_more_than_a_small_body_before_the_token_is_checked(store):
    # Issue 23: an anonymous POST /login was read whole (52 MB took the monitor to 3 GB before its 401).
    transport = httpx.ASGITransport(app=create_monitor_app(store, "s3cret-token"))
    sent = []

    async def endless():
        for _ in range(1_000):  # 16 MB if it were all read
            sent.append(1)
            yield b"token=" + b"x" * 16_384

    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        streamed = await client.post("/login", content=endless(),
                                     headers={"content-type": "application/x-www-form-urlencoded"})
        declared = await client.post("/login", content=b"token=" + b"x" * 10_000,
                                     headers={"content-type": "application/x-www-form-urlencoded"})
        still_works = await client.post("/login", data={"token": "s3cret-token"})
    assert streamed.status_code == 413 and len(sent) <= 2
    assert declared.status_code == 413 and "4096 bytes" in declared.json()["detail"]
    assert still_works.status_code == 303
