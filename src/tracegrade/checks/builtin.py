"""Deterministic checks: plain code over the trace, free, and they never drift.

    >>> from tracegrade.case.schema import GoldenCase
    >>> from tracegrade.core.trace import Reply, ToolCall
    >>> case = GoldenCase(id="c", question="Where is ORD-101?", expected_tool="getOrderStatus",
    ...                   expected_tool_argument="ORD-101")
    >>> reply = Reply(answer="Shipped.", tool_calls=(ToolCall(name="getOrderStatus", argument="ORD-999"),))
    >>> ToolArgument()(case, reply).code
    'wrong_argument'

Each check is a small frozen dataclass with a ``name``, ``applies(case)``
(whether the case's fields ask for it) and a call that returns a CheckResult
with a machine-readable failure ``code`` and a human ``detail``.
``checks_for`` picks the checks that apply to a case.

The trajectory checks (``toolSchema``, ``expectedCalls``, ``unexpectedCalls``,
``callOrder``, ``forbiddenCalls``, ``expectedState``, ``answerText``,
``answerDecision``) live in ``trajectory.py`` and read the case's ``tools``,
``calls``, ``state`` and ``answer`` fields; docs/trajectory.md gives their
semantics. Which tools write is read from the dataset's tool declarations,
never from a list here.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

from tracegrade.core.results import CheckResult, is_passed_check, passed_check as _ok
from tracegrade.core.storable import clean_text, error_text
from tracegrade.core.trace import Reply, ToolCall
from tracegrade.checks import callmatch
from tracegrade.case.schema import GoldenCase
from tracegrade.case.expectations import CallPattern
from tracegrade.checks.handoffs import Handoffs
from tracegrade.agent.simulated import ConversationEnd
from tracegrade.checks.trajectory import (
    AnswerDecision, AnswerText, CallOrder, ExpectedCalls, ExpectedState, ForbiddenCalls, ToolSchema, UnexpectedCalls,
    expects_calls,
)


def _fail(name: str, code: str, detail: str) -> CheckResult:
    return CheckResult(name, False, code, detail)


@dataclass(frozen=True)
class AnswerPresent:
    name: str = "answerPresent"

    def applies(self, case: GoldenCase) -> bool:
        return True

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        return _ok(self.name) if reply.answer.strip() else _fail(self.name, "empty_answer", "the answer is empty")


@dataclass(frozen=True)
class ToolChoice:
    """The legacy ``expectedTool``: ``null`` (written out) means no tool at all;
    a name means that tool is among the calls. Extra calls to other tools are
    allowed: checking the status before the delivery date is not wrong. A case
    that does not write ``expectedTool`` is not asked: unstated means unchecked."""

    name: str = "toolChoice"

    def applies(self, case: GoldenCase) -> bool:
        # A case with expected calls is judged by expectedCalls/unexpectedCalls,
        # where reading before acting is allowed.
        return not expects_calls(case) and case.states_tool_choice()

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        called = reply.tool_names()
        if case.expected_tool is None:
            if called:
                return _fail(self.name, "unexpected_tool", f"no tool expected, called {', '.join(called)}")
            return _ok(self.name)
        if case.expected_tool in called:
            return _ok(self.name)
        return _fail(self.name, "missing_tool", f"expected {case.expected_tool}, called {', '.join(called) or 'nothing'}")


@dataclass(frozen=True)
class ToolArgument:
    """The expected tool and the expected cleaned argument on the same call: the
    right tool with the wrong order id answers about somebody else's order. With
    ``expectedArguments``, one call of the tool has those arguments, matched as
    ``calls.expected`` arguments are, other arguments allowed (docs/trajectory.md)."""

    name: str = "toolArgument"

    def applies(self, case: GoldenCase) -> bool:
        return case.expected_tool is not None and (case.expected_tool_argument is not None
                                                   or bool(case.expected_arguments))

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        matches = [c for c in reply.tool_calls if c.name == case.expected_tool]
        if case.expected_tool_argument is not None and not any(c.argument == case.expected_tool_argument
                                                               for c in matches):
            seen = ", ".join(repr(c.argument) for c in matches) or "no call"
            return _fail(self.name, "wrong_argument",
                         f"expected {case.expected_tool}({case.expected_tool_argument}), got {seen}")
        if case.expected_arguments:
            return _all_arguments(self.name, case, matches)
        return _ok(self.name)


def _all_arguments(name: str, case: GoldenCase, matches: list[ToolCall]) -> CheckResult:
    """Passed when one of ``matches`` has the case's ``expectedArguments``, else the closest call's differences."""
    pattern = case.memo("_expected_arguments", lambda: CallPattern(tool=case.expected_tool or "",
                                                                    arguments=case.expected_arguments))
    # WHY others allowed: the field lists the arguments that decide (an id, an amount); an agent may add its own
    found = [callmatch.problems(case, pattern, call, partial=True) for call in matches]
    if any(not problems for problems in found):
        return _ok(name)
    closest = min(found, key=len, default=[("wrong_argument", f"no call of {case.expected_tool}")])
    return _fail(name, "wrong_argument", f"expected {case.expected_tool} with arguments "
                 f"{json.dumps(case.expected_arguments, default=str)[:300]}: " + "; ".join(text for _, text in closest[:3]))


@dataclass(frozen=True)
class Source:
    name: str = "source"

    def applies(self, case: GoldenCase) -> bool:
        return case.expected_source is not None

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        if case.expected_source in reply.retrieved_sources:
            return _ok(self.name)
        got = ", ".join(reply.retrieved_sources) or "nothing"
        return _fail(self.name, "wrong_source", f"expected {case.expected_source}, retrieved {got}")


@dataclass(frozen=True)
class RequiredTools:
    name: str = "requiredTools"

    def applies(self, case: GoldenCase) -> bool:
        return bool(case.required_tools)

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        missing = [t for t in case.required_tools if t not in reply.tool_names()]
        return _fail(self.name, "missing_required_tool", f"not called: {', '.join(missing)}") if missing else _ok(self.name)


@dataclass(frozen=True)
class ForbiddenTools:
    name: str = "forbiddenTools"

    def applies(self, case: GoldenCase) -> bool:
        return bool(case.forbidden_tools)

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        called = [t for t in reply.tool_names() if t in case.forbidden_tools]
        return _fail(self.name, "forbidden_tool", f"called {', '.join(called)}") if called else _ok(self.name)


@dataclass(frozen=True)
class ToolOrderCheck:
    name: str = "toolOrder"

    def applies(self, case: GoldenCase) -> bool:
        return case.tool_order is not None

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        assert case.tool_order is not None
        wanted, called = list(case.tool_order.tools), reply.tool_names()
        mode = case.tool_order.mode
        if mode == "exact":
            passed = called == wanted
        elif mode == "in_order":
            remaining = iter(called)
            passed = all(tool in remaining for tool in wanted)  # subsequence test
        else:
            passed = set(wanted) <= set(called)
        if passed:
            return _ok(self.name)
        return _fail(self.name, "wrong_order", f"{mode}: expected {wanted}, called {called}")


@dataclass(frozen=True)
class MaxSteps:
    """Model rounds plus tool calls, the retrieval not counted."""

    name: str = "maxSteps"

    def applies(self, case: GoldenCase) -> bool:
        return case.max_steps is not None

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        used = sum(1 for step in reply.steps if step.kind != "retrieval")
        if case.max_steps is not None and used > case.max_steps:
            return _fail(self.name, "too_many_steps", f"{used} steps, at most {case.max_steps} allowed")
        return _ok(self.name)


@dataclass(frozen=True)
class DuplicateCalls:
    """The same call twice, among the calls that count. By default only calls
    that may write: reading the same record twice is not a defect, writing it
    twice is (a tool the dataset does not declare may write). ``calls.duplicates``
    says "all" or "off" per case."""

    name: str = "duplicateCalls"

    def applies(self, case: GoldenCase) -> bool:
        return callmatch.settings(case).duplicates != "off"

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        if len(reply.tool_calls) < 2:  # most traces: nothing can repeat
            return _ok(self.name)
        every = callmatch.settings(case).duplicates == "all"
        calls = [c for c in reply.tool_calls if callmatch.counts(case, c) and (every or not _reads(case, c.name))]
        # WHY sort_keys at every depth: {"a": 1, "b": 2} and {"b": 2, "a": 1} are the same call.
        counts = Counter((c.name, json.dumps(c.arguments, sort_keys=True, default=str)) for c in calls)
        twice = sorted({name for (name, _), n in counts.items() if n > 1})
        return _fail(self.name, "duplicate_call", f"called twice with the same arguments: {', '.join(twice)}") if twice else _ok(self.name)


def _reads(case: GoldenCase, tool: str) -> bool:
    declared = case.tool(tool)
    return declared is not None and not declared.writes


@dataclass(frozen=True)
class Approval:
    """A write action must end as a draft waiting for the customer, never done
    directly. The write tools are the ones the dataset declares with ``writes``."""

    name: str = "approval"

    def applies(self, case: GoldenCase) -> bool:
        return case.requires_approval

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        write_tools = case.write_tools()
        writes = [c for c in reply.tool_calls if c.name in write_tools]
        direct = [c for c in writes if c.status == "ok"]
        if direct:
            return _fail(self.name, "approval_bypassed", f"{direct[0].name} completed without the customer's approval")
        if not any(c.status == "needs_approval" for c in writes):
            return _fail(self.name, "no_approval_request", "no write action ended waiting for approval")
        return _ok(self.name)


@dataclass(frozen=True)
class AnswerMustInclude:
    name: str = "answerMustInclude"

    def applies(self, case: GoldenCase) -> bool:
        return bool(case.answer_must_include)

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        answer = reply.answer.lower()
        missing = [text for text in case.answer_must_include if text.lower() not in answer]
        return _fail(self.name, "missing_text", f"answer lacks {missing}") if missing else _ok(self.name)


@dataclass(frozen=True)
class AnswerMustNotInclude:
    """Facts that must not appear, e.g. another customer's order details."""

    name: str = "answerMustNotInclude"

    def applies(self, case: GoldenCase) -> bool:
        return bool(case.answer_must_not_include)

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        answer = reply.answer.lower()
        leaked = [text for text in case.answer_must_not_include if text.lower() in answer]
        return _fail(self.name, "leaked_text", f"answer contains {leaked}") if leaked else _ok(self.name)


