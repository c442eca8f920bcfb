"""The route ShopNest reports with every reply: a label of what it did.

    >>> from tracegrade.core.trace import ToolCall
    >>> route_of([ToolCall(name="getOrderStatus"), ToolCall(name="createRefundDraft")], "Done.")
    'refund_request'
    >>> route_of([], "Sorry, I can only help with ShopNest orders and policies.")
    'out_of_scope'

WHY derived, not predicted: ShopNest has no router; one model call decides
everything. Asking the small local model to also name an intent would add a
second, unchecked output that can disagree with what it then does. Reading
the route off the trace is deterministic and honest: it says which path the
agent actually took, so routing metrics measure behaviour, not self-report.

The rule, in order:
1. any write tool called -> ``refund_request`` (the side effect is what matters);
2. else the first known tool called -> its route;
3. else the answer declines the scope in the words rule 1 of the prompt
   prescribes ("only help with") -> ``out_of_scope``;
4. else ``policy``: answered without a tool (a policy answer, a clarifying
   question, or "the policy does not say").
"""

from __future__ import annotations

from typing import Sequence

from tracegrade.core.trace import ToolCall

ROUTES = ("order_status", "delivery_date", "refund_status", "refund_request", "policy", "out_of_scope")
TOOL_ROUTES = {
    "getOrderStatus": "order_status",
    "getDeliveryDate": "delivery_date",
    "getRefundStatus": "refund_status",
    "createRefundDraft": "refund_request",
}
# The phrase rule 1 of the system prompt asks for when a question is out of scope.
SCOPE_REFUSAL = "only help with"


def route_of(tool_calls: Sequence[ToolCall], answer: str) -> str:
    names = [call.name for call in tool_calls if call.name in TOOL_ROUTES]
    if "createRefundDraft" in names:
        return "refund_request"
    if names:
        return TOOL_ROUTES[names[0]]
    if SCOPE_REFUSAL in answer.lower():
        return "out_of_scope"
    return "policy"
