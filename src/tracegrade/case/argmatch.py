"""The value language of expectations: what a dataset writes for an expected
argument (or state value), compiled once, then compared with what came.

    >>> seat = compile_spec({"$anyOf": ["aisle", "window"], "$optional": True})
    >>> check(seat, "aisle"), check(seat, MISSING)
    ([], [])
    >>> [(m.kind, m.expected, m.got) for m in check(compile_spec(10), "10")]
    [('type', 'integer 10', 'string "10"')]

A plain JSON value is a literal. An object whose keys all start with ``$`` is
an operator; an object mixing ``$`` keys and other keys is refused, so a value
and an operator can never be confused (``{"$eq": {...}}`` writes a literal
object whose own keys start with ``$``). Operators:

``$eq``         the literal value that follows, taken as is
``$anyOf``      a list of acceptable specs (each a literal or an operator)
``$optional``   true: the argument may be absent; if given it must match
``$any``        true: any value, but present
``$never``      true: no value is acceptable (with ``$optional``: the key must be absent)
``$unordered``  a list compared as a multiset: same items, any order
``$contains``   a list holding, for each spec given, its own matching item (others allowed)
``$has``        an object with at least these keys, each matching (other keys allowed)
``$normalize``  string normalisation for everything inside (see textnorm)
``$regex``      a string that contains a match (RE2 syntax, linear time: no look-around)
``$number``     a number, or a string that writes it (``"1,000"``)
``$approx``     ``{"value": 3.14, "abs": 0.01, "rel": 0}``: a number within the tolerance
``$money``      ``{"amount": 1250, "currency": "EUR"}``: a string that writes that amount
``$date``       ``"2026-05-01"``: a string that writes that date in a common format

Comparison is typed: ``10`` is not ``"10"``, ``true`` is not ``"true"`` and not
``1``; an integer is accepted where a number is expected (JSON does not tell
``10`` from ``10.0``), unless the case compares with ``STRICT_INTEGERS`` (then
``5.0`` is a float, not the integer 5). Numbers are equal only when they are
equal: ``1617262800007`` is not ``1617262800000``, and ``0.1 + 0.2`` is not
``0.3``; ``$approx`` states a tolerance. A list literal compares element by
element in order; an object literal key by key, with no key missing and none
added.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Mapping, Sequence

from tracegrade.case.saferegex import PatternError, compile_pattern
from tracegrade.case.textnorm import NORMALISATIONS, REMOVE, normalise, parse_date, parse_money, parse_number


class _Missing:
    """Stands for an argument the call did not give."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()

# A comparison mode carried with the normalisation steps: a float never counts as an
# integer. WHY in the steps: they already travel from the case to every literal, and
# a mode (unlike a step) survives an argument's own ``$normalize``.
STRICT_INTEGERS = "#strict-integers"
_MODES = frozenset({STRICT_INTEGERS})


