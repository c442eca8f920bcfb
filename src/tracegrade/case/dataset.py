"""Golden datasets: load, validate, version by content hash, filter.

    >>> case = GoldenCase(id="tool-status-01", question="Where is ORD-101?",
    ...                   expected_tool="getOrderStatus", expected_tool_argument="ORD-101")
    >>> Dataset("demo", (case,)).version == Dataset("demo", (case,)).version
    True

A case file is JSON (a list, or an object with ``cases``), JSONL or YAML. Every
field is checked (``extra="forbid"``): a typo is an error naming the file, the
case and the field, never a silently ignored expectation.

The object form may declare, for every case, the ``tools`` the agent has
(JSON-Schema parameters, whether each ``writes``) and the default string
``normalize`` steps; a case's own ``tools`` replace a dataset tool of the same
name. The trajectory fields (``calls``, ``answer``, ``state``) are described in
docs/trajectory.md.
"""

from __future__ import annotations

import contextvars
import functools
import itertools
import hashlib
import json
import pickle
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Iterator, Literal, Sequence, cast, get_args, overload

from pydantic import BaseModel, Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from tracegrade.core import jsontext
from tracegrade.core.errors import DatasetError
from tracegrade.engine.packed import Packed
from tracegrade.core.validation import describe
from tracegrade.engine import split_load as load_part
from tracegrade.case.argmatch import STRICT_INTEGERS, SpecError, compile_spec
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


_HASH = "_content_hash"  # where a case keeps its content hash (Strict.memo); CompactCases hands it over


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
        return self.memo(_HASH, lambda: _hash(self.canonical()))

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


@dataclass(frozen=True)
class Dataset:
    name: str
    cases: Sequence[GoldenCase]  # a tuple, or a loaded file's CompactCases
    # WHY kept on a selection: a run of some cases measured the whole file's version.
    file_version: str = field(default="", compare=False)

    @property
    def version(self) -> str:
        """A hash of every case's content: any edit gives a new version."""
        return self.file_version or _hash([c.canonical() for c in self.cases])[:12]

    def select(
        self, only: Iterable[str] = (), split: str | None = None,
        category: str | None = None, tag: str | None = None,
    ) -> "Dataset":
        """The cases matching every filter given; DatasetError for an unknown id or an empty result."""
        wanted = set(only)
        if not (wanted or split or category or tag) and self.cases:
            return Dataset(self.name, self.cases, self.version)  # WHY not a loop: each case would validate again
        unknown = wanted - set(case_ids(self.cases))
        if unknown:
            raise DatasetError(f"{self.name}: no case with id {', '.join(sorted(unknown))}")
        keep = [i for i, c in enumerate(self.cases)
                if (not wanted or c.id in wanted)
                and (split is None or c.split == split)
                and (category is None or c.category == category)
                and (tag is None or tag in c.tags)]
        cases = self.cases.take(keep) if isinstance(self.cases, CompactCases) else tuple(self.cases[i] for i in keep)
        if not cases:
            # WHY an error: a misspelt --split would otherwise run nothing and exit 0.
            asked = {"split": split, "category": category, "tag": tag}
            named = ", ".join(f"{k} {v!r}" for k, v in asked.items() if v is not None)
            raise DatasetError(f"{self.name}: no case matches {named or 'the filters'}")
        return Dataset(self.name, cases, self.version)


def load_dataset(path: str | Path) -> Dataset:
    """Read and validate a dataset file, or DatasetError naming file, case and field.

    WHY one case at a time, from its record to its packed bytes: a JSONL file's records are
    parsed as they are read, so no more than one is held as Python objects. Read into a list
    first, 60,000 records held 55 MB at once, and the process kept most of it after they
    were freed (the allocator's arenas, pinned by the cases kept between them).
    WHY a large JSONL file's second part in a process of its own: see ``engine.split_load``."""
    path = Path(path)
    second = load_part.second_part(path)
    try:
        return _load(path, second)
    except load_part.PartFailed:  # read again by this process alone, which names the first error
        return _load(path, None)
    finally:
        if second is not None:
            second.close()


