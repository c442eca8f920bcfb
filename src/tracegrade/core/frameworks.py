"""Agent frameworks' own conventions, read by rule wherever a trace comes from.

Frameworks add calls of their own to what the model sees: a *terminal tool* whose
arguments are the answer (smolagents' ``final_answer``), and *handoffs*, a call that
passes the conversation to another agent (the OpenAI Agents SDK's ``transfer_to_*``
tools, LlamaIndex AgentWorkflow's ``handoff``, Google ADK's ``transfer_to_agent``).
Neither is a tool the agent's owner declared: a terminal call is the answer and a
handoff is one event, the same whether it was captured from the SDK or read from
spans. Every converter (core/from_messages.py, core/from_otel.py) asks this module,
so the rule lives once.

    >>> handoff_target("transfer_to_cancellations_desk", {}, "Handoff to the Cancellations desk agent to handle the request. ")
    'Cancellations desk'
    >>> handoff_target("handoff", {"to_agent": "RefundAgent", "reason": "refund"}, "")
    'RefundAgent'
    >>> handoff_target("transfer_to_human_agents", {"summary": "..."}, "Transfer the user to a human agent.")
    >>> agent_key("Cancellations desk") == agent_key("cancellations_desk")
    True
"""

from __future__ import annotations

import re
from typing import Any, Mapping

# The tools a framework ends its loop with: the call's argument is the answer.
TERMINAL_TOOLS = frozenset({"final_answer"})
_TERMINAL_ARGUMENTS = ("answer", "final_answer", "result", "output")
# A handoff named by its arguments: LlamaIndex AgentWorkflow (``to_agent``), Google ADK
# (``agent_name``); the name alone is not enough (a user may have a tool called ``handoff``).
_HANDOFF_TOOLS = {"handoff": "to_agent", "transfer_to_agent": "agent_name"}
# The Agents SDK's default handoff description: "Handoff to the {agent name} agent to handle the request."
_SDK_DESCRIPTION = re.compile(r"Handoff to the (.{1,200}?) agent to handle the request", re.ASCII)
_SDK_PREFIX = "transfer_to_"
_NOT_WORD = re.compile(r"[^0-9a-z]+")


def handoff_target(name: str, arguments: Mapping[str, Any], description: str) -> str | None:
    """The agent a call hands the conversation to, or None when it is an ordinary tool call.

    ``description`` is the tool's description as offered to the model ("" when unknown): the
    Agents SDK names its handoff tools ``transfer_to_<agent>`` and describes them as a handoff,
    while a user's own ``transfer_to_human_agents`` tool says something else."""
    wanted = _HANDOFF_TOOLS.get(name)
    if wanted is not None:
        target = arguments.get(wanted)
        return target if isinstance(target, str) and target.strip() else None
    if name.startswith(_SDK_PREFIX) and description:
        found = _SDK_DESCRIPTION.search(description[:1000])
        return found.group(1) if found else None
    return None


def agent_key(name: str) -> str:
    """An agent's name as compared: case, spaces and punctuation aside, so the Agents SDK's
    ``transfer_to_cancellations_desk`` and its span's "Cancellations desk" are one agent."""
    key = _NOT_WORD.sub("_", name[:300].lower()).strip("_")
    return key[len(_SDK_PREFIX):] if key.startswith(_SDK_PREFIX) else key


def terminal_answer(name: str, arguments: Mapping[str, Any]) -> str | None:
    """The answer a framework's terminal tool call carries, or None when the call is not one."""
    if name not in TERMINAL_TOOLS:
        return None
    for key in _TERMINAL_ARGUMENTS:
        value = arguments.get(key)
        if value is not None:
            return value if isinstance(value, str) else str(value)
    only = list(arguments.values())
    return str(only[0]) if len(only) == 1 else ""
