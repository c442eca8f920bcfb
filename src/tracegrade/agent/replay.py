"""A stored conversation's user turns sent again to a new agent version, while its replies match.

    >>> from tracegrade.core.trace import Message, ToolCall
    >>> stored = Reply(answer="Done.", turns=(
    ...     Message(role="user", content="Cancel my booking."), Message(role="assistant", content="Which one?"),
    ...     Message(role="user", content="BK-1."), Message(role="assistant", content="Done."),
    ...     Message(role="user", content="Thanks.\\n[DONE]")),
    ...     tool_calls=(ToolCall(name="cancel", arguments={"ref": "BK-1"}, turn=2),))
    >>> replay = Replayer("r1", StoredConversation.of(stored))
    >>> replay.message(1), replay.answered(1, Reply(answer="Which one?")), replay.message(2)
    ('Cancel my booking.', None, 'BK-1.')
    >>> replay.answered(2, Reply(answer="Done."))  # the same words, but no call: the agent diverged
    >>> replay.mark().diverged_at, replay.mark().differs, replay.message(3)
    (2, "calls: stored cancel(ref='BK-1'), now none", None)

``tracegrade run DATASET --replay-users RUN`` (``evaluate(replay_users=RUN)``)
plays each simulated-user case of DATASET with the user turns RUN stored for
it: user message n+1 is the stored one as long as the agent's reply to
message n is *the same* as the stored reply, that is

- the same tool calls: names and arguments, in any order within the turn
  (the results are the tools' business, not the agent's), and
- the same answer text, compared without case, extra spaces or punctuation.

WHY the text too, not only the calls: the stored next message was written in
answer to the stored reply; when the agent now says something else (asks
another question, refuses), that message may not fit, and grading a
conversation no user would have had is worse than playing the rest live. A
false divergence costs reproducibility only; a false match costs a wrong
verdict. An unchanged agent that is deterministic (the local model at
temperature 0, a scripted or rule-based agent) replays to the end, and the
user model is never asked.

At the first reply that differs the divergence is marked (the agent turn and
what differed) and the live user model writes the rest of the conversation
from there, so the case is still graded on a whole conversation. Both texts
are compared as the store keeps them (``redact``: secrets and personal data
masked on both sides), so a redacted store does not diverge on a masked email.
A case that changed since RUN (its content hash), or that RUN did not play,
is played live, with the reason on its result.
"""

from __future__ import annotations

import json
import string
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from tracegrade.core.redact import redact
from tracegrade.core.results import CaseResult, Replayed
from tracegrade.core.trace import Reply, ToolCall
from tracegrade.case.schema import GoldenCase

CallKey = tuple[str, str]  # a call's name and its arguments as canonical JSON
_PUNCTUATION = str.maketrans("", "", string.punctuation)
SHOWN_CHARS = 60  # of each answer, around where they first differ


@dataclass(frozen=True)
class StoredConversation:
    """A stored conversation as replay reads it: the user messages, and per agent turn its answer and calls."""

    messages: tuple[str, ...]
    answers: tuple[str, ...]
    calls: tuple[tuple[CallKey, ...], ...]

    @classmethod
    def of(cls, reply: Reply) -> StoredConversation:
        answers = tuple(m.content for m in reply.turns if m.role == "assistant")
        turns = range(1, len(answers) + 1)
        return cls(messages=tuple(m.content for m in reply.turns if m.role == "user"), answers=answers,
                   calls=tuple(call_keys(c for c in reply.tool_calls if c.turn == n) for n in turns))


def call_keys(calls: Iterable[ToolCall]) -> tuple[CallKey, ...]:
    """The calls as compared: name and arguments (redacted as stored), sorted (a turn's order is not compared)."""
    return tuple(sorted((c.name, redact(json.dumps(c.arguments, sort_keys=True, default=str))) for c in calls))


def normalized(answer: str) -> str:
    """An answer as compared: redacted as stored, without case, punctuation or extra spaces."""
    return " ".join(redact(answer).casefold().translate(_PUNCTUATION).split())