def _load(path: Path, second: load_part.SecondPart | None) -> Dataset:
    """The dataset in ``path``: every case read here, or up to ``second``'s offset here and
    the rest as ``second`` read it (PartFailed when it could not)."""
    raw_cases, context = _read_records(path, end=second.offset if second is not None else None)
    seen: dict[str, int] = {}
    version = hashlib.sha256()

    def packed() -> Iterator[bytes]:
        for index, raw in enumerate(raw_cases):
            canonical, item = _packed_case(path, index, raw, context, seen)
            version.update((", " if index else "[").encode() + canonical)
            yield item
        for canonical, item in second.cases() if second is not None else ():
            case_id = _id(item)
            if case_id in seen:  # an id of the first part: read again here, to name both places
                raise load_part.PartFailed(f"case {case_id!r} twice")
            seen[case_id] = len(seen)
            version.update((", " if len(seen) > 1 else "[").encode() + canonical)
            yield item

    records = Packed(packed())
    if not seen:
        raise DatasetError(f"{path}: no cases")
    version.update(b"]")  # the same bytes as _hash of the list of every case's canonical form
    return Dataset(path.name, CompactCases(records, context), version.hexdigest()[:12])


def _packed_case(path: Path, index: int, raw: Any, context: dict[str, Any], seen: dict[str, int]) -> tuple[bytes, bytes]:
    """The record at ``index`` validated, its id not in ``seen`` (then added to it), as its
    canonical text and its item in CompactCases (``_pack``)."""
    case = _validate(path, index, raw, context)
    if case.id in seen:
        first = _validate(path, seen[case.id], _record_at(path, seen[case.id]), context)
        raise DatasetError(f"{path}: {_duplicate(first, case)} (entry #{index + 1}); ids must be unique")
    seen[case.id] = index
    held, as_fields = _held_form(case, raw)
    canonical = _canonical_text(_validated_canonical(case, held) if as_fields else case.canonical())
    # the case's content_hash(), from the same bytes
    return canonical, _pack(case.id, hashlib.sha256(canonical).digest(), held, as_fields)


def part_cases(path: Path, offset: int) -> Iterator[tuple[bytes, bytes]]:
    """The canonical text and the CompactCases item of every case of a JSONL file from the
    line that starts at byte ``offset`` on (``engine.split_load``'s other process); an error is
    raised as it is met, its line and entry numbers counted from ``offset``."""
    seen: dict[str, int] = {}
    lines = path.open("rb")
    lines.seek(offset)
    for index, raw in enumerate(_json_lines(path, lines, start=offset)):
        yield _packed_case(path, index, raw, {}, seen)


def _record_at(path: Path, index: int) -> Any:
    """The raw record at ``index`` of the file, read again (a duplicate id's first case, to say what differs)."""
    return next(itertools.islice(_read_records(path)[0], index, None))


class CompactCases(Sequence[GoldenCase]):
    """A file's cases held compressed, as the values their fields were given or as their records;
    each read makes its case again.

        >>> cases = CompactCases([_pack("a", None, {"id": "a", "question": "Why?"})], {})
        >>> len(cases), cases[0].question, cases.find("a") == cases[0], cases.find("b"), cases.ids()
        (1, 'Why?', True, None, ['a'])

    WHY: 100,000 GoldenCase objects held about 240 MB (2.4 KB each) from the
    load to the end of the run; a record, pickled and compressed with its
    neighbours (``engine.packed``), is well under 0.2 KB. WHY pickled, not as JSON:
    YAML dates, tuples and all come back as they were, with no question of a lossy
    round trip. WHY the values validation gave a case's fields when none holds a
    model (``_held_form``): the case is made from them as unpickling makes one, in
    ~6 us where validating its record again took ~13 (``timeit``); a case with a model inside
    (tools, calls, a user, ...) is kept as its raw record, which the same context
    validates to the very same case. WHY each case's id and content
    hash in its item, not beside: what is packed goes to a file past a size
    (``engine.packed``), so the dataset's memory stays the same whatever its size.
    """

    __slots__ = ("_items", "_context", "_index")

    def __init__(self, items: Iterable[bytes] | Packed, context: dict[str, Any]) -> None:
        """``items``: each case as ``_pack`` made it."""
        self._items = items if isinstance(items, Packed) else Packed(items)
        self._context = context
        self._index: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> GoldenCase: ...

    @overload
    def __getitem__(self, index: slice) -> CompactCases: ...

    def __getitem__(self, index: int | slice) -> GoldenCase | CompactCases:
        if isinstance(index, slice):
            return self.take(range(*index.indices(len(self))))
        digest, as_fields, held = _unpack(self._items[index])
        case = _case_from_fields(held) if as_fields else GoldenCase.model_validate(held, context=self._context)
        if digest is not None:
            case.remember(_HASH, digest.hex())  # WHY: hashing the case again cost as much as a check
        return case

    def __iter__(self) -> Iterator[GoldenCase]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, str) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"CompactCases({len(self)} cases)"

    def ids(self) -> list[str]:
        """Every case's id, in order (read from the items each call: keep the list to use it twice)."""
        return [_id(item) for item in self._items]

    def find(self, case_id: str) -> GoldenCase | None:
        """The case with this id, or None."""
        if self._index is None:
            self._index = {case_id: i for i, case_id in enumerate(self.ids())}
        index = self._index.get(case_id)
        return None if index is None else self[index]

    def take(self, indices: Iterable[int]) -> CompactCases:
        """The cases at ``indices``, still compact."""
        return CompactCases(Packed(self._items[i] for i in indices), self._context)


