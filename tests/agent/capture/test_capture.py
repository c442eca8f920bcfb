"""Capture (agent/capture/): an agent written with the openai / anthropic SDK is graded with no
hand-written trace; concurrent cases never mix their calls; capture never loses, mixes or doubles a
call silently (issue 33); and capture_reply with the tracegrade_captured fixture, for a test that
calls the agent itself."""

from __future__ import annotations

import asyncio
import importlib.util
import re
import json
import threading
import random
import time
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings as hsettings, strategies as st

import tracegrade
from tracegrade.agent.capture.target import captured_target, wants_question, NothingRecordedWarning
from tracegrade.core.errors import AgentError, ConfigError
from tracegrade.case.schema import GoldenCase
from tracegrade.agent.capture import recorder as recorder_module
from tracegrade import assert_checks_pass, capture_reply


# --- agents on the openai and anthropic SDKs, graded with no hand-written trace ---------------------
# Capture: an agent written with the openai / anthropic SDK is graded with no
# hand-written trace; concurrent cases never mix their calls.


openai = pytest.importorskip("openai")
# WHY not present on every SDK version: openai < 1.66 has no Responses API (CI runs these tests
# at the lowest supported SDK too, scripts/sdk-range.sh)
needs_responses = pytest.mark.skipif(importlib.util.find_spec("openai.resources.responses") is None,
                                     reason="this openai SDK predates the Responses API")


class _AnthropicHTTP:
    """The HTTP library the installed anthropic SDK speaks: httpx2 from 2.x, httpx before.
    WHY resolved on use: importing the SDK costs ~3 s of CPU (anthropic_sdk below)."""

    def __getattr__(self, name: str):
        import anthropic._base_client as base

        return getattr(getattr(base, "httpx2", None) or base.httpx, name)


anthropic_http = _AnthropicHTTP()


def anthropic_sdk():
    """The anthropic SDK, imported by the tests that use it. WHY not at the top: its import
    costs ~3 s of CPU, and each worker of the suite collects this module (test_capturing
    imports it too), whether it runs these tests or not."""
    return pytest.importorskip("anthropic")

