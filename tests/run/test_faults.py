"""Model faults on the wire: the agent and the judge against the fault-injecting server.

Every case of a run ends scored, or carrying the exact reason it is not; none is
lost, none counted twice, none silently left out of the averages; retries are
bounded and visible in the results.
"""

from __future__ import annotations

import re

import pytest

from shopnest.agent import ShopNestAgent
from shopnest.orders import ORDERS, OrderBook
from judge_rubrics import SCALE_RUBRIC
from tracegrade.judge import json_scores
from tracegrade.case.schema import GoldenCase
from tracegrade.judge.scoring import Judge
from tracegrade.models import load_model
from tracegrade.models.retry import RetryPolicy
from tracegrade.run.runner import RunSettings, run_cases
from tracegrade.testing.fault_server import FaultRates, FaultServer, scores_for

pytest.importorskip("openai")
_REAL_DELAY = RetryPolicy.delay

OWNER = {order.id: order.customer_id for order in ORDERS}


def order_case(case_id: str, order_id: str, marker: str = "") -> GoldenCase:
    return GoldenCase(
        id=case_id, question=f"[case {case_id}] Where is my order {order_id}? {marker}".strip(),
        golden_answer=f"The status of {order_id}.", expected_tool="getOrderStatus",
        expected_tool_argument=order_id, customer_id=OWNER[order_id],
    )


