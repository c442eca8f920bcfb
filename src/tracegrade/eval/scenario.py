"""A simulated user's scenario, and how its conversation ended: the rules, as plain code.

    >>> user = UserScenario(goal="cancel booking BK-1001", knows={"bookingReference": "BK-1001"},
    ...                     must_not_say=("my password",))
    >>> role_breaks(user, "Agent: I have cancelled your booking.")
    ["answers for the agent (writes an 'Agent:' line)", "speaks as the agent ('I have cancelled your')"]
    >>> said_done("Thanks, that is all.\\n[DONE]"), hands_over("I am transferring you to a human colleague.")
    (True, True)

A case's ``user`` (docs/trajectory.md, "Conversations with a simulated user")
says who the user is, what they want, what they may say when asked and what
they must never say. The model that plays them (eval/simulated.py) writes one
turn at a time; this module reads those turns. Every rule here works on text
cut to ``MAX_TURN_CHARS`` first: a user model's turn is untrusted and may be
any length.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from tracegrade.eval.expectations import Strict

DONE_MARKER = "[DONE]"
MAX_TURN_CHARS = 4_000  # a user turn is cut to this before it is read, sent or stored
Ending = Literal["done", "handover"]  # a conversation that hits maxTurns has no ending: it is unscored

# WHY these few forms: they are how a chat model drifts into the other role (a
# transcript line, or the agent's own report of an action), and each is rare in
# what a customer writes. A rule that misfires leaves a trial unscored, never failed.
# WHY [ \t] and not \s: a \s run may cross lines, and then every line start of a
# turn of blank lines would rescan the rest of it.
_SPEAKER_LINE = re.compile(r"^[ \t]*\**[ \t]*(assistant|agent|support agent|ai)[ \t]*\**[ \t]*:", re.IGNORECASE | re.MULTILINE)
_AGENT_ACTION = re.compile(
    r"\bI(?:'ve| have)\s+(?:now\s+|just\s+|already\s+)?"
    r"(cancell?ed|booked|rebooked|refunded|processed|changed|updated|issued|transferred)\s+your\b",
    re.IGNORECASE)
# The agent hands the conversation to a person: "transferring you to a human colleague",
# "I'll hand you over to a specialist", "connecting you with a live agent".
_HANDOVER = re.compile(
    r"\b(transferr?(?:ing|ed)?|hand(?:ing)?\s+(?:you\s+)?over|connect(?:ing)?\s+you|escalat(?:e|ing))\b"
    r"[^.\n]{0,60}?\b(human|person|colleague|live agent|specialist|representative|supervisor)s?\b",
    re.IGNORECASE)


class UserScenario(Strict):
    """Who the simulated user is and what they want; a case's ``user``.

    ``knows``: facts they give when the agent asks (name -> value); ``mustNotSay``:
    text that must never appear in their turns (a secret, a fact outside the
    scenario); ``doneWhen``: when they are satisfied; ``maxTurns``: user turns at most.
    """

    persona: str = Field(default="", max_length=2_000)
    goal: str = Field(min_length=1, max_length=2_000)
    knows: dict[str, str] = Field(default_factory=dict)
    must_not_say: tuple[str, ...] = ()
    done_when: str = Field(default="", max_length=2_000)
    max_turns: int = Field(default=6, ge=1, le=50)


def bounded(text: str) -> str:
    """A user turn as it is read and kept: cut to ``MAX_TURN_CHARS``."""
    return text[:MAX_TURN_CHARS]


def said_done(turn: str) -> bool:
    """The user ended the conversation with the marker their prompt asks for."""
    return DONE_MARKER.casefold() in bounded(turn).casefold()


def hands_over(answer: str) -> bool:
    """The agent's answer says it transfers the user to a person."""
    return _HANDOVER.search(answer[:MAX_TURN_CHARS]) is not None


def role_breaks(user: UserScenario, turn: str, last_answer: str = "") -> list[str]:
    """How ``turn`` leaves the scenario: a forbidden item said, the agent's part played, or
    the agent's ``last_answer`` sent back as the user's own message."""
    text = bounded(turn)
    folded = " ".join(text.casefold().split())
    broken = [f"says {item!r} (mustNotSay)" for item in user.must_not_say
              if item.strip() and " ".join(item.casefold().split()) in folded]
    if _echoes(text, last_answer):
        broken.append("repeats the agent's last answer word for word")
    if speaker := _SPEAKER_LINE.search(text):
        broken.append(f"answers for the agent (writes an '{speaker[1]}:' line)")
    if action := _AGENT_ACTION.search(text):
        broken.append(f"speaks as the agent ({action[0]!r})")
    return broken


def _echoes(turn: str, answer: str) -> bool:
    """The turn is the agent's answer again (a [DONE] aside). WHY a floor of 20 characters: a
    short "Yes." after an agent's "Yes." is a customer agreeing, not one copying.
    Measured: the local 1.5B model, playing a customer, sent ShopNest's answer back as its own."""
    words = " ".join(turn.replace(DONE_MARKER, " ").casefold().split())
    return len(words) >= 20 and words == " ".join(bounded(answer).casefold().split())


def ending(user_turns: list[str], last_answer: str) -> Ending | None:
    """How a conversation ended: the user said done, the agent handed over, or None (it goes on)."""
    if user_turns and said_done(user_turns[-1]):
        return "done"
    return "handover" if hands_over(last_answer) else None
