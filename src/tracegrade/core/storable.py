"""Whatever a target hands back, brought to JSON the store can always write and read back.

    >>> reply = Reply(answer="ok \\udcff", tool_calls=(ToolCall(name="t", arguments={"n": float("nan")}),))
    >>> clean, reasons = storable_reply(reply)
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
from typing import Any

from pydantic import BaseModel

from tracegrade.core.trace import Reply, ToolCall  # noqa: F401  (ToolCall: the doctest)

# Containers inside one value of a reply (tool arguments, state). WHY 64: real
# arguments are a few levels deep, and the stored form (a result around the
# reply around the value) stays far under orjson's limit of 254 on write and
# 1,024 on read, so what is written always reads back.
MAX_DEPTH = 64
# WHY 4,000: Python refuses to turn an integer of more than 4,300 digits into text.
MAX_INT_DIGITS = 4_000
_INT64 = (-(2 ** 63), 2 ** 64 - 1)
_TYPED_NUMBERS = (float, tuple[float, ...])


def storable_reply(reply: Reply) -> tuple[Reply, tuple[str, ...]]:
    """``reply`` as it can be stored, and why it changed (empty: it is returned as is)."""
    reasons: list[str] = []
    data = _Walk(reasons).model(reply, "", 0)
    if not reasons:
        return reply, ()
    return Reply.model_validate(data), tuple(reasons)


def storable(value: Any, path: str = "") -> tuple[Any, tuple[str, ...]]:
    """Any value as plain JSON data (dict, list, str, finite float, int, bool, None), and why it changed."""
    reasons: list[str] = []
    return _Walk(reasons).value(value, path, 0, None), tuple(reasons)


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (a valid pair joined into its character)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class _Walk:
    """One walk over one value; ``reasons`` collects what was converted, by path."""

    # A reason per value is enough to act on; a million NaNs need not be a million reasons.
    MAX_REASONS = 20

    def __init__(self, reasons: list[str]) -> None:
        self.reasons = reasons
        self.open: set[int] = set()  # the containers on the current path: a cycle comes back to one

    def say(self, path: str, why: str) -> None:
        if len(self.reasons) < self.MAX_REASONS:
            self.reasons.append(f"{path or 'the value'}: {why}")

    def model(self, model: BaseModel, path: str, depth: int) -> dict[str, Any]:
        data = {}
        for name, info in type(model).model_fields.items():
            key = info.alias or name
            number = 0.0 if info.annotation in _TYPED_NUMBERS else None
            data[key] = self.value(getattr(model, name), _join(path, key), depth, number)
        return data

    def value(self, value: Any, path: str, depth: int, number: float | None) -> Any:
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

    def text(self, text: str, path: str) -> str:
        cleaned = clean_text(text)
        if cleaned is not text:
            self.say(path, "a lone surrogate replaced by U+FFFD")
        return cleaned

    def integer(self, value: int, path: str) -> int | str:
        if _INT64[0] <= value <= _INT64[1]:
            return value
        if value.bit_length() > MAX_INT_DIGITS * 3.32:
            self.say(path, f"an integer of {value.bit_length():,} bits replaced by a marker")
            return f"[integer of {value.bit_length():,} bits]"
        self.say(path, "an integer beyond 64 bits stored as text")
        return str(value)

    def real(self, value: float, path: str, number: float | None) -> float | None:
        if math.isfinite(value):
            return value
        self.say(path, f"{value!r}".replace("nan", "NaN").replace("inf", "Infinity") +
                 f" stored as {'null' if number is None else number}")
        return number

    def container(self, value: Any, path: str, depth: int, number: float | None) -> Any:
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
                return {self.key(k, path): self.value(v, _join(path, k), depth + 1, None) for k, v in value.items()}
            if isinstance(value, (set, frozenset)):
                value = sorted(value, key=repr)  # WHY sorted: the same set stores as the same text
            return [self.value(v, _index(path, i), depth + 1, number) for i, v in enumerate(value)]
        finally:
            self.open.discard(id(value))

    def key(self, key: Any, path: str) -> str:
        if type(key) is str:
            return self.text(key, _join(path, "<key>"))
        if key is None or isinstance(key, bool):  # as the standard library writes them
            return "null" if key is None else "true" if key else "false"
        if isinstance(key, (int, float)):
            return str(self.value(key, _join(path, "<key>"), 0, None))
        self.say(path, f"a {type(key).__name__} key replaced by a marker")
        return f"[{type(key).__name__} key]"

    def foreign(self, value: Any, path: str, depth: int, number: float | None) -> Any:
        if isinstance(value, (bytes, bytearray, memoryview)):
            self.say(path, "bytes stored as their UTF-8 text")
            return self.text(bytes(value).decode("utf-8", "replace"), path)
        if isinstance(value, str):  # a str subclass (an enum member): its text
            return self.text(str.__str__(value), path)
        if isinstance(value, (int, float)):  # int and float subclasses (IntEnum, numpy.float64)
            return self.value(int(value) if isinstance(value, int) else float(value), path, depth, number)
        self.say(path, f"an object of type {type(value).__name__} (not JSON) replaced by a marker")
        return f"[{type(value).__name__} object]"


def _join(path: str, key: Any) -> str:
    if len(path) > 200:  # WHY: a path 300 levels deep says no more than its first 200 characters
        return path
    key = clean_text(key if type(key) is str else repr(key))[:60]
    return f"{path}.{key}" if path else key


def _index(path: str, index: int) -> str:
    return path if len(path) > 200 else f"{path}[{index}]"
