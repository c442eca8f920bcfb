"""A case with follow-up messages, played turn by turn against any target.

    >>> import asyncio
    >>> from tracegrade.case.schema import GoldenCase
    >>> async def echo(case):
    ...     return Reply(answer=f"you said {case.question}")
    >>> case = GoldenCase(id="c", question="hi", follow_ups=("and then?",))
    >>> reply = asyncio.run(play(echo, case))
    >>> [(m.role, m.content) for m in reply.turns]
    [('user', 'hi'), ('assistant', 'you said hi'), ('user', 'and then?'), ('assistant', 'you said and then?')]

The target sees one user message at a time, with the conversation so far as
``history``, exactly as a single-turn case; the replies are joined into one
Reply that carries the whole conversation: every message in ``turns``, every
tool call marked with the user message it followed, model rounds numbered
across the conversation. So any single-turn agent can be graded on what it
did after each message. A case with a ``user`` scenario is played by a
simulated user instead (agent/simulated.py), through the same ``turns.answer_turn``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Awaitable, Callable

from tracegrade.core.trace import Reply
from tracegrade.case.schema import GoldenCase, HistoryTurn
from tracegrade.agent.simulated import converse
from tracegrade.agent.turns import answer_turn, join

if TYPE_CHECKING:  # WHY: a run without a simulated user never loads the model layer
    from tracegrade.models.base import ChatModel

# A target with this attribute set answers a whole conversation itself (its Reply carries
# every turn): it is asked once, never played message by message or with a simulated user.
WHOLE_CONVERSATIONS = "answers_whole_conversations"


async def play(target: Callable[[GoldenCase], Awaitable[Reply]], case: GoldenCase,
               user_model: ChatModel | None = None) -> Reply:
    """The target's reply to the case; with follow-ups, or a simulated ``user`` played by
    ``user_model`` (agent/simulated.py), one reply for the whole conversation."""
    if getattr(target, WHOLE_CONVERSATIONS, False):  # e.g. recorded traces (`tracegrade grade`): asked once
        return await target(case)
    if case.user is not None:
        return await converse(target, case, user_model)
    if not case.follow_ups:
        return await target(case)
    history: list[HistoryTurn] = list(case.history)
    replies = []
    for message in (case.question, *case.follow_ups):
        replies.append(await answer_turn(target, case, message, history))
    return join((case.question, *case.follow_ups), replies)