WEATHER_TOOL = {"type": "function", "function": {"name": "get_weather", "description": "weather of a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}


def city_of(question: str) -> str:
    return question.rstrip("?").split()[-1]


def chat_model(request: httpx.Request) -> httpx.Response:
    """A scripted chat-completions model: asks get_weather for the question's last
    word, then answers with the tool's result. Slow enough that cases overlap."""
    body = json.loads(request.content)
    messages = body["messages"]
    question = next(m["content"] for m in messages if m["role"] == "user")
    last = messages[-1]
    if last["role"] == "user":
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{city_of(question)}", "type": "function",
             "function": {"name": "get_weather", "arguments": json.dumps({"city": city_of(question)})}}]}
    else:
        message = {"role": "assistant", "content": f"It is {last['content']}."}
    return httpx.Response(200, json={
        "id": "x", "object": "chat.completion", "created": 0, "model": "scripted-1",
        "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})


def weather(city: str) -> str:
    return f"sunny in {city}"


def openai_agent(client):
    def answer(question: str) -> str:
        messages = [{"role": "system", "content": "You answer weather questions."},
                    {"role": "user", "content": question}]
        while True:
            response = client.chat.completions.create(model="scripted-1", messages=messages, tools=[WEATHER_TOOL])
            message = response.choices[0].message
            if not message.tool_calls:
                return message.content
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                result = weather(**json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return answer


def cases(n: int) -> list[GoldenCase]:
    cities = ["Paris", "Oslo", "Rome", "Lima", "Cairo", "Quito", "Hanoi", "Dakar", "Minsk", "Perth"][:n]
    return [GoldenCase.model_validate({"id": f"w{i}", "question": f"What is the weather in {c}?",
                                       "calls": {"expected": [{"tool": "get_weather", "arguments": {"city": c}}]},
                                       "answerMustInclude": [f"sunny in {c}"]})
            for i, c in enumerate(cities)]


def test_an_openai_sdk_agent_is_graded_with_capture_at_concurrency_8(tmp_path):
    client = openai.OpenAI(api_key="sk-test", base_url="http://model.test/v1",
                           http_client=httpx.Client(transport=httpx.MockTransport(chat_model)))
    run = tracegrade.evaluate(cases(10), openai_agent(client), judge=None, capture=("openai",),
                              settings=tracegrade.RunSettings(concurrency=8), store=f"sqlite:///{tmp_path}/r.db")
    assert [r.passed for r in run.results] == [True] * 10, [r.checks for r in run.results if not r.passed]
    for result in run.results:
        city = city_of(result.question)
        calls = result.reply.tool_calls
        assert [(c.name, c.arguments, c.result, c.id) for c in calls] == [
            ("get_weather", {"city": city}, f"sunny in {city}", f"call_{city}")]
        assert result.reply.usage.input_tokens == 20 and len(result.reply.steps) == 2
        assert result.reply.model == "scripted-1"


def test_a_case_whose_calls_are_wrong_fails_on_its_own_calls(tmp_path):
    client = openai.OpenAI(api_key="sk-test", base_url="http://model.test/v1",
                           http_client=httpx.Client(transport=httpx.MockTransport(chat_model)))
    wrong = GoldenCase.model_validate({"id": "bad", "question": "What is the weather in Oslo?",
                                       "calls": {"expected": [{"tool": "get_weather", "arguments": {"city": "Bergen"}}]}})
    run = tracegrade.evaluate([wrong, *cases(2)], openai_agent(client), judge=None, capture=("openai",),
                              settings=tracegrade.RunSettings(concurrency=3), store=f"sqlite:///{tmp_path}/r.db")
    verdicts = {r.case_id: r.passed for r in run.results}
    assert verdicts == {"bad": False, "w0": True, "w1": True}


def test_an_async_openai_agent_with_streaming_is_captured():
    def streamed(request: httpx.Request) -> httpx.Response:
        reply = json.loads(chat_model(request).content)["choices"][0]["message"]
        chunks = []
        if reply.get("tool_calls"):
            call = reply["tool_calls"][0]
            half = len(call["function"]["arguments"]) // 2
            chunks.append({"index": 0, "id": call["id"], "type": "function",
                           "function": {"name": "get_weather", "arguments": call["function"]["arguments"][:half]}})
            chunks.append({"index": 0, "function": {"arguments": call["function"]["arguments"][half:]}})
            deltas = [{"tool_calls": [c]} for c in chunks]
        else:
            deltas = [{"content": reply["content"][:5]}, {"content": reply["content"][5:]}]
        lines = "".join("data: " + json.dumps({"id": "x", "object": "chat.completion.chunk", "created": 0,
                                               "model": "scripted-1", "choices": [{"index": 0, "delta": d}]}) + "\n\n"
                        for d in deltas) + "data: [DONE]\n\n"
        return httpx.Response(200, content=lines.encode(), headers={"content-type": "text/event-stream"})

    client = openai.AsyncOpenAI(api_key="sk-test", base_url="http://model.test/v1",
                                http_client=httpx.AsyncClient(transport=httpx.MockTransport(streamed)))

    async def answer(question: str) -> None:
        messages = [{"role": "user", "content": question}]
        for _ in range(3):
            stream = await client.chat.completions.create(model="m", messages=messages, tools=[WEATHER_TOOL],
                                                          stream=True)
            text, calls = "", {}
            async for chunk in stream:
                delta = chunk.choices[0].delta
                text += delta.content or ""
                for call in delta.tool_calls or []:
                    slot = calls.setdefault(call.index, {"id": call.id, "args": ""})
                    slot["args"] += call.function.arguments or ""
            if not calls:
                return None  # the captured last assistant message is the answer
            messages.append({"role": "assistant", "tool_calls": [
                {"id": c["id"], "type": "function", "function": {"name": "get_weather", "arguments": c["args"]}}
                for c in calls.values()]})
            for c in calls.values():
                messages.append({"role": "tool", "tool_call_id": c["id"], "content": weather(**json.loads(c["args"]))})

    target = captured_target(answer, ("openai",))
    reply = asyncio.run(target(cases(1)[0]))
    assert reply.answer == "It is sunny in Paris."
    assert [(c.name, c.arguments, c.result) for c in reply.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "sunny in Paris")]


def anthropic_model(request):
    body = json.loads(request.content)
    last = body["messages"][-1]
    question = body["messages"][0]["content"]
    if isinstance(last["content"], str):
        content = [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": city_of(question)}}]
    else:
        content = [{"type": "text", "text": f"It is {last['content'][0]['content']}."}]
    return anthropic_http.Response(200, json={"id": "m", "type": "message", "role": "assistant", "model": "claude-scripted",
                                     "content": content, "stop_reason": "end_turn",
                                     "usage": {"input_tokens": 7, "output_tokens": 3}})


def test_an_anthropic_sdk_agent_is_captured_and_its_returned_answer_wins():
    anthropic = anthropic_sdk()
    client = anthropic.Anthropic(api_key="k", base_url="http://model.test",
                                 http_client=anthropic_http.Client(transport=anthropic_http.MockTransport(anthropic_model)))

    def answer(case):  # takes the case, returns its own wording of the answer
        messages = [{"role": "user", "content": case.question}]
        response = client.messages.create(model="c", max_tokens=100, messages=messages)
        use = response.content[0]
        messages += [{"role": "assistant", "content": [use.model_dump()]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                                   "content": weather(**use.input)}]}]
        client.messages.create(model="c", max_tokens=100, messages=messages)
        return "Mine: sunny."

    reply = asyncio.run(captured_target(answer, ("anthropic",))(cases(1)[0]))
    assert reply.answer == "Mine: sunny."
    assert [(c.name, c.arguments, c.result, c.id) for c in reply.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "sunny in Paris", "toolu_1")]
    assert reply.usage.input_tokens == 14 and reply.model == "claude-scripted"


