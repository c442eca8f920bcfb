"""Tool calling: selection, argument exact/partial match, execution, duplicates, unauthorized attempts.

    >>> argument_score("shoes don't fit", "The shoes do not fit")
    0.5
    >>> argument_score("ORD-102", " ord-102 "), argument_score("ORD-101", "ORD-110")
    (1.0, 0.0)

Denominators, stated once (a trace whose calls were not recorded, or are not
the case's own, counts in none: ``base.with_calls``):
- selection: every traced case that states a tool expectation (unstated means
  unchecked). Right when every expected tool (``expectedTool``
  plus ``requiredTools``) was called and no forbidden one; a case expecting no
  tool (``"expectedTool": null``) is right only with no call at all (the
  toolChoice rule). A case with
  expected ``calls``: every expected tool called, no forbidden tool, and no
  write beyond them (reading first is allowed).
- argument exact/partial: traced cases that expect arguments AND called the
  expected tool (selection is measured apart); the best matching call counts.
- execution success: tool calls, except calls to a tool with an injected fault
  (those are meant to fail). Success is any status but ``error``.
- duplicate side effects: traced cases with at least one write that took effect
  (the write tools are the ones the dataset declares with ``writes: true``).
- unauthorized attempts: tool calls; an attempt is a call that ended ``denied``.
"""

from __future__ import annotations

import re
from operator import attrgetter
from typing import Any, Mapping, Sequence

from tracegrade.checks.callmatch import counts
from tracegrade.checks.builtin import duplicate_writes
from tracegrade.case.schema import GoldenCase
from tracegrade.metrics.base import Rate, Traced, with_calls
from tracegrade.core.trace import Reply, ToolCall

# Stands for the call's first cleaned argument when a case gives only expectedToolArgument.
FIRST_ARGUMENT = "(first argument)"
_WORD = re.compile(r"\w+")
_NAME = attrgetter("name")


def states_selection(case: GoldenCase) -> bool:
    """Whether the case says anything about which tools to call."""
    return bool(case.states_tool_choice() or case.required_tools or case.forbidden_tools
                or (case.calls is not None and case.calls.expected is not None))


def selection_correct(case: GoldenCase, reply: Reply) -> bool:
    if case.calls is not None and case.calls.expected is not None:
        return _calls_selected(case, reply)
    called = set(map(_NAME, reply.tool_calls))
    expected = {case.expected_tool, *case.required_tools}
    expected.discard(None)
    if not called.isdisjoint(case.forbidden_tools):
        return False
    if expected:
        return expected <= called
    return not called if case.states_tool_choice() else True  # only forbidden tools were stated


def _calls_selected(case: GoldenCase, reply: Reply) -> bool:
    """For expected calls: every expected tool called, and no write or forbidden
    tool beyond them (reads before acting are not a wrong selection)."""
    expectations = case.calls.expected or ()  # type: ignore[union-attr]
    forbidden = {p.tool for p in case.calls.forbidden}  # type: ignore[union-attr]
    called = {c.name for c in reply.tool_calls if counts(case, c)}
    # An expected call with its own statuses (an attempt meant to fail) is met by a call ending in one.
    met = all(any(c.name == e.tool and (c.status in e.status if e.status else counts(case, c)) for c in reply.tool_calls)
              for e in expectations)
    stray_writes = {n for n in called - {e.tool for e in expectations} if n in case.write_tools()}
    return met and not stray_writes and not called & forbidden


def expected_arguments(case: GoldenCase) -> dict[str, Any]:
    if case.expected_arguments:
        return dict(case.expected_arguments)
    return {FIRST_ARGUMENT: case.expected_tool_argument} if case.expected_tool_argument is not None else {}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _normal(value: Any) -> str:
    return " ".join(str(value).split()).casefold()


def argument_score(expected: Any, actual: Any) -> float:
    """1.0 when equal after case and whitespace folding; for free text of
    several words, the share of the expected words present (a reworded reason
    earns part credit). A one-word value such as an order id is all or nothing:
    ORD-110 is not half of ORD-101."""
    if actual is None:
        return 0.0
    if type(expected) is str and type(actual) is str and expected == actual:  # WHY first: the usual call, at once
        return 1.0
    if _number(expected) and _number(actual):  # WHY by value: JSON gives 100.0 where a dataset wrote 100
        return 1.0 if expected == actual else 0.0
    if _normal(expected) == _normal(actual):
        return 1.0
    if isinstance(expected, str) and isinstance(actual, str) and len(expected.split()) > 1:
        wanted = _WORD.findall(expected.casefold())
        present = set(_WORD.findall(actual.casefold()))
        return sum(word in present for word in wanted) / len(wanted) if wanted else 0.0
    return 0.0


def call_match(expected: Mapping[str, Any], call: ToolCall) -> tuple[bool, float]:
    """(exact, partial) of one call: exact when every argument scores 1."""
    scores = [argument_score(value, call.argument if key == FIRST_ARGUMENT else call.arguments.get(key))
              for key, value in expected.items()]
    return scores.count(1.0) == len(scores), sum(scores) / len(scores)


def argument_match(case: GoldenCase, reply: Reply) -> tuple[bool, float] | None:
    """The best (exact, partial) over calls to the expected tool; None when not measured."""
    tool = case.expected_tool
    expected = expected_arguments(case) if tool is not None else None
    if not expected:
        return None
    best = None  # WHY a loop, not max() over a list: most replies make one call, and this ran for every one
    for call in reply.tool_calls:
        if call.name == tool:
            match = call_match(expected, call)
            if best is None or match > best:  # the first of the best, as max() gives
                best = match
    return best


# The statuses of a write that took effect, for duplicate side effects.
_TOOK_EFFECT = ("ok", "needs_approval")


def tool_metrics(items: Sequence[Traced]) -> dict[str, Rate]:
    return tool_rates(with_calls(items))


def tool_rates(items: Sequence[Traced]) -> dict[str, Rate]:
    """``tool_metrics`` of items whose calls may be read (``with_calls`` found them already)."""
    selected: list[bool] = []
    exact: list[bool] = []
    partial: list[float] = []
    executed: list[bool] = []  # of the calls to a tool without an injected fault
    duplicated: list[bool] = []  # of the items with a write that took effect
    denied: list[bool] = []  # of every call
    for case, reply in items:  # WHY one loop: every result of a run passes here as it commits
        if states_selection(case):
            selected.append(selection_correct(case, reply))
        if (match := argument_match(case, reply)) is not None:
            exact.append(match[0])
            partial.append(match[1])
        calls = reply.tool_calls
        if not calls:
            continue
        faults = case.faults
        for call in calls:  # WHY one loop for both: most replies make one call, and two lists cost more
            if call.name not in faults:
                executed.append(call.status != "error")
            denied.append(call.status == "denied")
        writes = case.write_tools()
        if writes and any(c.name in writes and c.status in _TOOK_EFFECT for c in calls):
            duplicated.append(bool(duplicate_writes(case, reply)))
    return {
        "tools.selection": Rate.of(selected),
        "tools.argExact": Rate.of(exact),
        "tools.argPartial": Rate.of(partial),
        "tools.execSuccess": Rate.of(executed, unit="calls"),
        "tools.duplicateSideEffects": Rate.of(duplicated),
        "tools.unauthorizedAttempts": Rate.of(denied, unit="calls"),
    }