def difference(stored: StoredConversation, turn: int, reply: Reply) -> str:
    """What the agent's reply to user message ``turn`` does differently from the stored one ("" when nothing)."""
    if turn > len(stored.answers):
        return "the stored conversation ended before this reply"
    parts = []
    now = call_keys(reply.tool_calls)
    if now != stored.calls[turn - 1]:
        parts.append(f"calls: stored {_shown(stored.calls[turn - 1])}, now {_shown(now)}")
    before = stored.answers[turn - 1]
    if normalized(reply.answer) != normalized(before):
        parts.append(f"answer: {_where_texts_differ(redact(before), redact(reply.answer))}")
    return "; ".join(parts)


def _shown(calls: tuple[CallKey, ...]) -> str:
    if not calls:
        return "none"
    return ", ".join(f"{name}({', '.join(f'{k}={v!r}' for k, v in json.loads(args).items())})"
                     if args.startswith("{") else f"{name}({args})" for name, args in calls)


def _where_texts_differ(before: str, now: str) -> str:
    """Both answers from a little before the first character where they differ."""
    at = next((i for i, (a, b) in enumerate(zip(before, now)) if a != b), min(len(before), len(now)))
    start = max(0, at - 20)

    def clip(text: str) -> str:
        part = text[start:start + SHOWN_CHARS]
        return ("..." if start else "") + part + ("..." if start + SHOWN_CHARS < len(text) else "")

    return f"stored {clip(before)!r}, now {clip(now)!r}"


@dataclass
class Replayer:
    """One trial's replay: which stored user message comes next, and where the agent diverged.

    Mutable on purpose: it follows one conversation as it is played (agent/simulated.py)."""

    run_id: str
    stored: StoredConversation | None
    note: str = ""  # why the user is live without a divergence (no stored conversation, a changed case, ...)
    user_turns: int = 0  # user messages sent as stored
    diverged_at: int | None = None
    differs: str = ""

    def message(self, number: int) -> str | None:
        """Stored user message ``number`` while the replay holds, else None (the live user writes it)."""
        if self.stored is None or self.diverged_at is not None or self.note:
            return None
        if number > len(self.stored.messages):
            self.note = f"the stored conversation has no user turn {number}: the live user went on"
            return None
        self.user_turns = number
        return self.stored.messages[number - 1]

    def answered(self, turn: int, reply: Reply) -> None:
        """The agent's reply to user message ``turn``: the first that differs marks the divergence."""
        if self.stored is None or self.diverged_at is not None or self.note:
            return
        if differs := difference(self.stored, turn, reply):
            self.diverged_at, self.differs = turn, differs

    def mark(self) -> Replayed:
        return Replayed(run_id=self.run_id, user_turns=self.user_turns, diverged_at=self.diverged_at,
                        differs=self.differs, note=self.note)


@dataclass(frozen=True)
class UserReplays:
    """The user turns of a stored run, by (case id, repetition), for ``--replay-users``."""

    run_id: str
    conversations: Mapping[tuple[str, int], tuple[str, StoredConversation]] = field(default_factory=dict)

    @classmethod
    def of(cls, run_id: str, results: Iterable[CaseResult]) -> UserReplays:
        """The conversations of ``results`` (a stored run's) that have turns."""
        return cls(run_id, {(r.case_id, r.repeat): (r.case_hash, StoredConversation.of(r.reply))
                            for r in results if r.reply is not None and r.reply.turns})

    def for_case(self, case: GoldenCase, repeat: int) -> Replayer:
        """The replay of ``case``'s repetition ``repeat``: the stored one of the same repetition, else
        the case's first stored one (a run of more repeats than RUN had)."""
        key = (case.id, repeat)
        if key not in self.conversations:
            key = min((k for k in self.conversations if k[0] == case.id), default=key)
        found = self.conversations.get(key)
        if found is None:
            return Replayer(self.run_id, None, note=f"run {self.run_id} has no conversation of this case: played live")
        case_hash, stored = found
        if case_hash and case_hash != case.content_hash()[:len(case_hash)]:
            return Replayer(self.run_id, None, note=f"the case changed since run {self.run_id}: played live")
        replay = Replayer(self.run_id, stored)
        if case.question:  # the case's own first message, the stored one too (the case is unchanged)
            replay.user_turns = 1
        return replay
