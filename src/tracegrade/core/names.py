"""Names the whole package agrees on, defined once: span names and GenAI operations.

Statuses live with the types they describe (``CaseStatus`` in results,
``ToolStatus`` in the trace contract).

Spans of model calls, tools and retrieval are named as the OpenTelemetry GenAI
semantic conventions say: ``{gen_ai.operation.name} {subject}`` (the model,
the tool, the data source), so tools that group spans by name (Phoenix,
Jaeger, Grafana) group them the standard way. Readers select spans by the
``gen_ai.operation.name`` attribute, never by parsing a name.

    >>> genai_span_name(EXECUTE_TOOL, "getOrderStatus"), genai_span_name(CHAT, "")
    ('execute_tool getOrderStatus', 'chat')
"""

from __future__ import annotations


# The root span of one production request; the span store and the dashboard select on it.
REQUEST_SPAN = "agent_request"
# Eval runs: eval_run -> case -> invoke_agent {agent} (the request's steps below it) -> checks -> chat {judge model}
EVAL_RUN_SPAN = "eval_run"
CASE_SPAN = "case"
CHECKS_SPAN = "checks"
# A tool call that ended as a draft waiting for the customer's confirmation.
APPROVAL_SPAN = "approval"

# Values of gen_ai.operation.name (the GenAI conventions' well-known values).
CHAT = "chat"
EXECUTE_TOOL = "execute_tool"
RETRIEVAL = "retrieval"
INVOKE_AGENT = "invoke_agent"

# The attribute every reader selects GenAI spans by.
OPERATION = "gen_ai.operation.name"


def genai_span_name(operation: str, subject: str) -> str:
    """``{operation} {subject}``, or the operation alone when the subject is unknown."""
    return f"{operation} {subject}" if subject else operation


def tool_call_id(index: int) -> str:
    """The ``gen_ai.tool.call.id`` of the ``index``-th tool call (from 0) of a trace
    that gave none: stable across runs and unique within the trace."""
    return f"tracegrade-call-{index + 1}"