class SpecError(ValueError):
    """An expectation that makes no sense; ``path`` says where inside the value."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path


@dataclass(frozen=True)
class Mismatch:
    """One difference: ``kind`` is value | type | missing | unexpected | unknown.

    ``want`` is a text or the matcher that was not met, ``value`` what came
    (for ``missing``: MISSING, or the tool's schema default the call took by
    leaving the key out); WHY described only when read: matching tries many (call, expectation)
    pairs, and only the failures that are reported need words.
    """

    kind: str
    path: str
    want: Any
    value: Any = None

    @property
    def expected(self) -> str:
        return self.want if isinstance(self.want, str) else self.want.describe()

    @property
    def got(self) -> str:
        return describe_value(self.value)

    def describe(self) -> str:
        where = f"{self.path!r}" if self.path else "value"
        if self.kind == "missing" and self.value is not MISSING:
            return f"{where} omitted: the tool's schema default is {self.got}; expected {self.expected}"
        if self.kind == "missing":
            return f"{where} missing, expected {self.expected}"
        if self.kind == "unknown":
            return f"{where} is {self.expected}, got {self.got}"
        if self.kind == "unexpected":
            return f"{where} not expected, got {self.got}"
        return f"{where}: expected {self.expected}, got {self.got}"


# --- matchers ----------------------------------------------------------------
# Each matcher is a frozen dataclass with ``optional`` and ``normalize`` and a
# ``match(value, path, steps)`` that returns the mismatches ([] = accepted).


@dataclass(frozen=True)
class _Base:
    optional: bool = field(default=False, kw_only=True)
    normalize: tuple[str, ...] | None = field(default=None, kw_only=True)

    def steps(self, inherited: tuple[str, ...]) -> tuple[str, ...]:
        if self.normalize is None:
            return inherited
        return self.normalize + tuple(s for s in inherited if s in _MODES)


@dataclass(frozen=True)
class Literal(_Base):
    value: Any

    def match(self, value: Any, path: str, steps: tuple[str, ...]) -> list[Mismatch]:
        own = self.steps(steps)
        if not same_type(self.value, value, strict=STRICT_INTEGERS in own):
            return [Mismatch("type", path, self, value)]
        if equal_scalars(self.value, value, own):
            return []
        return [Mismatch("value", path, self, value)]

    def describe(self) -> str:
        return describe_value(self.value)


@dataclass(frozen=True)
class AnyValue(_Base):
    def match(self, value: Any, path: str, steps: tuple[str, ...]) -> list[Mismatch]:
        return []

    def describe(self) -> str:
        return "any value"


@dataclass(frozen=True)
class Never(_Base):
    """No value is acceptable; with ``$optional`` the key must be absent."""

    def match(self, value: Any, path: str, steps: tuple[str, ...]) -> list[Mismatch]:
        return [Mismatch("value", path, self, value)]

    def describe(self) -> str:
        return "no value (not to be given)"


@dataclass(frozen=True)
class AnyOf(_Base):
    options: tuple[Any, ...]

    def match(self, value: Any, path: str, steps: tuple[str, ...]) -> list[Mismatch]:
        own = self.steps(steps)
        results = [option.match(value, path, own) for option in self.options]
        if any(not r for r in results):
            return []
        # A type mismatch only when no option even has the value's type.
        kind = "type" if all(r and r[0].kind == "type" and r[0].path == path for r in results) else "value"
        return [Mismatch(kind, path, self, value)]

    def describe(self) -> str:
        return "one of [" + ", ".join(o.describe() for o in self.options) + "]"


@dataclass(frozen=True)
class ListOf(_Base):
    items: tuple[Any, ...]

    def match(self, value: Any, path: str, steps: tuple[str, ...]) -> list[Mismatch]:
        if not isinstance(value, (list, tuple)):
            return [Mismatch("type", path, self, value)]
        if len(value) != len(self.items):
            return [Mismatch("value", path, f"{len(self.items)} items {self.describe()}", value)]
        own = self.steps(steps)
        return [m for i, (item, got) in enumerate(zip(self.items, value)) for m in item.match(got, f"{path}[{i}]", own)]

    def describe(self) -> str:
        return "[" + ", ".join(i.describe() for i in self.items) + "]"


@dataclass(frozen=True)
class Contains(_Base):
    """A list holding, for each spec, its own matching item; other items allowed."""

    items: tuple[Any, ...]
    whole: ClassVar[bool] = False  # True: no other items (Unordered)

    def match(self, value: Any, path: str, steps: tuple[str, ...]) -> list[Mismatch]:
        if not isinstance(value, (list, tuple)):
            return [Mismatch("type", path, self, value)]
        own = self.steps(steps)
        fits = [[j for j, got in enumerate(value) if not item.match(got, path, own)] for item in self.items]
        if (not self.whole or len(value) == len(self.items)) and perfect_matching(fits, len(value)):
            return []
        return [Mismatch("value", path, self, value)]

    def describe(self) -> str:
        return "a list holding " + ", ".join(i.describe() for i in self.items)


@dataclass(frozen=True)
class Unordered(Contains):
    """The same items in any order (a multiset)."""

    whole: ClassVar[bool] = True

    def describe(self) -> str:
        return "[" + ", ".join(i.describe() for i in self.items) + "] in any order"


@dataclass(frozen=True)
class ObjectOf(_Base):
    """Key by key. ``defaults`` (from a tool schema): an omitted key counts as
    its default, and a key given with its default counts as omitted."""

    fields: Mapping[str, Any]
    allow_other: bool = False
    defaults: Mapping[str, Any] = field(default_factory=dict)

    def match(self, value: Any, path: str, steps: tuple[str, ...]) -> list[Mismatch]:
        if not isinstance(value, dict):
            return [Mismatch("type", path, "an object", value)]
        own, found = self.steps(steps), []
        for key, spec in self.fields.items():
            where = _join(path, key)
            if key in value:
                found += spec.match(value[key], where, own)
            elif key in self.defaults and not spec.match(self.defaults[key], where, own):
                continue  # omitted, and the default is what was expected
            elif not spec.optional:  # a key with a schema default carries it: the detail says the call took it
                found.append(Mismatch("missing", where, spec, self.defaults.get(key, MISSING)))
        for key in value.keys() - self.fields.keys():
            if self.allow_other or (key in self.defaults and same_value(self.defaults[key], value[key])):
                continue  # a default given explicitly is the same call
            found.append(Mismatch("unexpected", _join(path, key), "no such key expected", value[key]))
        return found

    def describe(self) -> str:
        text = "{" + ", ".join(f"{k}: {v.describe()}" for k, v in self.fields.items())
        return text + (", ...}" if self.allow_other else "}")


@dataclass(frozen=True)
class Regex(_Base):
    pattern: Any  # an RE2 pattern (saferegex): linear time on agent output

    def match(self, value: Any, path: str, steps: tuple[str, ...]) -> list[Mismatch]:
        if not isinstance(value, str):
            return [Mismatch("type", path, self, value)]
        if self.pattern.search(normalise(value, self.steps(steps))):
            return []
        return [Mismatch("value", path, self, value)]

    def describe(self) -> str:
        return f"text matching /{self.pattern.pattern}/"


@dataclass(frozen=True)
class Number(_Base):
    number: int | float

    def match(self, value: Any, path: str, steps: tuple[str, ...]) -> list[Mismatch]:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            return [Mismatch("type", path, self, value)]
        got = parse_number(value) if isinstance(value, str) else value
        return [] if got is not None and got == self.number else [
            Mismatch("value", path, self, value)]

    def describe(self) -> str:
        return f"the number {self.number:g}" if isinstance(self.number, float) else f"the number {self.number}"


@dataclass(frozen=True)
class Approx(_Base):
    """A number within an absolute or relative tolerance (``math.isclose``'s rule:
    within ``abs``, or within ``rel`` of the larger of the two)."""

    number: int | float
    abs_tol: float = 0.0
    rel_tol: float = 0.0

    def match(self, value: Any, path: str, steps: tuple[str, ...]) -> list[Mismatch]:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return [Mismatch("type", path, self, value)]
        if math.isclose(value, self.number, rel_tol=self.rel_tol, abs_tol=self.abs_tol):
            return []
        return [Mismatch("value", path, self, value)]

    def describe(self) -> str:
        within = " or ".join(t for t in (f"\u00b1{self.abs_tol:g}" if self.abs_tol else "",
                                        f"\u00b1{self.rel_tol:g} relative" if self.rel_tol else "") if t)
        return f"{self.number:g} {within}"


@dataclass(frozen=True)
class Money(_Base):
    amount: float
    currency: str

    def match(self, value: Any, path: str, steps: tuple[str, ...]) -> list[Mismatch]:
        if not isinstance(value, str):
            return [Mismatch("type", path, self, value)]
        got = parse_money(value)
        return [] if got and got[0] == self.amount and got[1] == self.currency else [
            Mismatch("value", path, self, value)]

    def describe(self) -> str:
        return f"the amount {self.amount:g} {self.currency}"


@dataclass(frozen=True)
class Date(_Base):
    date: dt.date

    def match(self, value: Any, path: str, steps: tuple[str, ...]) -> list[Mismatch]:
        if not isinstance(value, str):
            return [Mismatch("type", path, self, value)]
        return [] if self.date in parse_date(value) else [Mismatch("value", path, self, value)]

    def describe(self) -> str:
        return f"the date {self.date.isoformat()}"


def check(matcher: Any, value: Any, path: str = "", steps: Sequence[str] = ()) -> list[Mismatch]:
    """Compare one value (or MISSING) with a compiled spec."""
    if value is MISSING:
        return [] if matcher.optional else [Mismatch("missing", path, matcher, MISSING)]
    mismatches: list[Mismatch] = matcher.match(value, path, tuple(steps))
    return mismatches


# --- compiling ---------------------------------------------------------------

_TESTS = ("$eq", "$anyOf", "$any", "$never", "$unordered", "$contains", "$has", "$regex", "$number", "$approx",
          "$money", "$date")
_MODIFIERS = ("$optional", "$normalize")
OPERATORS = _TESTS + _MODIFIERS


def compile_spec(spec: Any, path: str = "") -> Any:
    """A matcher for a spec, or SpecError naming where the spec makes no sense."""
    if isinstance(spec, dict) and any(isinstance(k, str) and k.startswith("$") for k in spec):
        return _compile_operator(spec, path)
    if isinstance(spec, dict):
        return ObjectOf({k: compile_spec(v, _join(path, k)) for k, v in spec.items()})
    if isinstance(spec, (list, tuple)):
        return ListOf(tuple(compile_spec(v, f"{path}[{i}]") for i, v in enumerate(spec)))
    if spec is None or isinstance(spec, (str, bool, int, float)):
        if isinstance(spec, float) and not math.isfinite(spec):
            raise SpecError(path, "a number must be finite")
        return Literal(spec)
    raise SpecError(path, f"not a JSON value: {type(spec).__name__}")


def _compile_operator(spec: Mapping[str, Any], path: str) -> Any:
    plain = [k for k in spec if not (isinstance(k, str) and k.startswith("$"))]
    if plain:
        raise SpecError(path, f"mixes operators ({', '.join(k for k in spec if k not in plain)}) with keys "
                              f"({', '.join(map(str, plain))}); write a literal object under $eq")
    unknown = [k for k in spec if k not in OPERATORS]
    if unknown:
        raise SpecError(path, f"unknown operator {unknown[0]}; known: {', '.join(OPERATORS)}")
    tests = [k for k in spec if k in _TESTS]
    if len(tests) > 1:
        raise SpecError(path, f"{' and '.join(tests)} cannot be combined; nest one inside $anyOf")
    optional = spec.get("$optional", False)
    if not isinstance(optional, bool):
        raise SpecError(path, "$optional must be true or false")
    normalize = _steps(spec["$normalize"], path) if "$normalize" in spec else None
    if not tests and not optional:
        raise SpecError(path, "says how to compare but not what: add a value ($eq, $anyOf, ...)")
    matcher = _compile_test(tests[0], spec[tests[0]], path) if tests else AnyValue()
    return _with(matcher, optional=optional, normalize=normalize)


def _compile_test(name: str, arg: Any, path: str) -> Any:
    if name == "$eq":
        return _literal(arg, path)
    if name in ("$any", "$never"):
        if arg is not True:
            raise SpecError(path, f"{name} must be true")
        return AnyValue() if name == "$any" else Never()
    if name in ("$anyOf", "$unordered", "$contains"):
        if not isinstance(arg, list) or (name == "$anyOf" and not arg):
            raise SpecError(path, f"{name} must be a {'non-empty ' if name == '$anyOf' else ''}list")
        items = tuple(compile_spec(v, _join(path, f"{name}[{i}]")) for i, v in enumerate(arg))
        if any(i.optional for i in items):
            raise SpecError(path, f"$optional means nothing inside {name}")
        return {"$anyOf": AnyOf, "$unordered": Unordered, "$contains": Contains}[name](items)
    if name == "$has":
        if not isinstance(arg, dict) or any(isinstance(k, str) and k.startswith("$") for k in arg):
            raise SpecError(path, "$has must be an object of keys to specs")
        return ObjectOf({k: compile_spec(v, _join(path, k)) for k, v in arg.items()}, allow_other=True)
    if name == "$regex":
        if not isinstance(arg, str):
            raise SpecError(path, "$regex must be a string")
        try:
            return Regex(compile_pattern(arg))
        except PatternError as exc:
            raise SpecError(path, f"$regex does not compile: {exc}") from None
    if name == "$number":
        if not _is_number(arg):
            raise SpecError(path, "$number must be a number")
        return Number(arg)
    if name == "$approx":
        return _approx(arg, path)
    if name == "$money":
        return _money(arg, path)
    return _date(arg, path)


def _literal(value: Any, path: str) -> Any:
    """$eq: the value as is, with $ keys taken literally at every depth."""
    if isinstance(value, dict):
        return ObjectOf({k: _literal(v, _join(path, k)) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return ListOf(tuple(_literal(v, f"{path}[{i}]") for i, v in enumerate(value)))
    return compile_spec(value, path)


def _money(arg: Any, path: str) -> Money:
    if not isinstance(arg, dict) or set(arg) != {"amount", "currency"}:
        raise SpecError(path, '$money must be {"amount": <number>, "currency": "<ISO code>"}')
    amount, currency = arg["amount"], arg["currency"]
    if isinstance(amount, bool) or not isinstance(amount, (int, float)):
        raise SpecError(path, "$money amount must be a number")
    if not isinstance(currency, str) or not re.fullmatch(r"[A-Z]{3}", currency):
        raise SpecError(path, "$money currency must be an ISO 4217 code such as EUR")
    return Money(float(amount), currency)


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def _approx(arg: Any, path: str) -> Approx:
    usage = '$approx must be {"value": <number>, "abs": <tolerance>, "rel": <tolerance>} (abs or rel or both)'
    if not isinstance(arg, dict) or "value" not in arg or not set(arg) - {"value"} or set(arg) - {"value", "abs", "rel"}:
        raise SpecError(path, usage)
    if not all(_is_number(v) for v in arg.values()):
        raise SpecError(path, usage)
    if arg.get("abs", 0) < 0 or arg.get("rel", 0) < 0:
        raise SpecError(path, "$approx tolerances cannot be negative")
    return Approx(arg["value"], float(arg.get("abs", 0)), float(arg.get("rel", 0)))


def _date(arg: Any, path: str) -> Date:
    try:
        return Date(dt.date.fromisoformat(arg))
    except (TypeError, ValueError):
        raise SpecError(path, "$date must be an ISO date, YYYY-MM-DD") from None


def _steps(value: Any, path: str) -> tuple[str, ...]:
    """The declared steps; ``{"remove": "-_/"}`` becomes the step ``remove:-_/``."""
    usage = f'$normalize must be a list of: {", ".join(NORMALISATIONS)}, {{"remove": "<characters>"}}'
    if not isinstance(value, list):
        raise SpecError(path, usage)
    steps = []
    for item in value:
        if isinstance(item, dict) and set(item) == {"remove"} and isinstance(item["remove"], str) and item["remove"]:
            steps.append(REMOVE + item["remove"])
        elif isinstance(item, str) and item in NORMALISATIONS:
            steps.append(item)
        else:
            raise SpecError(path, usage)
    return tuple(steps)


def _with(matcher: Any, **changes: Any) -> Any:
    return replace(matcher, **changes)


# --- typed comparison ----------------------------------------------------------


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def same_type(expected: Any, got: Any, strict: bool = False) -> bool:
    """JSON types, with integer and number one family: 10 == 10.0, but 1 != true.

    ``strict`` (tools typed like Python's): a float is never an integer, so an
    expected integer 5 is not met by 5.0 (an expected float still takes an integer).
    """
    if type(expected) is type(got):
        return True
    a, b = json_type(expected), json_type(got)
    if strict and isinstance(expected, int) and not isinstance(expected, bool) and isinstance(got, float):
        return False
    return a == b or {a, b} <= {"integer", "number"}


def equal_scalars(expected: Any, got: Any, steps: Sequence[str]) -> bool:
    """Strings after the steps; numbers exactly (Python compares an int and a
    float by value, with no rounding); the rest by ``==``."""
    if isinstance(expected, str):
        return normalise(expected, steps) == normalise(got, steps)
    return bool(expected == got)


def same_value(expected: Any, got: Any) -> bool:
    """Typed equality at any depth, without normalisation."""
    return not _literal(expected, "").match(got, "", ())


def perfect_matching(fits: Sequence[Sequence[int]], size: int) -> bool:
    """Whether every row gets its own column (of ``size``) among those it fits."""
    return len(fits) <= size and len(assignment(fits)) == len(fits)


def assignment(fits: Sequence[Sequence[int]]) -> dict[int, int]:
    """A maximum one-to-one assignment of rows to the columns each fits, as row -> column
    (augmenting paths)."""
    owner: dict[int, int] = {}

    def place(row: int, seen: set[int]) -> bool:
        for col in fits[row]:
            if col not in seen:
                seen.add(col)
                if col not in owner or place(owner[col], seen):
                    owner[col] = row
                    return True
        return False

    for row in range(len(fits)):
        place(row, set())
    return {row: col for col, row in owner.items()}


def describe_value(value: Any) -> str:
    if value is MISSING:
        return "nothing"
    if value is None:
        return "null"
    kind = "number" if isinstance(value, float) else json_type(value)  # 5.0 reads as a float, whatever JSON says
    text = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    return f"{kind} {text if len(text) <= 80 else text[:77] + '...'}"


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else str(key)