def _sse(events: list[dict]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def anthropic_streamed(request):
    """anthropic_model's replies, as the events of a streamed message."""
    body = json.loads(anthropic_model(request).content)
    events = [{"type": "message_start", "message": {**body, "content": [], "usage": {"input_tokens": 7,
                                                                                   "output_tokens": 1}}}]
    for index, block in enumerate(body["content"]):
        if block["type"] == "tool_use":
            events.append({"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}})
            raw = json.dumps(block["input"])
            events += [{"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": part}} for part in (raw[:5], raw[5:])]
        else:
            events.append({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
            events += [{"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": part}}
                       for part in (block["text"][:6], block["text"][6:])]
        events.append({"type": "content_block_stop", "index": index})
    events += [{"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
               {"type": "message_stop"}]
    return anthropic_http.Response(200, content=_sse(events), headers={"content-type": "text/event-stream"})


def test_a_streaming_anthropic_agent_is_captured():
    anthropic = anthropic_sdk()
    client = anthropic.Anthropic(api_key="k", base_url="http://model.test",
                                 http_client=anthropic_http.Client(transport=anthropic_http.MockTransport(anthropic_streamed)))

    def streamed(messages):
        blocks: dict[int, dict] = {}
        for event in client.messages.create(model="c", max_tokens=100, messages=messages, stream=True):
            if event.type == "content_block_start":
                blocks[event.index] = event.content_block.model_dump()
            elif event.type == "content_block_delta" and event.delta.type == "text_delta":
                blocks[event.index]["text"] += event.delta.text
            elif event.type == "content_block_delta":
                blocks[event.index]["partial"] = blocks[event.index].get("partial", "") + event.delta.partial_json
        return [blocks[i] for i in sorted(blocks)]

    def answer(question: str) -> None:  # returns nothing: the captured answer is the reply's
        messages = [{"role": "user", "content": question}]
        use = streamed(messages)[0]
        arguments = json.loads(use.pop("partial"))
        messages += [{"role": "assistant", "content": [{**use, "input": arguments}]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use["id"],
                                                   "content": weather(**arguments)}]}]
        streamed(messages)

    reply = asyncio.run(captured_target(answer, ("anthropic",))(cases(1)[0]))
    assert [(c.name, c.arguments, c.result, c.id) for c in reply.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "sunny in Paris", "toolu_1")]
    assert reply.answer == "It is sunny in Paris."
    assert reply.usage.input_tokens == 14 and reply.usage.output_tokens == 6 and reply.model == "claude-scripted"


def _tool_round(messages: list, message) -> None:
    use = message.content[0]
    messages += [{"role": "assistant", "content": [use.model_dump()]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                               "content": weather(**use.input)}]}]


