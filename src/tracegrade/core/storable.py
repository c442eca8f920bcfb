"""Whatever a target hands back, brought to JSON the store can always write and read back.

    >>> reply = Reply(answer="ok \\udcff", tool_calls=(ToolCall(name="t", arguments={"n": float("nan")}),))
    >>> clean, reasons, chars = storable_reply(reply)
    >>> clean.answer, clean.tool_calls[0].arguments, reasons
    ('ok \\ufffd', {'n': None}, ('answer: a lone surrogate replaced by U+FFFD', 'toolCalls[0].arguments.n: NaN stored as null'))

WHY at the case boundary: one reply that cannot be encoded (a lone surrogate,
NaN, ``object()``, bytes, a dict that holds itself, an integer of 5,000
digits, arguments nested 300 deep) made the whole run fail while saving,
with no way to resume it. Converted here, the case is graded on what can be
stored, and the reasons go into a failed check (``reply_json``): a reply
that broke the trace contract never passes silently.

What becomes what (each says why in ``reasons``):

- a lone surrogate in any text (and key): U+FFFD;
- NaN or Infinity: null, or 0.0 in a field the trace types as a number
  (``usage.costUsd``, ``retrievalScores``, step times);
- an integer beyond 64 bits: its decimal text (orjson and most readers
  would silently turn it into a float), or a marker past 4,000 digits;
- bytes: their UTF-8 text, bad bytes replaced;
- a container inside itself, or nested deeper than ``MAX_DEPTH``: a marker;
- any other object: a marker naming its type (never its ``repr``: it may be
  huge, raise, or hold a secret).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, TypeAlias

from pydantic import BaseModel

from tracegrade.core.trace import Number, Reply, ToolCall  # noqa: F401  (ToolCall: the doctest)

# Containers inside one value of a reply (tool arguments, state). WHY 64: real
# arguments are a few levels deep, and the stored form (a result around the
# reply around the value) stays far under orjson's limit of 254 on write and
# 1,024 on read, so what is written always reads back.
MAX_DEPTH = 64
# WHY 4,000: Python refuses to turn an integer of more than 4,300 digits into text.
MAX_INT_DIGITS = 4_000
INT64 = (-(2 ** 63), 2 ** 64 - 1)  # the integers stored as numbers (core.redact reads it too)
Path: TypeAlias = "tuple[Path, Any] | None"  # where a value is: (where its container is, its key or index)
_TYPED_NUMBERS = (float, tuple[float, ...], tuple[Number, ...])


class StorableReply(NamedTuple):
    reply: Reply  # as it can be stored (the very reply given, when nothing changed)
    reasons: tuple[str, ...]  # why it changed, by path; empty when it did not
    chars: int  # the characters of all its texts: what the work of its checks grows with


def storable_reply(reply: Reply) -> StorableReply:
    """``reply`` as it can be stored, why it changed, and its size in characters."""
    if (chars := _plain_chars(reply, 0)) >= 0:  # nearly every reply: nothing to convert, nothing copied
        return StorableReply(reply, (), chars)
    reasons: list[str] = []
    walk = _Walk(reasons)
    data = walk.model(reply, None, 0)
    if not reasons:
        return StorableReply(reply, (), walk.chars)
    return StorableReply(Reply.model_validate(data), tuple(reasons), walk.chars)


def storable(value: Any) -> tuple[Any, tuple[str, ...]]:
    """Any value as plain JSON data (dict, list, str, finite float, int, bool, None), and why it changed."""
    reasons: list[str] = []
    return _Walk(reasons).value(value, None, 0, None), tuple(reasons)


def storable_key(key: Any) -> str:
    """A mapping key as the text it is stored under (``1`` -> ``"1"``, ``None`` -> ``"null"``, an object: a marker)."""
    return _Walk([]).key(key, None)


def error_text(exc: BaseException) -> str:
    """``Type: message`` of an exception a target or a check raised, whatever its ``__str__``
    does (raise, return something else, hold a lone surrogate): the case boundary must not fail."""
    try:
        message = str(exc)
    except Exception:
        message = "(its message could not be read)"
    # WHY the notes too: a hint added where the error passed (capture's framework hint) belongs with it
    notes = getattr(exc, "__notes__", None)
    if isinstance(notes, list):
        message += "".join(f" ({str(note)[:500]})" for note in notes[:3])
    return clean_text(f"{type(exc).__name__}: {message}")


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (a valid pair joined into its character)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


# The pydantic model classes met so far. WHY: isinstance against BaseModel goes through its
# metaclass's ABC check, ~1 us a call: most of this walk's time on a reply of one tool call.
_MODELS: set[type] = set()


def _is_model(kind: type) -> bool:
    if issubclass(kind, BaseModel):
        _MODELS.add(kind)
        return True
    return False


def _plain_chars(value: Any, depth: int) -> int:
    """The characters of ``value``'s texts if it is plain JSON already (pydantic models of it
    included), else -1. WHY apart from the walk below: it copies nothing and tracks no path,
    a third of the walk's time; a container inside itself is not plain (it nests too deep)."""
    kind = type(value)
    if kind is str:
        return len(value) if value.isascii() or clean_text(value) is value else -1
    if kind is bool or value is None:
        return 0
    if kind is int:
        return 0 if INT64[0] <= value <= INT64[1] else -1
    if kind is float:
        return 0 if math.isfinite(value) else -1
    if depth >= MAX_DEPTH:
        return -1
    if kind is dict:
        if not all(type(key) is str for key in value):
            return -1
        parts: Any = (*value, *value.values())
    elif kind is list or kind is tuple:
        parts = value
    elif kind in _MODELS or _is_model(kind):
        parts = value.__dict__.values()
    else:
        return -1
    total = 0
    for part in parts:
        # WHY the plain leaves here, not in a call each: most parts are ASCII text or None,
        # and a call per leaf was most of this walk's time (~27 calls a reply of one tool call)
        if type(part) is str and part.isascii():
            total += len(part)
        elif part is not None and (chars := _plain_chars(part, depth + 1)) != 0:
            if chars < 0:
                return -1
            total += chars
    return total