@pytest.fixture
def server(monkeypatch):
    with FaultServer(retry_after="0") as running:
        monkeypatch.setenv("TRACEGRADE_AGENT_BASE_URL", running.base_url)
        monkeypatch.setenv("TRACEGRADE_JUDGE_BASE_URL", running.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-unit0123456789")
        monkeypatch.setenv("TRACEGRADE_MODEL_TIMEOUT_S", "1")
        monkeypatch.setenv("TRACEGRADE_MODEL_RETRIES", "1")
        yield running


def agent_and_judge(knowledge) -> tuple:
    """The ShopNest agent and the judge, both built from the environment like the CLI does."""
    agent = ShopNestAgent(load_model("openai:fault-agent", role="agent"), knowledge, OrderBook())

    async def target(case: GoldenCase):
        return await agent.chat(case.question, case.customer_id)

    return target, Judge(load_model("openai:fault-judge", role="judge"), SCALE_RUBRIC)


GAVE_UP = "agent failed: ModelError: fault-agent: gave up after 2 attempts: "
EXACT_REASONS = {
    "[[fault:drop]]": ("error", GAVE_UP + "connection failed"),
    "[[fault:rate_limit]]": ("error", GAVE_UP + "HTTP 429"),
    "[[fault:http_500]]": ("error", GAVE_UP + "HTTP 500"),
    "[[fault:http_503]]": ("error", GAVE_UP + "HTTP 503"),
    "[[fault:hang]]": ("error", GAVE_UP + "timed out"),
    "[[fault:malformed]]": ("error", GAVE_UP + "malformed response: JSONDecodeError"),
    "[[fault:echo_key]]": ("error", "agent failed: ModelError: fault-agent: HTTP 401: "
                                    "Incorrect API key provided: [REDACTED_KEY]."),
    "[[judge-fault:bad_scores]]": ("unscored", "judge reply unusable: correctness must be 1..5, got 7"),
    "[[judge-fault:http_503]]": ("unscored", "judge call failed: ModelError: fault-judge: gave up after 2 attempts: HTTP 503"),
}


async def test_each_fault_ends_its_case_with_the_exact_reason(server, fake_knowledge):
    target, judge = agent_and_judge(fake_knowledge)
    cases = [order_case(f"k{i}", "ORD-101", marker) for i, marker in enumerate(EXACT_REASONS)]
    cases.append(order_case("fine", "ORD-102"))
    results = await run_cases(cases, target, judge, RunSettings(concurrency=10))
    assert [r.case_id for r in results] == [c.id for c in cases]
    for result, (status, reason) in zip(results, EXACT_REASONS.values()):
        # an agent error ends with where in the agent it surfaced: (at .../shopnest/agent.py:N in ...)
        error = re.sub(r" \(at \S*shopnest/agent\.py:\d+ in .*\)$", "", result.error)
        assert (result.case_id, result.status, error) == (result.case_id, status, reason)
        assert result.scores is None
    assert results[-1].scores == scores_for("fine", json_scores.schema(SCALE_RUBRIC.metrics)) and results[-1].error == ""
    # Bounded: an always-failing call is tried exactly twice (1 retry), a 401 once.
    tries = {marker: sum(1 for s in server.log if s.case == f"k{i}" and s.fault)
             for i, marker in enumerate(EXACT_REASONS)}
    assert tries["[[fault:http_503]]"] == 2 and tries["[[fault:echo_key]]"] == 1
    assert tries["[[judge-fault:bad_scores]]"] == 3  # the judge's own 3 attempts, each answered
    assert tries["[[judge-fault:http_503]]"] == 3 * 2  # 3 judge attempts x 2 transport attempts


async def test_retries_that_succeed_are_counted_in_the_trace_and_the_result(server, fake_knowledge, monkeypatch):
    monkeypatch.setenv("TRACEGRADE_MODEL_RETRIES", "3")
    target, judge = agent_and_judge(fake_knowledge)
    case = order_case("r1", "ORD-101", "[[fault:http_503*2]] [[judge-fault:drop*1]]")
    [result] = await run_cases([case], target, judge)
    assert result.status in ("pass", "fail") and result.scores == scores_for("r1", json_scores.schema(SCALE_RUBRIC.metrics))
    assert [step.retries for step in result.reply.steps if step.kind == "model"] == [2, 0]
    assert (result.agent_retries, result.judge_retries, result.judge_attempts) == (2, 1, 1)
    assert result.to_json()["reply"]["steps"][1]["retries"] == 2


async def test_retry_after_is_honoured(monkeypatch, fake_knowledge):
    with FaultServer(retry_after="1") as server:
        monkeypatch.setenv("TRACEGRADE_AGENT_BASE_URL", server.base_url)
        monkeypatch.setenv("TRACEGRADE_MODEL_RETRIES", "1")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-unit0123456789")
        # WHY record the delay instead of timing the wait: what the server asked
        # for is the behaviour; how long a loaded machine took to wake is not.
        asked: list[float] = []

        def no_wait(policy: RetryPolicy, attempt: int, retry_after_s: float | None) -> float:
            asked.append(_REAL_DELAY(policy, attempt, retry_after_s))
            return 0.0

        monkeypatch.setattr(RetryPolicy, "delay", no_wait)
        target, _ = agent_and_judge(fake_knowledge)
        reply = await target(order_case("w1", "ORD-101", "[[fault:rate_limit*1]]"))
    assert reply.steps[1].retries == 1
    assert asked == [1.0]  # the server's Retry-After, not our jittered backoff


def test_fault_rates_are_validated_and_drawn_in_proportion():
    with pytest.raises(ValueError, match="sum to at most 1"):
        FaultRates(drop=0.6, hang=0.6)
    with pytest.raises(ValueError):
        FaultRates(drop=-0.1)
    import random

    rng = random.Random(1)
    draws = [FaultRates(http_500=0.2, drop=0.1).draw(rng) for _ in range(10_000)]
    assert abs(draws.count("http_500") / 10_000 - 0.2) < 0.02
    assert abs(draws.count("drop") / 10_000 - 0.1) < 0.02
    assert {*draws} == {"", "http_500", "drop"}


def test_model_timeout_and_retries_come_from_the_environment(monkeypatch):
    from tracegrade.core.errors import ConfigError
    from tracegrade.models import http_settings

    monkeypatch.delenv("TRACEGRADE_MODEL_TIMEOUT_S", raising=False)
    monkeypatch.delenv("TRACEGRADE_MODEL_RETRIES", raising=False)
    assert (http_settings()["timeout_s"], http_settings()["retry"].attempts) == (60.0, 4)
    monkeypatch.setenv("TRACEGRADE_MODEL_TIMEOUT_S", "2.5")
    monkeypatch.setenv("TRACEGRADE_MODEL_RETRIES", "0")
    assert (http_settings()["timeout_s"], http_settings()["retry"].attempts) == (2.5, 1)
    for name, value in [("TRACEGRADE_MODEL_RETRIES", "two"), ("TRACEGRADE_MODEL_RETRIES", "-1"),
                        ("TRACEGRADE_MODEL_TIMEOUT_S", "0")]:
        monkeypatch.setenv(name, value)
        with pytest.raises(ConfigError, match=re.escape(name)):
            http_settings()
        monkeypatch.delenv(name)


async def test_a_planted_key_reaches_no_response_log_or_span_of_the_served_agent(
        server, fake_knowledge, monkeypatch, tmp_path, caplog):
    import logging

    import httpx

    from shopnest.app import create_app
    from shopnest.auth import TestMode
    from support import serving
    from tracegrade.observe.telemetry import open_telemetry

    planted = "sk-test-PLANTEDserve0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", planted)
    caplog.set_level(logging.DEBUG)  # whatever any library logs, at every level
    telemetry = open_telemetry("shopnest", spans_db=tmp_path / "spans.db")
    agent = ShopNestAgent(load_model("openai:fault-agent", role="agent"), fake_knowledge, OrderBook())
    with serving(create_app(agent, TestMode(), tracer=telemetry.tracer)) as url:
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            echoed = await client.post("/chat", json={"question": "[case s1] Where is ORD-101? [[fault:echo_key]]"})
            fine = await client.post("/chat", json={"question": "[case s2] Where is ORD-101?"})
    telemetry.shutdown()
    assert (echoed.status_code, fine.status_code) == (503, 200)
    assert echoed.json() == {"error": "ModelError: fault-agent: HTTP 401: "
                                      "Incorrect API key provided: [REDACTED_KEY]."}
    # The store's bytes with its write-ahead log: a span not yet checkpointed into the file is in there.
    spans = b"".join(path.read_bytes() for path in sorted(tmp_path.glob("spans.db*")))
    assert b"[REDACTED_KEY]" in spans  # the error was recorded, redacted
    assert "/chat" in caplog.text  # the logs were captured (the test's client logs its calls)
    for text in (echoed.text, fine.text, caplog.text, spans.decode("utf-8", "replace")):
        assert planted not in text and "PLANTEDserve" not in text
