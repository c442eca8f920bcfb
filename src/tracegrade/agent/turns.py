"""One user message answered by a target, and a conversation's replies joined into one.

The two steps every multi-turn case shares, scripted (``followUps``,
agent/conversation.py) or simulated (a ``user``, agent/simulated.py).
"""

from __future__ import annotations

import json
from typing import Awaitable, Callable, Sequence

from tracegrade.core.errors import AgentError
from tracegrade.core.trace import Message, Reply, ToolCall, Usage
from tracegrade.case.schema import GoldenCase, HistoryTurn


async def answer_turn(target: Callable[[GoldenCase], Awaitable[Reply]], case: GoldenCase, message: str,
                      history: list[HistoryTurn]) -> Reply:
    """The target's reply to one user message, with the conversation so far as ``history``
    (extended here by the message and the reply).

    WHY without ``user``: the agent must not read the simulated user's scenario (what they
    know, what they must not say); it sees the messages only, as a real agent would."""
    step = case.model_copy(update={"question": message, "history": tuple(history), "follow_ups": (), "user": None})
    reply = await target(step)
    if not isinstance(reply, Reply):
        raise AgentError(f"the target returned {type(reply).__name__}, not a Reply")
    history += [HistoryTurn(role="user", content=message), HistoryTurn(role="assistant", content=reply.answer)]
    return reply


def join(messages: Sequence[str], replies: Sequence[Reply]) -> Reply:
    """One Reply for a conversation (each user message and the reply to it): the last
    answer, every message, call and step."""
    turns, calls, sources, offset = [], [], [], 0
    # WHY: one call is one call, however many turns send it back (an agent's memory). Known by its id with
    # its tool, arguments and result: an agent that numbers its calls per request reuses the id alone.
    seen: set[tuple[str, str, str, str]] = set()
    for number, (message, reply) in enumerate(zip(messages, replies), start=1):
        turns += [Message(role="user", content=message), Message(role="assistant", content=reply.answer)]
        new = [c for c in reply.tool_calls if c.id is None or _once(c) not in seen]
        seen.update(_once(c) for c in new if c.id is not None)
        rounds = [c.round for c in new if c.round is not None]
        calls += [c.model_copy(update={"turn": c.turn or number,
                                       "round": None if c.round is None else c.round + offset})
                  for c in new]
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


def _once(call: ToolCall) -> tuple[str, str, str, str]:
    return (call.id or "", call.name, json.dumps(call.arguments, sort_keys=True, default=str), call.result)