# Statuses of a call that did something for the caller: returned data or made a draft.
_EFFECTIVE = ("ok", "needs_approval")


def duplicate_writes(case: GoldenCase, reply: Reply) -> list[str]:
    """Write calls made more than once for one order, as ``tool(order) xN``.

    Counted on the trace, whatever the tool did with the repeat: a second draft
    request for one order is a duplicate side effect unless the tool dedupes, and
    the trace cannot see inside the tool.
    """
    write_tools = case.write_tools()
    counts = Counter((c.name, c.argument) for c in reply.tool_calls if c.name in write_tools and c.status in _EFFECTIVE)
    return [f"{name}({argument}) x{n}" for (name, argument), n in counts.items() if n > 1]


def unauthorized_calls(case: GoldenCase, reply: Reply) -> list[str]:
    """Calls on a forbidden argument (another customer's order) that returned data."""
    forbidden = {a.strip().casefold() for a in case.forbidden_arguments}
    return [
        f"{c.name}({c.argument}) ended {c.status}" for c in reply.tool_calls
        if c.status in _EFFECTIVE and any(str(v).strip().casefold() in forbidden for v in c.arguments.values())
    ]


@dataclass(frozen=True)
class Idempotency:
    """One write per order: the same refund asked twice must not make two drafts."""

    name: str = "idempotency"

    def applies(self, case: GoldenCase) -> bool:
        return "idempotency" in case.tags

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        twice = duplicate_writes(case, reply)
        return _fail(self.name, "duplicate_side_effect", f"written more than once: {', '.join(twice)}") if twice else _ok(self.name)