def case_ids(cases: Sequence[GoldenCase]) -> Sequence[str]:
    """Every case's id, without validating a CompactCases' cases again."""
    return cases.ids() if isinstance(cases, CompactCases) else [c.id for c in cases]


def case_finder(cases: Sequence[GoldenCase]) -> Callable[[str], GoldenCase | None]:
    """A lookup by id that holds no more cases than ``cases`` already does."""
    return cases.find if isinstance(cases, CompactCases) else {c.id: c for c in cases}.get


_HASH_KNOWN, _AS_FIELDS = 1, 2  # the flags of a ``_pack`` item's first byte


def _pack(case_id: str, digest: bytes | None, held: Any, as_fields: bool = False) -> bytes:
    """A case as CompactCases holds it: 1 byte of flags (its content hash known, what is held),
    the hash (32 bytes, when known), its id's length in bytes (4), its id (UTF-8), then pickled
    what is held: its raw record, or (``as_fields``) the values of its given fields (``_held_form``).

    WHY the id and hash as plain bytes, not pickled: unpickling them too cost a third of the
    read of a case when its job starts, and the id is read alone (``_id``) to find a case."""
    flags = (0 if digest is None else _HASH_KNOWN) | (_AS_FIELDS if as_fields else 0)
    key = case_id.encode()
    return b"".join((flags.to_bytes(1, "little"), digest or b"", len(key).to_bytes(4, "little"), key,
                     pickle.dumps(held, protocol=pickle.HIGHEST_PROTOCOL)))


def _id_place(item: bytes) -> tuple[int, int]:
    """Where the id of a ``_pack`` item starts and ends (what is held follows it)."""
    start = 37 if item[0] & _HASH_KNOWN else 5
    return start, start + int.from_bytes(item[start - 4:start], "little")


def _id(item: bytes) -> str:
    start, end = _id_place(item)
    return item[start:end].decode()


def _unpack(item: bytes) -> tuple[bytes | None, bool, Any]:
    """The content hash (None when not known) of a ``_pack`` item, whether it holds the values of
    the case's fields (else its raw record), and those values or that record."""
    _, end = _id_place(item)
    flags = item[0]
    digest = item[1:33] if flags & _HASH_KNOWN else None
    return digest, bool(flags & _AS_FIELDS), pickle.loads(memoryview(item)[end:])


def _held_form(case: GoldenCase, record: Any) -> tuple[Any, bool]:
    """What CompactCases keeps of a case, and whether it is the values of its fields: those of
    the fields it was given, when none of them holds a model; else its raw record.

    WHY only the given fields: every other field holds its default (validation fills them in, and
    ``model_copy`` counts what it updates as given, such as the dataset's tools when there are
    none). WHY not a model: pickled, it takes its memos along, and costs more than the
    validation it saves."""
    given, values = case.model_fields_set, case.__dict__
    # WHY isdisjoint first: the common case answered without building the intersection (~1.5 us)
    if given.isdisjoint(_MODEL_FIELDS) or not any(values[name] for name in given & _MODEL_FIELDS):
        return {name: values[name] for name in given}, True
    return record, False  # a model given, or a tuple of them


def _case_from_fields(given: dict[str, Any]) -> GoldenCase:
    """The case that validation made with these values of its given fields, made again as
    unpickling makes a model (``__setstate__``): the defaults filled in, nothing validated."""
    values = _DEFAULTS.copy()
    for name, factory in _DEFAULT_FACTORIES:
        values[name] = factory()  # WHY anew: a dict default shared by two cases would be one object
    values.update(given)
    case = GoldenCase.__new__(GoldenCase)
    case.__setstate__({"__dict__": values, "__pydantic_fields_set__": set(given),
                       "__pydantic_extra__": None, "__pydantic_private__": None})
    return case


