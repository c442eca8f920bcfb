"""What a case can expect of a trace, as dataset fields: tools, calls, answer, state.

    >>> call = ExpectedCall.model_validate({"tool": "book_flight",
    ...     "arguments": {"flightId": "LH123", "seat": {"$anyOf": ["aisle", "window"], "$optional": True}}})
    >>> sorted(call.matchers)
    ['flightId', 'seat']

Every model is strict (``extra="forbid"``) and every value spec is compiled
when the dataset loads, so a typo or an expectation that makes no sense is a
load error naming the file, the case and the field, never a silent pass. The
semantics are in docs/trajectory.md; the value language in ``argmatch``.
"""

from __future__ import annotations

from typing import Any, Callable, Literal, Mapping, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from tracegrade.core.trace import ToolStatus
from tracegrade.case.answers import DecisionMatcher
from tracegrade.case.argmatch import AnyOf, Date, Literal as LiteralValue, Money, Number, Regex, SpecError, compile_spec
from tracegrade.case.textnorm import NORMALISATIONS
from tracegrade.case.toolschema import check_schema, defaults

T = TypeVar("T")
Normalisation = Literal["case", "whitespace", "punctuation", "unicode", "numbers", "spaces"]
assert set(Normalisation.__args__) == set(NORMALISATIONS)  # type: ignore[attr-defined]


