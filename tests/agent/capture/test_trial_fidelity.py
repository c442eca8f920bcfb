"""A call is counted once, in the trial that made it, whatever the agent remembers (issue 46).

The agent is a hotel desk written with the openai SDK the way framework users write
it: its memory (a checkpointer's thread, a session) keeps every message it sent and
got, keyed by a thread id, and each later request sends that history again. Its model
is a scripted HTTP endpoint behind the SDK's own transport.
"""

from __future__ import annotations

import json

import httpx
import pytest
from fastapi import FastAPI, Request  # WHY at the top: FastAPI reads the endpoint's annotations from here

from support import serving

import tracegrade
from tracegrade.agent.capture.target import captured_target
from tracegrade.core.trace import Reply
from tracegrade.case.schema import GoldenCase

openai = pytest.importorskip("openai")

TOOLS = [{"type": "function", "function": {"name": name, "parameters": {
    "type": "object", "properties": {"booking_id": {"type": "string"}}, "required": ["booking_id"]}}}
    for name in ("get_booking", "cancel_booking")]
DECLARED = [{"name": "get_booking"}, {"name": "cancel_booking", "writes": True}]


def desk_model(request: httpx.Request) -> httpx.Response:
    """Cancels when the newest user message says cancel, reads a booking when it names one,
    answers with the last tool result after a call, and answers plainly otherwise. Call ids
    count the requests it has seen, as a real provider's are new each time."""
    desk_model.calls += 1  # type: ignore[attr-defined]
    messages = json.loads(request.content)["messages"]
    last = messages[-1]
    if last["role"] == "user" and ("cancel" in last["content"] or "BK-" in last["content"]):
        tool = "cancel_booking" if "cancel" in last["content"] else "get_booking"
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{desk_model.calls}", "type": "function",  # type: ignore[attr-defined]
            "function": {"name": tool, "arguments": json.dumps({"booking_id": "BK-1001"})}}]}
    elif last["role"] == "tool":
        message = {"role": "assistant", "content": f"Done: {last['content']}."}
    else:
        message = {"role": "assistant", "content": "Your stay is on 12 May."}
    return httpx.Response(200, json={
        "id": "x", "object": "chat.completion", "created": 0, "model": "desk-1",
        "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}})


desk_model.calls = 0  # type: ignore[attr-defined]


def client() -> object:
    return openai.OpenAI(api_key="sk-test", base_url="http://desk.test/v1",
                         http_client=httpx.Client(transport=httpx.MockTransport(desk_model)))


def memory_agent(key_of):
    """An agent with a checkpointer: ``memory[key_of(case)]`` holds every message sent and got."""
    memory: dict[str, list[dict]] = {}
    model = client()

    def answer(case: GoldenCase) -> str:
        messages = memory.setdefault(key_of(case), [])
        messages.append({"role": "user", "content": case.question})
        for _ in range(4):
            message = model.chat.completions.create(model="desk-1", messages=messages, tools=TOOLS).choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return message.content
            for call in message.tool_calls:
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": f"{call.function.name} BK-1001: cancelled" if "cancel" in call.function.name
                                 else "BK-1001: 12 May, refundable"})
        return "out of rounds"
    return answer


CANCEL_THEN_ASK = {
    "id": "cancel-once", "question": "Please cancel my booking", "followUps": ["When was my stay again?"],
    "tools": DECLARED,
    "calls": {"expected": [{"tool": "cancel_booking", "arguments": {"booking_id": "BK-1001"}}], "count": "exactly"},
}


def run(tmp_path, cases, agent, repeat: int = 1, concurrency: int = 1):
    settings = tracegrade.RunSettings(checks_only=True, repeat=repeat, concurrency=concurrency)
    return tracegrade.evaluate(cases, agent, judge=None, capture=("openai",), settings=settings,
                               store=f"sqlite:///{tmp_path}/r.db")