def _validated_canonical(case: GoldenCase, given: dict[str, Any]) -> dict[str, Any]:
    """``case.canonical()`` of a case validation just made, from the values of its given fields
    (``_held_form``) when each is text, a number, a flag, None or a tuple (of text: no model).

    WHY: the serializer weighs all 36 fields against their defaults, ~4 us a case and the
    largest part of a large run's load; a field not given holds its default, and each of
    these values is its own JSON form. WHY only a case validation made: there the given
    fields are those it set (``model_construct`` may be told other ones)."""
    dump = {}
    for name, value in given.items():
        kind = type(value)
        if kind not in _PLAIN_TYPES:  # a dict of arguments or of state, ...: as the serializer writes it
            return case.canonical()
        if value != _DEFAULTS[name]:
            dump[_ALIASES[name]] = list(value) if kind is tuple else value
    return case._marking_an_unstated_tool(dump)


def _holds_a_model(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_holds_a_model(argument) for argument in get_args(annotation))


_PLAIN_TYPES = frozenset({str, int, bool, type(None), tuple})
_ALIASES = {name: f.serialization_alias or name for name, f in GoldenCase.model_fields.items()}
_MODEL_FIELDS = frozenset(name for name, f in GoldenCase.model_fields.items() if _holds_a_model(f.annotation))
# In field order, as validation fills a case's __dict__ (its repr follows that order).
_DEFAULTS = {name: None if f.default_factory else f.default for name, f in GoldenCase.model_fields.items()}
# WHY the cast: a factory may take the validated data; none of GoldenCase's does (each is dict)
_DEFAULT_FACTORIES = tuple((name, cast(Callable[[], Any], f.default_factory))
                           for name, f in GoldenCase.model_fields.items() if f.default_factory is not None)


def _duplicate(first: GoldenCase, second: GoldenCase) -> str:
    """Why a repeated id is refused, naming what differs."""
    if first.content_hash() == second.content_hash():
        return f"case {first.id!r} appears twice"
    if first.version != second.version:
        return (f"case {first.id!r} appears twice with different contents, as version {first.version} "
                f"and version {second.version}: keep one version per file")
    a, b = first.canonical(), second.canonical()
    fields = ", ".join(sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k)))
    return (f"case {first.id!r} appears twice with different contents under the same version {first.version} "
            f"(differing: {fields}): give the second case an id of its own; or, if it is an edit of the "
            f"first, keep only one (raising its version records that it changed)")


def _read_records(path: Path, end: int | None = None) -> tuple[Iterable[Any], dict[str, Any]]:
    """The raw cases (a JSONL file's as they are parsed, up to the line starting at byte
    ``end`` when given), and the declarations every case shares (tools, normalisation)."""
    try:
        if path.suffix == ".jsonl":
            return _json_lines(path, path.open("rb"), end=end), {}
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:  # a folder, no permission
        raise DatasetError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        if path.suffix in (".yaml", ".yml"):
            data: Any = load_yaml(path, text)
        else:
            data = json.loads(text)
    except ValueError as exc:  # load_yaml turns YAML's errors into ValueError
        raise DatasetError(f"{path}: cannot parse: {exc}") from None
    except RecursionError:  # no case nests that deep; the parsers recurse
        raise DatasetError(f"{path}: cannot parse: nested too deeply") from None
    if isinstance(data, dict) and "cases" in data:
        header = _header(path, data)
        return header.cases, {"tools": header.tools, "normalize": header.normalize,
                              "strict_integers": header.strict_integers, "handover_tool": header.handover_tool}
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a list of cases (or an object with 'cases')")
    return data, {}


def _header(path: Path, data: dict[str, Any]) -> DatasetHeader:
    if "version" in data:  # WHY said here: the generic hint offered a case's 'version', the same name
        raise DatasetError(f"{path}: field 'version': a dataset file declares no version: its version is the hash "
                           "of its cases' content, which every run records (a case may carry its own 'version', "
                           "raised when that case changes)")
    try:
        header = DatasetHeader.model_validate(data)
    except ValidationError as exc:
        raise DatasetError(f"{path}: {_describe(exc)}") from None
    names = [t.name for t in header.tools]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise DatasetError(f"{path}: field 'tools': tool {twice[0]!r} is declared twice")
    return header


@functools.cache
def _no_alias_loader() -> type:
    """Safe YAML without anchors and aliases.

    WHY: an alias repeats a node without copying its text, so a few hundred bytes
    of nested aliases expand to billions of nodes (a "billion laughs" bomb) and
    hang the loader. A dataset has no need of them: each case is written out.
    WHY built on first use: a run from a JSON dataset need not import YAML.
    """
    import yaml

    class NoAliasLoader(yaml.SafeLoader):
        def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
            event = self.peek_event()  # type: ignore[no-untyped-call]  # WHY: untyped in the PyYAML stubs
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise DatasetError(f"{self.name}: line {event.start_mark.line + 1}: YAML anchors and aliases "
                                   f"(&{event.anchor} / *{event.anchor}) are not accepted: write the value out")
            return super().compose_node(parent, index)

    return NoAliasLoader


