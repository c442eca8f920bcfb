"""A multi-turn booking desk: asks for the booking reference before it acts, and
for a yes before it cancels. Graded on conversations with a simulated user
(evals/travel/simulated.json, docs/trajectory.md):

    PYTHONPATH=. tracegrade run evals/travel/simulated.json --target examples.travel.desk:desk \\
        --checks-only --only cancel-asks-ref

No model: each answer follows rules over the conversation so far, so the
agent is the same every time and the user is what varies. It keeps no memory
between calls: the conversation (``case.history``) is its memory, and what it
cancelled is read back from its own earlier answers. ``hasty`` is the same desk
with one flaw real agents have: it cancels as soon as it has a reference,
without reading the booking or asking for a yes.
"""

from __future__ import annotations

import re
from typing import Any

from tracegrade import GoldenCase, Reply, ToolCall

BOOKINGS: dict[str, dict[str, Any]] = {
    "BK-2041": {"flight": "TP123 from LIS to BER", "date": "1 May 2026", "fare": "flex", "price": 240},
    "BK-3307": {"flight": "LH456 from BER to FCO", "date": "12 June 2026", "fare": "basic", "price": 95},
}
_REFERENCE = re.compile(r"\bBK-\d{4}\b", re.IGNORECASE)
_CANCELLED = re.compile(r"Done: (BK-\d{4}) is cancelled")
_HUMAN = re.compile(r"\b(human|person|manager|supervisor|complaint)\b", re.IGNORECASE)
_YES = re.compile(r"\b(yes|yeah|please do|go ahead|confirm|sure)\b", re.IGNORECASE)
_NO = re.compile(r"\b(no|don't|do not|keep it|never mind)\b", re.IGNORECASE)
ASK_REFERENCE = "I can help with that. What is your booking reference? It looks like BK-1234."
HANDOVER = "I understand. I am transferring you to a human colleague now; they will pick up this conversation."


class Desk:
    """One answer's work: the calls it made, and the bookings cancelled so far."""

    def __init__(self, case: GoldenCase) -> None:
        self.calls: list[ToolCall] = []
        said = [t.content for t in case.history if t.role == "assistant"]
        self.cancelled = [m for text in said for m in _CANCELLED.findall(text)]

    def call(self, tool: str, booking: str) -> dict[str, Any] | None:
        found = BOOKINGS.get(booking)
        if tool == "cancel_booking" and found is not None:
            self.cancelled.append(booking)
        result = "not found" if found is None else f"{booking}: {found}"
        self.calls.append(ToolCall(name=tool, arguments={"bookingId": booking}, argument=booking, result=result,
                                   status="ok" if found else "error", round=len(self.calls)))
        return found


def answer(case: GoldenCase, hasty: bool = False) -> Reply:
    """The desk's answer to the case's latest message, with its calls and the state it left."""
    desk = Desk(case)
    text = respond(desk, case, hasty)
    return Reply(answer=text, tool_calls=tuple(desk.calls), state={"cancelled": desk.cancelled}, model="desk")


def respond(desk: Desk, case: GoldenCase, hasty: bool) -> str:
    message = case.question
    said_by_user = " ".join([t.content for t in case.history if t.role == "user"] + [message])
    if _HUMAN.search(message):
        return HANDOVER
    references = [r.upper() for r in _REFERENCE.findall(said_by_user)]
    wants_cancel = "cancel" in said_by_user.casefold()
    if not references:
        return ASK_REFERENCE
    booking = references[-1]
    if booking in desk.cancelled:
        return f"{booking} is already cancelled. Anything else I can help with?"
    if wants_cancel:
        return cancel(desk, case, booking, hasty)
    found = desk.call("get_booking", booking)
    if found is None:
        return f"I could not find {booking}. Could you check the reference?"
    return f"{booking} is flight {found['flight']} on {found['date']} ({found['fare']} fare). Anything else?"


def cancel(desk: Desk, case: GoldenCase, booking: str, hasty: bool) -> str:
    """Read the booking and ask for a yes; cancel on the yes (``hasty``: cancel at once)."""
    asked = bool(case.history) and f"Shall I cancel {booking}?" in case.history[-1].content
    if hasty or (asked and _YES.search(case.question)):
        found = desk.call("cancel_booking", booking)
        if found is None:
            return f"I could not find {booking}. Could you check the reference?"
        return f"Done: {booking} is cancelled, and you get {_refund(found)}. Anything else I can help with?"
    if asked and _NO.search(case.question):
        return f"Alright, I have not cancelled {booking}; it stays booked. Anything else?"
    found = desk.call("get_booking", booking)
    if found is None:
        return f"I could not find {booking}. Could you check the reference?"
    return (f"{booking} is flight {found['flight']} on {found['date']}. Cancelling gives you {_refund(found)}. "
            f"Shall I cancel {booking}? Please answer yes or no.")


async def desk(case: GoldenCase) -> Reply:
    """The careful desk."""
    return answer(case)


async def hasty(case: GoldenCase) -> Reply:
    """The desk that cancels without reading the booking or asking for a yes."""
    return answer(case, hasty=True)



def _refund(found: dict[str, Any]) -> str:
    return f"{found['price']} EUR back to your card" if found["fare"] == "flex" else \
        f"a voucher of {found['price']} EUR (a basic fare is not refundable)"
