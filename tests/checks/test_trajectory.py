"""What the trajectory checks say when they fail: each finding once, and enough
to act on (which call, which argument, which group and rounds)."""

from __future__ import annotations

from typing import Any

from tracegrade.core.trace import Reply, ToolCall
from tracegrade.case.schema import GoldenCase
from tracegrade.case.expectations import ToolDeclaration
from tracegrade.checks.trajectory import CallOrder, ExpectedCalls, ForbiddenCalls, UnexpectedCalls

TOOLS = tuple(ToolDeclaration.model_validate(t) for t in [
    {"name": "get_booking", "writes": False},
    {"name": "cancel_booking", "writes": True},
    {"name": "search_books", "writes": False, "parameters": {
        "type": "object", "required": ["title"],
        "properties": {"title": {"type": "string"}, "available_only": {"type": "boolean", "default": False}}}},
    {"name": "search_flights", "writes": False},
    {"name": "search_hotels", "writes": False},
])


def case(calls: dict[str, Any]) -> GoldenCase:
    return GoldenCase.model_validate({"id": "c", "question": "q", "calls": calls}, context={"tools": TOOLS})


def reply(*calls: ToolCall) -> Reply:
    return Reply(answer="done", tool_calls=calls)


def test_a_forbidden_cancel_is_reported_once_as_forbidden():
    c = case({"expected": [{"tool": "get_booking", "arguments": {"bookingId": "BK1"}}],
              "forbidden": [{"tool": "cancel_booking", "arguments": {"bookingId": "BK1"}}]})
    r = reply(ToolCall(name="get_booking", arguments={"bookingId": "BK1"}),
              ToolCall(name="cancel_booking", arguments={"bookingId": "BK1"}))
    forbidden, unexpected = ForbiddenCalls()(c, r), UnexpectedCalls()(c, r)
    assert (forbidden.passed, forbidden.code) == (False, "forbidden_call")
    assert unexpected.passed, unexpected.detail  # not a second finding as an unexpected write


def test_a_write_no_pattern_forbids_is_still_an_unexpected_write():
    c = case({"expected": [], "forbidden": [{"tool": "cancel_booking", "arguments": {"bookingId": "BK9"}}]})
    r = reply(ToolCall(name="cancel_booking", arguments={"bookingId": "BK1"}))
    assert UnexpectedCalls()(c, r).code == "unexpected_write" and ForbiddenCalls()(c, r).passed


def test_an_omitted_argument_says_it_took_the_schemas_default():
    c = case({"expected": [{"tool": "search_books", "arguments": {"title": "Dune", "available_only": True}}]})
    result = ExpectedCalls()(c, reply(ToolCall(name="search_books", arguments={"title": "Dune"})))
    assert not result.passed
    assert "'available_only' omitted: the tool's schema default is boolean false; expected boolean true" in result.detail
    assert "missing" not in result.detail


def test_an_argument_with_no_default_is_still_missing():
    c = case({"expected": [{"tool": "search_books", "arguments": {"title": "Dune"}}]})
    result = ExpectedCalls()(c, reply(ToolCall(name="search_books", arguments={})))
    assert "'title' missing, expected string \"Dune\"" in result.detail


def test_call_order_names_the_call_whose_arguments_differ():
    c = case({"expected": [{"tool": "get_booking", "arguments": {"bookingId": "BK1"}},
                           {"tool": "cancel_booking", "arguments": {"bookingId": "BK1"}}], "order": "inOrder"})
    r = reply(ToolCall(name="get_booking", arguments={"bookingId": "BK1"}),
              ToolCall(name="cancel_booking", arguments={"bookingId": "BK2"}))
    result = CallOrder()(c, r)
    assert result.passed  # the order is not judged; expectedCalls fails the case
    assert result.detail == ('not judged: expected call #2 cancel_booking(bookingId="BK1") is not met: '
                             "call #2 cancel_booking is there, but its arguments differ (see expectedCalls)")


def test_call_order_says_when_no_call_of_the_tool_was_made():
    c = case({"expected": [{"tool": "get_booking"}, {"tool": "cancel_booking"}], "order": "inOrder"})
    result = CallOrder()(c, reply(ToolCall(name="get_booking", arguments={})))
    assert result.detail == ("not judged: expected call #2 cancel_booking(...) is not met: cancel_booking not called "
                             "(called get_booking) (see expectedCalls)")


def test_call_order_says_when_the_call_did_not_take_effect():
    c = case({"expected": [{"tool": "get_booking"}, {"tool": "cancel_booking"}], "order": "inOrder"})
    result = CallOrder()(c, reply(ToolCall(name="get_booking", arguments={}),
                                  ToolCall(name="cancel_booking", arguments={}, status="error")))
    assert "expected call #2 cancel_booking(...) is not met: call #2 ended error, which does not count" in result.detail


def test_not_parallel_names_the_group_its_calls_and_their_rounds():
    c = case({"expected": [{"tool": "search_flights", "parallel": "search"},
                           {"tool": "search_hotels", "parallel": "search"}]})
    r = reply(ToolCall(name="search_flights", arguments={}, round=1),
              ToolCall(name="search_hotels", arguments={}, round=2))
    result = CallOrder()(c, r)
    assert result.code == "not_parallel"
    assert "group 'search': call #1 search_flights in round 1, call #2 search_hotels in round 2" in result.detail
