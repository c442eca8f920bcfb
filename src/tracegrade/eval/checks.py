"""Deterministic checks: plain code over the trace, free, and they never drift.

    >>> from tracegrade.eval.dataset import GoldenCase
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
``answerDecision``) read the case's ``tools``, ``calls``, ``state`` and
``answer`` fields; docs/trajectory.md gives their semantics. Which tools
write is read from the dataset's tool declarations, never from a list here.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

from tracegrade.core.results import CheckResult
from tracegrade.core.trace import Reply
from tracegrade.eval import callmatch
from tracegrade.eval.answers import TextView, assistant_texts, contains, decision_phrases
from tracegrade.eval.argmatch import ObjectOf
from tracegrade.eval.dataset import GoldenCase
from tracegrade.eval.expectations import ToolDeclaration
from tracegrade.eval.toolschema import validate


def _ok(name: str) -> CheckResult:
    return CheckResult(name, True)


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
    """No expected tool means no tool at all; otherwise the expected tool is among
    the calls. Extra calls to other tools are allowed: checking the status
    before the delivery date is not wrong."""

    name: str = "toolChoice"

    def applies(self, case: GoldenCase) -> bool:
        # A case with expected calls is judged by expectedCalls/unexpectedCalls,
        # where reading before acting is allowed.
        return not _expects_calls(case)

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
    right tool with the wrong order id answers about somebody else's order."""

    name: str = "toolArgument"

    def applies(self, case: GoldenCase) -> bool:
        return case.expected_tool is not None and case.expected_tool_argument is not None

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        matches = [c for c in reply.tool_calls if c.name == case.expected_tool]
        if any(c.argument == case.expected_tool_argument for c in matches):
            return _ok(self.name)
        seen = ", ".join(repr(c.argument) for c in matches) or "no call"
        return _fail(self.name, "wrong_argument",
                     f"expected {case.expected_tool}({case.expected_tool_argument}), got {seen}")


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


# --- trajectory checks (docs/trajectory.md) --------------------------------------


_PARAMETERS: dict[int, tuple[object, bool]] = {}


def _declares_parameters(tools: Sequence[ToolDeclaration]) -> bool:
    """Whether any tool declares its parameters, remembered per tools tuple.

    WHY remembered: every case of a dataset shares one tuple of declarations and
    the question is asked for every case; the ``is`` test makes a recycled id a miss.
    """
    hit = _PARAMETERS.get(id(tools))
    if hit is not None and hit[0] is tools:
        return hit[1]
    answer = any(t.parameters is not None for t in tools)
    if len(_PARAMETERS) > 1024:
        _PARAMETERS.clear()
    _PARAMETERS[id(tools)] = (tools, answer)
    return answer


def _expects_calls(case: GoldenCase) -> bool:
    return case.calls is not None and case.calls.expected is not None


def _report(name: str, failures: Sequence[callmatch.Failure], passed_detail: str = "") -> CheckResult:
    """The first failure's code; every failure in the detail, the later ones with their code."""
    if not failures:
        return CheckResult(name, True, "ok", passed_detail)
    parts = [failures[0].detail] + [f"{f.code}: {f.detail}" for f in failures[1:]]
    return _fail(name, failures[0].code, "; ".join(parts))


def _not_counted(case: GoldenCase, reply: Reply) -> str:
    """Reported beside a verdict: calls left out because they did not take effect."""
    skipped = [f"{c.name} ended {c.status}" for c in reply.tool_calls if not callmatch.counts(case, c)]
    return f"not counted (did not take effect): {', '.join(skipped)}" if skipped else ""


@dataclass(frozen=True)
class ToolSchema:
    """Every call against its tool's declared parameters: unknown tool, unknown or
    missing argument, wrong type, a value outside the schema (enum, range)."""

    name: str = "toolSchema"

    def applies(self, case: GoldenCase) -> bool:
        return _declares_parameters(case.tools)

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        failures = []
        for j, call in enumerate(reply.tool_calls):
            declared = case.tool(call.name)
            label = f"call #{j + 1} {call.name}"
            if declared is None:
                known = ", ".join(t.name for t in case.tools)
                failures.append(callmatch.Failure("unknown_tool", f"{label}: no such tool (declared: {known})"))
            elif declared.parameters is not None:
                failures += [callmatch.Failure(callmatch.ARGUMENT_CODES[m.kind], f"{label}: {m.describe()}")
                             for m in validate(declared.parameters, call.arguments)]
        return _report(self.name, failures)


@dataclass(frozen=True)
class ExpectedCalls:
    """Every expected call is met by its own call (a multiset): the tool, every
    argument by the value rules, the status and the turn when declared."""

    name: str = "expectedCalls"

    def applies(self, case: GoldenCase) -> bool:
        return _expects_calls(case)

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        return _report(self.name, callmatch.unmet(case, reply), _not_counted(case, reply))


@dataclass(frozen=True)
class UnexpectedCalls:
    """The calls left over: a write no expected call asks for, a call too many
    under "exactly", a read where the case allows no other call."""

    name: str = "unexpectedCalls"

    def applies(self, case: GoldenCase) -> bool:
        return _expects_calls(case)

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        return _report(self.name, callmatch.leftovers(case, reply), _not_counted(case, reply))


