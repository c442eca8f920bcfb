"""Every deterministic check on hand-built traces, with the edge rules."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tracegrade.checks.builtin import (
    Approval, AnswerMustInclude, AnswerMustNotInclude, AnswerPresent, CheckResult, DuplicateCalls,
    FaultRecorded, ForbiddenTools, MaxSteps, RequiredTools, Source, ToolArgument, ToolChoice, ToolOrderCheck,
    checks_for, run_checks,
)
from tracegrade.case.schema import GoldenCase, ToolOrder
from tracegrade.case.expectations import ToolDeclaration
from tracegrade.core.trace import Reply, Step, ToolCall

# The one write tool the approval rule reads from the dataset; the read tools
# stay undeclared, so duplicateCalls counts them as it always did.
REFUND_DRAFT = ToolDeclaration(name="createRefundDraft", writes=True, approval=True)


def case(**fields) -> GoldenCase:
    return GoldenCase(id="c", question="Where is ORD-101?", **{"tools": (REFUND_DRAFT,), **fields})


def tool(name: str, order_id: str = "ORD-101", status: str = "ok", **extra) -> ToolCall:
    return ToolCall(name=name, arguments={"orderId": order_id, **extra}, argument=order_id,
                    result="...", status=status)


def reply(*calls: ToolCall, answer: str = "An answer.", sources: tuple[str, ...] = (), steps=()) -> Reply:
    return Reply(answer=answer, tool_calls=calls, retrieved_sources=sources, steps=steps)


def outcome(result: CheckResult) -> tuple[bool, str]:
    return result.passed, result.code


# --- answerPresent -------------------------------------------------------------


@pytest.mark.parametrize(("answer", "expected"), [("Yes.", (True, "ok")), ("", (False, "empty_answer")),
                                                  (" \n\t", (False, "empty_answer"))])
def test_answer_present(answer, expected):
    assert outcome(AnswerPresent()(case(), reply(answer=answer))) == expected


# --- toolChoice ----------------------------------------------------------------


def test_an_explicit_null_expected_tool_means_no_tool_at_all():
    no_tool = case(expected_tool=None)
    assert outcome(ToolChoice()(no_tool, reply())) == (True, "ok")
    result = ToolChoice()(no_tool, reply(tool("getDeliveryDate", "ORD-12345")))
    assert outcome(result) == (False, "unexpected_tool")
    assert "getDeliveryDate" in result.detail


def test_a_case_that_states_no_tool_expectation_does_not_judge_tool_calls():
    answer_only = GoldenCase.model_validate({"id": "c", "question": "Where is ORD-101?"})
    assert not ToolChoice().applies(answer_only)
    looked_up = reply(tool("getOrderStatus"))
    assert all(r.passed for r in run_checks(answer_only, looked_up))
    # The seed form, written out, keeps its meaning.
    seed = GoldenCase.model_validate({"id": "c", "question": "Where is ORD-101?", "expectedTool": None})
    assert [r.code for r in run_checks(seed, looked_up) if not r.passed] == ["unexpected_tool"]
    assert seed.content_hash() != answer_only.content_hash()  # they mean different things


def test_expected_tool_must_be_called():
    wanted = case(expected_tool="getOrderStatus")
    assert outcome(ToolChoice()(wanted, reply(tool("getOrderStatus")))) == (True, "ok")
    missing = ToolChoice()(wanted, reply(tool("getDeliveryDate")))
    assert outcome(missing) == (False, "missing_tool")
    assert missing.detail == "expected getOrderStatus, called getDeliveryDate"
    assert ToolChoice()(wanted, reply()).detail == "expected getOrderStatus, called nothing"


def test_extra_tool_is_allowed_when_one_is_expected():
    wanted = case(expected_tool="getOrderStatus")
    extra = reply(tool("getDeliveryDate"), tool("getOrderStatus"), tool("getRefundStatus"))
    assert outcome(ToolChoice()(wanted, extra)) == (True, "ok")


# --- toolArgument --------------------------------------------------------------


def test_right_tool_with_the_right_argument_passes():
    wanted = case(expected_tool="getOrderStatus", expected_tool_argument="ORD-101")
    assert outcome(ToolArgument()(wanted, reply(tool("getOrderStatus", "ORD-101")))) == (True, "ok")


def test_right_tool_with_the_wrong_argument_fails():
    wanted = case(expected_tool="getOrderStatus", expected_tool_argument="ORD-101")
    result = ToolArgument()(wanted, reply(tool("getOrderStatus", "ORD-102")))
    assert outcome(result) == (False, "wrong_argument")
    assert result.detail == "expected getOrderStatus(ORD-101), got 'ORD-102'"


def test_argument_must_be_on_the_expected_tool_not_another_one():
    wanted = case(expected_tool="getOrderStatus", expected_tool_argument="ORD-101")
    split = reply(tool("getDeliveryDate", "ORD-101"), tool("getOrderStatus", "ORD-999"))
    assert outcome(ToolArgument()(wanted, split)) == (False, "wrong_argument")
    assert "no call" in ToolArgument()(wanted, reply(tool("getDeliveryDate", "ORD-101"))).detail


def test_argument_is_compared_after_cleaning_by_the_agent():
    # The agent cleans ' ord-101 '; an agent that does not clean it fails the check.
    wanted = case(expected_tool="getOrderStatus", expected_tool_argument="ORD-101")
    assert not ToolArgument()(wanted, reply(tool("getOrderStatus", " ord-101 "))).passed


def test_one_matching_call_among_several_is_enough():
    wanted = case(expected_tool="getOrderStatus", expected_tool_argument="ORD-101")
    calls = reply(tool("getOrderStatus", "ORD-102"), tool("getOrderStatus", "ORD-101"))
    assert ToolArgument()(wanted, calls).passed


# --- source --------------------------------------------------------------------


def test_source():
    wanted = case(expected_source="return-policy.md")
    assert Source()(wanted, reply(sources=("shipping-policy.md", "return-policy.md"))).passed
    wrong = Source()(wanted, reply(sources=("refund-policy.md",)))
    assert outcome(wrong) == (False, "wrong_source")
    assert wrong.detail == "expected return-policy.md, retrieved refund-policy.md"
    assert "retrieved nothing" in Source()(wanted, reply()).detail


# --- requiredTools / forbiddenTools ---------------------------------------------


def test_required_tools():
    wanted = case(required_tools=("getOrderStatus", "getRefundStatus"))
    assert RequiredTools()(wanted, reply(tool("getRefundStatus"), tool("getOrderStatus"))).passed
    result = RequiredTools()(wanted, reply(tool("getOrderStatus")))
    assert outcome(result) == (False, "missing_required_tool") and result.detail == "not called: getRefundStatus"


def test_forbidden_tools():
    wanted = case(forbidden_tools=("createRefundDraft",))
    assert ForbiddenTools()(wanted, reply(tool("getOrderStatus"))).passed
    result = ForbiddenTools()(wanted, reply(tool("getOrderStatus"), tool("createRefundDraft", status="needs_approval")))
    assert outcome(result) == (False, "forbidden_tool") and "createRefundDraft" in result.detail


# --- toolOrder -----------------------------------------------------------------

A, B, C = "getOrderStatus", "getDeliveryDate", "getRefundStatus"


@pytest.mark.parametrize(
    ("mode", "wanted", "called", "passed"),
    [
        ("exact", [A, B], [A, B], True),
        ("exact", [A, B], [A, B, C], False),  # an extra call breaks an exact sequence
        ("exact", [A, B], [B, A], False),
        ("in_order", [A, B], [A, C, B], True),  # a subsequence, others may come between
        ("in_order", [A, B], [B, A], False),
        ("in_order", [A, A], [A], False),  # twice wanted, once called
        ("in_order", [A, A], [A, B, A], True),
        ("any_order", [A, B], [B, C, A], True),
        ("any_order", [A, B], [A, C], False),
    ],
)
def test_tool_order(mode, wanted, called, passed):
    checked = case(tool_order=ToolOrder(mode=mode, tools=tuple(wanted)))
    result = ToolOrderCheck()(checked, reply(*(tool(name) for name in called)))
    assert result.passed is passed
    if not passed:
        assert result.code == "wrong_order" and result.detail.startswith(f"{mode}: expected")


def test_tool_order_default_mode_is_in_order():
    assert ToolOrder(tools=(A,)).mode == "in_order"


# --- maxSteps ------------------------------------------------------------------


def steps(*kinds: str) -> tuple[Step, ...]:
    return tuple(Step(kind=kind, name=kind) for kind in kinds)


def test_max_steps_counts_model_rounds_and_tools_not_retrieval():
    limited = case(max_steps=3)
    assert MaxSteps()(limited, reply(steps=steps("retrieval", "model", "tool", "model"))).passed
    over = MaxSteps()(limited, reply(steps=steps("retrieval", "model", "tool", "model", "approval")))
    assert outcome(over) == (False, "too_many_steps") and over.detail == "4 steps, at most 3 allowed"


# --- duplicateCalls ------------------------------------------------------------


def test_duplicate_calls():
    assert DuplicateCalls()(case(), reply(tool(A, "ORD-101"), tool(A, "ORD-102"), tool(B, "ORD-101"))).passed
    twice = DuplicateCalls()(case(), reply(tool(A, "ORD-101"), tool(B), tool(A, "ORD-101")))
    assert outcome(twice) == (False, "duplicate_call") and twice.detail.endswith(": getOrderStatus")


def test_duplicate_calls_ignore_argument_order_at_any_depth():
    first = ToolCall(name=A, arguments={"orderId": "ORD-1", "filter": {"a": 1, "b": 2}})
    second = ToolCall(name=A, arguments={"filter": {"b": 2, "a": 1}, "orderId": "ORD-1"})
    assert not DuplicateCalls()(case(), reply(first, second)).passed


# --- approval ------------------------------------------------------------------


def test_approval_passes_when_the_write_waits_for_the_customer():
    assert outcome(Approval()(case(requires_approval=True),
                              reply(tool("createRefundDraft", status="needs_approval")))) == (True, "ok")


def test_approval_bypassed_when_the_write_completed_directly():
    result = Approval()(case(requires_approval=True), reply(tool("createRefundDraft", status="ok")))
    assert outcome(result) == (False, "approval_bypassed")


def test_a_direct_write_fails_even_next_to_a_draft():
    both = reply(tool("createRefundDraft", status="needs_approval"), tool("createRefundDraft", "ORD-102"))
    assert outcome(Approval()(case(requires_approval=True), both)) == (False, "approval_bypassed")


@pytest.mark.parametrize("calls", [(), (tool("getOrderStatus"),), (tool("createRefundDraft", status="error"),),
                                   (tool("createRefundDraft", status="denied"),)])
def test_no_approval_request_without_a_pending_draft(calls):
    assert outcome(Approval()(case(requires_approval=True), reply(*calls))) == (False, "no_approval_request")


# --- answerMustInclude / answerMustNotInclude ---------------------------------


def test_answer_must_include_is_case_insensitive_and_lists_what_is_missing():
    wanted = case(answer_must_include=("30", "Return Window"))
    assert AnswerMustInclude()(wanted, reply(answer="Inside the 30 day return window.")).passed
    result = AnswerMustInclude()(wanted, reply(answer="Inside the window, 30 days."))
    assert outcome(result) == (False, "missing_text") and result.detail == "answer lacks ['Return Window']"


def test_answer_must_not_include():
    wanted = case(answer_must_not_include=("smart watch", "days ago"))
    assert AnswerMustNotInclude()(wanted, reply(answer="I could not find ORD-109 on your account.")).passed
    result = AnswerMustNotInclude()(wanted, reply(answer="Your Smart Watch arrived 5 days ago."))
    assert outcome(result) == (False, "leaked_text") and "smart watch" in result.detail


# --- selection and the check boundary -------------------------------------------


def names(golden: GoldenCase) -> list[str]:
    return [check.name for check in checks_for(golden)]


def test_checks_for_a_bare_case_runs_only_the_universal_checks():
    assert names(case()) == ["answerPresent", "duplicateCalls"]  # unstated means unchecked
    assert names(case(expected_tool=None)) == ["answerPresent", "toolChoice", "duplicateCalls"]


def test_checks_for_selects_what_the_fields_call_for():
    assert names(case(expected_tool=A)) == ["answerPresent", "toolChoice", "duplicateCalls"]
    assert names(case(expected_tool=A, expected_tool_argument="ORD-101", expected_source="return-policy.md")) == [
        "answerPresent", "toolChoice", "toolArgument", "source", "duplicateCalls"]
    everything = case(
        expected_tool="createRefundDraft", expected_tool_argument="ORD-102", expected_source="refund-policy.md",
        required_tools=(A,), forbidden_tools=(B,), tool_order=ToolOrder(tools=(A,)), max_steps=4,
        requires_approval=True, answer_must_include=("draft",), answer_must_not_include=("refunded",),
    )
    assert names(everything) == [
        "answerPresent", "toolChoice", "toolArgument", "source", "requiredTools", "forbiddenTools",
        "toolOrder", "maxSteps", "duplicateCalls", "approval", "answerMustInclude", "answerMustNotInclude",
    ]


def test_run_checks_on_a_golden_style_case():
    golden = case(expected_tool=A, expected_tool_argument="ORD-102", expected_source="return-policy.md")
    good = reply(tool(A, "ORD-102"), answer="Yes, within 30 days.", sources=("return-policy.md",))
    assert all(r.passed for r in run_checks(golden, good))
    bad = reply(tool(A, "ORD-103"), answer="Yes.", sources=("return-policy.md",))
    assert [(r.name, r.code) for r in run_checks(golden, bad) if not r.passed] == [("toolArgument", "wrong_argument")]


@dataclass(frozen=True)
class Broken:
    name: str = "broken"

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        raise KeyError("orderId")


def test_a_raising_check_becomes_a_failed_check_and_the_others_still_run():
    results = run_checks(case(), reply(), [Broken(), AnswerPresent()])
    assert results == (CheckResult("broken", False, "check_error", "KeyError: 'orderId'"),
                       CheckResult("answerPresent", True))


def test_a_raising_function_check_is_named_by_the_function():
    def crashes(case, reply):
        raise ValueError("boom")

    (result,) = run_checks(case(), reply(), [crashes])
    assert (result.name, result.passed, result.code, result.detail) == ("crashes", False, "check_error",
                                                                        "ValueError: boom")


def test_checks_are_frozen_and_return_new_results_each_time():
    check, golden = AnswerPresent(), case()
    first, second = check(golden, reply()), check(golden, reply(answer=""))
    assert first.passed and not second.passed and check == AnswerPresent()
    with pytest.raises(AttributeError):
        check.name = "other"  # type: ignore[misc]


def test_fault_recorded_fails_when_the_target_ignored_the_injected_fault():
    outage = case(faults={"getOrderStatus": "timeout"})
    assert FaultRecorded().applies(outage) and not FaultRecorded().applies(case())
    assert outcome(FaultRecorded()(outage, reply(tool("getOrderStatus", status="error")))) == (True, "ok")
    ignored = FaultRecorded()(outage, reply(tool("getOrderStatus", status="ok"), tool("getDeliveryDate")))
    assert outcome(ignored) == (False, "fault_not_applied")
    assert ignored.detail == "injected fault not seen: getOrderStatus ended ok"


def test_a_wrong_write_is_named_once_by_expected_calls_not_again_as_unexpected():
    """The near miss of an expected call is that call's fault, reported once; a
    second write nobody asked for is still an unexpected write."""
    from tracegrade.core.trace import Reply, ToolCall
    from tracegrade.case.schema import GoldenCase
    from tracegrade.checks.trajectory import ExpectedCalls, UnexpectedCalls

    case = GoldenCase.model_validate({
        "id": "c", "question": "Close T-1", "tools": [{"name": "closeTicket", "writes": True}],
        "calls": {"expected": [{"tool": "closeTicket", "arguments": {"ticketId": "T-1"}}]}})
    wrong = ToolCall(name="closeTicket", arguments={"ticketId": "T-2"})
    extra = ToolCall(name="closeTicket", arguments={"ticketId": "T-3"})
    one = Reply(answer="done", tool_calls=(wrong,))
    two = Reply(answer="done", tool_calls=(wrong, extra))
    assert (ExpectedCalls()(case, one).code, UnexpectedCalls()(case, one).passed) == ("wrong_argument_value", True)
    assert "call #1" in ExpectedCalls()(case, two).detail
    assert (UnexpectedCalls()(case, two).code, "call #2" in UnexpectedCalls()(case, two).detail) == (
        "unexpected_write", True)


def test_a_passed_check_is_one_shared_result_and_only_it_skips_the_look_over():
    from tracegrade.core.results import is_passed_check, passed_check

    shared = passed_check("answerPresent")
    assert shared is AnswerPresent()(case(), reply()) and shared == CheckResult("answerPresent", True)
    assert is_passed_check(shared) and not is_passed_check(CheckResult("answerPresent", True))
    assert not is_passed_check(passed_check("caf\ud800"))  # a name that is not ASCII: not vouched for

    def plugin(case, reply):  # a look-alike of the shared result, with a lone surrogate in its detail
        return CheckResult("answerPresent", True, "ok", "fine \ud800")

    (result,) = run_checks(case(), reply(), [plugin])
    assert result.detail == "fine \ufffd"