def test_an_agent_on_the_anthropic_stream_helper_is_captured_sync_and_async():
    anthropic = anthropic_sdk()
    transport = anthropic_http.MockTransport(anthropic_streamed)
    client = anthropic.Anthropic(api_key="k", base_url="http://model.test", http_client=anthropic_http.Client(transport=transport))
    aclient = anthropic.AsyncAnthropic(api_key="k", base_url="http://model.test",
                                       http_client=anthropic_http.AsyncClient(transport=transport))

    def answer(question: str) -> None:
        messages = [{"role": "user", "content": question}]
        with client.messages.stream(model="c", max_tokens=100, messages=messages) as stream:
            _tool_round(messages, stream.get_final_message())
        with client.messages.stream(model="c", max_tokens=100, messages=messages) as stream:
            "".join(stream.text_stream)

    async def answer_async(question: str) -> None:
        messages = [{"role": "user", "content": question}]
        async with aclient.messages.stream(model="c", max_tokens=100, messages=messages) as stream:
            _tool_round(messages, await stream.get_final_message())
        async with aclient.messages.stream(model="c", max_tokens=100, messages=messages) as stream:
            await stream.get_final_text()

    for agent in (answer, answer_async):
        reply = asyncio.run(captured_target(agent, ("anthropic",))(cases(1)[0]))
        assert [(c.name, c.arguments, c.result, c.id) for c in reply.tool_calls] == [
            ("get_weather", {"city": "Paris"}, "sunny in Paris", "toolu_1")], agent.__name__
        assert reply.answer == "It is sunny in Paris." and reply.usage.input_tokens == 14, agent.__name__


def test_a_sync_target_runs_off_the_event_loop():
    """Two sync agents that each wait for the other can only finish if they run at once."""
    barrier = threading.Barrier(2, timeout=10)

    def answer(question: str) -> str:
        barrier.wait()
        return "ok"

    target = captured_target(answer, ())

    async def both():
        return await asyncio.gather(target(cases(2)[0]), target(cases(2)[1]))

    assert [r.answer for r in asyncio.run(both())] == ["ok", "ok"]


def test_nothing_returned_and_nothing_captured_is_a_named_agent_error():
    with pytest.raises(AgentError, match="returned nothing and no model call was captured"):
        asyncio.run(captured_target(lambda question: None, ("openai",))(cases(1)[0]))


def test_a_wrong_return_type_is_named():
    with pytest.raises(AgentError, match="returned a list"):
        asyncio.run(captured_target(lambda question: ["x"], ())(cases(1)[0]))


def test_an_unknown_capture_source_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown capture source 'langchain'"):
        captured_target(lambda q: "x", ("langchain",))


def test_the_question_or_the_case_is_given_by_the_signature():
    def by_name(question): ...
    def by_type(q2: str): ...
    def by_case(case): ...
    assert (wants_question(by_name), wants_question(by_type), wants_question(by_case)) == (True, True, False)


def test_calls_outside_a_case_are_not_recorded_and_the_hook_is_removed_after():
    from openai.resources.chat import Completions

    original = Completions.__dict__["create"]  # WHY the class's own entry: an instrumentor's wrapper binds anew each read
    client = openai.OpenAI(api_key="sk-test", base_url="http://model.test/v1",
                           http_client=httpx.Client(transport=httpx.MockTransport(chat_model)))
    reply = asyncio.run(captured_target(openai_agent(client), ("openai",))(cases(1)[0]))
    assert len(reply.tool_calls) == 1
    assert Completions.__dict__["create"] is original


