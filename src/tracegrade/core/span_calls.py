"""A trace's tool calls: each tool span paired with the call a model round asked for.

A requested call is paired with its tool span by id (else by name and arguments, else by
name): the tool span wins, and a call is never counted twice. A requested call no tool
span ran is a call of its own, its result read from a later round's input. On top:

- **one call id is one call**: a second tool span with the id is the same call, unless it
  names another tool, and then the trace cannot say which ran (``Calls.problem``);
- **a tool span and the request it answers must agree** on the arguments: where they do
  not, the trace says so rather than pick one;
- **framework calls** (core/frameworks.py): a handoff (the Agents SDK's ``transfer_to_*``
  request and its ``handoff to <agent>`` span are one event; LlamaIndex's ``handoff``) is
  a call with ``handoff`` set; a terminal tool (smolagents' ``final_answer``) is the answer,
  not a call.
"""

from __future__ import annotations

import bisect
import json
from collections import deque
from dataclasses import dataclass
from typing import Any, Mapping

from tracegrade.core.frameworks import agent_key, handoff_target, terminal_answer, tool_failed
from tracegrade.core.from_messages import parse_arguments
from tracegrade.core.span_messages import Asked, Round
from tracegrade.core.span_tools import handoff_span_target, tool_call, tool_descriptions
from tracegrade.core.spans import Span


@dataclass
class Parts:
    """A trace's spans (by start) with what is worked out once per span; ``models`` are
    the model calls by end, ``round_of`` each one's round (a call recorded by two
    instrumentations, one span inside the other, is one round)."""

    spans: list[Span]
    kinds: list[str]
    models: list[tuple[Span, Round]]
    round_of: list[int]


@dataclass(frozen=True)
class Calls:
    """The calls of a trace; ``problem`` says why they cannot be graded ("" when they can),
    ``answer`` is a framework's terminal tool's answer ("" when none)."""

    calls: list[dict[str, Any]]
    problem: str = ""
    answer: str = ""


def read_calls(parts: Parts) -> Calls:
    """Every call once, in the order it happened: each tool span (with the request it
    answers), then each requested call no tool span ran, at the end of its round."""
    requests = _Requests(parts)
    tools, calls, handoffs, problems = _tool_calls(parts)
    paired = [requests.take_exact(call) for call in calls]
    paired = [asked or requests.take_by_name(call) for call, asked in zip(calls, paired)]
    problems += [said for said in (_disagree(call, asked[1]) for call, asked in zip(calls, paired) if asked) if said]
    results = {call_id: text for _, r in parts.models for call_id, text in r.results.items()}
    ends = [s.end_ns for s, _ in parts.models]
    timed: list[tuple[int, int, dict[str, Any]]] = []
    for n, (span, call, asked) in enumerate(zip(tools, calls, paired)):
        at = asked[0] if asked else (max(bisect.bisect_right(ends, span.start_ns) - 1, 0) if ends else None)
        round_ = parts.round_of[at] if at is not None else None
        timed.append((span.start_ns, n, _joined(call, asked[1] if asked else None, round_, results)))
    for n, (m, request) in enumerate(requests.left(), len(timed)):
        call = {"name": request.name, "arguments": parse_arguments(request.arguments), "result": "", "status": "ok",
                "id": request.call_id or None}
        timed.append((ends[m], n, _joined(call, None, parts.round_of[m], results)))
    ordered = [call for _, _, call in sorted(timed, key=lambda t: (t[0], t[1]))]
    return _framework_calls(parts, ordered, handoffs, "; ".join(problems[:3]))