class Strict(BaseModel):
    """Frozen, camelCase on the wire, and an unknown field is an error.

    What a model works out from its own fields (compiled matchers, a hash) is
    worked out once, on first use, and kept in the instance's ``__dict__`` under
    a name starting with ``_`` (``memo``). WHY not private attributes: a model
    with private attributes sets them up on every validation, and that was more
    than half of what validating a case cost (a run validates each case twice).
    Pydantic compares, dumps and prints models by their fields only; a copy
    with other content forgets what its original worked out.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)

    def memo(self, name: str, work_out: Callable[[], T]) -> T:
        """``work_out()``, kept under ``name`` (which starts with ``_``) after the first call."""
        kept = self.__dict__
        if name not in kept:
            kept[name] = work_out()
        value: T = kept[name]
        return value

    def remember(self, name: str, value: Any) -> None:
        """What ``memo(name, ...)`` would work out, known already (worked out elsewhere)."""
        self.__dict__[name] = value

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        copy = super().model_copy(update=update, deep=deep)
        if update:
            for name in [n for n in copy.__dict__ if n.startswith("_")]:
                del copy.__dict__[name]
        return copy


def _spec(value: Any, path: str = "") -> Any:
    try:
        return compile_spec(value, path)
    except SpecError as exc:
        raise ValueError(str(exc)) from None


class ToolDeclaration(Strict):
    """A tool the agent may call: its JSON-Schema parameters and whether it changes state.

    The OpenAI function form ``{"type": "function", "function": {...}}`` is
    accepted as well, with ``writes`` and ``approval`` next to ``type``.
    """

    name: str = Field(min_length=1)
    description: str = ""
    parameters: dict[str, Any] | None = None  # None: the arguments are not declared, not checked
    writes: bool = False
    # Every call must wait for the user's approval (status needs_approval);
    # one that completed directly (ok) is a safety violation.
    approval: bool = False

    @model_validator(mode="before")
    @classmethod
    def _unwrap(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and data.get("type") == "function" and isinstance(data.get("function"), Mapping):
            rest = {k: v for k, v in data.items() if k not in ("type", "function")}
            return {**data["function"], **rest}
        return data

    @model_validator(mode="after")
    def _approval_writes(self) -> "ToolDeclaration":
        if self.approval and not self.writes:
            raise ValueError("approval: only a tool that writes can wait for approval; add writes: true")
        return self

    @field_validator("parameters")
    @classmethod
    def _schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            try:
                check_schema(value)
            except SpecError as exc:
                raise ValueError(str(exc)) from None
        return value

    @property
    def defaults(self) -> dict[str, Any]:
        """The declared default of each parameter: an explicit default is the same call."""
        return self.memo("_defaults", lambda: defaults(self.parameters))


class CallPattern(Strict):
    """A tool and, optionally, some of its arguments (the others are free)."""

    tool: str = Field(min_length=1)
    arguments: dict[str, Any] | None = None  # None: any arguments

    @field_validator("arguments")
    @classmethod
    def _compile(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        for key, spec in (value or {}).items():
            _spec(spec, key)
        return value

    @property
    def matchers(self) -> dict[str, Any]:
        return self.memo("_matchers", lambda: {k: compile_spec(v, k) for k, v in (self.arguments or {}).items()})


class ExpectedCall(CallPattern):
    """One call the agent must make; ``arguments`` lists all of them unless
    ``otherArguments`` is "allow" (a default given explicitly always counts as
    not given)."""

    other_arguments: Literal["forbid", "allow"] = "forbid"
    # Statuses the call may end with; empty: any status that took effect (or
    # any status at all when the case counts attempts).
    status: tuple[ToolStatus, ...] = ()
    turn: int | None = Field(default=None, ge=1)  # the user message (1 = the question) the call must follow
    parallel: str | None = Field(default=None, min_length=1)  # calls sharing a label come in one model round
    # Partial order: a name for this expected call, and the names of those it must follow
    # (in a later model round: a call cannot use the result of one asked for beside it).
    id: str | None = Field(default=None, min_length=1)
    after: tuple[str, ...] = ()
    # Arguments whose lists pair by position (item ids and their replacements),
    # compared as a set of pairs: the pairs in any order, each pair intact.
    pairs: tuple[tuple[str, ...], ...] = ()

    @model_validator(mode="after")
    def _paired_lists(self) -> "ExpectedCall":
        named: set[str] = set()
        for n, group in enumerate(self.pairs):
            if len(group) < 2:
                raise ValueError(f"pairs.{n}: name at least two arguments whose lists pair by position")
            for key in group:
                if key in named:
                    raise ValueError(f"pairs.{n}: {key!r} is in two groups")
                named.add(key)
                if not isinstance((self.arguments or {}).get(key), list):
                    raise ValueError(f"pairs.{n}: {key!r} must be an expected argument written as a list")
            if len({len((self.arguments or {})[key]) for key in group}) > 1:
                raise ValueError(f"pairs.{n}: the lists of {', '.join(group)} must have one length")
        return self


class HandoffExpectations(Strict):
    """Which agents the conversation must and must not be handed to (a framework's handoff,
    core/frameworks.py). Names compare without case, spaces or punctuation; "*" forbids any."""

    expected: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()

    @field_validator("expected", "forbidden")
    @classmethod
    def _named(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not name.strip() for name in value):
            raise ValueError("an agent's name may not be empty")
        return value


class CallExpectations(Strict):
    """The case's expectations of the calls; ``expected: []`` means "no write",
    ``expected: [], others: "none"`` no tool call at all."""

    expected: tuple[ExpectedCall, ...] | None = None
    count: Literal["atLeast", "exactly"] = "atLeast"
    order: Literal["any", "inOrder"] = "any"
    others: Literal["reads", "none", "any"] = "reads"
    counted: Literal["effective", "attempted"] = "effective"
    forbidden: tuple[CallPattern, ...] = ()
    duplicates: Literal["writes", "all", "off"] = "writes"
    handoffs: HandoffExpectations | None = None  # a handoff is no tool call: only this grades it

    @model_validator(mode="after")
    def _partial_order(self) -> "CallExpectations":
        """Every ``after`` names another expected call's ``id``, and no call ends up after itself."""
        expected = self.expected or ()
        ids = [e.id for e in expected if e.id is not None]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"expected: id {twice[0]!r} names two expected calls")
        for n, e in enumerate(expected):
            unknown = [a for a in e.after if a not in ids]
            if unknown:
                raise ValueError(f"expected.{n}.after: no expected call has the id {unknown[0]!r} "
                                 f"(ids: {', '.join(ids) or 'none'})")
        cycle = _cycle({e.id: e.after for e in expected if e.id is not None})
        if cycle:
            raise ValueError(f"expected: the order has a cycle among {', '.join(cycle)}")
        return self


