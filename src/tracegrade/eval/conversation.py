"""A case with follow-up messages, played turn by turn against any target.

    >>> import asyncio
    >>> from tracegrade.eval.dataset import GoldenCase
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
did after each message.
"""

from __future__ import annotations

from typing import Awaitable, Callable

from tracegrade.core.errors import AgentError
from tracegrade.core.trace import Message, Reply, Usage
from tracegrade.eval.dataset import GoldenCase, HistoryTurn


async def play(target: Callable[[GoldenCase], Awaitable[Reply]], case: GoldenCase) -> Reply:
    """The target's reply to the case; with follow-ups, one reply for the whole conversation."""
    if not case.follow_ups:
        return await target(case)
    history, replies = list(case.history), []
    for message in (case.question, *case.follow_ups):
        step = case.model_copy(update={"question": message, "history": tuple(history), "follow_ups": ()})
        reply = await target(step)
        if not isinstance(reply, Reply):
            raise AgentError(f"the target returned {type(reply).__name__}, not a Reply")
        replies.append(reply)
        history += [HistoryTurn(role="user", content=message), HistoryTurn(role="assistant", content=reply.answer)]
    return join(case, replies)


def join(case: GoldenCase, replies: list[Reply]) -> Reply:
    """One Reply for a conversation: the last answer, every message, call and step."""
    turns, calls, sources, offset = [], [], [], 0
    for number, (message, reply) in enumerate(zip((case.question, *case.follow_ups), replies), start=1):
        turns += [Message(role="user", content=message), Message(role="assistant", content=reply.answer)]
        rounds = [c.round for c in reply.tool_calls if c.round is not None]
        calls += [c.model_copy(update={"turn": c.turn or number,
                                       "round": None if c.round is None else c.round + offset})
                  for c in reply.tool_calls]
        offset += max(rounds) + 1 if rounds else 0
        sources += [s for s in reply.retrieved_sources if s not in sources]
    usage = Usage(input_tokens=sum(r.usage.input_tokens for r in replies),
                  output_tokens=sum(r.usage.output_tokens for r in replies),
                  cost_usd=sum(r.usage.cost_usd for r in replies))
    # WHY the first unusable provenance: one turn's absent or mixed calls leave the whole conversation's unjudged
    unusable = next((r.provenance for r in replies if r.calls_unusable()), replies[-1].provenance)
    return replies[-1].model_copy(update={
        "provenance": unusable, "turns": tuple(turns), "tool_calls": tuple(calls), "retrieved_sources": tuple(sources),
        "retrieval_scores": (), "steps": tuple(s for r in replies for s in r.steps), "usage": usage,
    })
