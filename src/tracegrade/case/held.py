"""A loaded file's cases held compact, and made again on each read without validating again.

    >>> from tracegrade.engine.items import pack_item
    >>> cases = CompactCases([pack_item("a", None, {"id": "a", "question": "Why?"})], {})
    >>> len(cases), cases[0].question, cases.find("a") == cases[0], cases.find("b"), cases.ids()
    (1, 'Why?', True, None, ['a'])

The bytes of an item are ``engine.items``'; this module says what of a case is kept
(``held_form``) and how the case is made again from it.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Sequence, cast, get_args, overload

from pydantic import BaseModel

from tracegrade.case.schema import HASH_MEMO, GoldenCase
from tracegrade.engine.items import item_key, unpack_item
from tracegrade.engine.packed import Packed


class CompactCases(Sequence[GoldenCase]):
    """A file's cases held compressed, as the values their fields were given or as their records;
    each read makes its case again.

    WHY: 100,000 GoldenCase objects held about 240 MB (2.4 KB each) from the
    load to the end of the run; a record, pickled and compressed with its
    neighbours (``engine.packed``), is well under 0.2 KB. WHY pickled, not as JSON:
    YAML dates, tuples and all come back as they were, with no question of a lossy
    round trip. WHY the values validation gave a case's fields when none holds a
    model (``held_form``): the case is made from them as unpickling makes one, in
    ~6 us where validating its record again took ~13 (``timeit``); a case with a model inside
    (tools, calls, a user, ...) is kept as its raw record, which the same context
    validates to the very same case. WHY each case's id and content
    hash in its item, not beside: what is packed goes to a file past a size
    (``engine.packed``), so the dataset's memory stays the same whatever its size.
    """

    __slots__ = ("_items", "_context", "_index")

    def __init__(self, items: Iterable[bytes] | Packed, context: dict[str, Any]) -> None:
        """``items``: each case as ``engine.items.pack_item`` made it."""
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
        digest, as_fields, held = unpack_item(self._items[index])
        case = case_from_fields(held) if as_fields else GoldenCase.model_validate(held, context=self._context)
        if digest is not None:
            case.remember(HASH_MEMO, digest.hex())  # WHY: hashing the case again cost as much as a check
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
        return [item_key(item) for item in self._items]

    def find(self, case_id: str) -> GoldenCase | None:
        """The case with this id, or None."""
        if self._index is None:
            self._index = {case_id: i for i, case_id in enumerate(self.ids())}
        index = self._index.get(case_id)
        return None if index is None else self[index]

    def take(self, indices: Iterable[int]) -> CompactCases:
        """The cases at ``indices``, still compact."""
        return CompactCases(Packed(self._items[i] for i in indices), self._context)



def held_form(case: GoldenCase, record: Any) -> tuple[Any, bool]:
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


def case_from_fields(given: dict[str, Any]) -> GoldenCase:
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


def validated_canonical(case: GoldenCase, given: dict[str, Any]) -> dict[str, Any]:
    """``case.canonical()`` of a case validation just made, from the values of its given fields
    (``held_form``) when each is text, a number, a flag, None or a tuple (of text: no model).

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