def test_a_call_the_memory_sends_again_is_counted_once(tmp_path):
    result = run(tmp_path, [CANCEL_THEN_ASK], memory_agent(lambda case: case.trial)).results[0]
    assert result.status == "pass", [c for c in result.checks if not c.passed]
    cancels = [c for c in result.reply.tool_calls if c.name == "cancel_booking"]
    assert [(c.turn, c.round) for c in cancels] == [(1, 0)]


def test_trials_keyed_by_case_trial_never_share_memory(tmp_path):
    results = run(tmp_path, [CANCEL_THEN_ASK], memory_agent(lambda case: case.trial), repeat=3).results
    assert [r.status for r in results] == ["pass"] * 3
    assert len({r.repeat for r in results}) == 3


def test_trials_that_share_memory_are_unscored_naming_it(tmp_path):
    results = run(tmp_path, [CANCEL_THEN_ASK], memory_agent(lambda case: case.id), repeat=3).results
    assert [r.status for r in results] == ["pass", "unscored", "unscored"]
    assert all("share the agent's memory" in r.error and "case.trial" in r.error for r in results[1:])


def test_the_trial_is_unique_per_repeat_and_names_the_run(tmp_path):
    seen: list[str] = []

    async def agent(case: GoldenCase) -> Reply:
        seen.append(case.trial)
        return Reply(answer="ok")

    stored = tracegrade.evaluate([{"id": "a", "question": "q"}, {"id": "b", "question": "q"}], agent, judge=None,
                                 settings=tracegrade.RunSettings(checks_only=True, repeat=2),
                                 store=f"sqlite:///{tmp_path}/r.db")
    run_id = stored.manifest.run_id
    assert sorted(seen) == sorted(f"{run_id}/{c}/{r}" for c in "ab" for r in (0, 1))


def test_a_dataset_cannot_set_the_trial():
    with pytest.raises(Exception, match="trial"):
        GoldenCase.model_validate({"id": "a", "question": "q", "trial": "mine"})
    assert GoldenCase(id="a", question="q").trial == ""  # outside a run


# -- one source of truth: what the agent returns never replaces what was captured --

FORBIDDEN_CANCEL = {"id": "no-cancel", "question": "Can I cancel BK-1001?", "tools": DECLARED,
                    "calls": {"forbidden": [{"tool": "cancel_booking"}]}}


def hiding_agent(case: GoldenCase) -> dict:
    """Its model cancels, but it returns a trace listing only a read, claiming it was captured."""
    model = client()
    model.chat.completions.create(model="desk-1", tools=TOOLS,
                                  messages=[{"role": "user", "content": "cancel BK-1001"}])
    return {"answer": "BK-1001 is refundable.", "provenance": {"source": "captured", "via": "openai"},
            "toolCalls": [{"name": "get_booking", "arguments": {"booking_id": "BK-1001"}}]}


def test_a_returned_trace_that_hides_a_captured_call_is_unscored_naming_both(tmp_path):
    result = run(tmp_path, [FORBIDDEN_CANCEL], hiding_agent).results[0]
    assert result.status == "unscored"
    assert "captured but not returned: cancel_booking" in result.error
    assert "returned but not captured: get_booking" in result.error


def test_a_returned_trace_that_agrees_with_capture_is_graded(tmp_path):
    def honest(case: GoldenCase) -> dict:
        model = client()
        model.chat.completions.create(model="desk-1", tools=TOOLS,
                                      messages=[{"role": "user", "content": "cancel BK-1001"}])
        return {"answer": "Cancelled.", "toolCalls": [{"name": "cancel_booking", "arguments": {"booking_id": "BK-1001"}}]}

    result = run(tmp_path, [FORBIDDEN_CANCEL], honest).results[0]
    assert result.status == "fail"
    assert any(c.name == "forbiddenCalls" and not c.passed for c in result.checks)


def test_an_agent_cannot_claim_a_provenance(tmp_path):
    def claims(case: GoldenCase) -> dict:  # no model call at all
        return {"answer": "Cancelled.", "provenance": {"source": "absent", "problem": "the collector lost it"},
                "toolCalls": [{"name": "cancel_booking", "arguments": {"booking_id": "BK-1001"}}]}

    result = run(tmp_path, [FORBIDDEN_CANCEL], claims).results[0]
    assert result.status == "fail"  # graded on its own returned calls, not excused by its claim
    assert result.reply.provenance is None or result.reply.provenance.source == "returned"