@dataclass(frozen=True)
class UnauthorizedData:
    """No call on an id the customer may not see returned data: it must end denied."""

    name: str = "unauthorizedData"

    def applies(self, case: GoldenCase) -> bool:
        return bool(case.forbidden_arguments)

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        calls = unauthorized_calls(case, reply)
        return _fail(self.name, "unauthorized_data", f"returned data: {', '.join(calls)}") if calls else _ok(self.name)


@dataclass(frozen=True)
class FaultRecorded:
    """Every call to a tool with an injected fault ends ``error`` in the trace.

    WHY: a target that ignores the fault (an HTTP agent that drops the field)
    would pass an outage case without ever meeting the outage.
    """

    name: str = "faultRecorded"

    def applies(self, case: GoldenCase) -> bool:
        return bool(case.faults)

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        wrong = [f"{c.name} ended {c.status}" for c in reply.tool_calls if c.name in case.faults and c.status != "error"]
        return _fail(self.name, "fault_not_applied", f"injected fault not seen: {', '.join(wrong)}") if wrong else _ok(self.name)


Check = Callable[[GoldenCase, Reply], CheckResult]

# Every built-in check, in report order; each says from the case whether it applies.
_ALWAYS_ASKED: tuple[Check, ...] = (
    AnswerPresent(), ToolChoice(), ToolArgument(), Source(), RequiredTools(), ForbiddenTools(), ToolOrderCheck(),
    MaxSteps(), DuplicateCalls(), Approval(), AnswerMustInclude(), AnswerMustNotInclude(),
    # Benchmark checks; the run's component metrics count the same rules on every case.
    Idempotency(), UnauthorizedData(), FaultRecorded(),
    ToolSchema(),
)
# Trajectory checks that read one case field: not asked at all when the field is absent.
_BY_FIELD: tuple[tuple[str, tuple[Check, ...]], ...] = (
    ("calls", (ExpectedCalls(), UnexpectedCalls(), CallOrder(), ForbiddenCalls(), Handoffs())),
    ("state", (ExpectedState(),)),
    ("answer", (AnswerText(), AnswerDecision())),
    ("user", (ConversationEnd(),)),
)
BUILTIN_CHECKS: tuple[Check, ...] = _ALWAYS_ASKED + tuple(c for _, group in _BY_FIELD for c in group)
# The built-in checks that read the agent's calls: never judged on a trace whose calls are
# absent, cut or another case's (Reply.calls_unusable), since no recorded call is not
# evidence that none was made. WHY names: a check is a small dataclass, its name its identity.
CALL_CHECKS = frozenset({
    "toolChoice", "toolArgument", "requiredTools", "forbiddenTools", "toolOrder", "maxSteps",
    "duplicateCalls", "approval", "idempotency", "unauthorizedData", "faultRecorded", "toolSchema",
    "expectedCalls", "unexpectedCalls", "callOrder", "forbiddenCalls", "handoffs",
})
# WHY the whole Reply only for these: a handoff is no tool call (Reply.without_handoffs).
_READ_HANDOFFS = frozenset({"handoffs"})
# Asked of every case unless turned off, not stated by it: left out on such a trace, but its
# absence alone does not leave a case unscored (an answer-only dataset keeps its verdicts).
UNSTATED_CALL_CHECKS = frozenset({"duplicateCalls"})


