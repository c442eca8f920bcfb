"""The trace contract: what an agent returns besides its answer.

The one thing the harness and any agent share. Python attributes are
snake_case; the JSON wire form is camelCase, as the agent's HTTP API returns it.

    >>> call = ToolCall(name="getOrderStatus", arguments={"orderId": "ORD-102"},
    ...                 argument="ORD-102", result="Order ORD-102 is DELIVERED.")
    >>> reply = Reply(answer="Yes.", tool_calls=(call,))
    >>> Reply.from_wire(reply.to_wire()) == reply
    True

WHY pydantic here and frozen dataclasses elsewhere: the trace *is* the edge.
It is parsed from other processes and languages, and its JSON Schema is
published, so one frozen pydantic model gives parsing, validation and the
schema from a single definition.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Iterable, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

ToolStatus = Literal["ok", "error", "denied", "needs_approval"]
StepKind = Literal["retrieval", "model", "tool", "approval"]
# Where a Reply's calls came from: returned by the agent (its own trace, or a file of
# Replies), recorded by capture from an SDK's model calls, read from OpenTelemetry spans,
# or absent (nothing was recorded: no recorded call is not evidence that none was made).
TraceSource = Literal["returned", "captured", "spans", "absent"]

SCHEMA_PATH = Path(__file__).parents[1] / "schemas" / "reply.schema.json"

# WHY null reads as 0.0 in a number of the trace (times, cost, retrieval scores): that is
# what core/storable.py stores for NaN, and what runs stored before it held (NaN written
# as null); they read back.
Number = Annotated[float, BeforeValidator(lambda value: 0.0 if value is None else value)]


class _Wire(BaseModel):
    """Frozen, camelCase on the wire, and a typo in a field is an error."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True
    )