def responses_model(request: httpx.Request) -> httpx.Response:
    """A scripted Responses API model: a function_call first, then the answer."""
    items = json.loads(request.content)["input"]
    outputs = [i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
    if not outputs:
        city = city_of(items[0]["content"])
        output = [{"type": "function_call", "id": "fc_1", "call_id": f"call_{city}", "name": "get_weather",
                   "arguments": json.dumps({"city": city}), "status": "completed"}]
    else:
        output = [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                   "content": [{"type": "output_text", "text": f"It is {outputs[-1]['output']}.", "annotations": []}]}]
    return httpx.Response(200, json={"id": "resp_1", "object": "response", "created_at": 0, "model": "scripted-r",
                                     "status": "completed", "output": output,
                                     "usage": {"input_tokens": 9, "output_tokens": 4, "total_tokens": 13}})


@needs_responses
def test_a_responses_api_agent_is_captured():
    client = openai.OpenAI(api_key="sk-test", base_url="http://model.test/v1",
                           http_client=httpx.Client(transport=httpx.MockTransport(responses_model)))

    def answer(question: str) -> str:
        items: list = [{"role": "user", "content": question}]
        for _ in range(3):
            response = client.responses.create(model="r", input=items, tools=[{
                "type": "function", "name": "get_weather", "parameters": WEATHER_TOOL["function"]["parameters"]}])
            calls = [o for o in response.output if o.type == "function_call"]
            if not calls:
                return response.output_text
            for c in calls:
                items += [c.model_dump(), {"type": "function_call_output", "call_id": c.call_id,
                                           "output": weather(**json.loads(c.arguments))}]
        return ""

    reply = asyncio.run(captured_target(answer, ("openai",))(cases(2)[1]))
    assert reply.answer == "It is sunny in Oslo."
    assert [(c.name, c.arguments, c.result, c.id) for c in reply.tool_calls] == [
        ("get_weather", {"city": "Oslo"}, "sunny in Oslo", "call_Oslo")]
    assert reply.usage.input_tokens == 18 and reply.model == "scripted-r"


@needs_responses
def test_a_streamed_responses_api_agent_is_captured():
    def streamed(request: httpx.Request) -> httpx.Response:
        response = json.loads(responses_model(request).content)
        events = [{"type": "response.created", "sequence_number": 0, "response": {**response, "status": "in_progress",
                                                                                  "output": []}},
                  {"type": "response.completed", "sequence_number": 1, "response": response}]
        body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
        return httpx.Response(200, content=body.encode(), headers={"content-type": "text/event-stream"})

    client = openai.OpenAI(api_key="sk-test", base_url="http://model.test/v1",
                           http_client=httpx.Client(transport=httpx.MockTransport(streamed)))

    def answer(question: str) -> None:
        items: list = [{"role": "user", "content": question}]
        for _ in range(2):
            final = None
            for event in client.responses.create(model="r", input=items, stream=True):
                final = event.response if event.type == "response.completed" else final
            for c in [o for o in final.output if o.type == "function_call"]:
                items += [c.model_dump(), {"type": "function_call_output", "call_id": c.call_id,
                                           "output": weather(**json.loads(c.arguments))}]

    reply = asyncio.run(captured_target(answer, ("openai",))(cases(2)[1]))
    assert [(c.name, c.arguments, c.result, c.id) for c in reply.tool_calls] == [
        ("get_weather", {"city": "Oslo"}, "sunny in Oslo", "call_Oslo")]
    assert reply.answer == "It is sunny in Oslo." and reply.usage.input_tokens == 18


def test_an_openai_message_returned_as_the_reply_is_named_once_with_the_fix(tmp_path):
    def answer(case):
        return {"role": "assistant", "content": "Sunny."}

    with pytest.warns(UserWarning) as warned:
        run = tracegrade.evaluate(cases(3), answer, judge=None, store=f"sqlite:///{tmp_path}/r.db",
                                  settings=tracegrade.RunSettings(concurrency=1))
    assert [r.status for r in run.results] == ["error"] * 3
    assert {r.error for r in run.results} == {
        "agent failed: AgentError: the target's reply is not a Reply: it is a chat message (it has 'role'), not a Reply"}
    shape = [str(w.message) for w in warned if "not a Reply" in str(w.message)]
    assert len(shape) == 1 and "Reply.from_openai_messages" in shape[0]


