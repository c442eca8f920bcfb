"""`tracegrade serve-model`'s endpoint over a real socket, with a scripted model:
a malformed body is a 400 naming its field, and never reaches the model."""

from __future__ import annotations

import httpx
import pytest

from support import serving
from tracegrade.models.scripted import ScriptedModel
from tracegrade.serve.model_server import MAX_TOKENS_CAP, create_model_app

ASK = [{"role": "user", "content": "hello"}]


@pytest.fixture(scope="module")
def served():
    model = ScriptedModel(lambda messages, options: "hi")
    with serving(create_model_app(model)) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client, model


def post(client: httpx.Client, body: dict) -> httpx.Response:
    return client.post("/v1/chat/completions", json=body)


@pytest.mark.parametrize(("extra", "field"), [
    ({"tools": 7}, "tools"),
    ({"messages": [{"role": "assistant", "content": None, "tool_calls": 5}]}, "messages[0].tool_calls"),
    ({"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": 3}}]}]},
     "messages[0].tool_calls[0].function.name"),
    ({"max_tokens": "abc"}, "max_tokens"),
    ({"max_tokens": -5}, "max_tokens"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"temperature": "hot"}, "temperature"),
    ({"temperature": 9}, "temperature"),
    ({"seed": [1]}, "seed"),
    ({"seed": 2**70}, "seed"),
    ({"top_logprobs": 1000000}, "top_logprobs"),
    ({"logprobs": "yes"}, "logprobs"),
    ({"response_format": {"type": "json_schema", "json_schema": "str"}}, "response_format.json_schema"),
    ({"response_format": "json"}, "response_format"),
    ({"stream": "yes"}, "stream"),
])
def test_a_malformed_field_is_a_400_naming_it(served, extra, field):
    client, model = served
    before = len(model.calls)
    answer = post(client, {"messages": ASK, **extra})
    assert answer.status_code == 400, answer.text
    message = answer.json()["error"]["message"]
    assert message.startswith(f"{field}:"), message
    assert len(model.calls) == before  # refused before the model


@pytest.mark.parametrize(("raw", "said"), [
    (b'{"messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "not JSON"),  # nesting past any parser's stack
    (b'{"messages": [{"role": "user", "content": "\\ud800"}]}', "not JSON"),  # a lone surrogate
    (b'{"max_tokens": 1e309, "messages": [{"role": "user", "content": "x"}]}', "max_tokens"),  # infinity
    (b'[1, 2]', "JSON object"),
    (b"\xff\xfe", "not JSON"),
])
def test_a_body_no_json_reader_should_take_is_a_400(served, raw, said):
    client, model = served
    before = len(model.calls)
    answer = client.post("/v1/chat/completions", content=raw, headers={"content-type": "application/json"})
    assert answer.status_code == 400, answer.text
    assert said in answer.json()["error"]["message"]
    assert len(model.calls) == before


def test_deep_arguments_of_a_past_call_read_as_none(served):
    client, model = served
    deep = "[" * 100_000 + "]" * 100_000
    history = [*ASK, {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": deep}}]},
               {"role": "tool", "tool_call_id": "c1", "content": "done"}]
    assert post(client, {"messages": history}).status_code == 200
    messages, _ = model.calls[-1]
    assert messages[1].tool_calls[0].arguments == {}


def test_a_valid_request_reaches_the_model_with_bounded_options(served):
    client, model = served
    answer = post(client, {"model": "any", "messages": ASK, "max_tokens": 10**6, "temperature": 1,
                           "seed": 7, "logprobs": True, "top_logprobs": 20, "user": "ignored-extra-field"})
    assert answer.status_code == 200, answer.text
    _, options = model.calls[-1]
    assert (options.max_tokens, options.temperature, options.seed, options.logprobs) == (MAX_TOKENS_CAP, 1.0, 7, 20)
