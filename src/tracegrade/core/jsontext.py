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
(``eval.dataset``): their bytes are versions, and must not change.
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
    """The value of JSON ``text`` (bytes in UTF-8, or str)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # NaN or Infinity that json.dumps wrote, or text json can still read
        try:
            return json.loads(text)
        except RecursionError:  # past orjson's 1,024 levels, json recurses: a named error, not a crash
            raise ValueError("JSON nested too deeply to read (more than 1,024 levels)") from None
