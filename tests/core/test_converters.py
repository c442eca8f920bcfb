"""Reply.from_openai_messages / from_anthropic_messages: provider message lists
turned into the trace contract, numbered (turn, round) and paired by id."""

from __future__ import annotations

import json

import pytest

from tracegrade.core.trace import Reply


def call(call_id: str, name: str, arguments: dict | str) -> dict:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}


def test_an_openai_tool_loop_becomes_calls_with_parsed_arguments_results_and_rounds():
    messages = [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "Two cities?"},
        {"role": "assistant", "content": None, "tool_calls": [call("a", "get_weather", {"city": "Rome"}),
                                                              call("b", "get_weather", {"city": "Oslo"})]},
        {"role": "tool", "tool_call_id": "b", "content": "cold"},  # answered out of order: paired by id
        {"role": "tool", "tool_call_id": "a", "content": "warm"},
        {"role": "assistant", "content": None, "tool_calls": [call("c", "book", {"city": "Rome", "nights": 2})]},
        {"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "booked"}]},
        {"role": "assistant", "content": "Rome is warm; booked 2 nights."},
    ]
    reply = Reply.from_openai_messages(messages, model="gpt-x")
    assert [(c.name, c.arguments, c.result, c.id, c.round, c.turn) for c in reply.tool_calls] == [
        ("get_weather", {"city": "Rome"}, "warm", "a", 0, 1),
        ("get_weather", {"city": "Oslo"}, "cold", "b", 0, 1),
        ("book", {"city": "Rome", "nights": 2}, "booked", "c", 1, 1)]
    assert reply.answer == "Rome is warm; booked 2 nights." and reply.model == "gpt-x"
    assert reply.tool_calls[0].argument == "Rome"
    assert reply.turns == ()  # one user message: no conversation to keep


def test_a_second_user_message_starts_turn_two_and_the_conversation_is_kept():
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello, what city?"},
                {"role": "user", "content": "Rome"},
                {"role": "assistant", "tool_calls": [call("a", "get_weather", {"city": "Rome"})]},
                {"role": "tool", "tool_call_id": "a", "content": "warm"},
                {"role": "assistant", "content": "Warm."}]
    reply = Reply.from_openai_messages(messages)
    assert [(c.turn, c.round) for c in reply.tool_calls] == [(2, 0)]
    assert [(m.role, m.content) for m in reply.turns] == [
        ("user", "Hi"), ("assistant", "Hello, what city?"), ("user", "Rome"), ("assistant", "Warm.")]


def test_arguments_that_are_not_json_are_kept_raw_and_a_call_without_result_has_none():
    reply = Reply.from_openai_messages([{"role": "user", "content": "q"},
                                        {"role": "assistant", "tool_calls": [call("a", "f", "{city: Rome")]}])
    assert reply.tool_calls[0].arguments == {"_raw": "{city: Rome"}
    assert reply.tool_calls[0].result == "" and reply.answer == ""


def test_responses_api_items_become_the_same_reply():
    items = [{"role": "user", "content": "Two cities?"},
             {"type": "function_call", "call_id": "a", "name": "get_weather", "arguments": '{"city": "Rome"}'},
             {"type": "function_call", "call_id": "b", "name": "get_weather", "arguments": '{"city": "Oslo"}'},
             {"type": "function_call_output", "call_id": "a", "output": "warm"},
             {"type": "function_call_output", "call_id": "b", "output": "cold"},
             {"type": "function_call", "call_id": "c", "name": "book", "arguments": '{"city": "Rome"}'},
             {"type": "function_call_output", "call_id": "c", "output": "booked"},
             {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}]
    reply = Reply.from_openai_messages(items)
    assert [(c.name, c.result, c.round) for c in reply.tool_calls] == [
        ("get_weather", "warm", 0), ("get_weather", "cold", 0), ("book", "booked", 1)]
    assert reply.answer == "Done."


def test_anthropic_blocks_pair_results_by_id_and_mark_errors():
    messages = [
        {"role": "user", "content": "Weather in Rome and Oslo?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Checking."},
                                          {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Rome"}},
                                          {"type": "tool_use", "id": "t2", "name": "get_weather", "input": {"city": "Oslo"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "timeout", "is_error": True},
                                     {"type": "tool_result", "tool_use_id": "t1",
                                      "content": [{"type": "text", "text": "warm"}]}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Rome is warm; Oslo did not answer."}]},
    ]
    reply = Reply.from_anthropic_messages(messages)
    assert [(c.arguments["city"], c.result, c.status, c.round) for c in reply.tool_calls] == [
        ("Rome", "warm", "ok", 0), ("Oslo", "timeout", "error", 0)]
    assert reply.answer == "Rome is warm; Oslo did not answer."


def test_sdk_message_objects_are_read_like_dicts():
    from openai.types.chat import ChatCompletionMessage

    message = ChatCompletionMessage.model_validate({"role": "assistant", "content": None, "tool_calls": [
        call("a", "get_weather", {"city": "Rome"})]})
    reply = Reply.from_openai_messages([{"role": "user", "content": "q"}, message,
                                        {"role": "tool", "tool_call_id": "a", "content": "warm"}])
    assert [(c.name, c.result) for c in reply.tool_calls] == [("get_weather", "warm")]


@pytest.mark.parametrize("depth", [101, 1_000, 5_000])
def test_arguments_nested_too_deep_are_kept_as_written(depth):
    """What a model wrote ~1,000 levels deep is the documented {"_raw": ...}, not a RecursionError."""
    deep = '{"a":' * depth + "1" + "}" * depth
    reply = Reply.from_openai_messages([
        {"role": "user", "content": "q"},
        {"role": "assistant", "tool_calls": [{"id": "a", "type": "function",
                                              "function": {"name": "f", "arguments": deep}}]}])
    assert reply.tool_calls[0].arguments == {"_raw": deep}