def test_a_wrong_field_is_named_without_pydantic_noise():
    async def answer(case):
        return {"anwser": "Sunny."}

    with pytest.warns(UserWarning), pytest.raises(AgentError) as raised:
        asyncio.run(captured_target(answer, ())(cases(1)[0]))
    assert str(raised.value) == "the target's reply is not a Reply: answer is missing; anwser is not a Reply field"
    assert "pydantic" not in str(raised.value)


def lookup(city: str) -> str:
    raise ValueError(f"no forecast for {city}")


def test_a_crashing_agent_keeps_its_file_and_line(tmp_path):
    def answer(question: str) -> str:
        return lookup(city_of(question))

    run = tracegrade.evaluate(cases(1), answer, judge=None, store=f"sqlite:///{tmp_path}/r.db")
    [result] = run.results
    assert result.status == "error"
    assert re.fullmatch(r"agent failed: ValueError: no forecast for Paris "
                        r"\(at \S*test_capture\.py:\d+ in lookup <- \S*test_capture\.py:\d+ in answer\)", result.error)


def test_a_hung_sync_agent_is_stopped_by_the_case_timeout_and_the_others_finish(tmp_path):
    release = threading.Event()

    def answer(question: str) -> str:
        if "Paris" in question:
            release.wait(60)  # hangs until the test is over
        return f"sunny in {city_of(question)}"

    try:
        run = tracegrade.evaluate(cases(3), answer, judge=None, store=f"sqlite:///{tmp_path}/r.db",
                                  settings=tracegrade.RunSettings(concurrency=3, timeout_s=0.5))
    finally:
        release.set()
    statuses = {r.case_id: (r.status, r.error) for r in run.results}
    assert statuses["w0"] == ("error", "agent timed out after 0.5 s")
    # they ran: without --capture no call was recorded, so expectedCalls is not judged either way
    assert statuses["w1"][0] == statuses["w2"][0] == "unscored"


def test_evaluate_works_inside_a_running_event_loop(tmp_path):
    """A notebook: the cell already runs in an event loop."""
    async def cell():
        return tracegrade.evaluate(cases(2), lambda question: f"sunny in {city_of(question)}", judge=None,
                                   store=f"sqlite:///{tmp_path}/r.db")

    run = asyncio.run(cell())
    assert [r.reply.answer for r in run.results] == ["sunny in Paris", "sunny in Oslo"]


def test_a_target_wrapped_twice_still_gets_the_case_at_the_outer_layer():
    inner = captured_target(lambda question: f"sunny in {city_of(question)}", ())
    outer = captured_target(inner, ())
    assert asyncio.run(outer(cases(1)[0])).answer == "sunny in Paris"


# --- putting recorded calls together ---------------------------------------------------

