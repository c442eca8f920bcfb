"""What a target returned, read as a Reply, or a one-line reason why not.

A wrong shape is explained once per run and kind of mistake (what came, the
trace contract, the fix, the converters) as a warning; each case it affects
ends as an error with the one-line reason, never with pydantic's page of
validation errors and its URL.
"""

from __future__ import annotations

import warnings
from typing import Any

from pydantic import ValidationError

from tracegrade.core.errors import AgentError
from tracegrade.core.trace import Reply

_explained: set[str] = set()  # the reasons already explained in this process (one run)
_FIELDS = ("answer", "toolCalls", "retrievedSources", "context", "steps", "model", "usage", "turns", "state")


class ReplyShapeWarning(UserWarning):
    """A target returned something that is not the trace contract."""


def reply_from_dict(data: dict[str, Any]) -> Reply:
    """``data`` as a Reply; AgentError with a one-line reason when it is not one."""
    try:
        return Reply.from_wire(data)
    except ValidationError as exc:
        reason, fix = _diagnose(data, exc)
    if reason not in _explained:  # WHY by hand: a test runner's warning filters show every repeat
        _explained.add(reason)
        warnings.warn(f"a target returned a dict that is not a Reply: {reason}. A Reply is the answer and the "
                      f"trace of how the agent reached it: {{{', '.join(_FIELDS)}}} (only 'answer' is required; "
                      f"schema: tracegrade/schemas/reply.schema.json). Fix: {fix}", ReplyShapeWarning, stacklevel=2)
    raise AgentError(f"the target's reply is not a Reply: {reason}")


def _diagnose(data: dict[str, Any], exc: ValidationError) -> tuple[str, str]:
    if "role" in data and ("content" in data or "tool_calls" in data):
        blocks = isinstance(data.get("content"), list)
        converter = "Reply.from_anthropic_messages" if blocks else "Reply.from_openai_messages"
        return ("it is a chat message (it has 'role'), not a Reply",
                f"return {converter}(messages) with the whole message list, or the answer string "
                "with --capture openai|anthropic (docs/agents.md)")
    problems = []
    for error in exc.errors()[:3]:
        where = ".".join(str(p) for p in error["loc"]) or "(the reply)"
        kind = {"extra_forbidden": "is not a Reply field", "missing": "is missing"}.get(error["type"], error["msg"])
        problems.append(f"{where} {kind}")
    more = f" (and {exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
    return "; ".join(problems) + more, ("return tracegrade.Reply(answer=..., tool_calls=(ToolCall(...),)), "
                                        "a dict with those wire fields, or just the answer string")
