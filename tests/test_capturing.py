"""capture_reply and the tracegrade_captured fixture: a test that calls the agent
itself grades the agent's own openai SDK calls (a real client over an
httpx.MockTransport), with no change to the agent."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from test_capture import cases, chat_model, openai_agent
from tracegrade import assert_checks_pass, capture_reply
from tracegrade.core.errors import AgentError

openai = pytest.importorskip("openai")
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
