"""The handoff check: which agents a conversation was handed to (``calls.handoffs``).

A handoff (core/frameworks.py) is one event whatever recorded it, and no tool call:
``run_checks`` gives the tool checks the Reply without its handoffs, and this check
the whole of it.

    >>> from tracegrade.core.trace import ToolCall
    >>> case = GoldenCase.model_validate({"id": "h", "question": "q",
    ...     "calls": {"handoffs": {"expected": ["Cancellations desk"], "forbidden": ["Refunds"]}}})
    >>> call = ToolCall(name="transfer_to_cancellations_desk", handoff="Cancellations desk")
    >>> Handoffs()(case, Reply(answer="ok", tool_calls=(call,))).passed
    True
    >>> Handoffs()(case, Reply(answer="ok")).code
    'missing_handoff'
"""

from __future__ import annotations

from dataclasses import dataclass

from tracegrade.core.frameworks import agent_key
from tracegrade.core.results import CheckResult, passed_check
from tracegrade.core.trace import Reply
from tracegrade.case.schema import GoldenCase


@dataclass(frozen=True)
class Handoffs:
    """Every expected agent was handed to, and no forbidden one."""

    name: str = "handoffs"

    def applies(self, case: GoldenCase) -> bool:
        return case.calls is not None and case.calls.handoffs is not None

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        wanted = case.calls.handoffs if case.calls is not None else None
        if wanted is None:
            return passed_check(self.name)
        made = [call.handoff for call in reply.tool_calls if call.handoff is not None]
        keys = {agent_key(agent) for agent in made}
        missing = [agent for agent in wanted.expected if agent_key(agent) not in keys]
        if missing:
            return CheckResult(self.name, False, "missing_handoff",
                               f"never handed to {', '.join(missing)} (handed to: {', '.join(made) or 'no agent'})")
        barred = {agent_key(agent) for agent in wanted.forbidden}
        wrong = [agent for agent in made if "*" in wanted.forbidden or agent_key(agent) in barred]
        if wrong:
            return CheckResult(self.name, False, "forbidden_handoff", f"handed to {', '.join(wrong)}, which the case forbids")
        return passed_check(self.name)
