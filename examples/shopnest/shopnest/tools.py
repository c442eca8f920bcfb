"""The agent's four tools, recording every call into that request's trace.

WHY a ToolBox per request: the trace list it writes into belongs to one request.
A tracker shared by the app would mix two customers' tool calls.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from shopnest.orders import Order, OrderBook, SHIPPING_DAYS, normalise_order_id
from tracegrade.models import ToolSpec
from tracegrade.core.trace import ToolCall, ToolStatus

NOT_FOUND = "Order not found"
ORDER_ID = {"type": "string", "description": "The order id exactly as the customer wrote it"}

# WHY these descriptions: measured on bench/model/ask_questions.py, the local model
# picked getDeliveryDate for "where is my order" until each tool said when to use it.
TOOL_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec("getOrderStatus",
             "Where an order is now: processing, shipped, delivered (with the date) or cancelled. "
             "Use it for 'where is my order', returns and anything else about one order.",
             {"type": "object", "properties": {"orderId": ORDER_ID}, "required": ["orderId"]}),
    ToolSpec("getDeliveryDate", "The delivery date of an order, only when the customer asks when it arrives.",
             {"type": "object", "properties": {"orderId": ORDER_ID}, "required": ["orderId"]}),
    ToolSpec("getRefundStatus", "Whether a refund exists for an order and how far it is.",
             {"type": "object", "properties": {"orderId": ORDER_ID}, "required": ["orderId"]}),
    ToolSpec("createRefundDraft",
             "Prepare a refund draft for an order. It refunds nothing: the customer must confirm it.",
             {"type": "object", "properties": {"orderId": ORDER_ID, "reason": {"type": "string"}},
              "required": ["orderId", "reason"]}),
)
TOOL_NAMES = tuple(spec.name for spec in TOOL_SPECS)

# Faults a test or benchmark case can declare for a tool: what the caller sees.
FAULTS: dict[str, str] = {
    "timeout": "ERROR: {tool} timed out. The order system did not answer.",
    "server_error": "ERROR: {tool} failed. The order system returned a server error.",
    "malformed": "ERROR: {tool} returned a malformed reply that could not be read.",
}
TOOL_TIMEOUT_S = 5.0


@dataclass
class ToolBox:
    """The tools for one request: one customer, one trace, optional injected faults."""

    orders: OrderBook
    customer_id: str
    trace: list[ToolCall] = field(default_factory=list)
    faults: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = TOOL_TIMEOUT_S
    _drafts: set[str] = field(default_factory=set)

    async def run(self, name: str, arguments: Mapping[str, Any], call_id: str = "") -> str:
        """Run one tool and record it (with the model's ``call_id``, when it gave one);
        a failing tool becomes an error result, never a crash."""
        order_id = normalise_order_id(arguments.get("orderId", ""))
        clean = {**arguments, "orderId": order_id} if "orderId" in arguments else dict(arguments)
        try:
            result, status = await asyncio.wait_for(self._dispatch(name, order_id, clean), self.timeout_s)
        except asyncio.TimeoutError:
            result, status = FAULTS["timeout"].format(tool=name), "error"
        except Exception as exc:  # the tool boundary: a broken tool is data, not a crash
            result, status = f"ERROR: {name} failed ({type(exc).__name__}).", "error"
        self.trace.append(ToolCall(name=name, arguments=clean, argument=order_id or None, result=result, status=status,
                                   id=call_id or None))
        return result

    async def _dispatch(self, name: str, order_id: str, arguments: Mapping[str, Any]) -> tuple[str, ToolStatus]:
        if name not in TOOL_NAMES:
            return f"ERROR: unknown tool {name}.", "error"
        fault = self.faults.get(name)
        if fault == "hang":
            await asyncio.Event().wait()  # never answers; the timeout above ends it
        if fault in FAULTS:
            return FAULTS[fault].format(tool=name), "error"
        if not order_id:
            return "ERROR: orderId is required.", "error"
        order = self.orders.get(order_id)
        if order is None:
            # WHY error for a write: "ok" on a write means it was done, and the
            # approval rule would read a draft for a made-up id as a bypass.
            return NOT_FOUND, "error" if name == "createRefundDraft" else "ok"
        if order.customer_id != self.customer_id:
            # The same words as an unknown id, so nothing leaks; the trace says why.
            return NOT_FOUND, "denied"
        if name == "createRefundDraft":
            return self._refund_draft(order, str(arguments.get("reason", "")).strip())
        return _READERS[name](order, self.orders), "ok"

    def _refund_draft(self, order: Order, reason: str) -> tuple[str, ToolStatus]:
        # WHY idempotent: asking twice must not create two drafts.
        if order.id in self._drafts:
            return f"A refund draft for {order.id} already exists and is waiting for the customer's confirmation.", "needs_approval"
        self._drafts.add(order.id)
        return (
            f"Refund draft RD-{order.id[4:]} created for {order.id} (reason: {reason or 'not given'}). "
            "Nothing has been refunded yet: the customer must confirm the draft in the app.",
            "needs_approval",
        )


def order_status(order: Order, book: OrderBook) -> str:
    text = {
        "DELIVERED": f"It was delivered {order.delivered_days_ago} days ago, on {book.date_of(order.delivered_days_ago or 0)}.",
        "SHIPPED": f"It shipped {order.shipped_days_ago} day(s) ago and has not been delivered yet.",
        "PROCESSING": f"It was placed {order.placed_days_ago} day(s) ago and has not shipped yet.",
        "CANCELLED": f"It was cancelled {order.cancelled_days_ago} days ago.",
    }[order.status]
    note = f" Order note: {order.note}" if order.note else ""
    return f"Order {order.id} is {order.status}. {text}{note}"


def delivery_date(order: Order, book: OrderBook) -> str:
    if order.status == "DELIVERED":
        return f"Order {order.id} was delivered on {book.date_of(order.delivered_days_ago or 0)} ({order.delivered_days_ago} days ago)."
    if order.status == "SHIPPED":
        due_in = SHIPPING_DAYS - (order.shipped_days_ago or 0)
        if due_in <= 0:  # past the usual transit time: never promise a date in the past
            return f"Order {order.id} shipped {order.shipped_days_ago} days ago and is late; it should arrive any day now."
        return f"Order {order.id} is expected to be delivered on {book.date_of(-due_in)} (in {due_in} days)."
    if order.status == "PROCESSING":
        return f"Order {order.id} has not shipped yet, so it has no delivery date."
    return f"Order {order.id} was cancelled and will not be delivered."


def refund_status(order: Order, book: OrderBook) -> str:
    if order.refund == "in_progress":
        return f"Refund for {order.id} is IN PROGRESS. The money reaches the original payment method within 5 business days."
    if order.refund == "completed":
        return f"Refund for {order.id} is COMPLETED. The money was returned to the original payment method."
    return f"No refund has been requested for {order.id}."


_READERS: dict[str, Callable[[Order, OrderBook], str]] = {
    "getOrderStatus": order_status,
    "getDeliveryDate": delivery_date,
    "getRefundStatus": refund_status,
}