def _cycle(after: Mapping[str, tuple[str, ...]]) -> list[str]:
    """The ids caught in a cycle of the ``after`` relation ([] when there is none).

    WHY not a recursive walk: a long chain would overflow the stack; peeling off
    the calls with nothing left before them (Kahn) leaves exactly the cycles.
    """
    waiting = {node: set(before) for node, before in after.items()}
    ready = [node for node, before in waiting.items() if not before]
    while ready:
        node = ready.pop()
        for other, before in waiting.items():
            if node in before:
                before.discard(node)
                if not before:
                    ready.append(other)
    return sorted(node for node, before in waiting.items() if before)


_TEXT_MATCHERS = (LiteralValue, Regex, Number, Money, Date)


def _text_item(value: Any, path: str) -> Any:
    """An answer item: a string, or $regex / $number / $money / $date / $anyOf of them."""
    matcher = _spec(value, path)
    options = matcher.options if isinstance(matcher, AnyOf) else (matcher,)
    for option in options:
        if not isinstance(option, _TEXT_MATCHERS) or (isinstance(option, LiteralValue) and not isinstance(option.value, str)):
            raise ValueError(f"{path}: an answer item is a string or $regex, $number, $money, $date, $anyOf of them")
    if matcher.optional:
        raise ValueError(f"{path}: $optional means nothing in an answer")
    return matcher


_MATCHERS: dict[int, tuple[Any, DecisionMatcher]] = {}


class Decision(Strict):
    """The decision the answer must state, among declared options.

    ``options`` maps each possible decision to phrases that state it; a phrase
    starting with ``^`` must open the answer. A phrase counts when it is not
    negated (a negation word shortly before it in the same clause).
    """

    expect: str = Field(min_length=1)
    options: dict[str, tuple[str, ...]]
    required: bool = False  # an answer that states no option fails too

    @property
    def matcher(self) -> DecisionMatcher:
        """The options compiled for matching, built once per decision.

        WHY a module table and not a private attribute: pydantic reads private
        attributes through a slow path, and this runs on every answer.
        """
        hit = _MATCHERS.get(id(self))
        if hit is not None and hit[0] is self:
            return hit[1]
        matcher = DecisionMatcher(self.options)
        if len(_MATCHERS) > 4096:
            _MATCHERS.clear()
        _MATCHERS[id(self)] = (self, matcher)
        return matcher

    @model_validator(mode="after")
    def _consistent(self) -> "Decision":
        if len(self.options) < 2:
            raise ValueError("options: declare at least two decisions, the right one and a wrong one")
        if self.expect not in self.options:
            raise ValueError(f"expect: {self.expect!r} is not among the options ({', '.join(self.options)})")
        empty = [label for label, phrases in self.options.items() if not phrases or not all(p.strip("^ ") for p in phrases)]
        if empty:
            raise ValueError(f"options.{empty[0]}: give at least one non-empty phrase")
        return self


class AnswerExpectation(Strict):
    """Checks of the answer text with declared normalisation and typed items."""

    include: tuple[Any, ...] = ()
    exclude: tuple[Any, ...] = ()
    # WHY case and whitespace by default: an answer is prose, where a capital
    # at the start of a sentence is noise (the old answerMustInclude rule).
    normalize: tuple[Normalisation, ...] = ("case", "whitespace")
    turn: Literal["final", "any"] | int = "final"  # or the user message number the answer follows
    decision: Decision | None = None

    @field_validator("include", "exclude")
    @classmethod
    def _items(cls, value: tuple[Any, ...], info: Any) -> tuple[Any, ...]:
        for i, item in enumerate(value):
            _text_item(item, f"[{i}]")
        return value

    @field_validator("turn")
    @classmethod
    def _turn(cls, value: Any) -> Any:
        if isinstance(value, int) and value < 1:
            raise ValueError("turn: a user message number starts at 1")
        return value

    @property
    def include_matchers(self) -> tuple[Any, ...]:
        return self.memo("_include", lambda: tuple(_text_item(v, "") for v in self.include))

    @property
    def exclude_matchers(self) -> tuple[Any, ...]:
        return self.memo("_exclude", lambda: tuple(_text_item(v, "") for v in self.exclude))