def chat_exchange(messages, said):
    from tracegrade.agent.capture.recorder import Exchange

    response = {"model": "scripted-1", "choices": [{"message": said}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}
    return Exchange("openai-chat", {"messages": messages}, response, 0.0, 0.0)


def asked(call_id, city):
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": json.dumps({"city": city})}}]}


def test_a_call_an_agent_trimmed_from_its_history_is_kept_with_its_result():
    from tracegrade.agent.capture.assemble import reply_of
    from tracegrade.agent.capture.recorder import Recorder

    question = {"role": "user", "content": "Weather in Oslo, then Rome?"}
    first, second = asked("c1", "Oslo"), asked("c2", "Rome")
    oslo = {"role": "tool", "tool_call_id": "c1", "content": "sunny in Oslo"}
    rome = {"role": "tool", "tool_call_id": "c2", "content": "rain in Rome"}
    recorder = Recorder(exchanges=[
        chat_exchange([question], first),
        chat_exchange([question, first, oslo], second),
        chat_exchange([question, second, rome], {"role": "assistant", "content": "Oslo sunny, Rome rain."}),  # trimmed
    ])
    reply = reply_of(recorder)
    assert [(c.id, c.arguments, c.result) for c in reply.tool_calls] == [
        ("c1", {"city": "Oslo"}, "sunny in Oslo"), ("c2", {"city": "Rome"}, "rain in Rome")]
    assert reply.answer == "Oslo sunny, Rome rain." and len(reply.steps) == 3 and reply.usage.input_tokens == 9


def test_an_agent_that_sends_its_whole_history_is_read_once_not_once_a_round(monkeypatch):
    from tracegrade.agent.capture import assemble
    from tracegrade.agent.capture.recorder import Recorder

    history, exchanges = [{"role": "user", "content": "Weather everywhere?"}], []
    for n in range(200):
        call = asked(f"c{n}", f"City{n}")
        exchanges.append(chat_exchange(list(history), call))
        history += [call, {"role": "tool", "tool_call_id": f"c{n}", "content": f"sunny {n}"}]
    exchanges.append(chat_exchange(list(history), {"role": "assistant", "content": "Sunny everywhere."}))
    read = []
    real = assemble._conversation
    monkeypatch.setattr(assemble, "_conversation", lambda *given: read.append(1) or real(*given))
    reply = assemble.reply_of(Recorder(exchanges=exchanges))
    assert len(reply.tool_calls) == 200 and reply.tool_calls[199].result == "sunny 199"
    assert len(read) == 1


def test_a_responses_conversation_continued_by_previous_response_id_is_read_whole():
    from tracegrade.agent.capture.assemble import reply_of
    from tracegrade.agent.capture.recorder import Exchange, Recorder

    call = {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": json.dumps({"city": "Oslo"})}
    said = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Sunny in Oslo."}]}
    recorder = Recorder(exchanges=[
        Exchange("openai-responses", {"input": "Weather in Oslo?"}, {"id": "resp_1", "output": [call]}, 0.0, 0.0),
        Exchange("openai-responses", {"previous_response_id": "resp_1", "input": [
            {"type": "function_call_output", "call_id": "c1", "output": "sunny in Oslo"}]},
            {"id": "resp_2", "output": [said]}, 0.0, 0.0),
    ])
    reply = reply_of(recorder)
    assert [(c.id, c.arguments, c.result) for c in reply.tool_calls] == [("c1", {"city": "Oslo"}, "sunny in Oslo")]
    assert reply.answer == "Sunny in Oslo."


def test_an_anthropic_agents_memory_is_context_and_a_shared_one_is_named(tmp_path):
    """An anthropic-SDK agent whose message list outlives the trial (keyed by case id): the second
    trial sends the first one's tool_use back; it is no call of that trial, and the trial says why."""
    anthropic = anthropic_sdk()
    ids = iter(range(1, 1000))

    def memory_model(request):
        body = json.loads(request.content)
        last = body["messages"][-1]
        if isinstance(last["content"], str):
            content = [{"type": "tool_use", "id": f"toolu_{next(ids)}", "name": "get_weather",
                        "input": {"city": city_of(last["content"])}}]
        else:
            content = [{"type": "text", "text": f"It is {last['content'][0]['content']}."}]
        return anthropic_http.Response(200, json={"id": "m", "type": "message", "role": "assistant",
                                                  "model": "claude-scripted", "content": content,
                                                  "stop_reason": "end_turn", "usage": {"input_tokens": 7, "output_tokens": 3}})

    client = anthropic.Anthropic(api_key="k", base_url="http://model.test",
                                 http_client=anthropic_http.Client(transport=anthropic_http.MockTransport(memory_model)))
    memory: dict[str, list] = {}

    def answer(case):
        messages = memory.setdefault(case.id, [])  # the bug a user writes: memory keyed by the case
        messages.append({"role": "user", "content": case.question})
        while True:
            response = client.messages.create(model="c", max_tokens=100, messages=list(messages))
            messages.append({"role": "assistant", "content": [block.model_dump() for block in response.content]})
            use = next((b for b in response.content if b.type == "tool_use"), None)
            if use is None:
                return response.content[0].text
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                                          "content": weather(**use.input)}]})

    run = tracegrade.evaluate([{"id": "w", "question": "Weather in Paris?",
                                "calls": {"expected": [{"tool": "get_weather", "arguments": {"city": "Paris"}}],
                                          "count": "exactly"}}],
                              answer, judge=None, capture=("anthropic",), store=f"sqlite:///{tmp_path}/r.db",
                              settings=tracegrade.RunSettings(checks_only=True, repeat=2, concurrency=1))
    first, second = sorted(run.results, key=lambda r: r.repeat)
    assert first.status == "pass" and [c.id for c in first.reply.tool_calls] == ["toolu_1"]
    assert second.status == "unscored" and "share the agent's memory" in second.error and "toolu_1" in second.error


