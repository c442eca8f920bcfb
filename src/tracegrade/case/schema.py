"""The golden case's schema: what a case may say, checked field by field.

    >>> case = GoldenCase(id="tool-status-01", question="Where is ORD-101?",
    ...                   expected_tool="getOrderStatus", expected_tool_argument="ORD-101")
    >>> case.content_hash() == GoldenCase(id="tool-status-01", question="Where is ORD-101?",
    ...     expected_tool="getOrderStatus", expected_tool_argument="ORD-101").content_hash()
    True

Every field is checked (``extra="forbid"``): a typo is an error naming the file, the
case and the field, never a silently ignored expectation. The trajectory fields
(``calls``, ``answer``, ``state``) are described in docs/trajectory.md; the files a
dataset is written in are read by ``case.files``.
"""

from __future__ import annotations

import contextvars
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from tracegrade.case.argmatch import STRICT_INTEGERS, SpecError, compile_spec
from tracegrade.case.canonical import content_digest
from tracegrade.case.expectations import (
    AnswerExpectation, CallExpectations, CallPattern, Normalisation, Strict, ToolDeclaration,
)
from tracegrade.case.scenario import UserScenario

SCHEMA_PATH = Path(__file__).parents[1] / "schemas" / "golden-case.schema.json"
# The trial the running case is (GoldenCase.trial): its run id, case id, repeat and flaky attempt,
# set by the runner before the agent answers; named only when the agent asks.
CURRENT_TRIAL: contextvars.ContextVar[tuple[str, str, int, int]] = contextvars.ContextVar(
    "tracegrade_trial", default=("", "", 0, 0))



_Strict = Strict


class ToolOrder(_Strict):
    """The order the tools must be called in: ``exact`` sequence, ``in_order`` (a
    subsequence), or ``any_order`` (all present)."""

    mode: Literal["exact", "in_order", "any_order"] = "in_order"
    tools: tuple[str, ...]


class HistoryTurn(_Strict):
    role: Literal["user", "assistant"]
    content: str



HASH_MEMO = "_content_hash"  # where a case keeps its content hash (Strict.memo); CompactCases hands it over


