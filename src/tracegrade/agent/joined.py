"""Recorded traces (``agent/recorded.py``) matched to a dataset's cases: what belongs
together is joined, what is ambiguous is refused.

- A trace names its case by id (``caseId``, or the span attribute ``tracegrade.case_id``),
  else by its question, which must equal the case's question exactly (whitespace aside).
- **Turns**: traces that carry one session or conversation id (OpenInference ``session.id``,
  GenAI ``gen_ai.conversation.id``) are one conversation, a turn each, in the order they
  began, a case's question starting the next; one call id is one call across them (a turn
  that replays memory adds no call).
  A conversation must hold the case's turns (its question, then its ``followUps``).
- **Two runs**: two traces for one case that nothing joins are two runs of it: the case is
  not graded, naming both (``latest=True``: the one that began last is graded).
- **Fragments**: orphaned traces (no root span, no case id, no conversation id) are never
  graded as the case: a case whose only traces are such fragments is not graded.
- A later turn of a case recorded as a trace of its own, with nothing joining it to the
  first, leaves the case not graded (its first turn alone is not the conversation).

Everything is linear in the number of traces (sorting aside).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from tracegrade.agent.recorded import Recorded
from tracegrade.agent.capture.target import PROVENANCE_SET
from tracegrade.core.from_otel import ORPHAN_SAID
from tracegrade.core.redact import redact
from tracegrade.core.errors import UngradableTrace
from tracegrade.core.trace import Reply
from tracegrade.agent.conversation import WHOLE_CONVERSATIONS
from tracegrade.case.schema import GoldenCase
from tracegrade.agent.turns import join

JOIN_FIX = ("record a session id on every turn's spans (OpenInference: using_session(id); GenAI: "
            "gen_ai.conversation.id) or the case id (tracegrade.case_id)")


@dataclass
class Matched:
    replies: dict[str, Reply] = field(default_factory=dict)
    unmatched: list[str] = field(default_factory=list)  # traces that name no case of the dataset
    duplicates: list[str] = field(default_factory=list)  # traces not graded beside a case's graded one
    unscored: dict[str, str] = field(default_factory=dict)  # case id: why it is not graded (its traces are ambiguous)
    orphaned: int = 0  # traces among those that are orphaned (their fix is said once)


def match(cases: Sequence[GoldenCase], recorded: Sequence[Recorded], latest: bool = False) -> Matched:
    """Each trace (or conversation of traces) given to the case it names; what names no case,
    names a case twice or is only a fragment of one is listed, and such a case is not graded."""
    by_id = {c.id: c for c in cases}
    by_question: dict[str, str] = {}
    later_turn: dict[str, tuple[str, int]] = {}  # a follow-up's text: its case and turn
    for case in cases:
        by_question.setdefault(case.question.strip(), case.id)
        for turn, message in enumerate(case.follow_ups, 2):
            later_turn.setdefault(message.strip(), (case.id, turn))
    matched = Matched()
    candidates: dict[str, list[Recorded]] = {}
    detached: dict[str, list[str]] = {}
    for trace in _conversations(recorded, set(by_question)):
        case_id = trace.case_id if trace.case_id in by_id else by_question.get(trace.question.strip())
        if case_id is not None:
            candidates.setdefault(case_id, []).append(trace)
        elif trace.question.strip() in later_turn and not trace.orphan:
            owner, turn = later_turn[trace.question.strip()]
            detached.setdefault(owner, []).append(f"turn {turn} in {trace.where}")
        else:
            matched.unmatched.append(f"{trace.where}: {_not_in_dataset(trace)}")
            matched.orphaned += bool(trace.orphan)
    for case_id, traces in candidates.items():
        _choose(matched, by_id[case_id], traces, detached.pop(case_id, []), latest)
    for case_id, turns in detached.items():
        matched.unscored[case_id] = (f"{'; '.join(turns[:3])} came as a trace of its own, and its "
                                f"first turn has no trace; {JOIN_FIX}")
    return matched


def _choose(matched: Matched, case: GoldenCase, traces: list[Recorded], detached: list[str], latest: bool) -> None:
    """The one trace graded for ``case``, or why none is."""
    whole = [t for t in traces if not t.orphan]
    for piece in (t for t in traces if t.orphan):
        matched.duplicates.append(f"{piece.where}: a fragment of case {case.id}'s trace, not graded; {ORPHAN_SAID}")
        matched.orphaned += 1
    if not whole:
        matched.unscored[case.id] = (f"only fragments of its trace were recorded ({len(traces)} trace(s) "
                                f"with no root span, no case id and no conversation id to join them): {JOIN_FIX}, "
                                "or start a span of the agent's own around each question")
        return
    if detached:
        matched.unscored[case.id] = (f"{'; '.join(detached[:3])} came as a trace of its own, apart from "
                                f"its first turn in {whole[0].where}: the conversation cannot be put together; "
                                f"{JOIN_FIX}")
        return
    whole.sort(key=lambda t: t.start_ns)
    if len(whole) > 1 and not latest:
        named = " and ".join(t.where for t in whole[-2:]) + (f" ({len(whole) - 2} more)" if len(whole) > 2 else "")
        matched.unscored[case.id] = (f"traces of {len(whole)} runs, {named}: which one to grade cannot be "
                                "told; keep one run in the files, or --latest grades the one that began last")
        return
    chosen = whole[-1]
    for other in whole[:-1]:
        matched.duplicates.append(f"{other.where}: an earlier run of case {case.id} (--latest grades {chosen.where})")
    wrong = _turns_differ(case, chosen)
    if wrong:
        matched.unscored[case.id] = wrong
        return
    matched.replies[case.id] = chosen.reply


def _turns_differ(case: GoldenCase, trace: Recorded) -> str:
    """Why a conversation's turns are not the case's ("" when they are, or the case has no script)."""
    if case.user is not None or not trace.reply.turns:
        return ""
    said = [m.content.strip() for m in trace.reply.turns if m.role == "user"]
    wanted = [m.strip() for m in (case.question, *case.follow_ups)]
    if said == wanted:
        return ""
    return (f"the conversation in {trace.where} holds {len(said)} user turn(s) where the case has {len(wanted)} "
            "(or in another order): one session id was used for more than one conversation, or a run was cut")


def _conversations(recorded: Sequence[Recorded], openings: set[str]) -> list[Recorded]:
    """The recorded traces, those of one conversation id joined into one, a turn each. WHY a
    case's question starts a new conversation within one id: an agent that keeps one session
    id for every conversation (a constant, a user's id) would join every case into one."""
    groups: dict[str, list[Recorded]] = {}
    single: list[Recorded] = []
    for trace in recorded:
        if trace.conversation and not trace.orphan:
            groups.setdefault(trace.conversation, []).append(trace)
        else:
            single.append(trace)
    for traces in groups.values():
        part: list[Recorded] = []
        for trace in sorted(traces, key=lambda t: t.start_ns):
            if part and (trace.question.strip() in openings or (trace.case_id and trace.case_id != part[0].case_id)):
                single.append(_joined(part))
                part = []
            part.append(trace)
        single.append(_joined(part))
    return single


def _joined(turns: list[Recorded]) -> Recorded:
    """One conversation's traces as one, each a turn. WHY the calls by id once: a later turn's
    spans may replay what memory holds of an earlier turn's calls, which are not new calls."""
    if len(turns) == 1:
        return turns[0]
    reply = join([t.question for t in turns], [t.reply for t in turns])
    seen: set[str] = set()
    calls = []
    for call in reply.tool_calls:
        if call.id and call.id in seen:
            continue
        seen.add(call.id or "")
        calls.append(call)
    first = turns[0]
    case_id = next((t.case_id for t in turns if t.case_id), None)
    where = f"conversation {redact(first.conversation[:80])!r} ({len(turns)} traces, the first {first.where})"
    return replace(first, where=where, case_id=case_id, reply=reply.model_copy(update={"tool_calls": tuple(calls)}))


def _not_in_dataset(trace: Recorded) -> str:
    """Why a trace matched no case. WHY redacted: a question can hold a key or an e-mail."""
    if trace.orphan:
        return ORPHAN_SAID
    named = f"case id {trace.case_id[:80]!r}" if trace.case_id else f"question {trace.question[:80]!r}"
    return redact(f"{named} is not in the dataset")


def replay_target(replies: dict[str, Reply], ungradable: dict[str, str] | None = None) -> Any:
    """A target that answers each case with its recorded Reply; a case in ``ungradable`` (why its
    traces cannot be graded) raises UngradableTrace, so it is an unscored row of the run."""
    refused = ungradable or {}

    async def recorded(case: GoldenCase) -> Reply:
        if case.id in refused:
            raise UngradableTrace(refused[case.id])
        return replies[case.id]

    # WHY: a recorded Reply is the whole conversation (follow-ups, a simulated user's turns);
    # playing it again message by message would ask it once per turn (agent/conversation.py)
    setattr(recorded, WHOLE_CONVERSATIONS, True)
    setattr(recorded, PROVENANCE_SET, True)
    return recorded
