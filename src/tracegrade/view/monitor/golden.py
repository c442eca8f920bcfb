"""Turn a production trace into a draft golden case: every complaint becomes a case.

    >>> from tracegrade.observe.spanstore import StoredSpan
    >>> root = StoredSpan("s1", "ab" * 16, None, "agent_request", 0, 1,
    ...                   attributes={"tracegrade.question": "Where is ORD-101? mail ann@example.com"})
    >>> draft = golden_case_draft([root])
    >>> draft["case"]["question"]
    'Where is ORD-101? mail [REDACTED_EMAIL]'
"""

from __future__ import annotations

from typing import Any, Sequence

from tracegrade.case.schema import GoldenCase
from tracegrade.core.redact import redact
from tracegrade.observe.spanstore import StoredSpan, reply_from_spans

TO_FILL = {
    "goldenAnswer": "the answer a good agent gives (written by a person)",
    "expectedBehaviour": "what the agent must do, in one sentence",
    "expectedTool": "pre-filled with the agent's first tool call: correct it if that was the mistake",
    "expectedToolArgument": "pre-filled from the same call",
    "expectedSource": "pre-filled with the policy the agent retrieved: correct it if retrieval was the mistake",
    "customerId": "the trace keeps only a hashed customer id: set the test customer to ask as",
}


def golden_case_draft(spans: Sequence[StoredSpan]) -> dict[str, Any]:
    """A valid GoldenCase (redacted) with what the agent did pre-filled, the fields a
    person must fill in, and what was observed."""
    root = next(s for s in spans if s.parent_id is None)
    reply = reply_from_spans(spans)
    first = reply.tool_calls[0] if reply.tool_calls else None
    case = GoldenCase(
        id=f"prod-{root.trace_id[:12]}",
        question=redact(root.attributes.get("tracegrade.question", "")) or "(question not recorded)",
        expected_tool=first.name if first else None,
        expected_tool_argument=redact(first.argument) if first and first.argument else None,
        expected_source=reply.retrieved_sources[0] if reply.retrieved_sources else None,
        category="production",
        split="production",
        tags=("from-production",),
    )
    return {
        "case": case.model_dump(mode="json", by_alias=True),
        "toFill": TO_FILL,
        "observed": {
            "traceId": root.trace_id,
            "answer": redact(reply.answer),
            "toolCalls": [{"name": c.name, "arguments": c.arguments, "status": c.status} for c in reply.tool_calls],
            "retrievedSources": list(reply.retrieved_sources),
            "status": root.attributes.get("tracegrade.status", ""),
            "error": redact(root.attributes.get("tracegrade.error", "")),
            "promptVersion": root.attributes.get("tracegrade.prompt_version", ""),
            "model": root.attributes.get("gen_ai.request.model", ""),
        },
    }