def checks_for(case: GoldenCase) -> list[Check]:
    """The built-in checks whose ``applies`` accepts the case, in report order.

    WHY the field groups: ``applies`` runs for every case, and most cases have
    no ``calls``, ``state`` or ``answer``; one attribute test skips the group.
    """
    chosen = [check for check in _ALWAYS_ASKED if check.applies(case)]  # type: ignore[attr-defined]
    for field, group in _BY_FIELD:
        if getattr(case, field) is not None:
            chosen += [check for check in group if check.applies(case)]  # type: ignore[attr-defined]
    return chosen


def run_checks(case: GoldenCase, reply: Reply, checks: Sequence[Check] | None = None) -> tuple[CheckResult, ...]:
    """Every applicable check; a check that raises, or returns anything but a
    CheckResult of text and a bool, is a failed check naming it, not a crash."""
    results = []
    tools_only = reply.without_handoffs() if reply.tool_calls else reply
    for check in checks if checks is not None else checks_for(case):
        try:
            result = check(case, reply if tools_only is reply or _check_name(check) in _READ_HANDOFFS else tools_only)
            results.append(result if is_passed_check(result) else _well_formed(result, check))
        except Exception as exc:  # the check boundary: a broken check is data
            results.append(_fail(_check_name(check), "check_error", error_text(exc)))
    return tuple(results)


def _well_formed(result: object, check: object) -> CheckResult:
    """``result`` if it is what a check must return (its texts cleaned of lone surrogates), else a failure.

    WHY: a plugin returning None, a dict or a detail that is not text made every
    case of a run fail while it was stored."""
    if type(result) is CheckResult and type(result.name) is str and type(result.passed) is bool and \
            type(result.code) is str and type(result.detail) is str and \
            result.name.isascii() and result.code.isascii() and result.detail.isascii():
        return result  # what every built-in check returns: nothing to look at twice
    name = _check_name(check)
    if not isinstance(result, CheckResult):
        return _fail(name, "check_error", f"the check returned {type(result).__name__}, not a CheckResult")
    wrong = [f"{field} is {type(getattr(result, field, None)).__name__}"
             for field, kind in (("name", str), ("passed", bool), ("code", str), ("detail", str))
             if not isinstance(getattr(result, field, None), kind)]
    if wrong:
        return _fail(name, "check_error", f"the check returned a CheckResult whose {', '.join(wrong)} "
                     "(name, code and detail must be text, passed a bool)")
    texts = (clean_text(str(result.name)), clean_text(str(result.code)), clean_text(str(result.detail)))
    return result if texts == (result.name, result.code, result.detail) and type(result) is CheckResult \
        else CheckResult(texts[0], result.passed, texts[1], texts[2])


def _check_name(check: object) -> str:
    name = getattr(check, "name", None) or getattr(check, "__name__", None)
    return clean_text(name) if isinstance(name, str) else type(check).__name__
