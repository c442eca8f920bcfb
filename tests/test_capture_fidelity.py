"""A verdict only on the agent's own, whole trace: capture never loses, mixes or doubles
a call silently (issue 33). The agent is a clinic's booking desk written with the openai
SDK, as a user would write it; its model is a scripted HTTP endpoint behind the SDK's
own transport."""

from __future__ import annotations

import asyncio
import json
import random
import time

import httpx
import pytest
from hypothesis import given, settings as hsettings, strategies as st

import tracegrade
from tracegrade.agent.capture import recorder as recorder_module
from tracegrade.agent.capture.target import NothingRecordedWarning, captured_target
from tracegrade.case.schema import GoldenCase

openai = pytest.importorskip("openai")

TOOLS = [{"type": "function", "function": {"name": name, "parameters": {
    "type": "object", "properties": {"patient": {"type": "string"}}, "required": ["patient"]}}}
    for name in ("find_slot", "cancel_appointment")]


def patient_of(messages: list[dict]) -> str:
    question = next(m["content"] for m in messages if m["role"] == "user")
    return question.rstrip("?").split()[-1]


def desk_model(request: httpx.Request) -> httpx.Response:
    """Asks find_slot (or, for a question that says cancel, cancel_appointment) for the
    patient named last in the question, then answers with the tool's result."""
    messages = json.loads(request.content)["messages"]
    patient = patient_of(messages)
    if messages[-1]["role"] == "user":
        tool = "cancel_appointment" if "cancel" in messages[-1]["content"] else "find_slot"
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{patient}", "type": "function",
            "function": {"name": tool, "arguments": json.dumps({"patient": patient})}}]}
    else:
        message = {"role": "assistant", "content": f"Done: {messages[-1]['content']}."}
    return httpx.Response(200, json={
        "id": "x", "object": "chat.completion", "created": 0, "model": "desk-1",
        "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}})


def run_tool(name: str, patient: str) -> str:
    return f"{name} for {patient}: Tuesday 10:00"


def sync_client() -> object:
    return openai.OpenAI(api_key="sk-test", base_url="http://desk.test/v1",
                         http_client=httpx.Client(transport=httpx.MockTransport(desk_model)))


def async_client(handler=desk_model) -> object:
    return openai.AsyncOpenAI(api_key="sk-test", base_url="http://desk.test/v1",
                              http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))


def desk_agent(client, rounds: int = 8):
    """A tool loop that appends each tool result, and at its round limit stops with the
    last result appended (the shape that once recorded the last call twice)."""
    def answer(question: str) -> str:
        messages = [{"role": "user", "content": question}]
        for _ in range(rounds):
            message = client.chat.completions.create(model="desk-1", messages=messages, tools=TOOLS).choices[0].message
            if not message.tool_calls:
                return message.content
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                result = run_tool(call.function.name, **json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        return "I ran out of rounds."
    return answer


def case(patient: str, **fields) -> GoldenCase:
    return GoldenCase.model_validate({"id": f"c-{patient}", "question": f"Book a slot for {patient}?", **fields})


FORBIDDEN_ONLY = {"calls": {"forbidden": [{"tool": "cancel_appointment"}]}}


def evaluate(cases, agent, tmp_path, capture=(), concurrency=4):
    return tracegrade.evaluate(cases, agent, judge=None, capture=capture, store=f"sqlite:///{tmp_path}/r.db",
                               settings=tracegrade.RunSettings(concurrency=concurrency))


def test_a_forbidden_write_is_never_passed_when_no_capture_recorded_it(tmp_path):
    """The agent cancels (forbidden); without --capture nothing recorded it: unscored, never a pass."""
    cancel = GoldenCase.model_validate({"id": "cancel", "question": "Please cancel for Ada?", **FORBIDDEN_ONLY})
    run = evaluate([cancel], desk_agent(sync_client()), tmp_path)
    result = run.results[0]
    assert result.status == "unscored", result
    assert "forbiddenCalls not judged" in result.error and "no --capture" in result.error
    assert result.reply.provenance.source == "absent"


def test_a_wrong_capture_source_says_so_once_and_leaves_call_checks_unjudged(tmp_path):
    cases = [GoldenCase.model_validate({"id": f"cancel-{p}", "question": f"Please cancel for {p}?",
                                        **FORBIDDEN_ONLY}) for p in ("Ada", "Bo", "Cy")]
    with pytest.warns(NothingRecordedWarning) as warned:
        run = evaluate(cases, desk_agent(sync_client()), tmp_path, capture=("anthropic",))
    assert [r.status for r in run.results] == ["unscored"] * 3
    assert all("with --capture anthropic" in r.error for r in run.results)
    assert len([w for w in warned if w.category is NothingRecordedWarning]) == 1


def test_the_same_run_with_the_right_capture_fails_the_forbidden_write(tmp_path):
    cancel = GoldenCase.model_validate({"id": "cancel", "question": "Please cancel for Ada?", **FORBIDDEN_ONLY})
    run = evaluate([cancel], desk_agent(sync_client()), tmp_path, capture=("openai",))
    assert run.results[0].status == "fail"
    assert run.results[0].reply.provenance.model_dump() == {"source": "captured", "via": "openai", "problem": ""}


def test_answer_only_datasets_keep_working_without_capture(tmp_path):
    only_answer = case("Ada", answerMustInclude=["Tuesday 10:00"])
    run = evaluate([only_answer], desk_agent(sync_client()), tmp_path)
    assert run.results[0].status == "pass", run.results[0]


def test_a_call_appended_after_the_last_round_is_recorded_once(tmp_path):
    """The agent stops at its round limit right after appending the tool result: the request
    recorded is the list as it was sent, so the last call is not seen twice."""
    run = evaluate([case("Ada", calls={"expected": [{"tool": "find_slot"}]})], desk_agent(sync_client(), rounds=1),
                   tmp_path, capture=("openai",))
    result = run.results[0]
    assert [c.name for c in result.reply.tool_calls] == ["find_slot"]
    assert result.status == "pass", result.checks


def test_past_the_cap_the_answer_is_the_last_calls_and_the_trace_says_it_was_cut(tmp_path, monkeypatch):
    monkeypatch.setattr(recorder_module, "MAX_EXCHANGES", 5)

    def looping(request: httpx.Request) -> httpx.Response:
        step = len(json.loads(request.content)["messages"])
        return httpx.Response(200, json={"id": "x", "object": "chat.completion", "created": 0, "model": "desk-1",
                                         "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                             "role": "assistant", "content": f"answer to step {step}"}}]})
    client = openai.OpenAI(api_key="sk-test", base_url="http://desk.test/v1",
                           http_client=httpx.Client(transport=httpx.MockTransport(looping)))

    def chatty(question: str) -> None:
        messages = [{"role": "user", "content": question}]
        for _ in range(12):
            said = client.chat.completions.create(model="desk-1", messages=messages).choices[0].message.content
            messages += [{"role": "assistant", "content": said}, {"role": "user", "content": "more"}]

    run = evaluate([case("Ada", calls={"forbidden": [{"tool": "cancel_appointment"}]})], chatty, tmp_path,
                   capture=("openai",))
    result = run.results[0]
    assert result.reply.answer == "answer to step 23"
    assert result.status == "unscored" and "the trace was cut" in result.error and "12 model calls" in result.error


class BatchingClient:
    """A batching client as agents write them: requests go on a queue that one long-lived
    worker task drains; the worker is started lazily, inside whichever case asks first."""

    def __init__(self, client) -> None:
        self.client, self.queue, self.worker = client, None, None

    async def create(self, **request):
        if self.worker is None:
            self.queue = asyncio.Queue()
            self.worker = asyncio.get_running_loop().create_task(self._drain())
        done = asyncio.get_running_loop().create_future()
        await self.queue.put((request, done))
        return await done

    async def _drain(self):
        while True:
            request, done = await self.queue.get()
            done.set_result(await self.client.chat.completions.create(**request))


def batched_agent(batcher: BatchingClient):
    async def answer(question: str) -> str:
        messages = [{"role": "user", "content": question}]
        while True:
            message = (await batcher.create(model="desk-1", messages=messages, tools=TOOLS)).choices[0].message
            if not message.tool_calls:
                return message.content
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": run_tool(call.function.name, **json.loads(call.function.arguments))})
    return answer


@pytest.mark.parametrize("concurrency", [1, 6])
def test_calls_through_a_worker_task_a_case_created_are_nobodys_verdict(tmp_path, concurrency):
    """The worker carries the first case's context into every call it makes, for whichever
    case asked: no case may fail or pass on calls that are not provably its own."""
    patients = [f"P{i}" for i in range(12)]
    cases = [case(p, calls={"expected": [{"tool": "find_slot", "arguments": {"patient": p}}]}) for p in patients]
    with pytest.warns(NothingRecordedWarning):
        run = evaluate(cases, batched_agent(BatchingClient(async_client())), tmp_path, capture=("openai",),
                       concurrency=concurrency)
    statuses = {r.case_id: r.status for r in run.results}
    assert set(statuses.values()) == {"unscored"}, statuses
    holders = [r for r in run.results if r.reply.provenance.source == "captured"]
    assert len(holders) == 1 and "asyncio task that a case created and that outlived it" in holders[0].error
    later = [r for r in run.results if r.reply.provenance.source == "absent"]
    assert len(later) == 11 and all("not judged" in r.error for r in later)
    if concurrency == 1:  # every later case started after the worker was seen: each names it
        assert all("asyncio task" in r.error for r in later)


def test_a_sync_agent_on_a_loop_bound_client_gets_the_framework_hint(tmp_path):
    """A client object bound to the first event loop it met, used from a sync agent that
    runs its own loop per call (what a framework's run_sync does)."""
    shared = asyncio.Event()

    async def ask_model() -> None:
        try:
            await asyncio.wait_for(shared.wait(), 0.01)
        except TimeoutError:
            pass

    def agent(question: str) -> str:
        asyncio.run(ask_model())
        return "ok"

    run = evaluate([case("Ada"), case("Bo")], agent, tmp_path, concurrency=1)
    failed = [r for r in run.results if r.status == "error"]
    assert failed and "bound to a different event loop" in failed[0].error
    assert "make the target `async def`" in failed[0].error and "--concurrency 1" in failed[0].error


@hsettings(max_examples=12, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["direct", "child", "thread"]), st.integers(0, 3)),
                min_size=2, max_size=8), st.integers(0, 2**16))
def test_any_interleaving_of_concurrent_cases_gives_each_case_exactly_its_own_calls(shapes, seed):
    """N cases at once, each calling the SDK from its own task, from child tasks it awaits,
    or from a worker thread, with random pauses: each gets its own calls, or says it cannot."""
    jitter = random.Random(seed)
    pauses = {i: [jitter.random() * 0.004 for _ in range(8)] for i in range(len(shapes))}
    client = async_client()
    sync = sync_client()

    def make(index: int, how: str, rounds: int):
        patient = f"N{index}"

        async def one_call() -> None:
            await asyncio.sleep(pauses[index][0])
            if how == "thread":
                await asyncio.to_thread(sync.chat.completions.create, model="desk-1", tools=TOOLS,
                                        messages=[{"role": "user", "content": f"Book a slot for {patient}?"}])
            else:
                await client.chat.completions.create(model="desk-1", tools=TOOLS, messages=[
                    {"role": "user", "content": f"Book a slot for {patient}?"}])

        async def answer(question: str) -> str:
            for _ in range(rounds + 1):
                if how == "child":
                    await asyncio.gather(one_call(), one_call())
                else:
                    await one_call()
            return "done"
        return answer

    async def all_cases():
        targets = [captured_target(make(i, how, rounds), ("openai",)) for i, (how, rounds) in enumerate(shapes)]
        return await asyncio.gather(*(t(case(f"N{i}")) for i, t in enumerate(targets)))

    replies = asyncio.run(all_cases())
    for index, ((how, rounds), reply) in enumerate(zip(shapes, replies)):
        if reply.calls_unusable():
            continue  # a case that says it cannot tell is allowed; a wrong one is not
        calls = reply.tool_calls
        assert {c.arguments["patient"] for c in calls} <= {f"N{index}"}, (index, how, calls)
        assert len(reply.steps) == (rounds + 1) * (2 if how == "child" else 1), (index, how, len(reply.steps))


def test_a_thread_pool_without_the_context_records_nothing_and_says_so(tmp_path):
    """Calls from a plain thread pool (no copied context) are nobody's: the case says nothing was recorded."""
    from concurrent.futures import ThreadPoolExecutor
    pool = ThreadPoolExecutor(2)
    agent = desk_agent(sync_client())

    def pooled(question: str) -> str:
        return pool.submit(agent, question).result()

    cancel = GoldenCase.model_validate({"id": "cancel", "question": "Please cancel for Ada?", **FORBIDDEN_ONLY})
    with pytest.warns(NothingRecordedWarning):
        run = evaluate([cancel], pooled, tmp_path, capture=("openai",))
    assert run.results[0].status == "unscored" and "no model call was recorded" in run.results[0].error


AGENT_MODULE = '''
import json, httpx, openai

def model(request):
    messages = json.loads(request.content)["messages"]
    if messages[-1]["role"] == "user":
        said = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "cancel_booking", "arguments": '{"ref": "B-7"}'}}]}
    else:
        said = {"role": "assistant", "content": "Cancelled B-7."}
    return httpx.Response(200, json={"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                     "choices": [{"index": 0, "finish_reason": "stop", "message": said}]})

client = openai.OpenAI(api_key="sk-x", base_url="http://m.test/v1",
                       http_client=httpx.Client(transport=httpx.MockTransport(model)))

def answer(question: str) -> str:
    messages = [{"role": "user", "content": question}]
    while True:
        said = client.chat.completions.create(model="m", messages=messages).choices[0].message
        if not said.tool_calls:
            return said.content
        messages.append(said.model_dump(exclude_none=True))
        messages += [{"role": "tool", "tool_call_id": c.id, "content": "ok"} for c in said.tool_calls]
'''


@pytest.mark.slow  # a CLI process per run
@pytest.mark.parametrize("capture, exit_code", [([], 2), (["--capture", "anthropic"], 2), (["--capture", "openai"], 1)])
def test_the_cli_never_exits_0_on_a_forbidden_write_it_did_not_see(tmp_path, capture, exit_code):
    """`tracegrade run` as a user runs it: without the right --capture the forbidden write is
    unscored (exit 2) with one warning line; with it, the case fails (exit 1)."""
    import subprocess
    import sys

    (tmp_path / "booking_desk.py").write_text(AGENT_MODULE)
    (tmp_path / "data.json").write_text(json.dumps({"cases": [
        {"id": "no-cancel", "question": "What is booking B-7?", "calls": {"forbidden": [{"tool": "cancel_booking"}]}}]}))
    done = subprocess.run([sys.executable, "-m", "tracegrade.cli", "run", "data.json", "--target", "booking_desk:answer",
                           "--checks-only", *capture], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == exit_code, done.stderr
    warned = [line for line in done.stderr.splitlines() if "no model call was recorded" in line]
    if capture == ["--capture", "anthropic"]:
        assert len(warned) == 1 and warned[0].startswith("tracegrade: warning: ")
    if exit_code == 2:
        assert "forbiddenCalls not judged" in done.stdout


def test_a_capture_source_whose_sdk_is_missing_is_the_runs_one_error(monkeypatch):
    """Found when the target is built (exit 2 with one line), not as an error in every case."""
    import sys

    from tracegrade.core.errors import ConfigError

    for module in ("anthropic.resources.messages.messages", "anthropic.resources.messages"):  # as if not installed
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ConfigError, match=r"--capture anthropic needs the 'anthropic' package"):
        captured_target(desk_agent(sync_client()), ("anthropic",))


def test_a_case_with_thousands_of_spans_does_not_starve_the_others(tmp_path, otel_globals_restored):
    """One agent emits 2,000 chat + tool span pairs (GenAI conventions) under --capture otel
    while 6 quick cases run beside it: putting the long trace together neither stalls the
    loop nor takes the others past their deadline (before: 4,000 pairs blocked it for 34 s)."""
    from opentelemetry import trace as otel_trace

    tracer = otel_trace.get_tracer("desk-spans")
    emitted = asyncio.Event()  # WHY: the quick cases are still running while the long trace is put together
    emitted_at: list[float] = []
    woke: list[float] = []

    async def agent(question: str) -> str:
        if "many" not in question:
            await emitted.wait()
            await asyncio.sleep(0.3)
            woke.append(time.perf_counter() - emitted_at[0])  # 0.3 s unless the loop was held
            return "quick"
        with tracer.start_as_current_span("invoke_agent", attributes={"gen_ai.operation.name": "invoke_agent",
                                                                         "input.value": question}):
            for i in range(2000):
                asked = [{"role": "assistant", "parts": [{"type": "tool_call", "id": f"c{i}", "name": "find_slot",
                                                          "arguments": {"patient": str(i)}}]}]
                with tracer.start_as_current_span("chat", attributes={
                        "gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps(asked)}):
                    pass
                with tracer.start_as_current_span("execute_tool find_slot", attributes={
                        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "find_slot",
                        "gen_ai.tool.call.id": f"c{i}", "gen_ai.tool.call.result": "ok"}):
                    pass
                if i % 200 == 0:
                    await asyncio.sleep(0)
        emitted_at.append(time.perf_counter())
        emitted.set()
        return "many done"

    cases = [case("Many", question="Book many slots for Many?",
                  calls={"expected": [{"tool": "find_slot", "arguments": {"patient": "0"}}]}),
             *[case(f"Q{i}", calls={"forbidden": [{"tool": "cancel_appointment"}]}) for i in range(6)]]
    run = tracegrade.evaluate(cases, agent, judge=None, capture=("otel",), store=f"sqlite:///{tmp_path}/r.db",
                              settings=tracegrade.RunSettings(concurrency=7, timeout_s=60))
    by_id = {r.case_id: r for r in run.results}
    assert len(by_id["c-Many"].reply.tool_calls) == 2000 and by_id["c-Many"].status != "error"
    quick = [by_id[f"c-Q{i}"] for i in range(6)]
    assert {r.status for r in quick} == {"unscored"}  # they ran, emitted no span: nothing to judge their calls on
    assert len(woke) == 6 and max(woke) < 2.0, [round(w, 2) for w in woke]