def test_a_returned_reply_without_calls_takes_the_captured_ones():
    target = captured_target(hiding_agent_without_calls, ("openai",))
    import asyncio

    reply = asyncio.run(target(GoldenCase(id="x", question="q")))
    assert [c.name for c in reply.tool_calls] == ["cancel_booking"]
    assert reply.answer == "I looked." and reply.retrieved_sources == ("policy.md",)
    assert reply.provenance is not None and reply.provenance.source == "captured"


def hiding_agent_without_calls(case: GoldenCase) -> dict:
    client().chat.completions.create(model="desk-1", tools=TOOLS, messages=[{"role": "user", "content": "cancel BK-1"}])
    return {"answer": "I looked.", "retrievedSources": ["policy.md"]}


# -- expectedArguments gates (it fed only a metric) --

def test_expected_arguments_gate_the_tool_argument_check():
    from tracegrade.core.trace import ToolCall
    from tracegrade.checks.builtin import run_checks

    case = GoldenCase.model_validate({"id": "r", "question": "Refund 75", "expectedTool": "refund",
                                      "expectedArguments": {"booking_id": "BK-1", "amount": 75}})
    def verdict(arguments):
        reply = Reply(answer="ok", tool_calls=(ToolCall(name="refund", arguments=arguments),))
        return next(c for c in run_checks(case, reply) if c.name == "toolArgument")
    assert verdict({"booking_id": "BK-1", "amount": 75}).passed
    wrong = verdict({"booking_id": "BK-1", "amount": 50})
    assert not wrong.passed and wrong.code == "wrong_argument" and "amount" in wrong.detail
    assert not verdict({"booking_id": "BK-2", "amount": 75}).passed


def test_a_returned_conversation_that_repeats_a_call_id_counts_it_once():
    from tracegrade.core.trace import ToolCall
    from tracegrade.agent.turns import join

    cancel = ToolCall(name="cancel_booking", arguments={"booking_id": "BK-1"}, id="call_1", round=0)
    read = ToolCall(name="get_booking", arguments={"booking_id": "BK-1"}, id="call_2", round=1)
    joined = join(["cancel it", "when was it?"], [Reply(answer="Cancelled.", tool_calls=(cancel,)),
                                                 Reply(answer="12 May.", tool_calls=(cancel, read))])
    assert [(c.id, c.turn) for c in joined.tool_calls] == [("call_1", 1), ("call_2", 2)]


def test_a_disagreement_about_huge_calls_still_names_both_within_the_reasons_limit():
    from tracegrade.agent.capture.target import _one_source
    from tracegrade.core.trace import Provenance, ToolCall

    big = [ToolCall(name="t" * 300, arguments={"x": "y" * 5000, "n": n}) for n in range(9)]
    captured = Reply(answer="a", tool_calls=tuple(big), provenance=Provenance(source="captured", via="openai"))
    reply = _one_source(Reply(answer="a", tool_calls=(ToolCall(name="other"),)), captured)
    assert "captured but not returned" in reply.calls_unusable() and "and 4 more" in reply.calls_unusable()


def test_an_agent_behind_http_gets_its_trial_as_a_header(tmp_path):
    seen: list[str] = []
    app = FastAPI()

    @app.post("/ask")
    async def ask(request: Request) -> dict:
        seen.append(request.headers.get("x-tracegrade-trial", ""))
        return {"answer": "ok"}

    with serving(app) as url:
        run = tracegrade.evaluate([{"id": "h", "question": "q"}], f"{url}/ask", judge=None,
                                  settings=tracegrade.RunSettings(checks_only=True, repeat=2),
                                  store=f"sqlite:///{tmp_path}/r.db")
    assert sorted(seen) == [f"{run.manifest.run_id}/h/{r}" for r in (0, 1)]
