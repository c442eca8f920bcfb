"""The trajectory checks: what the agent did, judged against the case's
``tools``, ``calls``, ``state`` and ``answer`` (semantics in docs/trajectory.md).

    >>> from tracegrade.case.schema import GoldenCase
    >>> from tracegrade.core.trace import Reply, ToolCall
    >>> case = GoldenCase.model_validate({"id": "c", "question": "q", "calls": {"expected": [
    ...     {"tool": "book", "arguments": {"flight": "LH1"}}]}})
    >>> ExpectedCalls()(case, Reply(answer="ok", tool_calls=(ToolCall(name="book", arguments={"flight": "LH2"}),))).code
    'wrong_argument_value'

Each is a small frozen dataclass with ``name``, ``applies(case)`` and a call
returning one CheckResult: the first failure's code, every failure in the
detail. The rules they apply live in their own modules: ``callmatch`` (calls
against expectations), ``argmatch`` (the value language), ``toolschema``
(JSON-Schema parameters), ``answers`` and ``textnorm`` (answer text).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from tracegrade.core.results import CheckResult, passed_check as _ok
from tracegrade.core.trace import Reply
from tracegrade.checks import callmatch
from tracegrade.case.answers import TextView, assistant_texts, contains, decision_phrases
from tracegrade.case.argmatch import ObjectOf, assignment
from tracegrade.case.schema import GoldenCase
from tracegrade.case.expectations import ExpectedCall, ToolDeclaration
from tracegrade.case.toolschema import validate


def _fail(name: str, code: str, detail: str) -> CheckResult:
    return CheckResult(name, False, code, detail)


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


def expects_calls(case: GoldenCase) -> bool:
    """Whether the case lists expected calls (``[]`` included: "no write")."""
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
                             for m in validate(declared.parameters, call.arguments, strict=case.strict_integers)]
        return _report(self.name, failures)


@dataclass(frozen=True)
class ExpectedCalls:
    """Every expected call is met by its own call (a multiset): the tool, every
    argument by the value rules, the status and the turn when declared."""

    name: str = "expectedCalls"

    def applies(self, case: GoldenCase) -> bool:
        return expects_calls(case)

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        return _report(self.name, callmatch.unmet(case, reply), _not_counted(case, reply))


@dataclass(frozen=True)
class UnexpectedCalls:
    """The calls left over: a write no expected call asks for, a call too many
    under "exactly", a read where the case allows no other call."""

    name: str = "unexpectedCalls"

    def applies(self, case: GoldenCase) -> bool:
        return expects_calls(case)

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        return _report(self.name, callmatch.leftovers(case, reply), _not_counted(case, reply))


@dataclass(frozen=True)
class CallOrder:
    """The order the case asks for: the listed order ("inOrder"; calls of one
    model round are simultaneous), each expected call ``after`` the ones it
    names (in a later round), and each parallel group in one model round."""

    name: str = "callOrder"

    def applies(self, case: GoldenCase) -> bool:
        if not expects_calls(case):
            return False
        assert case.calls is not None and case.calls.expected is not None
        return case.calls.order == "inOrder" or any(e.parallel or e.after for e in case.calls.expected)

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        assert case.calls is not None
        pairs = callmatch.order_pairs(case)
        if not callmatch.in_order(case, reply, (), parallel=False):
            return CheckResult(self.name, True, "ok", f"not judged: {_unjudged(case, reply)} (see expectedCalls)")
        if callmatch.in_order(case, reply, pairs, parallel=True):
            return _ok(self.name)
        if not callmatch.in_order(case, reply, (), parallel=True):
            return _fail(self.name, "not_parallel", _not_parallel(case, reply))
        broken = callmatch.first_broken(case, reply, pairs)
        assert broken is not None  # every pair together fails, so one of them is the first to
        expected = case.calls.expected or ()
        first, then = _label(expected, broken.first), _label(expected, broken.then)
        rule = f"must come after {first}, in a later model round" if broken.strict else f"must not come before {first}"
        return _fail(self.name, "order", f"{then} {rule}; called {' -> '.join(reply.tool_names())}")


# how the closest call of the right tool misses its expected call, by the failure's code (else: its arguments)
_MISSES = {"wrong_status": "it ended with another status", "wrong_turn": "it followed another user message"}


def _unjudged(case: GoldenCase, reply: Reply) -> str:
    """Which expected call is not met, and how its closest call differs: the order
    cannot be judged without it (expectedCalls says the rest)."""
    expected = _expected(case)
    unmet = callmatch.unmet_calls(case, reply)
    if not unmet:  # WHY kept: in_order and the assignment agree, but a wrong word is better than a crash
        return "an expected call is not met"
    first, wanted = unmet[0], expected[unmet[0].expected]
    if first.closest is None:  # no call of the tool, or none that counts: expectedCalls' own words
        why = first.failure.detail.removeprefix(f"{callmatch.describe_call(wanted)}: ")
    else:
        called = reply.tool_calls[first.closest]
        why = f"call #{first.closest + 1} {called.name} is there, but {_MISSES.get(first.failure.code, 'its arguments differ')}"
    more = f"; {len(unmet) - 1} more expected calls not met" if len(unmet) > 1 else ""
    return f"{_label(expected, first.expected)} is not met: {why}{more}"


def _not_parallel(case: GoldenCase, reply: Reply) -> str:
    """Each parallel group whose calls came in more than one model round: its calls and their rounds."""
    expected = _expected(case)
    given = assignment(callmatch.fits(case, reply))
    groups: dict[str, list[int]] = {}
    for i, e in enumerate(expected):
        if e.parallel is not None and i in given:
            groups.setdefault(e.parallel, []).append(given[i])
    split = []
    for label, calls in groups.items():
        rounds = [reply.tool_calls[j].round for j in sorted(calls)]
        if None in rounds or len(set(rounds)) > 1:
            split.append(f"group {label!r}: " + ", ".join(
                f"call #{j + 1} {reply.tool_calls[j].name} in {_round(reply.tool_calls[j].round)}" for j in sorted(calls)))
    said = "; ".join(split) if split else "no choice of the calls puts each group in one round"
    return f"the calls of a parallel group were not made in one model round: {said}"


def _round(number: int | None) -> str:
    return f"round {number}" if number is not None else "no recorded round"


def _expected(case: GoldenCase) -> Sequence[ExpectedCall]:
    return callmatch.settings(case).expected or ()


def _label(expected: Sequence[ExpectedCall], index: int) -> str:
    call = expected[index]
    return f"{call.id} ({callmatch.describe_call(call)})" if call.id else f"expected call #{index + 1} {callmatch.describe_call(call)}"


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
        failures = [callmatch.Failure(_STATE_CODES[m.kind], m.describe()) for m in shape.match(reply.state, "", case.comparison)]
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
