"""Names the whole package agrees on, defined once: span names.

Statuses live with the types they describe (``CaseStatus`` in results,
``ToolStatus`` in the trace contract).
"""

from __future__ import annotations

# The root span of one production request; the span store and the dashboard select on it.
REQUEST_SPAN = "agent_request"
