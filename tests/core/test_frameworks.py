"""Frameworks' own conventions read by rule (core/frameworks.py): a terminal tool is the
answer, a handoff is one event graded by ``calls.handoffs`` and never an undeclared tool,
a tool error a framework caught and sent back as text is an error (issues 46 and 50)."""

from __future__ import annotations

import json

from tracegrade.core.frameworks import agent_key, handoff_target, tool_failed
from tracegrade.core.trace import Reply
from tracegrade.checks.builtin import run_checks
from tracegrade.case.schema import GoldenCase

HANDOFF_TOOL = {"type": "function", "function": {
    "name": "transfer_to_cancellations_desk",
    "description": "Handoff to the Cancellations desk agent to handle the request. Cancels bookings.",
    "parameters": {"type": "object", "properties": {}}}}
HUMAN_TOOL = {"type": "function", "function": {
    "name": "transfer_to_human_agents", "description": "Transfer the user to a human agent with a summary.",
    "parameters": {"type": "object", "properties": {"summary": {"type": "string"}}}}}


def call(call_id: str, name: str, arguments: dict) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def conversation(*calls_and_results) -> list[dict]:
    messages: list[dict] = [{"role": "user", "content": "Cancel BK-1001 please"}]
    for made, result in calls_and_results:
        messages.append({"role": "assistant", "content": None, "tool_calls": [made]})
        messages.append({"role": "tool", "tool_call_id": made["id"], "content": result})
    return messages


def test_the_agents_sdk_handoff_is_marked_with_its_agent_and_a_users_transfer_tool_is_not():
    messages = conversation((call("c1", "transfer_to_cancellations_desk", {}), '{"assistant": "Cancellations desk"}'),
                            (call("c2", "transfer_to_human_agents", {"summary": "s"}), "transferred"))
    reply = Reply.from_openai_messages([*messages, {"role": "assistant", "content": "Done."}],
                                       tools=[HANDOFF_TOOL, HUMAN_TOOL])
    assert [(c.name, c.handoff) for c in reply.tool_calls] == [
        ("transfer_to_cancellations_desk", "Cancellations desk"), ("transfer_to_human_agents", None)]


def test_without_the_offered_tools_a_transfer_name_alone_is_not_a_handoff():
    assert handoff_target("transfer_to_cancellations_desk", {}, "") is None
    assert handoff_target("handoff", {"to_agent": "Refunds"}, "") == "Refunds"  # LlamaIndex: the argument says
    assert handoff_target("handoff", {"reason": "x"}, "") is None


def test_agent_names_compare_across_the_forms_frameworks_write_them():
    assert agent_key("Cancellations desk") == agent_key("transfer_to_cancellations_desk") == agent_key("CANCELLATIONS-DESK")
    assert agent_key("Refunds desk") != agent_key("Cancellations desk")


def test_smolagents_final_answer_is_the_answer_not_a_call():
    messages = conversation((call("c1", "get_booking", {"booking_id": "BK-1001"}), "BK-1001: refundable"))
    messages.append({"role": "assistant", "content": "Thought: I know.", "tool_calls": [
        call("c2", "final_answer", {"answer": "BK-1001 is refundable."})]})
    reply = Reply.from_openai_messages(messages)
    assert [c.name for c in reply.tool_calls] == ["get_booking"]
    assert reply.answer == "BK-1001 is refundable."


def test_a_tool_error_the_framework_caught_is_an_error_in_every_providers_form():
    langgraph = "Error: ValueError('BK-1005 is not refundable')\n Please fix your mistakes."
    agents_sdk = "An error occurred while running the tool. Please try again. Error: not refundable"
    messages = conversation((call("c1", "cancel_booking", {"booking_id": "BK-1005"}), langgraph),
                            (call("c2", "cancel_booking", {"booking_id": "BK-1006"}), agents_sdk),
                            (call("c3", "get_booking", {"booking_id": "BK-1"}), "BK-1: no errors on file"))
    reply = Reply.from_openai_messages(messages)
    assert [c.status for c in reply.tool_calls] == ["error", "error", "ok"]
    assert tool_failed("Traceback (most recent call last):\n  File ...")
    assert not tool_failed("The error rate is 0%")


def test_a_failed_write_is_no_success_and_no_forbidden_effect():
    messages = conversation((call("c1", "cancel_booking", {"booking_id": "BK-1005"}),
                             "Error: ValueError('not refundable')\n Please fix your mistakes."))
    reply = Reply.from_openai_messages([*messages, {"role": "assistant", "content": "Done: BK-1005 is cancelled."}])
    case = GoldenCase.model_validate({"id": "c", "question": "q", "tools": [{"name": "cancel_booking", "writes": True}],
                                      "calls": {"expected": [{"tool": "cancel_booking"}]}})
    expected = next(c for c in run_checks(case, reply) if c.name == "expectedCalls")
    assert not expected.passed  # the cancel did not take effect: "Done" is not earned


HANDOFF_CASE = {"id": "h", "question": "Cancel BK-1001", "tools": [{"name": "cancel_booking", "writes": True}],
                "calls": {"expected": [{"tool": "cancel_booking"}], "others": "none",
                          "handoffs": {"expected": ["Cancellations desk"], "forbidden": ["Refunds desk"]}}}


def handed_off(*agents: str) -> Reply:
    made = [(call(f"h{n}", f"transfer_to_{agent_key(a)}", {}), "{}") for n, a in enumerate(agents)]
    messages = conversation(*made, (call("c9", "cancel_booking", {"booking_id": "BK-1001"}), "cancelled"))
    tools = [{"type": "function", "function": {"name": f"transfer_to_{agent_key(a)}",
                                               "description": f"Handoff to the {a} agent to handle the request."}}
             for a in agents]
    return Reply.from_openai_messages([*messages, {"role": "assistant", "content": "Done."}], tools=tools)


def test_a_handoff_is_graded_by_calls_handoffs_and_never_as_an_undeclared_call():
    results = {c.name: c for c in run_checks(GoldenCase.model_validate(HANDOFF_CASE), handed_off("Cancellations desk"))}
    assert all(c.passed for c in results.values()), [c for c in results.values() if not c.passed]
    assert "handoffs" in results


def test_a_missing_or_forbidden_handoff_fails_with_its_code():
    case = GoldenCase.model_validate(HANDOFF_CASE)
    missing = {c.name: c for c in run_checks(case, handed_off())}["handoffs"]
    assert (missing.passed, missing.code) == (False, "missing_handoff")
    wrong = {c.name: c for c in run_checks(case, handed_off("Cancellations desk", "Refunds desk"))}["handoffs"]
    assert (wrong.passed, wrong.code) == (False, "forbidden_handoff") and "Refunds desk" in wrong.detail
