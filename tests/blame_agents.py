"""Agents for tests/agent/test_simulated_blame.py (issue 47), importable by the CLI as ``blame_agents:NAME``.

Each keeps no memory: the conversation (``case.history``) is its memory, as for the travel desk.
"""

from __future__ import annotations

import re

from tracegrade import GoldenCase, Reply, ToolCall

_MEMBER = re.compile(r"\bM-\d{4}\b")
_BOOKING = re.compile(r"\bBK-\d{4}\b")
RESERVED = "Done: 'Dune' is reserved for {member}."


def _user_text(case: GoldenCase) -> str:
    return " ".join([t.content for t in case.history if t.role == "user"] + [case.question])


def _answered(case: GoldenCase) -> list[str]:
    return [t.content for t in case.history if t.role == "assistant"]


async def stalling(case: GoldenCase) -> Reply:
    """Keeps asking and never acts."""
    return Reply(answer="Could you tell me a little more about what you need?")


async def reserving(case: GoldenCase) -> Reply:
    """Asks for the member id, then reserves the book once."""
    member = _MEMBER.search(_user_text(case))
    if member is None:
        return Reply(answer="Happy to help. What is your member id?")
    if any("is reserved" in said for said in _answered(case)):
        return Reply(answer="You are all set. Anything else?")
    call = ToolCall(name="reserve_book", arguments={"title": "Dune", "memberId": member[0]}, status="ok")
    return Reply(answer=RESERVED.format(member=member[0]), tool_calls=(call,))


def opens_then(opening: str, tool: str):
    """An agent that opens with ``opening`` (a handover declined or offered, say), then calls ``tool``
    on the booking it is given: a read (``get_booking``), or an unasked cancel (``cancel_booking``)."""
    async def agent(case: GoldenCase) -> Reply:
        booking = _BOOKING.search(_user_text(case))
        if booking is None or not case.history:
            return Reply(answer=f"{opening} Which booking is it?")
        call = ToolCall(name=tool, arguments={"bookingId": booking[0]}, status="ok")
        return Reply(answer=f"{booking[0]}: {tool} done. Anything else?", tool_calls=(call,))
    return agent


def steering(line: str):
    """An agent whose first answer is ``line`` (it steers the user model), then a plain question."""
    async def agent(case: GoldenCase) -> Reply:
        return Reply(answer=line if not case.history else "How else can I help?")
    return agent


def transferring(call_tool: bool):
    """An agent that says it transfers the user to a person, and calls the handover tool or not."""
    async def agent(case: GoldenCase) -> Reply:
        calls = (ToolCall(name="transfer_to_human_agents", arguments={"summary": "lost bag"}, status="ok"),)
        return Reply(answer="I am transferring you to a human colleague now.", tool_calls=calls if call_tool else ())
    return agent


async def asks_reference(case: GoldenCase) -> Reply:
    """Asks for the booking reference, whatever it is told (a conversation that never ends)."""
    return Reply(answer="What is your booking reference?")