class GoldenCase(_Strict):
    """One question with the behaviour we already know is right."""

    id: str = Field(min_length=1)
    # WHY a default: a case with a simulated ``user`` may leave the opening message to them
    # (``_merge_and_check`` still requires a question of every other case).
    question: str = Field(default="", min_length=1)
    golden_answer: str = ""
    expected_behaviour: str = ""
    expected_tool: str | None = None
    expected_tool_argument: str | None = None
    expected_source: str | None = None
    customer_id: str | None = None
    required_tools: tuple[str, ...] = ()
    forbidden_tools: tuple[str, ...] = ()
    tool_order: ToolOrder | None = None
    requires_approval: bool = False
    answer_must_include: tuple[str, ...] = ()
    answer_must_not_include: tuple[str, ...] = ()
    max_steps: int | None = Field(default=None, ge=1)
    category: str = "general"
    split: str = "nominal"
    risk: Literal["low", "medium", "high"] = "low"
    difficulty: Literal["easy", "medium", "hard"] = "easy"
    language: str = "en"
    # Richer benchmark fields.
    version: int = 1
    tags: tuple[str, ...] = ()
    history: tuple[HistoryTurn, ...] = ()
    faults: dict[str, Literal["timeout", "server_error", "malformed", "hang"]] = Field(default_factory=dict)
    relevant_sources: dict[str, int] = Field(default_factory=dict)  # source -> graded relevance
    expected_route: str | None = None
    # Every argument of the expected call, for argument exact/partial match metrics.
    expected_arguments: dict[str, Any] = Field(default_factory=dict)
    # Argument values (e.g. another customer's order ids) no call may get data for.
    forbidden_arguments: tuple[str, ...] = ()
    # Trajectory expectations (docs/trajectory.md). The dataset's tools and
    # normalisation are merged in when the file loads.
    tools: tuple[ToolDeclaration, ...] = ()
    normalize: tuple[Normalisation, ...] = ()
    # Tools typed like Python's: 5.0 is not an integer (docs/trajectory.md, rule 3).
    strict_integers: bool = False
    calls: CallExpectations | None = None
    answer: AnswerExpectation | None = None
    state: dict[str, Any] | None = None  # the expected final state, key by key
    follow_ups: tuple[str, ...] = ()  # user messages after the question, one per turn
    user: UserScenario | None = None  # a simulated user plays the conversation (agent/simulated.py)
    # The tool whose call hands the user to a person (tau-bench's transfer_to_human_agents): named,
    # only its call ends a simulated user's conversation as a handover; a dataset may name it for every case.
    handover_tool: str | None = Field(default=None, min_length=1)

    @property
    def trial(self) -> str:
        """Which trial of the run the agent is answering: "<run id>/<case id>/<repeat>" (and
        "/<attempt>" for a flaky re-run); "" outside a run. An agent keys its memory by it (a LangGraph
        checkpointer's thread_id, an Agents SDK session id), so two trials never share what one
        remembered. WHY the runner's context, not a field: no part of the case's content, and a
        copy of every case would cost each checks-only case more than its checks."""
        run_id, case_id, repeat, attempt = CURRENT_TRIAL.get()
        if not case_id:
            return ""
        trial = f"{run_id}/{case_id}/{repeat}" if run_id else f"{case_id}/{repeat}"
        return f"{trial}/{attempt}" if attempt else trial

    @field_validator("state")
    @classmethod
    def _state_spec(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        for key, spec in (value or {}).items():
            try:
                compile_spec(spec, key)
            except SpecError as exc:
                raise ValueError(str(exc)) from None
        return value

    @property
    def state_matchers(self) -> dict[str, Any]:
        """The expected state, compiled: key -> matcher."""
        return self.memo("_state_matchers", lambda: {k: compile_spec(v, k) for k, v in (self.state or {}).items()})

    @model_validator(mode="after")
    def _merge_and_check(self, info: ValidationInfo) -> "GoldenCase":
        """Take the dataset's tools and normalisation (passed as validation
        context), then check that every name the case uses is declared."""
        context = info.context or {}
        case = self
        inherit = [k for k in ("normalize", "strict_integers", "handover_tool")
                   if context.get(k) and k not in self.model_fields_set]
        if context.get("tools") or inherit:
            own = {t.name for t in self.tools}
            tools = tuple(t for t in context.get("tools", ()) if t.name not in own) + self.tools
            case = self.model_copy(update={"tools": tools, **{k: context[k] for k in inherit}})
        errors = reference_errors(case) + conversation_errors(case)
        if errors:
            raise ValidationError.from_exception_data("GoldenCase", [
                InitErrorDetails(type=PydanticCustomError("reference", message), loc=loc, input=None)
                for loc, message in errors])
        return case

    @property
    def comparison(self) -> tuple[str, ...]:
        """How values are compared: the normalisation steps, and the strict-integer mode."""
        return self.normalize + ((STRICT_INTEGERS,) if self.strict_integers else ())

    def states_tool_choice(self) -> bool:
        """Whether the legacy ``expectedTool`` says which tool, or explicitly none.

        WHY the set fields: unstated means unchecked. A case that never names
        ``expectedTool`` grades the answer only; the seed data's explicit
        ``"expectedTool": null`` keeps meaning "no tool".
        """
        return self.expected_tool is not None or "expected_tool" in self.model_fields_set

    def tool(self, name: str) -> ToolDeclaration | None:
        """The declaration of a tool, or None when the dataset does not declare it."""
        return next((t for t in self.tools if t.name == name), None)

    def write_tools(self) -> frozenset[str]:
        """The tools declared with ``writes: true``."""
        return frozenset(t.name for t in self.tools if t.writes)

    def approval_tools(self) -> frozenset[str]:
        """The tools declared with ``approval: true``: each call must wait for the user."""
        return frozenset(t.name for t in self.tools if t.approval)

    def content_hash(self) -> str:
        return self.memo(HASH_MEMO, lambda: content_digest(self.canonical()))

    def canonical(self) -> dict[str, Any]:
        """The case's content without default values.

        WHY without defaults: a new optional field must not change the hash
        (and so the version) of every case written before it existed.
        """
        return self._marking_an_unstated_tool(self.model_dump(mode="json", by_alias=True, exclude_defaults=True))

    def _marking_an_unstated_tool(self, dump: dict[str, Any]) -> dict[str, Any]:
        """``dump``, the case's fields without defaults, marked if the case leaves its tool unstated.

        WHY: such a case meant "no tool" before unstated meant unchecked; its
        meaning changed, so its hash does (an explicit null keeps its hash).
        """
        if not self.states_tool_choice() and self.calls is None:
            dump["toolChoice"] = "unchecked"
        return dump


def conversation_errors(case: GoldenCase) -> list[tuple[tuple[str | int, ...], str]]:
    """A case with no first message and no one to write it, or a script beside a simulated user."""
    if case.user is None:
        return [] if case.question else [(("question",), "required, but missing (or give a `user` who opens)")]
    return [(("followUps",), "a case with a simulated `user` cannot also script `followUps`")] if case.follow_ups else []


def reference_errors(case: GoldenCase) -> list[tuple[tuple[str | int, ...], str]]:
    """Names a case uses that its tools do not declare, as (field path, message)."""
    errors: list[tuple[tuple[str | int, ...], str]] = []
    if not case.tools and not case.requires_approval:  # nothing declared, nothing to contradict
        return errors
    names = [t.name for t in case.tools]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        errors.append((("tools",), f"tool {twice[0]!r} is declared twice in the case"))
    if case.requires_approval and not case.write_tools():
        errors.append((("requiresApproval",), "no tool is declared with writes: true, so no write can wait "
                                              "for approval; declare the tools in the dataset's tools"))
    if case.tools and case.handover_tool and case.tool(case.handover_tool) is None:
        errors.append((("handoverTool",), f"{case.handover_tool!r} is not a declared tool ({', '.join(names)})"))
    if case.tools and case.calls is not None:
        patterns: list[tuple[tuple[str | int, ...], CallPattern]] = [
            (("calls", "expected", i), c) for i, c in enumerate(case.calls.expected or ())]
        patterns += [(("calls", "forbidden", i), c) for i, c in enumerate(case.calls.forbidden)]
        for loc, pattern in patterns:
            declared = case.tool(pattern.tool)
            if declared is None:
                errors.append(((*loc, "tool"), f"{pattern.tool!r} is not a declared tool "
                                               f"({', '.join(names)})"))
            elif declared.parameters is not None and pattern.arguments:
                props = declared.parameters.get("properties") or {}
                open_ended = declared.parameters.get("additionalProperties", False) is not False
                unknown = [k for k in pattern.arguments if k not in props and not open_ended]
                if unknown:
                    errors.append(((*loc, "arguments", unknown[0]),
                                   f"{pattern.tool} has no parameter {unknown[0]!r} ({', '.join(props)})"))
    return errors


class DatasetHeader(_Strict):
    """The object form of a dataset file: declarations shared by every case, and the cases."""

    name: str = ""
    description: str = ""
    tools: tuple[ToolDeclaration, ...] = ()
    normalize: tuple[Normalisation, ...] = ()
    strict_integers: bool = False
    handover_tool: str | None = Field(default=None, min_length=1)  # every case's, unless a case names its own
    cases: list[Any]


def golden_case_json_schema() -> dict[str, Any]:
    """The JSON Schema of a dataset file (JSON or YAML): a list of cases, or an
    object with ``cases`` and the declarations they share. A JSONL line is one
    ``#/$defs/GoldenCase``."""
    case = GoldenCase.model_json_schema(by_alias=True)
    case["anyOf"] = [{"required": ["question"]}, {"required": ["user"]}]  # a simulated user may open
    header = DatasetHeader.model_json_schema(by_alias=True)
    # WHY hoist $defs: the case's own $refs ("#/$defs/ToolOrder") resolve from
    # the document root, so the definitions must live there, next to the case.
    definitions = {**case.pop("$defs", {}), **header.pop("$defs", {}), "GoldenCase": case}
    definitions["ToolDeclaration"] = _tool_schema(definitions["ToolDeclaration"])
    cases = {"type": "array", "items": {"$ref": "#/$defs/GoldenCase"}}
    header["properties"]["cases"] = cases
    header.pop("title", None)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "tracegrade golden dataset",
        "anyOf": [cases, header],
        "$defs": definitions,
    }


def _tool_schema(flat: dict[str, Any]) -> dict[str, Any]:
    """A tool declaration, flat or in the OpenAI function form (``writes`` and
    ``approval`` beside ``type``)."""
    outer = ("writes", "approval")
    function = {**flat, "properties": {k: v for k, v in flat["properties"].items() if k not in outer}}
    wrapped = {"type": "object", "additionalProperties": False, "required": ["type", "function"],
               "properties": {"type": {"const": "function"}, "function": function,
                              **{k: flat["properties"][k] for k in outer}}}
    return {"title": flat.get("title", "ToolDeclaration"), "description": flat.get("description", ""),
            "anyOf": [{k: v for k, v in flat.items() if k not in ("title", "description")}, wrapped]}


def write_golden_case_schema(path: Path = SCHEMA_PATH) -> Path:
    """Write the schema file; ``python -m tracegrade.case.schema`` regenerates the committed one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(golden_case_json_schema(), indent=2) + "\n")
    return path


if __name__ == "__main__":
    print(f"wrote {write_golden_case_schema()}")