def load_yaml(path: Path, text: str) -> Any:
    """YAML ``text`` read from ``path``; DatasetError naming the file for an anchor or
    alias, ValueError for text that is not YAML."""
    import yaml

    try:
        loader = _no_alias_loader()(text)  # a control character fails here already
        loader.name = str(path)
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None


def _json_lines(path: Path, lines: IO[bytes], start: int = 0, end: int | None = None) -> Iterator[Any]:
    """Each record of an open JSONL file, parsed as its line is read, from byte ``start`` (where
    ``lines`` is) to the line that starts at byte ``end``. Lines end at "\\n" (a "\\r" before it
    is dropped), as JSON Lines says: a JSON string may hold U+2028 and the like.

    WHY a line at a time, not the file's text: a large dataset's text (24 MB at 100,000 cases)
    was held whole while its cases loaded, the peak of a large run's memory."""
    number = 0
    with lines:
        for raw in lines:
            if end is not None and start >= end:
                return
            offset, start = start, start + len(raw)
            try:
                text = raw.decode("utf-8").removesuffix("\n").removesuffix("\r")
            except UnicodeDecodeError as exc:
                raise DatasetError(f"{path}: not UTF-8 text (byte {offset + exc.start})") from None
            # WHY a lone "\r" ends a line too: it did when the file was read as text (universal
            # newlines), and JSON has none inside a string
            for line in text.split("\r") if "\r" in text else (text,):
                number += 1
                if line.strip():
                    yield _record(path, number, line)


def _record(path: Path, number: int, line: str) -> Any:
    try:
        return jsontext.load(line)
    except ValueError as exc:  # json's "line 1" would be wrong: say which line of the file
        raise DatasetError(f"{path}: line {number}: cannot parse: {exc}") from None
    except RecursionError:  # the parser recurses
        raise DatasetError(f"{path}: line {number}: cannot parse: nested too deeply") from None


def _validate(path: Path, index: int, raw: Any, context: dict[str, Any]) -> GoldenCase:
    if not isinstance(raw, dict):
        raise DatasetError(f"{path}: {_label(raw, index)}: expected an object, got {type(raw).__name__}")
    try:
        return GoldenCase.model_validate(raw, context=context)
    except ValidationError as exc:
        raise DatasetError(f"{path}: {_label(raw, index)}: {_describe(exc)}") from None


def _label(raw: Any, index: int) -> str:
    """How an error names a case: by its id when it has one, else by its place in the file
    (worked out for an error only: ~1% of a large file's load)."""
    case_name = raw.get("id") if isinstance(raw, dict) else None
    return f"case {case_name!r}" if isinstance(case_name, str) else f"case #{index + 1}"


def _describe(exc: ValidationError) -> str:
    return describe(exc, GoldenCase)


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
    """Write the schema file; ``python -m tracegrade.case.dataset`` regenerates the committed one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(golden_case_json_schema(), indent=2) + "\n")
    return path


def _hash(data: Any) -> str:
    return _digest(_canonical_text(data))


def _digest(canonical: bytes) -> str:
    return hashlib.sha256(canonical).hexdigest()


def _canonical_text(data: Any) -> bytes:
    """``json.dumps(data, sort_keys=True, ensure_ascii=False)`` in UTF-8: the bytes every
    version and content hash is taken of, so they must never change."""
    return _CANONICAL_ENCODER(data)


def _canonical_encoder() -> Callable[[Any], bytes]:
    """What ``_canonical_text`` calls: ``json.dumps``'s own C encoder with ``json.dumps``'s
    settings, made once.

    WHY made once: ``json.dumps`` with ``sort_keys`` makes a new encoder (a Python object and
    a C one) at every call, half of the ~5 us a case's text took to write at each load.
    WHY no markers (the check for a value holding itself): what is hashed is a model's dump
    or a list of them, a tree; ``json.dumps`` checks it at every container."""
    settings = json.JSONEncoder(sort_keys=True, ensure_ascii=False)
    if c_make_encoder is None:  # an interpreter without json's C part
        return lambda data: settings.encode(data).encode()
    encode = c_make_encoder(None, settings.default, encode_basestring, settings.indent, settings.key_separator,
                            settings.item_separator, settings.sort_keys, settings.skipkeys, settings.allow_nan)
    return lambda data: "".join(encode(data, 0)).encode()


_CANONICAL_ENCODER = _canonical_encoder()


if __name__ == "__main__":
    print(f"wrote {write_golden_case_schema()}")