class _Walk:
    """One walk over one value; ``reasons`` collects what was converted, by path."""

    # A reason per value is enough to act on; a million NaNs need not be a million reasons.
    MAX_REASONS = 20

    def __init__(self, reasons: list[str]) -> None:
        self.reasons = reasons
        self.open: set[int] = set()  # the containers on the current path: a cycle comes back to one
        self.chars = 0

    def say(self, path: Path, why: str) -> None:
        if len(self.reasons) < self.MAX_REASONS:
            self.reasons.append(f"{_text(path) or 'the value'}: {why}")

    def model(self, model: BaseModel, path: Path, depth: int) -> dict[str, Any]:
        return {key: self.value(getattr(model, name), (path, key), depth, number)
                for name, key, number in _fields(type(model))}

    def value(self, value: Any, path: Path, depth: int, number: float | None) -> Any:
        kind = type(value)
        if kind is str:
            return self.text(value, path)
        if kind is bool or value is None:
            return value
        if kind is int:
            return self.integer(value, path)
        if kind is float:
            return self.real(value, path, number)
        if isinstance(value, (dict, list, tuple, BaseModel, set, frozenset)):
            return self.container(value, path, depth, number)
        return self.foreign(value, path, depth, number)

    def text(self, text: str, path: Path) -> str:
        self.chars += len(text)
        cleaned = clean_text(text)
        if cleaned is not text:
            self.say(path, "a lone surrogate replaced by U+FFFD")
        return cleaned

    def integer(self, value: int, path: Path) -> int | str:
        if INT64[0] <= value <= INT64[1]:
            return value
        if value.bit_length() > MAX_INT_DIGITS * 3.32:
            self.say(path, f"an integer of {value.bit_length():,} bits replaced by a marker")
            return f"[integer of {value.bit_length():,} bits]"
        self.say(path, "an integer beyond 64 bits stored as text")
        return str(value)

    def real(self, value: float, path: Path, number: float | None) -> float | None:
        if math.isfinite(value):
            return value
        self.say(path, f"{value!r}".replace("nan", "NaN").replace("inf", "Infinity") +
                 f" stored as {'null' if number is None else number}")
        return number

    def container(self, value: Any, path: Path, depth: int, number: float | None) -> Any:
        if depth >= MAX_DEPTH:
            self.say(path, f"nested deeper than {MAX_DEPTH} levels: replaced by a marker")
            return f"[nested deeper than {MAX_DEPTH} levels]"
        if id(value) in self.open:
            self.say(path, "a container inside itself: replaced by a marker")
            return "[a container inside itself]"
        self.open.add(id(value))
        try:
            if isinstance(value, BaseModel):
                return self.model(value, path, depth + 1)
            if isinstance(value, dict):
                return {self.key(k, path): self.value(v, (path, k), depth + 1, None) for k, v in value.items()}
            if isinstance(value, (set, frozenset)):
                value = sorted(value, key=repr)  # WHY sorted: the same set stores as the same text
            return [self.value(v, (path, i), depth + 1, number) for i, v in enumerate(value)]
        finally:
            self.open.discard(id(value))

    def key(self, key: Any, path: Path) -> str:
        if type(key) is str:
            return self.text(key, (path, "<key>"))
        if key is None or isinstance(key, bool):  # as the standard library writes them
            return "null" if key is None else "true" if key else "false"
        if isinstance(key, (int, float)):
            return str(self.value(key, (path, "<key>"), 0, None))
        self.say(path, f"a {type(key).__name__} key replaced by a marker")
        return f"[{type(key).__name__} key]"

    def foreign(self, value: Any, path: Path, depth: int, number: float | None) -> Any:
        if isinstance(value, (bytes, bytearray, memoryview)):
            self.say(path, "bytes stored as their UTF-8 text")
            return self.text(bytes(value).decode("utf-8", "replace"), path)
        if isinstance(value, str):  # a str subclass (an enum member): its text
            return self.text(str.__str__(value), path)
        if isinstance(value, (int, float)):  # int and float subclasses (IntEnum, numpy.float64)
            return self.value(int(value) if isinstance(value, int) else float(value), path, depth, number)
        self.say(path, f"an object of type {type(value).__name__} (not JSON) replaced by a marker")
        return f"[{type(value).__name__} object]"


_FIELDS: dict[type, tuple[tuple[str, str, float | None], ...]] = {}


def _fields(cls: type[BaseModel]) -> tuple[tuple[str, str, float | None], ...]:
    """Each field's name, wire key, and what a non-finite number in it becomes; looked up once."""
    if (found := _FIELDS.get(cls)) is None:
        found = _FIELDS[cls] = tuple((name, info.alias or name, 0.0 if info.annotation in _TYPED_NUMBERS else None)
                                     for name, info in cls.model_fields.items())
    return found


def _text(path: Path) -> str:
    """``toolCalls[0].arguments.name`` for the chain ``(((None, "toolCalls"), 0), "arguments"), "name")``.

    WHY a chain made into text only when a reason is given: formatting the path of
    every value of every reply was a third of the walk."""
    parts: list[Any] = []
    while path is not None:
        path, key = path
        parts.append(key)
    text = ""
    for key in reversed(parts):
        if len(text) > 200:  # WHY: a path 300 levels deep says no more than its first 200 characters
            break
        if type(key) is int:
            text += f"[{key}]"
        else:
            key = clean_text(key if type(key) is str else repr(key))[:60]
            text = f"{text}.{key}" if text else key
    return text