class ToolCall(_Wire):
    """One tool call as the agent ran it."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    # The first cleaned argument, kept apart for the simple argument checks.
    argument: str | None = None
    result: str = ""
    status: ToolStatus = "ok"
    # Multi-turn and parallel calls (both optional): the user message the call
    # followed (1 = the question), and the model round that asked for it; calls
    # sharing a round were asked for together, in parallel. WHY left out of the
    # wire form when unset: an agent that never reports them keeps its trace as it was.
    turn: int | None = Field(default=None, ge=1, exclude_if=lambda v: v is None)
    round: int | None = Field(default=None, ge=0, exclude_if=lambda v: v is None)
    # The id the model gave the call (``call_...``, ``toolu_...``), when the agent
    # reports it; spans carry it as ``gen_ai.tool.call.id``. Left out of the wire
    # form when unset, like ``turn`` and ``round``.
    id: str | None = Field(default=None, max_length=200, exclude_if=lambda v: v is None)
    # The agent this call hands the conversation to, when it is a framework's handoff
    # (core/frameworks.py: the Agents SDK's ``transfer_to_*``, LlamaIndex's ``handoff``)
    # rather than a tool: the tool checks leave it out, ``calls.handoffs`` grades it.
    handoff: str | None = Field(default=None, max_length=300, exclude_if=lambda v: v is None)


class Message(_Wire):
    """One message of a conversation, for a Reply that carries all of it."""

    role: Literal["user", "assistant"]
    content: str


class Step(_Wire):
    """One timed step of a request: retrieval, a model round, a tool, an approval."""

    kind: StepKind
    name: str
    start_ms: Number = 0.0
    duration_ms: Number = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    error: str | None = None
    # Transport retries (429, 5xx, timeouts, dropped connections) before a model
    # round answered: a run that only passed thanks to retries should say so.
    retries: int = 0

    @field_validator("start_ms", "duration_ms")
    @classmethod
    def _to_microseconds(cls, value: float) -> float:
        # WHY: clock differences come as 0.19999999999708962; a trace says 0.2.
        return round(value, 3)


class Usage(_Wire):
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: Number = 0.0


class Provenance(_Wire):
    """Where a Reply's calls came from, and why they cannot be graded when they cannot.

        >>> Provenance(source="captured", via="openai").unusable()
        ''
    """

    source: TraceSource = "returned"
    # The SDK or instrumentation the calls were read from ("openai", "anthropic",
    # "openinference", "genai"), when they were recorded rather than returned.
    via: str = Field(default="", max_length=100)
    # Why the calls are not the case's whole, own trace (cut at a cap, mixed with another
    # case's, spans without their case), with the fix; "" when they are.
    problem: str = Field(default="", max_length=2000)

    def unusable(self) -> str:
        """Why call checks must not be judged on this trace, with the fix; "" when they may."""
        if self.problem:
            return self.problem
        if self.source == "absent":
            tried = f"with --capture {self.via}" if self.via else "(the run has no --capture)"
            return f"no model call was recorded for this case {tried}: {NOTHING_RECORDED_FIX}"
        return ""


NOTHING_RECORDED_FIX = ("does the agent use the openai or anthropic SDK (--capture openai|anthropic)? "
                        "Spans of an instrumentation: --capture otel. Or return a Reply with its tool calls")


class Reply(_Wire):
    """The answer and the trace of how the agent reached it."""

    answer: str
    retrieved_sources: tuple[str, ...] = ()
    # Similarity score of each retrieved source, in the same order.
    retrieval_scores: tuple[Number, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    context: str = ""
    steps: tuple[Step, ...] = ()
    model: str = ""
    usage: Usage = Field(default_factory=Usage)
    # The intent the agent routed the question to (e.g. "order_status"), if it reports one.
    route: str | None = None
    # The whole conversation, user and assistant messages in order, when the
    # agent ran several turns; ``answer`` is then the last assistant message
    # and each tool call says the turn it followed.
    turns: tuple[Message, ...] = Field(default=(), exclude_if=lambda v: not v)
    # What the agent's tools left behind, when the agent can report it (e.g.
    # {"bookings": [...]}): compared with a case's expected ``state``.
    state: dict[str, Any] | None = Field(default=None, exclude_if=lambda v: v is None)
    # Where the calls came from (see Provenance); unset means the agent returned them.
    provenance: Provenance | None = Field(default=None, exclude_if=lambda v: v is None)

    def calls_unusable(self) -> str:
        """Why this Reply's calls cannot be graded (absent, cut, another case's), with the fix; "" when they can."""
        return self.provenance.unusable() if self.provenance is not None else ""

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Reply:
        return cls.model_validate(data)

    @classmethod
    def from_openai_messages(cls, messages: Iterable[Any], tools: Any = None, **fields: Any) -> Reply:
        """The Reply of an OpenAI chat message list or Responses API items:
        assistant ``tool_calls`` (arguments parsed), ``tool`` results paired by
        id, the last assistant text as the answer. ``tools``: the request's tools
        (their descriptions tell a framework's handoff). ``fields`` set the rest
        (``model=``, ``context=`` ...). See ``tracegrade.core.from_messages``."""
        from tracegrade.core.from_messages import openai_messages_wire

        return cls.model_validate({**openai_messages_wire(messages, tools), **fields})

    @classmethod
    def from_anthropic_messages(cls, messages: Iterable[Any], tools: Any = None, **fields: Any) -> Reply:
        """The Reply of an Anthropic message list (``tool_use`` / ``tool_result`` blocks)."""
        from tracegrade.core.from_messages import anthropic_messages_wire

        return cls.model_validate({**anthropic_messages_wire(messages, tools), **fields})

    @classmethod
    def from_otel(cls, spans: Iterable[Any] | str | Path) -> Reply:
        """The Reply of one trace's OpenTelemetry spans (GenAI or OpenInference
        conventions): SDK spans, OTLP JSON span dicts, or the path of an OTLP
        JSON export file. See ``tracegrade.core.from_otel``."""
        from tracegrade.core.from_otel import otel_traces, spans_of_otlp_json

        if isinstance(spans, (str, Path)):
            spans = spans_of_otlp_json(json.loads(Path(spans).read_text(encoding="utf-8")))
        traces = otel_traces(spans)
        if not traces:
            raise ValueError("no spans to build a Reply from")
        return cls.from_wire(traces[0].wire)

    def without_handoffs(self) -> Reply:
        """This Reply with its tool calls only: a handoff (``ToolCall.handoff``) is graded by the
        case's ``calls.handoffs``, never as a call of an undeclared tool."""
        for call in self.tool_calls:  # WHY a loop, not any(): asked of every case, most with no call at all
            if call.handoff is not None:
                break
        else:
            return self
        return self.model_copy(update={"tool_calls": tuple(c for c in self.tool_calls if c.handoff is None)})

    def tool_names(self) -> list[str]:
        return [call.name for call in self.tool_calls]


def reply_json_schema() -> dict[str, Any]:
    """The JSON Schema of the wire form, for agents written in any language."""
    schema = Reply.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "tracegrade Reply (answer + trace)"
    return schema


def write_reply_schema(path: Path = SCHEMA_PATH) -> Path:
    """Write the schema file; ``python -m tracegrade.core.trace`` regenerates the committed one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(reply_json_schema(), indent=2) + "\n")
    return path


if __name__ == "__main__":
    print(f"wrote {write_reply_schema()}")