def _framework_calls(parts: Parts, calls: list[dict[str, Any]], handoffs: list[str], problem: str) -> Calls:
    """Handoffs marked (one event whichever way it was recorded), terminal calls taken out as the answer."""
    described = tool_descriptions([s for s, _ in parts.models])
    kept: list[dict[str, Any]] = []
    answer = ""
    for call in calls:
        said = terminal_answer(call["name"], call["arguments"])
        if said is not None:
            answer = said or answer
            continue
        target = handoff_target(call["name"], call["arguments"], described.get(call["name"], ""))
        kept.append({**call, "handoff": target} if target else call)
    # WHY queues by agent: each handoff span looks at the requests for its agent only (linear)
    transfers: dict[str, deque[dict[str, Any]]] = {}
    done: set[str] = set()
    for call in kept:
        if call.get("handoff"):
            done.add(agent_key(call["handoff"]))
        elif call["name"].startswith("transfer_to_"):
            transfers.setdefault(agent_key(call["name"]), deque()).append(call)
    for target in handoffs:  # an Agents SDK handoff span: the request it carried out, else a call of its own
        key = agent_key(target)
        waiting = transfers.get(key)
        if waiting:
            waiting.popleft()["handoff"] = target
        elif key not in done:
            kept.append({"name": f"transfer_to_{key}", "arguments": {}, "argument": None, "result": "",
                         "status": "ok", "id": None, "handoff": target})
        done.add(key)
    return Calls(kept, problem, answer)


def _tool_calls(parts: Parts) -> tuple[list[Span], list[dict[str, Any]], list[str], list[str]]:
    """The tool spans and their calls, less a second span of the same call: the same id,
    or a tool span directly inside one of the same name and arguments (two instrumentations
    of one call); the Agents SDK's handoff spans apart; and what makes the calls ambiguous
    (one id claimed by two tools)."""
    spans: list[Span] = []
    calls: list[dict[str, Any]] = []
    handoffs: list[str] = []
    problems: list[str] = []
    names: dict[str, str] = {}
    keys: dict[str, tuple[str, str]] = {}
    for span, kind in zip(parts.spans, parts.kinds):
        if kind != "tool":
            continue
        target = handoff_span_target(span)
        if target is not None:
            handoffs.append(target)
            continue
        call = tool_call(span)
        key = (call["name"], arguments_key(call["arguments"]))
        if call["id"] and call["id"] in names:
            if names[call["id"]] != call["name"]:
                problems.append(f"call id {call['id'][:80]!r} is claimed by two tools, {names[call['id']][:80]!r} "
                                f"and {call['name'][:80]!r}: which one ran cannot be told")
            continue
        if keys.get(span.parent_id) == key:
            continue
        if call["id"]:
            names[call["id"]] = call["name"]
        keys[span.span_id] = key
        spans.append(span)
        calls.append(call)
    return spans, calls, handoffs, problems


def _disagree(call: Mapping[str, Any], asked: Asked) -> str:
    """Why a tool span and the request it answers cannot both be right ("" when they agree):
    another tool, or other arguments, for one call."""
    requested = parse_arguments(asked.arguments)
    ran = call["arguments"]
    if asked.name and asked.name != call["name"]:
        return (f"call {asked.call_id[:80] or call['name'][:80]!r}: the model asked for {asked.name[:80]!r} but the "
                f"tool span ran {call['name'][:80]!r}")
    if not requested or not ran or "_raw" in requested or "_raw" in ran:
        return ""
    if arguments_key(requested) == arguments_key(ran):
        return ""
    return (f"call {call['name'][:80]!r}: the tool span ran it with {_shown(ran)} but the model asked for "
            f"{_shown(requested)}; which is the call cannot be told")


def _shown(arguments: Mapping[str, Any]) -> str:
    text = arguments_key(arguments)
    return text[:150] + ("..." if len(text) > 150 else "")