@dataclass(frozen=True)
class CallOrder:
    """The expected calls in the listed order ("inOrder"; calls of one model
    round are simultaneous), and each parallel group in one model round."""

    name: str = "callOrder"

    def applies(self, case: GoldenCase) -> bool:
        if not _expects_calls(case):
            return False
        assert case.calls is not None and case.calls.expected is not None
        return case.calls.order == "inOrder" or any(e.parallel for e in case.calls.expected)

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        assert case.calls is not None
        ordered = case.calls.order == "inOrder"
        if not callmatch.in_order(case, reply, ordered=False, parallel=False):
            return CheckResult(self.name, True, "ok", "not judged: an expected call is missing (see expectedCalls)")
        if callmatch.in_order(case, reply, ordered=ordered, parallel=True):
            return _ok(self.name)
        if not callmatch.in_order(case, reply, ordered=False, parallel=True):
            return _fail(self.name, "not_parallel", "the calls of a parallel group were not made in one model round")
        wanted = " -> ".join(e.tool for e in case.calls.expected or ())
        return _fail(self.name, "order", f"expected in order {wanted}, called {' -> '.join(reply.tool_names())}")


@dataclass(frozen=True)
class ForbiddenCalls:
    """No counted call matches a forbidden pattern (tool, and the arguments listed)."""

    name: str = "forbiddenCalls"

    def applies(self, case: GoldenCase) -> bool:
        return case.calls is not None and bool(case.calls.forbidden)

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        return _report(self.name, callmatch.forbidden(case, reply), _not_counted(case, reply))


_STATE_CODES = {"value": "wrong_state_value", "type": "wrong_state_type", "missing": "missing_state",
                "unexpected": "unexpected_state", "unknown": "unexpected_state"}


@dataclass(frozen=True)
class ExpectedState:
    """The final state the agent reports, against the case's ``state``: the
    keys the case lists (others are free), each by the value rules."""

    name: str = "expectedState"

    def applies(self, case: GoldenCase) -> bool:
        return case.state is not None

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        if reply.state is None:
            return _fail(self.name, "no_state", "the reply reports no state; the agent must return it to be graded on effects")
        shape = ObjectOf(case.state_matchers, allow_other=True)
        failures = [callmatch.Failure(_STATE_CODES[m.kind], m.describe()) for m in shape.match(reply.state, "", case.normalize)]
        return _report(self.name, failures)


@dataclass(frozen=True)
class AnswerText:
    """What the answer must and must not say: strings after the declared
    normalisation, regexes, numbers, amounts and dates in any common form."""

    name: str = "answerText"

    def applies(self, case: GoldenCase) -> bool:
        return case.answer is not None and bool(case.answer.include or case.answer.exclude)

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        expected = case.answer
        assert expected is not None
        texts = assistant_texts(reply, expected.turn)
        if not texts:
            return _fail(self.name, "missing_turn", f"no assistant message answers user message {expected.turn}")
        text = TextView("\n".join(texts))
        missing = [m.describe() for m in expected.include_matchers if not contains(m, text, expected.normalize)]
        leaked = [m.describe() for m in expected.exclude_matchers if contains(m, text, expected.normalize)]
        failures = ([callmatch.Failure("missing_text", f"answer lacks {', '.join(missing)}")] if missing else []) + (
            [callmatch.Failure("leaked_text", f"answer contains {', '.join(leaked)}")] if leaked else [])
        return _report(self.name, failures)


@dataclass(frozen=True)
class AnswerDecision:
    """The decision the answer states (yes/no, allowed, which status) is the
    expected one: declared phrases per option, negation-aware."""

    name: str = "answerDecision"

    def applies(self, case: GoldenCase) -> bool:
        return case.answer is not None and case.answer.decision is not None

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        assert case.answer is not None and case.answer.decision is not None
        decision = case.answer.decision
        texts = assistant_texts(reply, case.answer.turn)
        stated = decision.matcher.stated(texts)
        wrong = [label for label in stated if label != decision.expect]
        if not wrong and stated:
            return _ok(self.name)
        if not stated:
            if decision.required:
                return _fail(self.name, "no_decision", f"the answer states none of {', '.join(decision.options)}; "
                                                       f"expected {decision.expect}")
            return CheckResult(self.name, True, "ok", "no decision stated")
        said = ", ".join(f"{label} ({', '.join(repr(p) for p in decision_phrases(texts, decision.options[label]))})"
                         for label in wrong)
        if decision.expect in stated:
            return _fail(self.name, "ambiguous_decision", f"the answer states {decision.expect} and also {said}")
        return _fail(self.name, "wrong_decision", f"the answer states {said}, expected {decision.expect}")


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
    ("calls", (ExpectedCalls(), UnexpectedCalls(), CallOrder(), ForbiddenCalls())),
    ("state", (ExpectedState(),)),
    ("answer", (AnswerText(), AnswerDecision())),
)
BUILTIN_CHECKS: tuple[Check, ...] = _ALWAYS_ASKED + tuple(c for _, group in _BY_FIELD for c in group)


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
    """Every applicable check; a check that raises is a failed check, not a crash."""
    results = []
    for check in checks if checks is not None else checks_for(case):
        try:
            results.append(check(case, reply))
        except Exception as exc:  # the check boundary: a broken check is data
            name = getattr(check, "name", None) or getattr(check, "__name__", type(check).__name__)
            results.append(_fail(name, "check_error", f"{type(exc).__name__}: {exc}"))
    return tuple(results)