# --- a verdict only on the agent's own, whole trace
# A verdict only on the agent's own, whole trace: capture never loses, mixes or doubles
# a call silently (issue 33). The agent is a clinic's booking desk written with the openai
# SDK, as a user would write it; its model is a scripted HTTP endpoint behind the SDK's
# own transport.


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


# --- capture_reply and the tracegrade_captured fixture
# capture_reply and the tracegrade_captured fixture: a test that calls the agent
# itself grades the agent's own openai SDK calls (a real client over an
# httpx.MockTransport), with no change to the agent.


pytest_plugins = ["pytester"]
TESTS = Path(__file__).resolve().parent


def sdk_client():
    return openai.OpenAI(api_key="sk-test", base_url="http://model.test/v1",
                         http_client=httpx.Client(transport=httpx.MockTransport(chat_model)))


def test_the_block_gives_the_reply_of_the_agents_own_calls():
    [case] = cases(1)
    agent = openai_agent(sdk_client())
    with capture_reply(sources=("openai",)) as captured:
        answer = agent(case.question)
    reply = captured.reply(answer)
    assert captured.calls == 2
    assert [(c.name, c.arguments, c.result) for c in reply.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "sunny in Paris")]
    assert reply.answer == answer == "It is sunny in Paris."
    assert_checks_pass(case, reply)


def test_a_wrong_call_fails_the_checks_on_what_was_captured():
    [case] = cases(1)
    wrong = case.model_copy(update={"id": "w-bergen", "question": "What is the weather in Bergen?"})
    with capture_reply(sources=("openai",)) as captured:
        openai_agent(sdk_client())(wrong.question)
    with pytest.raises(AssertionError, match="case w-bergen: checks failed"):
        assert_checks_pass(wrong, captured.reply())


def test_calls_outside_the_block_are_not_captured():
    agent = openai_agent(sdk_client())
    with capture_reply(sources=("openai",)) as captured:
        pass
    agent("What is the weather in Oslo?")
    assert captured.calls == 0
    with pytest.raises(AgentError, match="no model call was captured inside capture_reply"):
        captured.reply()


AGENT = """
    import json
    import httpx
    import openai
    from test_capture import chat_model, openai_agent

    # the user's agent, made at import as agents are: tracegrade is not mentioned
    answer = openai_agent(openai.OpenAI(api_key="sk-test", base_url="http://model.test/v1",
                                        http_client=httpx.Client(transport=httpx.MockTransport(chat_model))))
"""


@pytest.mark.slow  # pytest inside pytest
def test_a_users_own_test_grades_its_agent_with_the_fixture(pytester, monkeypatch):
    # WHY in this process: a child pytest spent seconds importing openai and tracegrade again;
    # the plugin is found through its entry point either way (tests/test_pytest_plugin.py).
    monkeypatch.syspath_prepend(str(TESTS))  # test_capture.py, which the user's agent below imports
    pytester.makepyfile(helpdesk=AGENT)
    wrong = {"id": "w-wrong", "question": "What is the weather in Oslo?",
             "calls": {"expected": [{"tool": "get_weather", "arguments": {"city": "Bergen"}}]}}
    pytester.makefile(".json", cases=json.dumps([*(c.model_dump(by_alias=True, exclude_none=True) for c in cases(2)),
                                                 wrong]))
    pytester.makepyfile(test_helpdesk="""
        from helpdesk import answer
        from tracegrade import assert_checks_pass

        def test_helpdesk(tracegrade_case, tracegrade_captured):
            reply = tracegrade_captured.reply(answer(tracegrade_case.question))
            assert_checks_pass(tracegrade_case, reply)
    """)
    result = pytester.runpytest_inprocess("--tracegrade", "cases.json", "-p", "no:cacheprovider", "-p", "no:asyncio")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*test_helpdesk[[]w-wrong[]]*", "*case w-wrong: checks failed*"])
    # the failure points at the user's test, not at tracegrade's own frame
    assert "pytest_plugin.py" not in result.stdout.str()
