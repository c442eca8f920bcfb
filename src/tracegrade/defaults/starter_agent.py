"""A stand-in agent for the starter dataset, written by `tracegrade init` as
evals/agent.py: the run it prints works at once. Replace the body of ``answer``
with a call to your agent.

Three ways to hand tracegrade what your agent did (docs/agents.md):

- return a ``Reply`` (the answer and the tool calls), as below;
- return just the answer string, and run with ``--capture openai`` (or
  ``anthropic``, ``otel``) so the tool calls are read from the model calls;
- build it from your message list: ``Reply.from_openai_messages(messages)``.

``case`` has ``id``, ``question``, ``history`` (earlier turns) and the rest of
the case's fields; a function that takes ``question: str`` gets the question.
It may be sync or async.
"""

from typing import Any

from tracegrade import Reply, ToolCall

TICKETS = {"T-1001": "open, waiting for an engineer"}


def answer(case: Any) -> Reply:
    question = case.question
    for ticket, status in TICKETS.items():
        if ticket in question:
            call = ToolCall(name="getTicket", arguments={"ticketId": ticket}, result=f"{ticket}: {status}")
            return Reply(answer=f"Ticket {ticket} is {status}.", tool_calls=(call,))
    if "hours" in question.lower():
        return Reply(answer="We are open Monday to Friday, 9:00 to 17:00.")
    return Reply(answer="Sorry, I can only help with support questions.")
