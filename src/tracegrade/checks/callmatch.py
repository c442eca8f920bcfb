"""Expected calls against the calls of a trace: which call satisfies which
expectation, which calls are left over, and why an expectation is not met.

    >>> from tracegrade.case.schema import GoldenCase
    >>> from tracegrade.core.trace import Reply, ToolCall
    >>> case = GoldenCase.model_validate({"id": "c", "question": "q", "calls": {"expected": [
    ...     {"tool": "book", "arguments": {"flight": "LH1", "seats": 2}}]}})
    >>> reply = Reply(answer="ok", tool_calls=(ToolCall(name="book", arguments={"seats": 2, "flight": "LH2"}),))
    >>> [(f.code, f.detail) for f in unmet(case, reply)]
    [('wrong_argument_value', 'book(flight="LH1", seats=2): call #1: \\'flight\\': expected string "LH1", got string "LH2"')]

A call *counts* when it took effect (status ``ok`` or ``needs_approval``),
or whatever its status when the case says ``"counted": "attempted"``; an
expected call with its own ``status`` list is met only by a call ending in
one of those statuses.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from tracegrade.core.trace import Reply, ToolCall
from tracegrade.case.argmatch import MISSING, ListOf, ObjectOf, Unordered, assignment
from tracegrade.case.expectations import CallExpectations, CallPattern, ExpectedCall

if TYPE_CHECKING:
    from tracegrade.case.schema import GoldenCase

EFFECTIVE = ("ok", "needs_approval")
ARGUMENT_CODES = {"value": "wrong_argument_value", "type": "wrong_argument_type", "missing": "missing_argument",
                  "unexpected": "unexpected_argument", "unknown": "unknown_argument"}
_DEFAULTS = CallExpectations()


@dataclass(frozen=True)
class Failure:
    code: str
    detail: str


def settings(case: GoldenCase) -> CallExpectations:
    return case.calls or _DEFAULTS


def counts(case: GoldenCase, call: ToolCall) -> bool:
    """Whether a call counts: it took effect, or the case counts every attempt."""
    return call.status in EFFECTIVE or settings(case).counted == "attempted"


_SHAPES: dict[int, tuple[CallPattern, object, bool, ObjectOf]] = {}


def _shape(case: GoldenCase, expected: CallPattern, partial: bool) -> ObjectOf:
    """The arguments an expectation asks for, with its tool's defaults, compiled once.

    WHY keyed by identity and checked: patterns are frozen, so the same object
    always gives the same shape; a recycled id is caught by the ``is`` test.
    """
    declared = case.tool(expected.tool)
    hit = _SHAPES.get(id(expected))
    if hit is not None and hit[0] is expected and hit[1] is declared and hit[2] == partial:
        return hit[3]
    shape = ObjectOf(_fields(expected), allow_other=partial, defaults=declared.defaults if declared else {})
    if len(_SHAPES) > 4096:
        _SHAPES.clear()
    _SHAPES[id(expected)] = (expected, declared, partial, shape)
    return shape


def _fields(expected: CallPattern) -> dict[str, Any]:
    """The matchers of the arguments; each group of paired lists becomes one list of
    pairs compared in any order (``a+b``: ``[[a0, b0], [a1, b1], ...]``)."""
    fields = dict(expected.matchers)
    for group in expected.pairs if isinstance(expected, ExpectedCall) else ():
        lists = [fields.pop(key) for key in group]
        fields["+".join(group)] = Unordered(tuple(ListOf(items) for items in zip(*(m.items for m in lists))))
    return fields


def _arguments(expected: CallPattern, call: ToolCall) -> dict[str, Any]:
    """The call's arguments as ``_fields`` sees them: each group's lists zipped
    into pairs (a list short of items pairs with nothing, so no pair of it matches)."""
    if not isinstance(expected, ExpectedCall) or not expected.pairs:
        return call.arguments
    arguments = dict(call.arguments)
    for group in expected.pairs:
        given = [arguments.pop(key) for key in group if key in arguments]
        if len(given) < len(group):
            continue  # one missing: the pairs are missing
        lists = all(isinstance(v, (list, tuple)) for v in given)
        arguments["+".join(group)] = ([list(pair) for pair in itertools.zip_longest(*given, fillvalue=MISSING)]
                                      if lists else next(v for v in given if not isinstance(v, (list, tuple))))
    return arguments


def meets(case: GoldenCase, expected: CallPattern, call: ToolCall, partial: bool = False) -> bool:
    """Whether a call meets the expectation (the tool is the caller's to compare)."""
    if isinstance(expected, ExpectedCall):
        if expected.status and call.status not in expected.status:
            return False
        if not expected.status and not counts(case, call):
            return False
        if expected.turn is not None and (call.turn or 1) != expected.turn:
            return False
        partial = expected.other_arguments == "allow"
    if expected.arguments is None:
        return True
    return not _shape(case, expected, partial).match(_arguments(expected, call), "", case.comparison)


def problems(case: GoldenCase, expected: CallPattern, call: ToolCall, partial: bool = False) -> list[tuple[str, str]]:
    """(code, text) for each way a call of the right tool differs from the expectation.

    WHY "not_counted" comes last: a call that failed because an argument was
    missing is named by the missing argument, the failure is its consequence.
    """
    found: list[tuple[str, str]] = []
    late: list[tuple[str, str]] = []
    if isinstance(expected, ExpectedCall):
        if expected.status and call.status not in expected.status:
            found.append(("wrong_status", f"ended {call.status}, expected {' or '.join(expected.status)}"))
        elif not expected.status and not counts(case, call):
            late.append(("not_counted", f"ended {call.status}, which does not count"))
        if expected.turn is not None and (call.turn or 1) != expected.turn:
            found.append(("wrong_turn", f"followed user message {call.turn or 1}, expected {expected.turn}"))
        partial = expected.other_arguments == "allow"
    if expected.arguments is not None:
        shape = _shape(case, expected, partial)
        found += [(ARGUMENT_CODES[m.kind], m.describe())
                  for m in shape.match(_arguments(expected, call), "", case.comparison)]
    return found + late


_LAST: tuple[object, object, list[list[int]]] | None = None


def fits(case: GoldenCase, reply: Reply) -> list[list[int]]:
    """For each expected call, the indices of the trace's calls that meet it (do not mutate).

    WHY remember the last answer: three checks (expected, unexpected, order)
    ask it in a row for the same case and reply; the identity test makes a
    stale or another thread's entry a miss, never a wrong answer.
    """
    global _LAST
    last = _LAST
    if last is not None and last[0] is case and last[1] is reply:
        return last[2]
    expected = settings(case).expected or ()
    calls = reply.tool_calls
    found = [[j for j, call in enumerate(calls) if call.name == e.tool and meets(case, e, call)] for e in expected]
    _LAST = (case, reply, found)
    return found


@dataclass(frozen=True)
class Unmet:
    """An expected call (its index) no call meets, why, and the call closest to it (None: no call of its tool)."""

    expected: int
    failure: Failure
    closest: int | None


def unmet(case: GoldenCase, reply: Reply) -> list[Failure]:
    """One failure per expected call no call meets, with the closest call's differences."""
    return [u.failure for u in unmet_calls(case, reply)]


def near_misses(case: GoldenCase, reply: Reply) -> set[int]:
    """The calls ``unmet`` named as the closest attempt at an expected call: their
    fault is reported there, once, and not again as a call nobody asked for."""
    return {u.closest for u in unmet_calls(case, reply) if u.closest is not None}


_LAST_UNMET: tuple[object, object, list[Unmet]] | None = None


def unmet_calls(case: GoldenCase, reply: Reply) -> list[Unmet]:
    """Each expected call no call meets, in the list's order (do not mutate).

    WHY remembered like ``fits``: expectedCalls, unexpectedCalls and callOrder ask
    it for the same case and reply, and the diagnosis compares every argument."""
    global _LAST_UNMET
    last = _LAST_UNMET
    if last is not None and last[0] is case and last[1] is reply:
        return last[2]
    found = _diagnosed(case, reply)
    _LAST_UNMET = (case, reply, found)
    return found


def _diagnosed(case: GoldenCase, reply: Reply) -> list[Unmet]:
    matched = fits(case, reply)
    given = assignment(matched)
    used = set(given.values())
    expected = settings(case).expected or ()
    found = []
    for i, e in enumerate(expected):
        if i not in given:
            failure, blamed = _diagnose(case, reply, e, used)
            used |= {blamed} if blamed is not None else set()  # WHY: one wrong call is the near miss of one expectation
            found.append(Unmet(i, failure, blamed))
    return found


def _diagnose(case: GoldenCase, reply: Reply, expected: ExpectedCall, used: set[int]) -> tuple[Failure, int | None]:
    wanted = describe_call(expected)
    same_tool = [j for j, c in enumerate(reply.tool_calls) if c.name == expected.tool]
    if not same_tool:
        called = ", ".join(reply.tool_names()) or "nothing"
        return Failure("missing_call", f"{wanted}: {expected.tool} not called (called {called})"), None
    free = [j for j in same_tool if j not in used]
    if not free:
        return Failure("missing_call", f"{wanted}: every call of {expected.tool} meets another expected call"), None
    ranked = sorted(free, key=lambda j: (len(problems(case, expected, reply.tool_calls[j])), j))
    best = ranked[0]
    found = problems(case, expected, reply.tool_calls[best])
    if found[0][0] == "not_counted":
        return Failure("missing_call", f"{wanted}: call #{best + 1} {found[0][1]}"), None
    detail = "; ".join(text if n == 0 else f"{code}: {text}" for n, (code, text) in enumerate(found))
    return Failure(found[0][0], f"{wanted}: call #{best + 1}: {detail}"), best


def leftovers(case: GoldenCase, reply: Reply) -> list[Failure]:
    """Counted calls no expected call took, where the case does not allow them.

    WHY a call a forbidden pattern matches is left out: ``forbidden`` reports it,
    and one forbidden cancel reported twice (as a write nobody asked for too) read
    as two faults."""
    config = settings(case)
    expected = config.expected or ()
    matched = fits(case, reply)
    used = set(assignment(matched).values())
    reported = {j for j, _ in _forbidden_matches(case, reply)}
    named = {e.tool for e in expected}
    failures: list[Failure] = []
    over = sorted({c.name for j, c in enumerate(reply.tool_calls)
                   if j not in used and j not in reported and c.name in named and counts(case, c)})
    if config.count == "exactly":
        for tool in over:
            n_calls = sum(1 for j, c in enumerate(reply.tool_calls)
                          if c.name == tool and counts(case, c) and j not in reported)
            n_expected = sum(1 for e in expected if e.tool == tool)
            if n_calls > n_expected:  # fewer or as many: a call that does not match is expectedCalls' to name
                failures.append(Failure("call_count", f"{tool} called {n_calls} times, expected exactly {n_expected}"))
    repeats = {j for row in matched for j in row}  # calls that meet an expectation another call took
    blamed = near_misses(case, reply)
    for j, call in enumerate(reply.tool_calls):
        if j in used or j in reported or j in blamed or not counts(case, call):
            continue
        if j in repeats and config.count == "atLeast":
            continue  # a repeat of an expected call: allowed; duplicateCalls judges an identical write
        if call.name in named and config.count == "exactly" and (j in repeats or not _writes(case, call)):
            continue  # counted in call_count above
        failure = _extra(case, call, j, config.others)
        if failure:
            failures.append(failure)
    return sorted(failures, key=lambda f: _SEVERITY.index(f.code))


def _writes(case: GoldenCase, call: ToolCall) -> bool:
    declared = case.tool(call.name)
    return declared is not None and declared.writes


_SEVERITY = ("unexpected_write", "call_count", "unexpected_call")


def _extra(case: GoldenCase, call: ToolCall, index: int, others: str) -> Failure | None:
    if others == "any":
        return None
    declared = case.tool(call.name)
    label = f"call #{index + 1} {describe_actual(call)}"
    if declared is None:
        return Failure("unexpected_call", f"{label}: the tool is not declared, so it may write; declare it "
                                          f"with writes: false to allow it as a read")
    if declared.writes:
        return Failure("unexpected_write", f"{label} changes state and no expected call asks for it")
    if others == "none":
        return Failure("unexpected_call", f"{label}: no call besides the expected ones is allowed")
    return None


@dataclass(frozen=True)
class Before:
    """Expected call ``first`` comes before expected call ``then`` (indices in the
    list); ``strict``: in a later slot, not in the same model round."""

    first: int
    then: int
    strict: bool


def order_pairs(case: GoldenCase) -> list[Before]:
    """The order the case asks for: each neighbour pair of the list under
    "inOrder" (a model round counts as simultaneous), then each ``after``."""
    config = settings(case)
    expected = config.expected or ()
    pairs = [Before(i - 1, i, False) for i in range(1, len(expected))] if config.order == "inOrder" else []
    index = {e.id: i for i, e in enumerate(expected) if e.id is not None}
    return pairs + [Before(index[name], i, True) for i, e in enumerate(expected) for name in e.after]


def in_order(case: GoldenCase, reply: Reply, pairs: Sequence[Before], parallel: bool) -> bool:
    """Whether one assignment meets every expected call, keeps every pair in
    order, and (``parallel``) puts each parallel group in one round."""
    expected = settings(case).expected or ()
    matched = fits(case, reply)
    slots = _slots(reply.tool_calls)
    rounds = [c.round for c in reply.tool_calls]
    # WHY by the later index: a pair is tested when both of its calls are chosen.
    due: dict[int, list[Before]] = {}
    for pair in pairs:
        due.setdefault(max(pair.first, pair.then), []).append(pair)
    chosen: list[int] = []

    def keeps(pair: Before) -> bool:
        a, b = slots[chosen[pair.first]], slots[chosen[pair.then]]
        return a < b if pair.strict else a <= b

    def extend(i: int) -> bool:
        if i == len(expected):
            return True
        for j in matched[i]:
            if j in chosen or (parallel and not _same_round(expected, chosen, i, j, rounds)):
                continue
            chosen.append(j)
            if all(keeps(pair) for pair in due.get(i, ())) and extend(i + 1):
                return True
            chosen.pop()
        return False

    return extend(0)


def first_broken(case: GoldenCase, reply: Reply, pairs: Sequence[Before]) -> Before | None:
    """The pair that makes the order impossible: pairs are added in the order the
    case states them, and the first one no assignment can keep with those before it."""
    kept: list[Before] = []
    for pair in pairs:
        if not in_order(case, reply, kept + [pair], parallel=True):
            return pair
        kept.append(pair)
    return None


def _slots(calls: Sequence[ToolCall]) -> list[int]:
    """Positions in time: consecutive calls of one model round share a slot."""
    slots, slot = [], -1
    for i, call in enumerate(calls):
        if i == 0 or call.round is None or call.round != calls[i - 1].round:
            slot += 1
        slots.append(slot)
    return slots


def _same_round(expected: Sequence[ExpectedCall], chosen: list[int], i: int, j: int, rounds: list[int | None]) -> bool:
    label = expected[i].parallel
    if label is None:
        return True
    if rounds[j] is None:
        return False
    return all(rounds[chosen[k]] == rounds[j] for k in range(len(chosen)) if expected[k].parallel == label)


def forbidden(case: GoldenCase, reply: Reply) -> list[Failure]:
    """Counted calls that match a forbidden pattern (only the listed arguments are compared)."""
    return [Failure("forbidden_call", f"call #{j + 1} {describe_actual(reply.tool_calls[j])} matches forbidden "
                                      f"{describe_call(p)}") for j, p in _forbidden_matches(case, reply)[:20]]


def _forbidden_matches(case: GoldenCase, reply: Reply) -> list[tuple[int, CallPattern]]:
    """(call index, the forbidden pattern it matches) for each counted call, each pattern."""
    patterns = settings(case).forbidden
    if not patterns:
        return []
    return [(j, p) for j, call in enumerate(reply.tool_calls) if counts(case, call)
            for p in patterns if p.tool == call.name and meets(case, p, call, partial=True)]


def describe_call(pattern: CallPattern) -> str:
    if pattern.arguments is None:
        return f"{pattern.tool}(...)"
    text = f"{pattern.tool}(" + ", ".join(f"{k}={_short(m)}" for k, m in pattern.matchers.items()) + ")"
    return text if len(text) <= 160 else text[:157] + "..."


def _short(matcher: object) -> str:
    text: str = matcher.describe()  # type: ignore[attr-defined]
    for kind in ("string ", "integer ", "number ", "boolean ", "array ", "object ", "null "):
        text = text.replace(kind, "")
    return text


def describe_actual(call: ToolCall) -> str:
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in call.arguments.items())
    text = f"{call.name}({args}) {call.status}"
    return text if len(text) <= 160 else text[:157] + "..."
