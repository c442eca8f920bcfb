"""JSON text of what a run stores and writes for every case, fast.

    >>> dump({"b": 1, "a": "é"}, sort_keys=True)
    '{"a":"é","b":1}'
    >>> load(b'{"a": [1, 2.5]}')
    {'a': [1, 2.5]}

WHY orjson: the standard encoder and decoder cost ~50 us of every case's
~500 us in a large checks-only run (stored once, read back once, written to
results.json once); orjson does the same work in a tenth of the time.
WHY a fallback to the standard library: orjson refuses what ``json`` accepts
(keys that are not strings, integers beyond 64 bits, lone surrogates in text;
``NaN`` when reading rows stored before it was used), and a case must never
fail only for how it is encoded. (It writes a float NaN as ``null``, valid
JSON, where ``json`` writes the invalid ``NaN``.) Hashes of datasets and cases keep the standard encoder
(``case.dataset``): their bytes are versions, and must not change.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

def dump(data: Any, sort_keys: bool = False) -> str:
    """Compact JSON text of ``data``; non-ASCII characters as they are."""
    try:
        return orjson.dumps(data, option=orjson.OPT_SORT_KEYS if sort_keys else None).decode()
    except TypeError:  # orjson.JSONEncodeError: a key not a string, a big integer, a lone surrogate, ...
        return json.dumps(data, sort_keys=sort_keys, ensure_ascii=False, separators=(",", ":"))


def load(text: bytes | str) -> Any:
    """The value of JSON ``text`` (bytes in UTF-8, or str); integers past 64 bits exactly.

        >>> load('{"account": 123456789012345678901234567890}')
        {'account': 123456789012345678901234567890}
    """
    if _may_hold_a_big_integer(text):
        return _standard(text)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # NaN or Infinity that json.dumps wrote, or text json can still read
        return _standard(text)


def _may_hold_a_big_integer(text: bytes | str) -> bool:
    """Whether ``text`` has 19 digits in a row, as an integer past 64 bits has.

    WHY: orjson reads such an integer as a float, without a word (2**64 as 1.8446744073709552e+19),
    so an account number in a dataset line or in a stored tool argument came back as another
    value. The standard parser reads it exactly. The search is linear, and a long digit run
    inside a string or a float only costs that text the slower parser.

    WHY each digit made "0" and the rest a space, then a run of 19 "0" looked for: a regular
    expression tried a match at every position, ~2.5 us a dataset line against ~0.5. In UTF-8
    the bytes of ASCII digits are only ever digits."""
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    return _NINETEEN_DIGITS in data.translate(_DIGITS_AS_ZEROS)


_DIGITS_AS_ZEROS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_NINETEEN_DIGITS = b"0" * 19


def _standard(text: bytes | str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:  # past orjson's 1,024 levels, json recurses: a named error, not a crash
        raise ValueError("JSON nested too deeply to read (more than 1,024 levels)") from None