def _joined(call: dict[str, Any], asked: Asked | None, round_: int | None,
            results: Mapping[str, str]) -> dict[str, Any]:
    """A call with what its request adds: the arguments when the tool span's are missing
    or unreadable, the id, the result a later round sent back when the span had none."""
    if asked is not None:
        requested = parse_arguments(asked.arguments)
        if requested and (not call["arguments"] or set(call["arguments"]) == {"_raw"}):
            call = {**call, "arguments": requested}
        call = {**call, "id": call["id"] or asked.call_id or None}
    if not call["result"] and call["id"]:
        call = {**call, "result": results.get(call["id"], "")}
    if call["status"] == "ok" and tool_failed(str(call["result"])):  # a framework caught the error: said, not raised
        call = {**call, "status": "error"}
    first = next(iter(call["arguments"].values()), None)
    return {**call, "argument": first if isinstance(first, str) else None,
            **({"round": round_} if round_ is not None else {})}


def arguments_key(arguments: Mapping[str, Any]) -> str:
    try:
        return json.dumps(arguments, sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):  # keys of mixed types, values that are not JSON
        return repr([str(key) for key in arguments])


class _Requests:
    """The calls the model rounds asked for, each taken at most once: by id, else by name
    and arguments, else by name, first asked first taken. A tool span with an id takes a
    request with that id, or one without an id, never one with another id. WHY queues with
    a taken flag: every request is looked at a bounded number of times, so pairing stays linear."""

    def __init__(self, parts: Parts) -> None:
        self.asked: list[tuple[int, Asked]] = []
        self.taken: list[bool] = []
        self.by_id: dict[str, int] = {}
        # [0]: every request, for a tool span without an id; [1]: those without an id
        self.by_key: tuple[dict[tuple[str, str], deque[int]], ...] = ({}, {})
        self.by_name: tuple[dict[str, deque[int]], ...] = ({}, {})
        ids: set[str] = set()
        keys_of: dict[str, set[tuple[str, str]]] = {}  # model span id: what it asked for
        by_start = sorted(range(len(parts.models)), key=lambda m: parts.models[m][0].start_ns)  # parents first
        for m in by_start:
            span, round_ = parts.models[m]
            keys_of[span.span_id] = set()
            for asked in round_.asked:
                key = (asked.name, arguments_key(parse_arguments(asked.arguments)))
                keys_of[span.span_id].add(key)
                # WHY: one request on two spans of one model call (a framework's and the SDK's
                # instrumentor): the same id, or, without ids, the same call inside its parent's
                if asked.call_id in ids or (not asked.call_id and key in keys_of.get(span.parent_id, ())):
                    continue
                if asked.call_id:
                    ids.add(asked.call_id)
                self._add(m, asked, key)

    def _add(self, m: int, asked: Asked, key: tuple[str, str]) -> None:
        n = len(self.asked)
        self.asked.append((m, asked))
        self.taken.append(False)
        if asked.call_id:
            self.by_id.setdefault(asked.call_id, n)
        for anonymous in (False, True) if not asked.call_id else (False,):
            self.by_key[anonymous].setdefault(key, deque()).append(n)
            self.by_name[anonymous].setdefault(asked.name, deque()).append(n)

    def take_exact(self, call: Mapping[str, Any]) -> tuple[int, Asked] | None:
        """The request with the call's id, else one with its name and arguments."""
        if call["id"] and call["id"] in self.by_id:
            return self._take(self.by_id[call["id"]])
        if not call["arguments"]:
            return None
        return self._pop(self.by_key[bool(call["id"])].get((call["name"], arguments_key(call["arguments"]))))

    def take_by_name(self, call: Mapping[str, Any]) -> tuple[int, Asked] | None:
        return self._pop(self.by_name[bool(call["id"])].get(call["name"]))

    def _pop(self, queue: deque[int] | None) -> tuple[int, Asked] | None:
        while queue:
            n = queue.popleft()
            if not self.taken[n]:
                return self._take(n)
        return None

    def _take(self, n: int) -> tuple[int, Asked] | None:
        if self.taken[n]:
            return None
        self.taken[n] = True
        return self.asked[n]

    def left(self) -> list[tuple[int, Asked]]:
        return [asked for asked, taken in zip(self.asked, self.taken) if not taken]
