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
    >>> tool_failed("Error: ValueError('BK-1005 is not refundable')\\n Please fix your mistakes.")
    True
    >>> tool_failed("Booking BK-1005: error rate 0%")
    False
"""

from __future__ import annotations

import ast
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
# smolagents sends its history as text: a call round is an assistant message "Calling tools:\n[...]"
# (a Python list of the calls), its result a user message "Observation:\n..." and a failed call
# "Error executing tool 'name' with arguments {...}: ..." inside a user message.
_CALLING = "Calling tools:\n["
_OBSERVATION = "Observation:\n"
_TOOL_ERROR = re.compile(r"Error executing tool '([^'\n]{1,200})'")
_FAILED_WITH = re.compile(r"Error executing tool '([^'\n]{1,200})' with arguments (\{[^\n]{0,5000}?\}):")
_NEW_TASK = "\nNew task:\n"
_MAX_LITERAL = 20_000  # characters of a "Calling tools" list parsed: the rest is not read
# How frameworks hand a tool's exception back to the model as the tool's result, when they catch it
# (LangGraph's ToolNode "Error: ...", the Agents SDK's "An error occurred while running the tool",
# LlamaIndex's "Encountered error ...", smolagents' "Error executing tool ...", a traceback): over the
# wire the model sees only this text, so it is what says the call failed. Read at the start only.
_FAILED = re.compile(r"\s{0,20}(?:error\b|an error occurred\b|encountered (?:an )?error\b|exception\b"
                     r"|traceback \(most recent call last\)|tool (?:call |execution )?failed\b)", re.IGNORECASE)


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


def tool_failed(result: str) -> bool:
    """Whether a tool's result, as the model was sent it, is a framework's report of the tool's error."""
    return _FAILED.match(result[:200]) is not None


def read_conventions(calls: list[dict[str, Any]], answer: str,
                     descriptions: Mapping[str, str]) -> tuple[list[dict[str, Any]], str]:
    """A trace's calls (wire dicts) and answer with the frameworks' conventions applied: a terminal
    tool's call is the answer (WHY over the text: text beside it is the model's thought), a handoff is marked with its
    agent, and a result that reports the tool's error marks the call ``error``. ``descriptions``:
    the offered tools' descriptions by name, where known."""
    kept: list[dict[str, Any]] = []
    for call in calls:
        name, arguments = str(call.get("name") or ""), call.get("arguments") or {}
        final = terminal_answer(name, arguments)
        if final is not None:
            answer = final or answer
            continue
        target = handoff_target(name, arguments, descriptions.get(name, ""))
        failed = call.get("status", "ok") == "ok" and tool_failed(str(call.get("result") or ""))
        if target is not None or failed:
            call = {**call, **({"handoff": target} if target is not None else {}),
                    **({"status": "error"} if failed else {})}
        kept.append(call)
    return kept, answer


def tool_descriptions(tools: Any) -> dict[str, str]:
    """The offered tools' descriptions by name, from a request's ``tools`` in any provider's form
    (chat completions ``{"function": {...}}``, Responses and Anthropic flat)."""
    found: dict[str, str] = {}
    for tool in tools if isinstance(tools, (list, tuple)) else ():
        spec = tool.get("function") if isinstance(tool, dict) and isinstance(tool.get("function"), dict) else tool
        if isinstance(spec, dict) and isinstance(spec.get("name"), str):
            found[spec["name"]] = str(spec.get("description") or "")
    return found


def text_calls(text: str) -> list[dict[str, Any]] | None:
    """The calls of a history message written as smolagents writes them ("Calling tools:\\n[...]"),
    as chat-completions tool calls; None when the text is not such a message."""
    if not text.startswith(_CALLING) or len(text) > _MAX_LITERAL:
        return None
    try:
        listed = ast.literal_eval(text[len(_CALLING) - 1:])
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return None
    calls = [c for c in listed if isinstance(c, dict)] if isinstance(listed, list) else []
    return [{"id": c.get("id"), "function": c.get("function") if isinstance(c.get("function"), dict) else {}}
            for c in calls]


def text_result(text: str) -> tuple[str, str, str] | None:
    """A user message that is a tool's result as smolagents writes it: (what the user said before it,
    the result, "ok" or "error"); None when it is the user speaking."""
    if text.startswith(_OBSERVATION):  # WHY split: smolagents joins the next task to the last observation
        output, _, said = text[len(_OBSERVATION):].partition(_NEW_TASK)
        return said.strip(), output, "ok"
    failed = _TOOL_ERROR.search(text[:5000])
    if failed is None:
        return None
    said = text[:failed.start()].removesuffix("Error:\n").removeprefix("New task:\n").strip()
    return said, text[failed.start():], "error"


def failed_call(report: str) -> tuple[str, dict[str, Any]]:
    """The tool and arguments a smolagents error report names ("Error executing tool 'x' with arguments {...}:")."""
    found = _FAILED_WITH.match(report)
    if found is None:
        named = _TOOL_ERROR.match(report)
        return (named.group(1) if named else ""), {}
    try:
        arguments = ast.literal_eval(found.group(2))
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        arguments = {}
    return found.group(1), arguments if isinstance(arguments, dict) else {}
