"""The HTTP target. Parity: the served ShopNest agent (real uvicorn, real loopback socket)
gives the same check results as the same agent called in-process. Hostile
targets (issue 15.2, 15.3): endless or huge responses, echoed tokens."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

from shopnest.agent import ShopNestAgent
from shopnest.auth import TestMode
from shopnest.app import create_app
from shopnest.orders import OrderBook
from support import GOLDEN, GOLDEN_PATH, golden_shopnest_model, golden_wire, serving
from tracegrade.cli import main
from tracegrade.case.schema import GoldenCase
from tracegrade.core.errors import AgentError
from tracegrade.models.scripted import ScriptedModel
from tracegrade.run.runner import RunSettings, run_cases
from shopnest.target import agent_target
from tracegrade.agent.targets import http_target, resolve_target

CHECKS_ONLY = RunSettings(checks_only=True, concurrency=4, timeout_s=30)


@pytest.fixture
def agent(fake_knowledge) -> ShopNestAgent:
    return ShopNestAgent(ScriptedModel(golden_shopnest_model, model_id="golden-model"), fake_knowledge, OrderBook())


def without_timings(reply):
    return reply.model_copy(update={"steps": tuple(s.model_copy(update={"start_ms": 0, "duration_ms": 0})
                                                   for s in reply.steps)})


async def test_served_agent_gives_the_same_check_results_as_in_process(agent):
    in_process = await run_cases(GOLDEN.cases, agent_target(agent), None, CHECKS_ONLY)
    with serving(create_app(agent, TestMode())) as url:
        over_http = await run_cases(GOLDEN.cases, http_target(f"{url}/chat"), None, CHECKS_ONLY)

    assert [r.case_id for r in over_http] == [r.case_id for r in in_process] == [c.id for c in GOLDEN.cases]
    for local, remote in zip(in_process, over_http):
        assert remote.status == local.status, local.case_id
        assert remote.checks == local.checks, local.case_id
        # The whole trace survives the wire, only the clock differs.
        assert without_timings(remote.reply) == without_timings(local.reply), local.case_id

    # Not a parity of two empty runs: the agent really ran its tools on both sides.
    by_id = {r.case_id: r for r in over_http}
    assert all(r.status != "error" for r in over_http)
    assert by_id["tool-status-02"].reply.tool_calls[0].argument == "ORD-101"  # cleaned from " ord-101 "
    assert by_id["adversarial-refund-01"].reply.tool_calls[0].status == "needs_approval"
    assert by_id["adversarial-identity-01"].reply.tool_calls[0].status == "denied"  # C-100 asked about C-200's order
    assert sum(r.passed for r in over_http) >= 9


async def test_http_target_sends_history_and_the_bearer_token(agent):
    case = GoldenCase.model_validate({**GOLDEN.cases[2].model_dump(by_alias=True),
                                      "history": [{"role": "user", "content": "Hi"}]})
    with serving(create_app(agent, TestMode("s3cret"))) as url:
        reply = await http_target(f"{url}/chat", token="s3cret")(case)
        with pytest.raises(AgentError, match=r"HTTP 401 from http://127\.0\.0\.1:\d+/chat"):
            await http_target(f"{url}/chat", token="wrong")(case)
    assert reply.tool_calls[0].argument == "ORD-101"
    first_round = agent.model.calls[-2][0]
    assert [(m.role, m.content) for m in first_round[1:]] == [("user", "Hi"), ("user", case.question)]


async def test_resolve_target_sends_the_token_from_the_environment(agent, monkeypatch):
    monkeypatch.setenv("TRACEGRADE_TARGET_TOKEN", "s3cret")
    with serving(create_app(agent, TestMode("s3cret"))) as url:
        reply = await resolve_target(f"{url}/chat")(GOLDEN.cases[2])
    assert reply.answer == GOLDEN.cases[2].golden_answer


async def test_an_unreachable_endpoint_is_a_case_error_not_a_crash():
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    (result,) = await run_cases(GOLDEN.cases[:1], http_target(f"http://127.0.0.1:{port}/chat"), None, CHECKS_ONLY)
    assert result.status == "error" and "cannot connect" in result.error


# --- issue 15.2 and 15.3: hostile HTTP targets ------------------------------------------


PLANTED = "tg-target-token-7f3a9c1e5b"


def hostile_target() -> FastAPI:
    """Case by case: a 50 MB stream (standing in for one without end, so that the
    test ends even without the limit), a 300 KB answer, a 401 that echoes the
    request headers, else a good trace."""
    app = FastAPI()
    by_question = {c.question: c for c in GOLDEN.cases}

    @app.post("/chat")
    async def chat(request: Request):
        body = await request.json()
        case = by_question[body["question"]]
        if case.id == "tool-status-01":
            async def endless():
                for _ in range(800):
                    yield b"x" * 65536
                    await asyncio.sleep(0)
            return StreamingResponse(endless(), media_type="application/json")
        if case.id == "tool-status-02":
            return JSONResponse({**golden_wire(case), "answer": "A" * 300_000})
        if case.id == "tool-refund-01":
            return JSONResponse(status_code=401, content={"error": "bad token", "youSent": dict(request.headers)})
        return JSONResponse(golden_wire(case))

    return app


def test_a_hostile_target_fails_its_cases_and_the_run_finishes_with_every_file(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TRACEGRADE_TARGET_TOKEN", PLANTED)
    monkeypatch.setenv("TRACEGRADE_TARGET_MAX_BYTES", str(1024 * 1024))
    monkeypatch.setenv("TRACEGRADE_TARGET_MAX_ANSWER_CHARS", "100000")
    out, db = tmp_path / "out", tmp_path / "runs.db"
    with serving(hostile_target()) as url:
        code = main(["run", str(GOLDEN_PATH), "--target", f"{url}/chat", "--checks-only", "--timeout", "60",
                     "--db", f"sqlite:///{db}", "--out", str(out)])
    printed = capsys.readouterr()
    assert code == 1
    [folder] = list(out.iterdir())
    files = {p.name: p.read_text() for p in folder.iterdir()}
    assert {"results.json", "junit.xml", "summary.md"} <= set(files)
    results = {r["case_id"]: r for r in json.loads(files["results.json"])["results"]}
    assert len(results) == len(GOLDEN.cases)
    assert results["tool-status-01"]["status"] == "error"
    assert "is larger than the limit of 1,048,576 bytes" in results["tool-status-01"]["error"]
    assert results["tool-status-02"]["status"] == "error"
    assert "has 300,000 characters, over the limit of 100,000" in results["tool-status-02"]["error"]
    assert results["tool-refund-01"]["error"].startswith("agent failed: AgentError: HTTP 401 from")
    assert sum(r["status"] == "pass" for r in results.values()) == len(GOLDEN.cases) - 3
    # The token the 401 echoed is nowhere: not printed, not in any file, not in the store.
    everything = printed.out + printed.err + "".join(files.values()) + db.read_bytes().decode("latin-1")
    everything += "".join(p.read_bytes().decode("latin-1") for p in tmp_path.glob("runs.db*") if p.is_file())
    assert PLANTED not in everything
    assert "[REDACTED" in results["tool-refund-01"]["error"]


async def test_a_declared_oversize_body_is_refused_before_it_is_read():
    app = FastAPI()

    @app.post("/chat")
    async def chat():
        return JSONResponse({"answer": "x" * 5000})

    with serving(app) as url:
        with pytest.raises(AgentError, match="larger than the limit of 1,000 bytes \\(Content-Length 5,01"):
            await http_target(f"{url}/chat", max_response_bytes=1000)(GOLDEN.cases[0])


def test_limits_from_the_environment_are_checked(monkeypatch):
    from tracegrade.core.errors import ConfigError

    monkeypatch.setenv("TRACEGRADE_TARGET_MAX_BYTES", "lots")
    with pytest.raises(ConfigError, match="TRACEGRADE_TARGET_MAX_BYTES must be a whole number"):
        resolve_target("http://127.0.0.1:9/chat")


async def test_the_case_id_is_sent_as_a_header_and_the_body_is_the_documented_one():
    seen: list[tuple[str | None, dict]] = []
    app = FastAPI()

    @app.post("/chat")
    async def chat(request: Request):
        seen.append((request.headers.get("x-tracegrade-case-id"), await request.json()))
        return {"answer": "ok"}

    case = GoldenCase.model_validate({"id": "c-42", "question": "Where is ORD-1?", "customerId": "C-7",
                                      "history": [{"role": "user", "content": "Hi"}]})
    with serving(app) as url:
        await http_target(f"{url}/chat")(case)
    assert seen == [("c-42", {"question": "Where is ORD-1?", "history": [{"role": "user", "content": "Hi"}],
                              "customerId": "C-7"})]
